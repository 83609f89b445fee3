"""
Which memrefs an outlined parallel loop gets are buffers no other of its memrefs reaches.

An outlined loop body (`parallel.outline_parallel_loops`) receives every buffer as a
pointer argument, so LLVM must assume that a store through one may change what another
points to: an elementwise loop that reads a bias and writes its output reloads the bias
after every store and runs scalar (a split generic's block was not vectorised, where the
same generic inline in its function, whose output LLVM sees come from `malloc`, was).
A captured memref whose buffer (followed through views) is an allocation of the calling
function, while every other captured memref is a view of a different allocation, a
global or an argument of that function, is marked `llvm.noalias`: `convert-to-llvm`
puts LLVM's `noalias` on its pointers. A buffer of any other origin (a loop-carried
memref, a call's result) could be any of them, and then none is marked.
"""

from collections.abc import Sequence

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    IntegerType,
    MemRefType,
    UnitAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, SSAValue

from mlc.lowering.support.buffer_views import ALLOCATIONS, viewed_buffer

NOALIAS = "llvm.noalias"


def _told_apart(buffer: SSAValue) -> bool:
    """Whether `buffer` is an allocation, a global or an argument of its function's entry
    block: such buffers are distinct from any allocation other than themselves."""
    owner = buffer.owner
    if isinstance(owner, Block):
        function = owner.parent_op()
        return isinstance(function, func.FuncOp) and owner is function.body.blocks.first
    return isinstance(owner, (*ALLOCATIONS, memref.GetGlobalOp))


def distinct(captured: Sequence[SSAValue]) -> list[bool]:
    """For each of `captured`, whether it is a memref that may be marked `noalias`."""
    scalar = AnyFloat | IndexType | IntegerType | VectorType
    buffers = [viewed_buffer(v) if isinstance(v.type, MemRefType) else None for v in captured]
    known = [b for b in buffers if b is not None]
    pairs = zip(buffers, captured, strict=True)
    opaque = any(b is None and not isinstance(v.type, scalar) for b, v in pairs)
    if opaque or not all(_told_apart(b) for b in known):
        return [False] * len(captured)
    return [
        b is not None and isinstance(b.owner, ALLOCATIONS) and known.count(b) == 1 for b in buffers
    ]


def argument_attributes(leading: int, marks: Sequence[bool]) -> ArrayAttr[DictionaryAttr] | None:
    """`arg_attrs` for a function of `leading` unmarked arguments then one per mark (None
    when nothing is marked)."""
    if not any(marks):
        return None
    empty: dict[str, Attribute] = {}
    dicts = [DictionaryAttr(empty)] * leading
    dicts += [DictionaryAttr({NOALIAS: UnitAttr()} if m else empty) for m in marks]
    return ArrayAttr(dicts)


def is_noalias(attrs: ArrayAttr[DictionaryAttr] | None, index: int) -> bool:
    """Whether argument `index` carries `llvm.noalias` in `attrs`."""
    return attrs is not None and NOALIAS in attrs.data[index].data
