"""Reductions and normalisations: reduce_*, softmax, layer_norm, batch_norm."""

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    BoolAttr,
    DenseArrayBase,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    TensorType,
    f32,
    i1,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def

from mlc import shapes
from mlc.dialects.ml.base import (
    FUNCTIONAL_TYPE,
    ElementKind,
    MLOp,
    i64_array,
    shape_of,
    tensor_type,
)

# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------


class ReduceOp(MLOp):
    """Reduces `x` over `axes`, keeping them as size-1 dims when `keepdims`."""

    x = operand_def(TensorType)
    axes = prop_def(DenseArrayBase.constr(i64))
    keepdims = prop_def(BoolAttr)
    result = result_def(TensorType)

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC
    assembly_format = f"$x {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        x: SSAValue,
        axes: Sequence[int],
        keepdims: bool = False,
        result_type: Attribute | None = None,
    ):
        props: dict[str, Attribute] = {
            "axes": i64_array(axes),
            "keepdims": IntegerAttr(int(keepdims), i1),
        }
        super().__init__([x], result_type, props)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.reduce(
            shape_of(self.x), self.axes.get_values(), bool(self.keepdims.value.data)
        )
        return TensorType(tensor_type(self.x).element_type, shape)


@irdl_op_definition
class ReduceSumOp(ReduceOp):
    """
    Sum over `axes` (numpy.sum with a tuple axis); an empty `axes` reduces nothing.

    Axes may be negative and must be distinct. With `keepdims`, reduced dimensions
    stay as size 1.

    ```mlir
    %s = ml.reduce_sum %x {axes = array<i64: 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.reduce_sum"


@irdl_op_definition
class ReduceMeanOp(ReduceOp):
    """
    Arithmetic mean over `axes` (integers divide truncating toward zero).

    ```mlir
    %m = ml.reduce_mean %x {axes = array<i64: -1>, keepdims = true} : (tensor<4x8xf32>) -> tensor<4x1xf32>
    ```
    """

    name = "ml.reduce_mean"


@irdl_op_definition
class ReduceMaxOp(ReduceOp):
    """
    Maximum over `axes` (NaN propagates, as numpy.max).

    ```mlir
    %m = ml.reduce_max %x {axes = array<i64: 0, 1>, keepdims = false} : (tensor<4x8xf32>) -> tensor<f32>
    ```
    """

    name = "ml.reduce_max"


@irdl_op_definition
class ReduceMinOp(ReduceOp):
    """
    Minimum over `axes` (NaN propagates, as numpy.min).

    ```mlir
    %m = ml.reduce_min %x {axes = array<i64: 0>, keepdims = false} : (tensor<?x8xi32>) -> tensor<8xi32>
    ```
    """

    name = "ml.reduce_min"


# ---------------------------------------------------------------------------
# Normalisations
# ---------------------------------------------------------------------------


@irdl_op_definition
class SoftmaxOp(MLOp):
    """
    Softmax along `axis`: `exp(x - max) / sum(exp(x - max))`.

    ```mlir
    %p = ml.softmax %x {axis = -1 : i64} : (tensor<2x10xf32>) -> tensor<2x10xf32>
    ```
    """

    name = "ml.softmax"

    x = operand_def(TensorType)
    axis = prop_def(IntegerAttr[IntegerType])
    result = result_def(TensorType)

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.FLOAT
    assembly_format = f"$x {FUNCTIONAL_TYPE}"

    def __init__(self, x: SSAValue, axis: int = -1, result_type: Attribute | None = None):
        super().__init__([x], result_type, {"axis": IntegerAttr(axis, i64)})

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.softmax(shape_of(self.x), self.axis.value.data)
        return TensorType(tensor_type(self.x).element_type, shape)


@irdl_op_definition
class LayerNormOp(MLOp):
    """
    Layer normalisation over dims `axis..rank-1` (onnx LayerNormalization).

    `(x - mean) / sqrt(var + epsilon) * scale + bias`, with mean and (biased)
    variance over the normalised dims; `scale` and `bias` broadcast to those dims.

    ```mlir
    %y = ml.layer_norm %x, %g, %b {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8x16xf32>, tensor<16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
    ```
    """

    name = "ml.layer_norm"

    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    axis = prop_def(IntegerAttr[IntegerType])
    epsilon = prop_def(FloatAttr)
    result = result_def(TensorType)

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.FLOAT
    assembly_format = f"$x `,` $scale `,` $bias {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        x: SSAValue,
        scale: SSAValue,
        bias: SSAValue,
        axis: int = -1,
        epsilon: float = 1e-5,
        result_type: Attribute | None = None,
    ):
        props: dict[str, Attribute] = {
            "axis": IntegerAttr(axis, i64),
            "epsilon": FloatAttr(epsilon, f32),
        }
        super().__init__([x, scale, bias], result_type, props)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.layer_norm(
            shape_of(self.x), shape_of(self.scale), shape_of(self.bias), self.axis.value.data
        )
        return TensorType(tensor_type(self.x).element_type, shape)


@irdl_op_definition
class BatchNormOp(MLOp):
    """
    Inference-form batch normalisation over channel dim 1 (onnx BatchNormalization).

    `(x - mean) / sqrt(var + epsilon) * scale + bias`, where `scale`, `bias`,
    `mean` and `var` are rank 1 with one entry per channel.

    ```mlir
    %y = ml.batch_norm %x, %s, %b, %m, %v {epsilon = 1.0e-05 : f32} : (tensor<1x3x8x8xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<1x3x8x8xf32>
    ```
    """

    name = "ml.batch_norm"

    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    bias = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    epsilon = prop_def(FloatAttr)
    result = result_def(TensorType)

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.FLOAT
    assembly_format = f"$x `,` $scale `,` $bias `,` $mean `,` $var {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        x: SSAValue,
        scale: SSAValue,
        bias: SSAValue,
        mean: SSAValue,
        var: SSAValue,
        epsilon: float = 1e-5,
        result_type: Attribute | None = None,
    ):
        props: dict[str, Attribute] = {"epsilon": FloatAttr(epsilon, f32)}
        super().__init__([x, scale, bias, mean, var], result_type, props)

    def infer_result_type(self) -> TensorType[Attribute]:
        params = (self.scale, self.bias, self.mean, self.var)
        shape = shapes.batch_norm(shape_of(self.x), *(shape_of(p) for p in params))
        return TensorType(tensor_type(self.x).element_type, shape)
