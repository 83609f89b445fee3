"""
Erase `linalg.generic`s on tensors whose results nothing reads, and the pure ops that
only they read.

A generic on tensors computes values and nothing else, but xDSL does not take it for
side-effect free (on buffers it writes), so `dce` and `canonicalize` keep it; once
bufferized it writes a buffer and would stay a kernel or a loop nest. Lowerings that
read a value's inputs instead of the value leave such generics behind: NonZero's
compacting scatter (`convert_ml_to_linalg/scatter_compaction`) reads the mask and its
cumsum, not the broadcast columns, and an `arange` counted from `linalg.index` leaves
the ones it would have summed. A `tensor.dim` of such a result (a check of its size)
is read from the generic's init instead, or from an `expand_shape`'s output shape.
"""

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Block, Operation, OpResult, SSAValue
from xdsl.rewriter import Rewriter
from xdsl.traits import is_side_effect_free


def erase_unused(block: Block) -> int:
    """Erase, last first, the unused generics on tensors and unused pure ops of
    `block` (their sizes read from where they came from first); return how many went."""
    for dim in [op for op in block.ops if isinstance(op, tensor.DimOp)]:
        forward_dim(dim)
    erased = 0
    for op in reversed(list(block.ops)):
        if op.results and not any(r.uses for r in op.results) and removable(op):
            Rewriter.erase_op(op)
            erased += 1
    return erased


def forward_dim(dim: tensor.DimOp) -> None:
    """Read the dim of a pure generic's result that only dims read from its init, an
    expand_shape's from its output shape: a size read alone keeps no generic alive."""
    source = dim.source
    owner = source.owner
    if isinstance(owner, GenericOp) and isinstance(source, OpResult):
        if all(only_sized(r) for r in owner.results) and removable(owner):
            dim.operands = [owner.outputs[source.index], dim.index]
        return
    index = dim.index.owner
    if not isinstance(owner, tensor.ExpandShapeOp) or not isinstance(index, arith.ConstantOp):
        return
    at = index.value.value.data  # pyright: ignore[reportAttributeAccessIssue]
    static = owner.static_output_shape.get_values()
    if static[at] != DYNAMIC_INDEX:
        return
    size = owner.dynamic_output_shape[sum(1 for s in static[:at] if s == DYNAMIC_INDEX)]
    dim.result.replace_all_uses_with(size)


def only_sized(value: SSAValue) -> bool:
    """Whether nothing but `tensor.dim`s reads `value` (a value read otherwise keeps
    its dims: bufferize would see its init read after the generic wrote it)."""
    return all(isinstance(use.operation, tensor.DimOp) for use in value.uses)


def removable(op: Operation) -> bool:
    """Pure: a side-effect-free op, or a generic on tensors whose body is (reading its
    loop indices, which xDSL does not mark pure, included)."""
    if isinstance(op, GenericOp):
        if not all(isinstance(v.type, TensorType) for v in (*op.operands, *op.results)):
            return False
        return all(
            is_side_effect_free(inner) or isinstance(inner, IndexOp | YieldOp)
            for inner in op.body.walk()
        )
    return is_side_effect_free(op)
