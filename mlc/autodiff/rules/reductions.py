"""
VJP rules of the reductions and normalisations: reduce_sum, reduce_mean, reduce_max,
reduce_min, softmax and layer_norm.

A reduction's cotangent is broadcast back over the reduced dims (divided by their size
for a mean); a max or min sends it to the elements equal to the result, split evenly
between ties, as JAX does. Softmax and layer_norm use their closed-form VJPs, layer_norm
recomputing its mean and variance from the input.
"""

from xdsl.ir import Operation, SSAValue

from mlc import shapes
from mlc.autodiff.emitter import Emitter, shape_of
from mlc.autodiff.rule_table import Cotangents, vjp_rule
from mlc.dialects import ml


def _kept(em: Emitter, op: ml.ReduceOp, ct: SSAValue) -> tuple[SSAValue, tuple[int, ...]]:
    """The cotangent reshaped to the kept-dims shape, and the reduced axes."""
    shape = shape_of(op.x)
    axes = shapes.normalize_axes(op.axes.get_values(), len(shape))
    if not op.keepdims.value.data:
        ct = em.reshape(ct, shapes.reduce(shape, axes, keepdims=True))
    return ct, axes


def _spread(em: Emitter, ct: SSAValue, x: SSAValue) -> SSAValue:
    """`ct` (kept dims) broadcast to `x`'s shape (its dynamic dims read at run time)."""
    return em.broadcast_like(ct, x)


@vjp_rule(ml.ReduceSumOp)
def reduce_sum(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.ReduceSumOp)
    kept, _ = _kept(em, op, ct)
    return [_spread(em, kept, op.x) if needs[0] else None]


@vjp_rule(ml.ReduceMeanOp)
def reduce_mean(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.ReduceMeanOp)
    if not needs[0]:
        return [None]
    kept, axes = _kept(em, op, ct)
    count = shapes.num_elements([shape_of(op.x)[a] for a in axes])
    if count is None:  # dynamic dims: their sizes read at run time
        return [_spread(em, em.div(kept, em.size(op.x, axes)), op.x)]
    return [_spread(em, em.scale(kept, 1.0 / count), op.x)]


@vjp_rule(ml.ReduceMaxOp, ml.ReduceMinOp)
def reduce_choose(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.ReduceMaxOp | ml.ReduceMinOp)
    if not needs[0]:
        return [None]
    kept, axes = _kept(em, op, ct)
    chosen = em.reshape(op.result, shape_of(kept))
    hits = em.as_float(em.cmp("eq", op.x, chosen), op.x)
    count = em.sum(hits, axes, keepdims=True)
    return [em.mul(hits, em.div(kept, count))]


@vjp_rule(ml.SoftmaxOp)
def softmax(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # dx = y * (ct - sum(ct * y, axis))
    assert isinstance(op, ml.SoftmaxOp)
    if not needs[0]:
        return [None]
    y = op.result
    axis = shapes.normalize_axis(op.axis.value.data, len(shape_of(y)))
    dot = em.sum(em.mul(ct, y), [axis], keepdims=True)
    return [em.mul(y, em.sub(ct, dot))]


@vjp_rule(ml.LayerNormOp)
def layer_norm(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.LayerNormOp)
    x, scale, bias = op.x, op.scale, op.bias
    rank = len(shape_of(x))
    axes = list(range(shapes.normalize_axis(op.axis.value.data, rank), rank))

    def mean(v: SSAValue) -> SSAValue:
        return em(ml.ReduceMeanOp(v, axes, keepdims=True))

    centred = em.sub(x, mean(x))
    variance = mean(em.mul(centred, centred))
    epsilon = em.scalar(op.epsilon.value.data, x)
    inv_std = em(ml.RsqrtOp(em.add(variance, epsilon)))
    normed = em.mul(centred, inv_std)
    gx = gscale = gbias = None
    if needs[0]:
        # dx = inv_std * (g - mean(g) - normed * mean(g * normed)), g = ct * scale
        g = em.mul(ct, scale)
        gx = em.sub(em.sub(g, mean(g)), em.mul(normed, mean(em.mul(g, normed))))
        gx = em.mul(inv_std, gx)
    if needs[1]:
        gscale = em.unbroadcast(em.mul(ct, normed), shape_of(scale))
    if needs[2]:
        gbias = em.unbroadcast(ct, shape_of(bias))
    return [gx, gscale, gbias]


@vjp_rule(ml.BatchNormOp)
def batch_norm(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    # y = (x - mean) * r * scale + bias, r = (var + eps)^(-1/2), per channel (dim 1).
    # Every operand is differentiated, mean and var included: training mode computes them
    # from x (`ops.batch_norm(..., training=True)`), and their rules carry the rest.
    assert isinstance(op, ml.BatchNormOp)
    x = op.x
    rank = len(shape_of(x))
    channels = shape_of(op.scale)[0]
    others = [0, *range(2, rank)]

    def per_channel(v: SSAValue) -> SSAValue:
        return em.reshape(v, [channels, *[1] * (rank - 2)])

    def total(v: SSAValue) -> SSAValue:
        return em.sum(v, others, keepdims=False)

    epsilon = em.scalar(op.epsilon.value.data, op.var)
    r = em(ml.RsqrtOp(em.add(op.var, epsilon)))
    centred = em.sub(x, per_channel(op.mean))
    gx = gscale = gbias = gmean = gvar = None
    if needs[0] or needs[3]:
        gx = em.mul(ct, per_channel(em.mul(r, op.scale)))
        gmean = em.neg(total(gx)) if needs[3] else None
    if needs[1]:
        gscale = em.mul(total(em.mul(ct, centred)), r)
    if needs[2]:
        gbias = total(ct)
    if needs[4]:
        # d r / d var = -r^3 / 2
        cube = em.mul(em.mul(r, r), r)
        gvar = em.mul(total(em.mul(ct, centred)), em.scale(em.mul(cube, op.scale), -0.5))
    return [gx if needs[0] else None, gscale, gbias, gmean, gvar]
