"""
VJP rules of the indexing ops: gather, gather_elements, gather_nd, the scatters, top_k's
values and cumsum.

A gather's cotangent is a scatter-add of the result's cotangent into zeros at the same
indices (repeated indices add up): `ml.gather` flattens to `(A, K, B)` and scatters
along the middle dim with `ml.scatter_elements`; gather_elements and gather_nd scatter
with their own scatter. top_k's values scatter back to where they were taken.

A scatter's `updates` get the cotangent gathered at the indices, and `data` the
cotangent with the overwritten elements zeroed (reduction `none`) or whole (`add`).
With `none` and an index written twice, every update written there gets the cotangent,
though only the last one lands (JAX's scatter has the same caveat); the other
reductions have no rule.

A cumulative sum's cotangent is the cumulative sum of the cotangent in the other
direction.
"""

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from mlc import shapes
from mlc.autodiff.emitter import Emitter, element_type, shape_of
from mlc.autodiff.rule_table import Cotangents, vjp_rule
from mlc.dialects import ml


def _static(shape: shapes.Shape, what: str) -> tuple[int, ...]:
    if not all(shapes.is_static(d) for d in shape):
        raise shapes.ShapeError(f"{what} needs static dims, got ({shapes.format_shape(shape)})")
    return tuple(shape)


def _product(dims: tuple[int, ...]) -> int:
    total = 1
    for d in dims:
        total *= d
    return total


@vjp_rule(ml.GatherOp)
def gather(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # data[A..., N, B...] gathered at indices[I...]: row n of the cotangent is the sum of
    # the cotangent rows whose index is n, a scatter-add along N of ct(A, K, B).
    assert isinstance(op, ml.GatherOp)
    if not needs[0]:
        return [None, None]
    data = _static(shape_of(op.data), "the gradient of a gather")
    index_shape = _static(shape_of(op.indices), "the gradient of a gather")
    axis = shapes.normalize_axis(op.axis.value.data, len(data))
    outer, k, inner = _product(data[:axis]), _product(index_shape), _product(data[axis + 1 :])
    updates = em.reshape(ct, (outer, k, inner))
    indices = em.reshape(op.indices, (1, k, 1))
    index_type = TensorType(element_type(op.indices), [outer, k, inner])
    indices = em.broadcast_to(indices, index_type)
    zeros = em.full(0.0, TensorType(element_type(ct), [outer, data[axis], inner]))
    spread = em(ml.ScatterElementsOp(zeros, indices, updates, 1, "add"))
    return [em.reshape(spread, data), None]


@vjp_rule(ml.GatherElementsOp)
def gather_elements(
    em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]
) -> Cotangents:
    assert isinstance(op, ml.GatherElementsOp)
    if not needs[0]:
        return [None, None]
    zeros = em.zeros_like(op.data)
    axis = op.axis.value.data
    return [em(ml.ScatterElementsOp(zeros, op.indices, ct, axis, "add")), None]


@vjp_rule(ml.GatherNdOp)
def gather_nd(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.GatherNdOp)
    if not needs[0]:
        return [None, None]
    if op.batch_dims.value.data:
        raise shapes.ShapeError("the gradient of a gather_nd with batch_dims is not supported")
    zeros = em.zeros_like(op.data)
    return [em(ml.ScatterNdOp(zeros, op.indices, ct, "add")), None]


def _scatter_reduction(op: ml.ScatterElementsOp | ml.ScatterNdOp) -> str:
    reduction = op.reduction.data
    if reduction not in ("none", "add"):
        raise shapes.ShapeError(f"a scatter with reduction '{reduction}' has no gradient rule")
    return reduction


@vjp_rule(ml.ScatterElementsOp)
def scatter_elements(
    em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]
) -> Cotangents:
    assert isinstance(op, ml.ScatterElementsOp)
    reduction = _scatter_reduction(op)
    axis = op.axis.value.data
    gdata = gupdates = None
    if needs[0]:
        gdata = ct
        if reduction == "none":
            zeros = em.zeros_like(op.updates)
            gdata = em(ml.ScatterElementsOp(ct, op.indices, zeros, axis))
    if needs[2]:
        gupdates = em(ml.GatherElementsOp(ct, op.indices, axis))
    return [gdata, None, gupdates]


@vjp_rule(ml.ScatterNdOp)
def scatter_nd(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.ScatterNdOp)
    reduction = _scatter_reduction(op)
    gdata = gupdates = None
    if needs[0]:
        gdata = ct
        if reduction == "none":
            gdata = em(ml.ScatterNdOp(ct, op.indices, em.zeros_like(op.updates)))
    if needs[2]:
        gupdates = em(ml.GatherNdOp(ct, op.indices))
    return [gdata, None, gupdates]


@vjp_rule(ml.TopKOp)
def top_k(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # The values' cotangent goes back to the positions they came from (the indices).
    assert isinstance(op, ml.TopKOp)
    if not needs[0]:
        return [None]
    zeros = em.zeros_like(op.x)
    return [em(ml.ScatterElementsOp(zeros, op.indices, ct, op.axis.value.data, "add"))]


@vjp_rule(ml.CumSumOp)
def cumsum(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # y_i = sum_{j <= i} x_j (or j < i): dx_j = sum_{i >= j} ct_i (or i > j).
    assert isinstance(op, ml.CumSumOp)
    if not needs[0]:
        return [None]
    axis = op.axis.value.data
    exclusive, reverse = op.exclusive.value.data, op.reverse.value.data
    return [em(ml.CumSumOp(ct, axis, bool(exclusive), not reverse))]
