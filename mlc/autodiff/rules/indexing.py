"""
VJP rules of the indexing ops: gather, gather_elements, gather_nd, the scatters, top_k's
values and cumsum.

A gather's cotangent is a scatter-add of the result's cotangent into zeros at the same
indices (repeated indices add up): `ml.gather` along axis 0 (an embedding) scatters
whole rows with `ml.scatter_nd`, along another axis it flattens to `(A, K, B)` and
scatters along the middle dim with `ml.scatter_elements`; gather_elements and gather_nd scatter
with their own scatter. top_k's values scatter back to where they were taken.

A scatter's `updates` get the cotangent gathered at the indices, and `data` the
cotangent with the overwritten elements zeroed (reduction `none`) or whole (`add`).
With `none` and an index written twice, every update written there gets the cotangent,
though only the last one lands (JAX's scatter has the same caveat). The other
reductions follow torch's `scatter_reduce` (with `include_self`):

- `mul`: `data` gets the cotangent times the product of the updates written there
  (scattered into ones: no division), an update the cotangent times the result over
  itself; a zero update, the only zero written at its place, gets the cotangent times
  the product of the others (the scatter again with it replaced by one), so a zero
  does not wipe out its own gradient; with two zeros there, every update gets zero.
- `max` / `min`: the cotangent of each result element is split evenly between the
  elements that tie for it, `data`'s and the updates'; where one wins, it gets it all.

A cumulative sum's cotangent is the cumulative sum of the cotangent in the other
direction.
"""

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue

from mlc import shapes
from mlc.autodiff.emitter import Emitter, element_type, shape_of
from mlc.autodiff.rule_table import Cotangents, vjp_rule
from mlc.dialects import ml


def _product(dims: Sequence[int]) -> int:
    """The product of `dims`, dynamic if one of them is."""
    total = 1
    for d in dims:
        if not shapes.is_static(d):
            return shapes.DYNAMIC
        total *= d
    return total


@vjp_rule(ml.GatherOp)
def gather(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # data[A..., N, B...] gathered at indices[I...]: row n of the cotangent is the sum of
    # the cotangent rows whose index is n, a scatter-add along N of ct(A, K, B). Dynamic
    # dims: each of the reshapes may leave one to be inferred at run time.
    assert isinstance(op, ml.GatherOp)
    if not needs[0]:
        return [None, None]
    data, index_shape = shape_of(op.data), shape_of(op.indices)
    axis = shapes.normalize_axis(op.axis.value.data, len(data))
    outer, inner = _product(data[:axis]), _product(data[axis + 1 :])
    k = _product(index_shape)
    if axis == 0 and (shapes.is_static(k) or all(shapes.is_static(d) for d in data[1:])):
        # Rows of the table (an embedding's gradient): a scatter_nd of whole rows, which
        # its lowering groups by row rather than by element.
        rows = em.reshape(ct, (k, *data[1:]))
        at = em.reshape(op.indices, (k, 1))
        return [em(ml.ScatterNdOp(em.zeros_like(op.data), at, rows, "add")), None]
    updates = em.reshape(ct, (outer, k, inner))
    indices = em.broadcast_like(em.reshape(op.indices, (1, k, 1)), updates)
    rows = (outer, data[axis], inner)
    if all(shapes.is_static(d) for d in rows):
        zeros = em.full(0.0, TensorType(element_type(ct), list(rows)))
    else:
        zeros = em.reshape(em.zeros_like(op.data), rows)
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


Scatter = Callable[[SSAValue, SSAValue, str], SSAValue]  # (base, updates, reduction)
Gather = Callable[[SSAValue], SSAValue]  # a tensor of data's shape, read at the indices


def _scatter(
    em: Emitter,
    op: ml.ScatterElementsOp | ml.ScatterNdOp,
    ct: SSAValue,
    needs: tuple[bool, ...],
    scatter: Scatter,
    gather: Gather,
) -> Cotangents:
    reduction = op.reduction.data
    data, updates = op.data, op.updates
    gdata = gupdates = None
    if reduction in ("none", "add"):
        if needs[0]:
            gdata = ct if reduction == "add" else scatter(ct, em.zeros_like(updates), "none")
        if needs[2]:
            gupdates = gather(ct)
    elif reduction == "mul":
        gdata, gupdates = _scatter_mul(em, op, ct, needs, scatter, gather)
    elif reduction in ("max", "min"):
        out = op.results[0]
        data_wins = em.as_float(em.cmp("eq", data, out), ct)
        update_wins = em.as_float(em.cmp("eq", updates, gather(out)), ct)
        share = em.div(ct, scatter(data_wins, update_wins, "add"))  # >= 1 winner each
        gdata = em.mul(data_wins, share) if needs[0] else None
        gupdates = em.mul(update_wins, gather(share)) if needs[2] else None
    else:
        raise shapes.ShapeError(f"a scatter with reduction '{reduction}' has no gradient rule")
    return [gdata, None, gupdates]


def _scatter_mul(em: Emitter, op, ct, needs, scatter: Scatter, gather: Gather):
    data, updates, out = op.data, op.updates, op.results[0]
    one = em.scalar(1.0, updates)
    gdata = gupdates = None
    if needs[0]:
        ones = em.add(em.zeros_like(data), em.scalar(1.0, data))
        gdata = em.mul(ct, scatter(ones, updates, "mul"))
    if needs[2]:
        zero = em.cmp("eq", updates, em.scalar(0.0, updates))
        is_zero = em.as_float(zero, updates)
        zeros_there = gather(scatter(em.zeros_like(data), is_zero, "add"))
        lone_zero = em.cmp("eq", em.mul(is_zero, zeros_there), one)
        without = scatter(data, em.select(lone_zero, one, updates), "mul")
        divided = em.div(gather(em.mul(ct, out)), em.select(zero, one, updates))
        gupdates = em.select(lone_zero, gather(em.mul(ct, without)), divided)
    return gdata, gupdates


@vjp_rule(ml.ScatterElementsOp)
def scatter_elements(
    em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]
) -> Cotangents:
    assert isinstance(op, ml.ScatterElementsOp)
    axis, indices = op.axis.value.data, op.indices

    def scatter(base: SSAValue, updates: SSAValue, reduction: str) -> SSAValue:
        return em(ml.ScatterElementsOp(base, indices, updates, axis, reduction))

    return _scatter(em, op, ct, needs, scatter, lambda t: em(ml.GatherElementsOp(t, indices, axis)))


@vjp_rule(ml.ScatterNdOp)
def scatter_nd(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.ScatterNdOp)
    indices = op.indices

    def scatter(base: SSAValue, updates: SSAValue, reduction: str) -> SSAValue:
        return em(ml.ScatterNdOp(base, indices, updates, reduction))

    return _scatter(em, op, ct, needs, scatter, lambda t: em(ml.GatherNdOp(t, indices)))


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
