"""Neural-network ONNX ops: MatMul, Gemm, softmax and the normalisations (windows: `window`)."""

from collections.abc import Sequence

from xdsl.ir import SSAValue

from mlc import shapes
from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import cast, element_of, product, reshape_to, shape_of, sizes
from mlc.frontends.onnx.ops.table import converts


@converts("MatMul")
def matmul(node: Node) -> Sequence[Value]:
    a, b = node.input(0), node.input(1)
    sa, sb = shape_of(a), shape_of(b)
    if len(sa) == 1:
        a = reshape_to(node, a, [1, *sizes(node, a)])
    if len(sb) == 1:
        b = reshape_to(node, b, [*sizes(node, b), 1])
    result = node.emit(ml.MatmulOp(a, b))
    if len(sa) == 1 or len(sb) == 1:
        dims = sizes(node, result)
        drop = ([len(dims) - 2] if len(sa) == 1 else []) + ([len(dims) - 1] if len(sb) == 1 else [])
        result = reshape_to(node, result, [d for i, d in enumerate(dims) if i not in drop])
    return [result]


@converts("Gemm")
def gemm(node: Node) -> Sequence[Value]:
    a, b = node.input(0), node.input(1)
    if node.attr("transA", 0):
        a = node.emit(ml.TransposeOp(a, [1, 0]))
    if node.attr("transB", 0):
        b = node.emit(ml.TransposeOp(b, [1, 0]))
    result = node.emit(ml.MatmulOp(a, b))
    alpha, beta = node.attr("alpha", 1.0), node.attr("beta", 1.0)
    if alpha != 1.0:
        result = node.emit(ml.MulOp(result, node.scalar(alpha, result)))
    if node.has(2) and beta != 0.0:
        c = node.input(2)
        if beta != 1.0:
            c = node.emit(ml.MulOp(c, node.scalar(beta, c)))
        result = node.emit(ml.AddOp(result, c))
    return [result]


# ---------------------------------------------------------------------------
# Softmax and normalisation
# ---------------------------------------------------------------------------


def _log_softmax(node: Node, x: SSAValue, axis: int) -> SSAValue:
    """`x - max - log(sum(exp(x - max)))` along `axis`: stable, and exact for large x."""
    peak = node.emit(ml.ReduceMaxOp(x, [axis], keepdims=True))
    shifted = node.emit(ml.SubOp(x, peak))
    total = node.emit(ml.ReduceSumOp(node.emit(ml.ExpOp(shifted)), [axis], keepdims=True))
    return node.emit(ml.SubOp(shifted, node.emit(ml.LogOp(total))))


def _softmax_along(node: Node, x: SSAValue, axis: int) -> SSAValue:
    if node.proto.op_type == "LogSoftmax":
        return _log_softmax(node, x, axis)
    return node.emit(ml.SoftmaxOp(x, axis))


@converts("Softmax", "LogSoftmax", since=13)
def softmax(node: Node) -> Sequence[Value]:
    return [_softmax_along(node, node.input(0), node.attr("axis", -1))]


@converts("Softmax", "LogSoftmax", since=1)
def softmax_coerced(node: Node) -> Sequence[Value]:
    """Before opset 13: over all dims from `axis` on, as a 2-D (outer, inner) matrix."""
    x = node.input(0)
    source = shape_of(x)
    axis = shapes.normalize_axis(node.attr("axis", 1), len(source))
    if axis == len(source) - 1:
        return [_softmax_along(node, x, -1)]
    current = sizes(node, x)
    flat = reshape_to(node, x, [product(node, current[:axis]), product(node, current[axis:])])
    return [reshape_to(node, _softmax_along(node, flat, 1), current)]


def _normalize(node: Node, x: SSAValue, axes: list[int], epsilon: float) -> tuple[SSAValue, ...]:
    """`(x - mean) * inv_std`, the mean and the inverse standard deviation over `axes`."""
    mean = node.emit(ml.ReduceMeanOp(x, axes, keepdims=True))
    centered = node.emit(ml.SubOp(x, mean))
    var = node.emit(ml.ReduceMeanOp(node.emit(ml.MulOp(centered, centered)), axes, keepdims=True))
    inv_std = node.emit(ml.RsqrtOp(node.emit(ml.AddOp(var, node.scalar(epsilon, var)))))
    return node.emit(ml.MulOp(centered, inv_std)), mean, inv_std


@converts("LayerNormalization", since=17)
def layer_norm(node: Node) -> Sequence[Value]:
    x, scale = node.input(0), node.input(1)
    rank = len(shape_of(x))
    axis = shapes.normalize_axis(node.attr("axis", -1), rank)
    epsilon = node.attr("epsilon", 1e-5)
    wants_stats = len([o for o in node.proto.output[1:] if o]) > 0
    if not wants_stats and node.has(2):
        return [node.emit(ml.LayerNormOp(x, scale, node.input(2), axis, epsilon))]
    normalized, mean, inv_std = _normalize(node, x, list(range(axis, rank)), epsilon)
    y = node.emit(ml.MulOp(normalized, scale))
    if node.has(2):
        y = node.emit(ml.AddOp(y, node.input(2)))
    return [y, mean, inv_std]


@converts("BatchNormalization")
def batch_norm(node: Node) -> Sequence[Value]:
    """Inference form; in training mode (opset 14 on), with the batch's statistics."""
    x = node.input(0)
    scale, bias, mean, var = [cast(node, node.input(i), element_of(x)) for i in range(1, 5)]
    epsilon = node.attr("epsilon", 1e-5)
    training = node.opset >= 14 and node.attr("training_mode", 0)
    if not training:
        if any(node.proto.output[1:]):
            raise NodeError(
                "the statistics outputs are only supported in training mode (opset 14 on)"
            )
        return [node.emit(ml.BatchNormOp(x, scale, bias, mean, var, epsilon=epsilon))]
    # Mean and (population) variance of each channel, over the batch and spatial dims.
    axes = [0, *range(2, len(shape_of(x)))]
    batch_mean = node.emit(ml.ReduceMeanOp(x, axes, keepdims=False))
    centered = node.emit(ml.SubOp(x, node.emit(ml.ReduceMeanOp(x, axes, keepdims=True))))
    squares = node.emit(ml.MulOp(centered, centered))
    batch_var = node.emit(ml.ReduceMeanOp(squares, axes, keepdims=False))
    y = node.emit(ml.BatchNormOp(x, scale, bias, batch_mean, batch_var, epsilon=epsilon))
    # running = running * momentum + batch * (1 - momentum)
    momentum = node.attr("momentum", 0.9)

    def running(old: SSAValue, batch: SSAValue) -> SSAValue:
        kept = node.emit(ml.MulOp(old, node.scalar(momentum, old)))
        return node.emit(
            ml.AddOp(kept, node.emit(ml.MulOp(batch, node.scalar(1 - momentum, batch))))
        )

    return [y, running(mean, batch_mean), running(var, batch_var)]


@converts("InstanceNormalization")
def instance_norm(node: Node) -> Sequence[Value]:
    x, scale, bias = node.input(0), node.input(1), node.input(2)
    rank = len(shape_of(x))
    normalized, _, _ = _normalize(node, x, list(range(2, rank)), node.attr("epsilon", 1e-5))
    channels = [shape_of(scale)[0], *([1] * (rank - 2))]
    scaled = node.emit(ml.MulOp(normalized, reshape_to(node, scale, channels)))
    return [node.emit(ml.AddOp(scaled, reshape_to(node, bias, channels)))]
