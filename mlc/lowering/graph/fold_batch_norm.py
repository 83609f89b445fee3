"""
Fold an inference `ml.batch_norm` into the constant weights of the convolution it reads.

Per output channel `f`, batch norm after a convolution is a convolution:

    batch_norm(conv(x, W, b), g, beta, m, v, eps)
        == conv(x, W * s[f]) + ((b - m) * s + beta)[f]    with s = g / sqrt(v + eps)

    %c = ml.conv2d %x, %w, %b : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> ...
    %y = ml.batch_norm %c, %g, %beta, %m, %v {epsilon = 1.0e-05 : f32} : (...) -> ...
    // becomes, with %w2 (4x3x3x3) and %b2 (4x1x1) new constants
    %c2 = ml.conv2d %x, %w2 : (tensor<?x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<?x4x6x6xf32>
    %y = ml.add %c2, %b2 : (tensor<?x4x6x6xf32>, tensor<4x1x1xf32>) -> tensor<?x4x6x6xf32>

The new bias is added after the convolution rather than given as its bias operand:
`convert-ml-to-linalg` starts a convolution with a bias from a broadcast of it (a pass
over the output, and a kernel of its own where the GPU maps the loops), while a zero
start is dropped by `linalg-tile` and an add after it fuses into its epilogue
(`linalg-fuse-elementwise`), with whatever follows (relu, a residual add). So the
batch norm's five operations per element become one, in the same place.

Dim 0 of the weights is the output channel whatever the groups, so grouped and
depthwise convolutions fold the same way, as do 1-D and 3-D ones. The new constants
are computed in float64 from the old ones and cast to the convolution's element type;
as the ONNX frontend's weights, they are `dense_resource` blobs when large
(`mlc.resources`), the old ones left to `dce`.

Preconditions: the weights, the bias if any and the four batch-norm operands are
`arith.constant`s (dense, or a resource this process holds), and the convolution's
result is read by the batch norm alone. Anything else is left alone, with a remark
saying why (`--remarks`): a non-constant operand, a convolution with another user, a
dynamic channel count, an element type numpy does not hold (bf16).
"""

import re
from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseResourceAttr, ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from mlc import resources, shapes
from mlc.diagnostics import op_remark
from mlc.dialects import ml
from mlc.lowering.convert_ml_to_linalg.normalization import decimal_epsilon
from mlc.lowering.graph.patterns.evaluate import numpy_dtype
from mlc.lowering.graph.patterns.fold import constant_array, replace_with_value
from mlc.lowering.support.locations import fused_location

# ---------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------


def folded_parameters(
    weight: np.ndarray,
    bias: np.ndarray | None,
    norm: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
    epsilon: float,
) -> tuple[np.ndarray, np.ndarray]:
    """
    The weights and bias of `batch_norm(conv(x, weight, bias))` as one convolution.

    `norm` is (scale, bias, mean, var), one entry per output channel. Computed in
    float64, returned in the weights' dtype.
    """
    scale, shift, mean, var = (np.asarray(p, np.float64) for p in norm)
    s = scale / np.sqrt(var + epsilon)
    old_bias = np.zeros_like(s) if bias is None else np.asarray(bias, np.float64)
    per_channel = s.reshape((-1,) + (1,) * (weight.ndim - 1))
    new_weight = weight.astype(np.float64) * per_channel
    new_bias = (old_bias - mean) * s + shift
    return new_weight.astype(weight.dtype), new_bias.astype(weight.dtype)


def resource_stem(value: SSAValue) -> str:
    """The name a folded weight is stored under: its resource's, less the digest."""
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseResourceAttr):
        return re.sub(r"_[0-9a-f]{16}$", "", op.value.resource_handle.data)
    return "conv"


# ---------------------------------------------------------------------------
# Matching
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Folding:
    """A batch norm that folds: the convolution it reads and the new constants."""

    conv: ml.ConvOp
    weight: np.ndarray
    bias: np.ndarray


def folding(op: ml.BatchNormOp) -> Folding | str | None:
    """
    How `op` folds into the convolution it reads, the reason it does not, or None when
    it reads no convolution (nothing to fold, nothing to explain).
    """
    conv = op.x.owner
    if not isinstance(conv, ml.ConvOp):
        return None
    if not conv.result.has_one_use():
        return "the convolution's result has other users"
    if not shapes.is_static(ml.base.shape_of(conv.result)[1]):
        return "the channel count is dynamic"
    element = ml.base.tensor_type(conv.result).element_type
    if (dtype := numpy_dtype(element)) is None or not np.issubdtype(dtype, np.floating):
        return f"element type {element} is not folded"
    named = {"weights": conv.w, "bias": conv.bias, "scale": op.scale, "shift": op.bias}
    named |= {"mean": op.mean, "variance": op.var}
    arrays = {k: constant_array(v) for k, v in named.items() if v is not None}
    if missing := [k for k, a in arrays.items() if a is None]:
        return f"not a constant: {', '.join(missing)}"
    held = {k: a for k, a in arrays.items() if a is not None}
    weight, bias = held["weights"], held.get("bias")
    norm = (held["scale"], held["shift"], held["mean"], held["variance"])
    new_weight, new_bias = folded_parameters(weight, bias, norm, decimal_epsilon(op.epsilon))
    return Folding(conv, new_weight, new_bias)


def constant(array: np.ndarray, name: str) -> arith.ConstantOp:
    attr = resources.elements_attr(array, name)
    return arith.ConstantOp(attr, attr.type)  # pyright: ignore[reportArgumentType]


# ---------------------------------------------------------------------------
# The rewrite
# ---------------------------------------------------------------------------


class FoldBatchNormIntoConv(RewritePattern):
    """`batch_norm(conv(x, W, b))` with constant operands -> `conv(x, W') + b'`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.BatchNormOp, rewriter: PatternRewriter, /) -> None:
        if not isinstance(plan := folding(op), Folding):
            # No convolution to fold into, or one that cannot take the batch norm.
            return
        conv = plan.conv
        stem = resource_stem(conv.w)
        weight = constant(plan.weight, f"{stem}.folded")
        new = conv.with_operands(weight.result)
        spatial = (1,) * conv.SPATIAL  # the bias broadcasts along the spatial dims
        bias = constant(plan.bias.reshape(-1, *spatial), f"{stem}.folded_bias")
        add = ml.AddOp(new.result, bias.result, conv.result.type)
        rewriter.insert([weight, bias, new], InsertPoint.before(op))
        replace_with_value(op, rewriter, add, add.result)
        for created in (weight, bias, new, add):
            created.location = fused_location([conv, op])
        rewriter.erase(conv)


def remark_unfolded(module: ModuleOp) -> None:
    """Remark on every batch norm after a convolution that stays unfolded, and why."""
    for op in module.walk():
        if isinstance(op, ml.BatchNormOp) and isinstance(reason := folding(op), str):
            op_remark(op, f"not folded into the convolution: {reason}")


@dataclass(frozen=True)
class FoldBatchNormPass(ModulePass):
    """Fold batch norms into the constant weights of convolutions (module docstring)."""

    name = "fold-batch-norm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(FoldBatchNormIntoConv()).rewrite_module(op)
        remark_unfolded(op)
