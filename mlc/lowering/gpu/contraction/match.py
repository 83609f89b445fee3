"""
Which `linalg.generic`s the GPU's tiled contraction kernel takes, and what it needs.

A match (`match`) is a generic on memrefs with one reduction dim and an `acc + a * b`
body in f32, or in f16 or bf16 with both inputs of that type (the tensor-core kernel
accumulates those in f32, `HALF_TYPES`), one input along the rows and one along the
columns (batch dims in front), as `convert-linalg-to-parallel-loops` would
register-tile it. Every operand is read through its own indexing map, so a transposed
operand (`b[j, k]`) matches too; a generic whose inputs use the rows and columns
otherwise is declined. Also found here:
an epilogue that `linalg-fuse-elementwise` fused in (`scf.if` on the last reduction
iteration) and a fill generic writing the output just before, whose constant the
accumulators can start at.
"""

from dataclasses import dataclass

from xdsl.dialects import scf
from xdsl.dialects.builtin import BFloat16Type, Float16Type, MemRefType, f32
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Attribute, Operation

from mlc.lowering.gpu.contraction.accumulation import accumulation, fused_epilogue, reads_loop
from mlc.lowering.gpu.contraction.conv_geometry import ConvGeometry
from mlc.lowering.gpu.fills import fill_before
from mlc.lowering.gpu.loop_analysis import (
    SMALL_OUTPUT,
    contraction_dims,
    narrow_columns,
    outputs_independent_of,
    split_iterators,
    static_size,
)


@dataclass
class Contraction:
    """What the kernel needs to know of a matched generic."""

    op: GenericOp
    a: int  # the input that ignores the columns
    b: int  # the input that ignores the rows
    batch: list[int]
    rows: int
    cols: int
    k: int
    accumulate: list[Operation]  # the body's mulf, addf
    epilogue: scf.IfOp | None
    fill: GenericOp | None = None  # the generic that fills the output just before
    conv: ConvGeometry | None = None  # a convolution: rows f, cols and k merged loops

    @property
    def half(self) -> bool:
        """Whether it multiplies 16-bit values (f16, bf16): the tensor-core kernel only."""
        return isinstance(element_type(self.op), HALF_TYPES)


def _roles(op: GenericOp, x: int, y: int, rows: int, cols: int) -> tuple[int, int] | None:
    """Of the product's inputs `x`, `y`: (the one along the rows, the one along the columns)."""
    for a, b in ((x, y), (y, x)):
        if reads_loop(op, a, rows) and reads_loop(op, b, cols):
            if reads_loop(op, a, cols) or reads_loop(op, b, rows):
                return None
            return a, b
    return None


HALF_TYPES = (Float16Type, BFloat16Type)  # 16-bit contractions: `mma_half` (sm_80 on)


def element_type(op: GenericOp) -> Attribute | None:
    """The element type of `op`'s one output, when all its operands are memrefs."""
    if op.res or len(op.outputs) != 1:
        return None
    if not all(isinstance(v.type, MemRefType) for v in op.operands):
        return None
    output = op.outputs[0].type
    return output.element_type if isinstance(output, MemRefType) else None


def _inputs_of(op: GenericOp, inputs: tuple[int, int], element: Attribute) -> bool:
    """Whether both product inputs are memrefs of `element` (a 16-bit kernel's operands)."""
    return all(
        isinstance(t := op.operands[i].type, MemRefType) and t.element_type == element
        for i in inputs
    )


def match(op: GenericOp) -> Contraction | None:
    """The contraction this kernel handles (module docstring), or None."""
    element = element_type(op)
    if element != f32 and not isinstance(element, HALF_TYPES):
        return None
    parallel, reduction = split_iterators(op)
    if len(reduction) != 1 or not outputs_independent_of(op, reduction):
        return None
    if (dims := contraction_dims(op, parallel)) is None:
        return None
    if static_size(op, parallel) < SMALL_OUTPUT or narrow_columns(op, dims[1]) is not None:
        return None  # few outputs, or few columns: the loop mapping's warps share rows
    if (found := accumulation(op)) is None:
        return None
    x, y, accumulate, accumulated = found
    rows, cols = dims
    if (roles := _roles(op, x, y, rows, cols)) is None:
        return None
    a, b = roles
    if element != f32 and not _inputs_of(op, roles, element):  # pyright: ignore[reportArgumentType]
        return None
    if (epilogue := fused_epilogue(op, accumulated)) is False:
        return None
    assert epilogue is not True
    (k,) = reduction
    others = [i for i in range(len(op.inputs)) if i not in (a, b)]
    if any(reads_loop(op, i, k) for i in others):
        return None  # an epilogue input read along K
    batch = parallel[:-2]
    return Contraction(op, a, b, batch, rows, cols, k, accumulate, epilogue, fill_before(op))
