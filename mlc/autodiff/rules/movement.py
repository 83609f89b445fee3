"""
VJP rules of the data-movement ops: transpose, reshape, broadcast_to, concat and slice
(gather is with the indexing ops, `indexing`), and `tensor.extract_slice` /
`tensor.insert_slice`, which `ops.scan` reads its rows and stacks its outputs with.

Each moves the cotangent back to where its elements came from: the inverse permutation,
the operand's shape, a sum over broadcast dims, one slice per concatenated operand. A
slice's cotangent is padded with zeros (concatenated zero blocks for unit steps, a one-hot
matmul for strided ones). Rules that build new shapes need the dims they build to be
static, and say so otherwise.
"""

from collections.abc import Sequence

from xdsl.dialects import tensor
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from mlc import shapes
from mlc.autodiff.emitter import Emitter, element_type, shape_of
from mlc.autodiff.rule_table import Cotangents, vjp_rule
from mlc.dialects import ml

END = 2**63 - 1  # a slice end past any dim: "to the end"


def static(shape: Sequence[int], what: str) -> tuple[int, ...]:
    if not all(shapes.is_static(d) for d in shape):
        raise shapes.ShapeError(f"{what} needs static dims, got ({shapes.format_shape(shape)})")
    return tuple(shape)


@vjp_rule(ml.TransposeOp)
def transpose(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.TransposeOp)
    perm = op.perm.get_values()
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return [em.transpose(ct, inverse) if needs[0] else None]


@vjp_rule(ml.ReshapeOp)
def reshape(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.ReshapeOp)
    grads: list[SSAValue | None] = [em.reshape(ct, shape_of(op.x)) if needs[0] else None]
    return grads + [None] * (len(op.operands) - 1)  # the shape operand


@vjp_rule(ml.BroadcastToOp)
def broadcast_to(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.BroadcastToOp)
    grads: list[SSAValue | None] = [em.unbroadcast(ct, shape_of(op.x)) if needs[0] else None]
    return grads + [None] * (len(op.operands) - 1)


@vjp_rule(ml.ConcatOp)
def concat(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.ConcatOp)
    rank = len(shape_of(ct))
    axis = shapes.normalize_axis(op.axis.value.data, rank)
    grads: list[SSAValue | None] = []
    offset = 0
    for operand, needed in zip(op.inputs, needs, strict=True):
        size = shape_of(operand)[axis]
        if not shapes.is_static(size):
            raise shapes.ShapeError(f"the concatenated dim {axis} must be static")
        starts, ends = [0] * rank, [END] * rank
        starts[axis], ends[axis] = offset, offset + size
        grads.append(em(ml.SliceOp(ct, starts, ends, [1] * rank)) if needed else None)
        offset += size
    return grads


@vjp_rule(ml.SliceOp)
def slice_(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.SliceOp)
    if not needs[0]:
        return [None]
    full = static(shape_of(op.x), "the gradient of a slice")
    bounds = zip(op.starts.get_values(), op.ends.get_values(), op.steps.get_values(), strict=True)
    for dim, (start, end, step) in enumerate(bounds):
        taken = list(range(*slice(start, end, step).indices(full[dim])))
        if taken == list(range(full[dim])):
            continue  # the whole dim, in order
        if step == 1:
            ct = _pad(em, ct, dim, taken[0] if taken else 0, full[dim])
        else:
            ct = _scatter_rows(em, ct, dim, taken, full[dim])
    return [ct]


def _pad(em: Emitter, ct: SSAValue, dim: int, before: int, size: int) -> SSAValue:
    """`ct` with zeros before and after it along `dim`, to `size` there."""
    shape = list(shape_of(ct))
    after = size - before - shape[dim]
    pieces = []
    for count in (before, None, after):
        if count is None:
            pieces.append(ct)
        elif count > 0:
            shape[dim] = count
            pieces.append(em.full(0.0, TensorType(element_type(ct), shape)))
    return em(ml.ConcatOp(pieces, dim)) if len(pieces) > 1 else ct


def _scatter_rows(em: Emitter, ct: SSAValue, dim: int, taken: list[int], size: int) -> SSAValue:
    """Row i of `ct` along `dim` added to row taken[i] of zeros of `size` rows there."""
    shape = static(shape_of(ct), "the gradient of a strided slice")
    rank = len(shape)
    last = [d for d in range(rank) if d != dim] + [dim]
    moved = em.transpose(ct, last)  # (..., k)
    rows = 1
    for d in last[:-1]:
        rows *= shape[d]
    matrix = em.reshape(moved, (rows, len(taken)))
    one_hot = [1.0 if j == t else 0.0 for t in taken for j in range(size)]
    spread = em(
        ml.MatmulOp(matrix, em.array(one_hot, TensorType(element_type(ct), [len(taken), size])))
    )
    back = em.reshape(spread, (*(shape[d] for d in last[:-1]), size))
    inverse = [last.index(d) for d in range(rank)]
    return em.transpose(back, inverse)


def _like_slice(op: tensor.ExtractSliceOp | tensor.InsertSliceOp) -> dict[str, Attribute]:
    return {
        name: op.properties[name] for name in ("static_offsets", "static_sizes", "static_strides")
    }


@vjp_rule(tensor.ExtractSliceOp)
def extract_slice(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # The cotangent written into zeros where the slice was taken (ops.scan's rows).
    assert isinstance(op, tensor.ExtractSliceOp)
    grads: list[SSAValue | None] = [None] * len(op.operands)
    if needs[0]:
        insert = tensor.InsertSliceOp.build(
            operands=[ct, em.zeros_like(op.source), op.offsets, op.sizes, op.strides],
            result_types=[op.source.type],
            properties=_like_slice(op),
        )
        grads[0] = em(insert)
    return grads


@vjp_rule(tensor.InsertSliceOp)
def insert_slice(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # The source gets the cotangent's slice, the destination the rest (zeros in the slice).
    assert isinstance(op, tensor.InsertSliceOp)
    grads: list[SSAValue | None] = [None] * len(op.operands)
    dynamic = [op.offsets, op.sizes, op.strides]
    if needs[0]:
        extract = tensor.ExtractSliceOp.build(
            operands=[ct, *dynamic], result_types=[op.source.type], properties=_like_slice(op)
        )
        grads[0] = em(extract)
    if needs[1]:
        insert = tensor.InsertSliceOp.build(
            operands=[em.zeros_like(op.source), ct, *dynamic],
            result_types=[op.dest.type],
            properties=_like_slice(op),
        )
        grads[1] = em(insert)
    return grads
