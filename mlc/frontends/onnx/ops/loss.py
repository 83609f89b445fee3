"""
Loss ops composed of `ml` ops: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss.

Inputs are `[N, C, d1...]` scores with `[N, d1...]` integer targets. The target's class
is picked with `ml.gather_elements` along axis 1; targets equal to `ignore_index` are
replaced by class 0 before the gather (so no index leaves the buffer) and weigh 0. A
weighted mean divides by the sum of the weights of the targets picked, as onnx says.
"""

from collections.abc import Sequence

from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import reshape_to, shape_of, sizes
from mlc.frontends.onnx.ops.table import converts

REDUCTIONS = ("none", "sum", "mean")


def _log_softmax(node: Node, x: SSAValue) -> SSAValue:
    """`x - max - log(sum(exp(x - max)))` along axis 1."""
    shifted = node.emit(ml.SubOp(x, node.emit(ml.ReduceMaxOp(x, [1], keepdims=True))))
    total = node.emit(ml.ReduceSumOp(node.emit(ml.ExpOp(shifted)), [1], keepdims=True))
    return node.emit(ml.SubOp(shifted, node.emit(ml.LogOp(total))))


def _reduction(node: Node, log_prob: SSAValue, target: SSAValue) -> str:
    """The node's `reduction`, after checking it and the ranks of the inputs."""
    reduction = node.attr("reduction", "mean")
    if isinstance(reduction, bytes):
        reduction = reduction.decode()
    if reduction not in REDUCTIONS:
        raise NodeError(f"reduction must be one of {', '.join(REDUCTIONS)}, got '{reduction}'")
    rank = len(shape_of(log_prob))
    if rank < 2 or len(shape_of(target)) != rank - 1:
        raise NodeError(
            f"needs scores of rank >= 2 and a target of one rank less, got ranks "
            f"{rank} and {len(shape_of(target))}"
        )
    return reduction


def _nll(node: Node, log_prob: SSAValue, target: SSAValue, weight: SSAValue | None) -> SSAValue:
    """The loss of `log_prob` [N, C, d...] at `target` [N, d...], reduced per the node."""
    reduction = _reduction(node, log_prob, target)
    rank = len(shape_of(log_prob))
    ignore_index = node.attr("ignore_index")
    keep = None
    if ignore_index is not None:
        keep = node.emit(ml.CmpOp("ne", target, node.scalar(ignore_index, target)))
        target = node.emit(ml.SelectOp(keep, target, node.scalar(0, target)))
    dims = sizes(node, target)
    picked = node.emit(
        ml.GatherElementsOp(log_prob, reshape_to(node, target, [dims[0], 1, *dims[1:]]), 1)
    )
    loss = node.emit(ml.NegOp(reshape_to(node, picked, dims)))
    weights = None
    if weight is not None:
        weights = node.emit(ml.GatherOp(weight, target, 0))
    if keep is not None:
        one = weights if weights is not None else node.scalar(1, loss)
        weights = node.emit(ml.SelectOp(keep, one, node.scalar(0, loss)))
    if weights is not None:
        loss = node.emit(ml.MulOp(loss, weights))
    axes = list(range(rank - 1))
    if reduction == "none":
        return loss
    total = node.emit(ml.ReduceSumOp(loss, axes, keepdims=False))
    if reduction == "sum":
        return total
    if weights is None:
        return node.emit(ml.ReduceMeanOp(loss, axes, keepdims=False))
    count = node.emit(ml.ReduceSumOp(_full(node, weights, loss), axes, keepdims=False))
    return node.emit(ml.DivOp(total, count))


def _full(node: Node, weights: SSAValue, like: SSAValue) -> SSAValue:
    """`weights` at the shape of `like` (a select of two scalars is already full)."""
    if shape_of(weights) == shape_of(like):
        return weights
    return node.emit(ml.AddOp(weights, node.emit(ml.MulOp(like, node.scalar(0, like)))))


@converts("NegativeLogLikelihoodLoss", since=12)
def negative_log_likelihood_loss(node: Node) -> Sequence[Value]:
    weight = node.input(2) if node.has(2) else None
    return [_nll(node, node.input(0), node.input(1), weight)]


@converts("SoftmaxCrossEntropyLoss", since=12)
def softmax_cross_entropy_loss(node: Node) -> Sequence[Value]:
    """The loss and, where asked for, the log-probabilities (axis 1 log-softmax)."""
    log_prob = _log_softmax(node, node.input(0))
    weight = node.input(2) if node.has(2) else None
    loss = _nll(node, log_prob, node.input(1), weight)
    if len(node.proto.output) > 1 and node.proto.output[1]:
        return [loss, log_prob]
    return [loss]
