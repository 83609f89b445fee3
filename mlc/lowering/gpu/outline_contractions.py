"""
outline-contractions: each contraction that another repeats moved into a private
function, one function for each kind, so that `convert-contractions-to-gpu` builds its
tiled kernel once and every later pass (canonicalize, lower-affine, cse, verify,
kernel outlining, NVVM) lowers it once.

A tiled contraction kernel is thousands of ops, and a network repeats them: ResNet-50's
48 GPU contractions are 26 kinds. `merge-identical-kernels` keeps one `gpu.func` of each
kind, but only at the end of the `gpu` stage, after every copy has been built and
processed. Runs after `bufferize`, before `convert-contractions-to-gpu`, on the
generics at the top of a function body that that pass takes (`match`, `match_conv`),
with the ops its kernel absorbs (the zero fill of the output, a convolution's padded
copy of the image from allocation to free, its bias broadcast), in block order:

    linalg.generic outs(%y) {fill} ; linalg.generic ins(%x, %w) outs(%y) {...}
==>
    func.call @f_kernel0(%x, %w, %y)
    func.func private @f_kernel0(%0, %1, %2) attributes {mlc.kernel} { the two generics }

(`mlc.lowering.support.kernel_outlining`: weights are arguments, so that two layers of
one shape are one function; each call keeps the location of the generic it replaces.)
The functions are then merged (`function_merging.merge`). A contraction no other
repeats stays where it is, as do the other generics: the loops they become are small,
and `fuse-row-epilogues` and the loop fusion join neighbouring ones, which a call
between would keep apart. The host code of an outlined function launches its kernels
when called; `instrument-launches` times each call as one kernel. A remark of
`convert-contractions-to-gpu` on an outlined kind (a tf32 declined) is made once, at
the first copy's location.

A contraction whose operands are sized by a value the host loads (a NonZero's count,
computed on the device) stays where it is: `bound-device-sizes` bounds such a size
where it sees its launches, which a call would hide.

With `tf32=true` (given with `convert-contractions-to-gpu`'s), an f32 matmul reading a
constant weight stays where it is: the wgmma kernel may need that operand K-major, and
transposes a constant it sees at compile time, an argument only by a kernel at run time.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func, memref
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass

from mlc import diagnostics
from mlc.lowering.gpu.contraction.conv_match import match_conv
from mlc.lowering.gpu.contraction.kmajor_operand import constant_global
from mlc.lowering.gpu.contraction.match import match
from mlc.lowering.linalg.absorbed_padding import frees_between
from mlc.lowering.support.kernel_outlining import (
    insert_after,
    move_into_function,
    ops_key,
    outline_kernels,
    read_from_outside,
)


@dataclass
class Contraction:
    """A contraction generic (`anchor`) with the ops its kernel absorbs, in block order,
    and the frees of buffers they read that come before it."""

    ops: list[Operation]
    anchor: GenericOp
    frees: list[Operation]


def contraction_of(op: GenericOp, tf32: bool = False) -> Contraction | None:
    """What of `op` (and around it) `convert-contractions-to-gpu` makes one kernel of,
    or None (with `tf32`, for a matmul that reads a constant too: module docstring); its
    remarks are left to that pass."""
    if _sized_by_a_load(op.operands):
        return None
    with diagnostics.capture():
        found = match(op) or match_conv(op)
    if found is None:
        return None
    if tf32 and found.conv is None and not found.half:
        if any(constant_global(op.operands[i]) is not None for i in (found.a, found.b)):
            return None
    absorbed: list[Operation] = [found.fill] if found.fill is not None else []
    frees: list[Operation] = []
    if (conv := found.conv) is not None:
        absorbed += conv.padding_ops
        if conv.padding_ops:
            frees += frees_between(conv.source, conv.padding_ops[0], op)
        if conv.bias is not None:
            absorbed.append(conv.bias)
            frees += frees_between(conv.bias.inputs[0], conv.bias, op)
    block = op.parent_block()
    assert block is not None
    if any(other.parent_block() is not block for other in absorbed):
        return None
    order = {o: i for i, o in enumerate(block.ops)}
    ops = sorted([op, *absorbed], key=order.__getitem__)
    return Contraction(ops, op, frees)


def _sized_by_a_load(values: Sequence[SSAValue]) -> bool:
    """Whether a value the host loads from memory reaches `values` (their sizes, views)."""
    seen: set[SSAValue] = set()
    stack = list(values)
    while stack:
        if (value := stack.pop()) in seen:
            continue
        seen.add(value)
        if isinstance(owner := value.owner, memref.LoadOp):
            return True
        if isinstance(owner, Operation):
            stack.extend(owner.operands)
    return False


@dataclass(frozen=True)
class OutlineContractionsPass(ModulePass):
    """Outline repeated contractions into functions, one for each kind (module docstring)."""

    name = "outline-contractions"

    tf32: bool = False
    """Whether `convert-contractions-to-gpu` multiplies f32 in tf32 (module docstring)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        def outline(c: Contraction, name: str, after: Operation) -> func.FuncOp:
            moved = move_into_function(
                c.ops, read_from_outside(c.ops), name, c.anchor, frees=c.frees
            )
            return insert_after(op, moved, after)

        outline_kernels(
            op,
            lambda generic: contraction_of(generic, self.tf32),
            lambda c: ops_key(c.ops),
            outline,
        )
