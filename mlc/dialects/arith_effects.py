"""
`arith.remui` declared free of memory effects, as MLIR declares it and as xDSL 0.74
declares every other integer division (`divui`, `divsi`, `remsi`, ...).

xDSL's `RemUIOp` has no traits at all, so its effects are unknown: `cse` never merges
two equal `remui`s and dead-code elimination keeps a dead one, and with it the index
arithmetic that feeds it. The GPU's convolution kernels decode output pixels and taps
with `remui` per element, so a ResNet-50 kept thousands of such dead or repeated ops
through every later pass. Importing this module adds `NoMemoryEffect` (not
speculatability: a remainder by zero is undefined, so it is not hoisted out of the
condition that guards it).
"""

from xdsl.dialects import arith
from xdsl.ir.core import OpTraits
from xdsl.traits import NoMemoryEffect


def _declare_effect_free(op_class: type[arith.RemUIOp]) -> None:
    traits = tuple(op_class.traits)
    if not any(isinstance(trait, NoMemoryEffect) for trait in traits):
        op_class.traits = OpTraits(lambda: (*traits, NoMemoryEffect()))


_declare_effect_free(arith.RemUIOp)
