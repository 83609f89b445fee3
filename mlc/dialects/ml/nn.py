"""Contractions and windows: matmul, and 1-D to 3-D convolutions and pools."""

from collections.abc import Sequence
from typing import Any, ClassVar

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, IntegerType, TensorType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)

from mlc import shapes
from mlc.dialects.ml.base import (
    FUNCTIONAL_TYPE,
    ElementKind,
    MLOp,
    canonicalized_by,
    i64_array,
    shape_of,
    tensor_type,
)


@irdl_op_definition
class MatmulOp(MLOp):
    """
    Matrix product (numpy.matmul) of operands of rank >= 2.

    The last two dimensions multiply as `(m, k) @ (k, n) -> (m, n)`; the leading
    (batch) dimensions broadcast as in numpy.

    ```mlir
    %c = ml.matmul %a, %b : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %d = ml.matmul %x, %w : (tensor<?x3x4x8xf32>, tensor<8x2xf32>) -> tensor<?x3x4x2xf32>
    ```
    """

    name = "ml.matmul"

    a = operand_def(TensorType)
    b = operand_def(TensorType)
    result = result_def(TensorType)

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC
    assembly_format = f"$a `,` $b {FUNCTIONAL_TYPE}"

    def __init__(self, a: SSAValue, b: SSAValue, result_type: Attribute | None = None):
        super().__init__([a, b], result_type)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.matmul(shape_of(self.a), shape_of(self.b))
        return TensorType(tensor_type(self.a).element_type, shape)


def window_props(spatial: int) -> tuple[Any, Any, Any]:
    """`strides`, `dilations` and `pads` of a window op over `spatial` dims: 1, 1, 0."""
    ones = i64_array((1,) * spatial)
    return (
        opt_prop_def(DenseArrayBase.constr(i64), default_value=ones),
        opt_prop_def(DenseArrayBase.constr(i64), default_value=ones),
        opt_prop_def(DenseArrayBase.constr(i64), default_value=i64_array((0,) * (2 * spatial))),
    )


def conv_props(spatial: int) -> tuple[Any, Any, Any, Any]:
    """The properties of a convolution over `spatial` dims, in their printed order."""
    groups = opt_prop_def(IntegerAttr[IntegerType], default_value=IntegerAttr(1, i64))
    return (*window_props(spatial), groups)


def pool_props(spatial: int) -> tuple[Any, Any, Any, Any]:
    """The properties of a pooling over `spatial` dims, in their printed order."""
    return (prop_def(DenseArrayBase.constr(i64)), *window_props(spatial))


class ConvOp(MLOp):
    """
    Convolution (onnx Conv) over the `SPATIAL` trailing dims of an N, C, spatial... input.

    Weights are O, I, kernel...; the bias, if any, has O elements. `strides` and
    `dilations` hold one value per spatial dim, `pads` the begins then the ends;
    `groups` splits the channels (`C == I * groups`, `O % groups == 0`). Defaults:
    strides and dilations 1, pads 0, groups 1. Along each spatial dim,
    `out = floor((size + begin + end - dilation * (kernel - 1) - 1) / stride) + 1`.
    """

    SPATIAL: ClassVar[int]

    x = operand_def(TensorType)
    w = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    result = result_def(TensorType)

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.FLOAT
    assembly_format = f"$x `,` $w (`,` $bias^)? {FUNCTIONAL_TYPE}"
    traits = canonicalized_by("ConvCanonicalization")

    def __init__(
        self,
        x: SSAValue,
        w: SSAValue,
        bias: SSAValue | None = None,
        *,
        strides: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        groups: int = 1,
        result_type: Attribute | None = None,
    ):
        n = self.SPATIAL
        props: dict[str, Attribute] = {
            "strides": i64_array(strides or (1,) * n),
            "dilations": i64_array(dilations or (1,) * n),
            "pads": i64_array(pads or (0,) * (2 * n)),
            "groups": IntegerAttr(groups, i64),
        }
        operands = [x, w, [bias] if bias is not None else []]
        super().__init__(operands, result_type, props)

    def with_operands(self, w: SSAValue, bias: SSAValue | None = None) -> "ConvOp":
        """This convolution of the same input and attributes with weights `w` and
        `bias` (the rewrites that fold into a convolution or drop its bias)."""
        return type(self)(
            self.x,
            w,
            bias,
            strides=self.strides.get_values(),
            dilations=self.dilations.get_values(),
            pads=self.pads.get_values(),
            groups=self.groups.value.data,
            result_type=self.result.type,
        )

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.conv(
            self.SPATIAL,
            shape_of(self.x),
            shape_of(self.w),
            shape_of(self.bias) if self.bias is not None else None,
            self.strides.get_values(),
            self.dilations.get_values(),
            self.pads.get_values(),
            self.groups.value.data,
        )
        return TensorType(tensor_type(self.x).element_type, shape)


@irdl_op_definition
class Conv1dOp(ConvOp):
    """
    1-D convolution (onnx Conv) of an NCW input with OIW weights, optional bias.

    Attributes as for `ml.conv2d`, with one value per dim (pads: begin, end).

    ```mlir
    %y = ml.conv1d %x, %w {pads = array<i64: 1, 1>} : (tensor<1x3x32xf32>, tensor<8x3x3xf32>) -> tensor<1x8x32xf32>
    ```
    """

    name = "ml.conv1d"
    SPATIAL: ClassVar[int] = 1
    strides, dilations, pads, groups = conv_props(1)


@irdl_op_definition
class Conv2dOp(ConvOp):
    """
    2-D convolution (onnx Conv) of an NCHW input with OIHW weights, optional bias.

    `strides` and `dilations` hold (h, w), `pads` (top, left, bottom, right);
    `groups` splits the channels (`C == I * groups`, `O % groups == 0`). Defaults:
    strides and dilations 1, pads 0, groups 1.
    `H_out = floor((H + top + bottom - dilation_h * (KH - 1) - 1) / stride_h) + 1`.

    ```mlir
    %y = ml.conv2d %x, %w, %b {strides = array<i64: 2, 2>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x3x32x32xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x16x16xf32>
    ```
    """

    name = "ml.conv2d"
    SPATIAL: ClassVar[int] = 2
    strides, dilations, pads, groups = conv_props(2)


@irdl_op_definition
class Conv3dOp(ConvOp):
    """
    3-D convolution (onnx Conv) of an NCDHW input with OIDHW weights, optional bias.

    Attributes as for `ml.conv2d`, with (d, h, w) values (pads: the three begins, then
    the three ends).

    ```mlir
    %y = ml.conv3d %x, %w {strides = array<i64: 2, 2, 2>} : (tensor<1x3x8x8x8xf32>, tensor<4x3x3x3x3xf32>) -> tensor<1x4x3x3x3xf32>
    ```
    """

    name = "ml.conv3d"
    SPATIAL: ClassVar[int] = 3
    strides, dilations, pads, groups = conv_props(3)


class PoolOp(MLOp):
    """A sliding-window reduction over the `SPATIAL` trailing dims of an N, C, spatial... tensor."""

    SPATIAL: ClassVar[int]

    x = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = f"$x {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        x: SSAValue,
        kernel: Sequence[int],
        *,
        strides: Sequence[int] | None = None,
        dilations: Sequence[int] | None = None,
        pads: Sequence[int] | None = None,
        result_type: Attribute | None = None,
    ):
        n = self.SPATIAL
        props: dict[str, Attribute] = {
            "kernel": i64_array(kernel),
            "strides": i64_array(strides or (1,) * n),
            "pads": i64_array(pads or (0,) * (2 * n)),
        }
        if dilations is not None and any(d != 1 for d in dilations):
            props["dilations"] = i64_array(dilations)
        super().__init__([x], result_type, props)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.pool(
            self.SPATIAL,
            shape_of(self.x),
            self.kernel.get_values(),
            self.strides.get_values(),
            self.dilations.get_values(),
            self.pads.get_values(),
        )
        return TensorType(tensor_type(self.x).element_type, shape)


class MaxPoolOp(PoolOp):
    """
    Max pooling (onnx MaxPool): padding never wins the maximum.

    `kernel`, `strides` and `dilations` hold one value per spatial dim, `pads` the
    begins then the ends, each smaller than the (dilated) kernel. Defaults: strides
    and dilations 1, pads 0.
    """

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC


class AvgPoolOp(PoolOp):
    """
    Average pooling (onnx AveragePool, count_include_pad = 0).

    Each output averages the input elements its window covers; padding is not
    counted. Attributes as for max pooling.
    """

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.FLOAT


@irdl_op_definition
class MaxPool1dOp(MaxPoolOp):
    """
    Max pooling over the W dim of an NCW tensor (see `ml.max_pool2d`).

    ```mlir
    %y = ml.max_pool1d %x {kernel = array<i64: 2>, strides = array<i64: 2>} : (tensor<1x16x32xf32>) -> tensor<1x16x16xf32>
    ```
    """

    name = "ml.max_pool1d"
    SPATIAL: ClassVar[int] = 1
    kernel, strides, dilations, pads = pool_props(1)


@irdl_op_definition
class MaxPool2dOp(MaxPoolOp):
    """
    Max pooling (onnx MaxPool): padding never wins the maximum.

    `kernel`, `strides` and `dilations` hold (h, w), `pads` (top, left, bottom,
    right), each pad smaller than the (dilated) kernel. Defaults: strides and
    dilations 1, pads 0.

    ```mlir
    %y = ml.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
    ```
    """

    name = "ml.max_pool2d"
    SPATIAL: ClassVar[int] = 2
    kernel, strides, dilations, pads = pool_props(2)


@irdl_op_definition
class MaxPool3dOp(MaxPoolOp):
    """
    Max pooling over the D, H and W dims of an NCDHW tensor (see `ml.max_pool2d`).

    ```mlir
    %y = ml.max_pool3d %x {kernel = array<i64: 2, 2, 2>, strides = array<i64: 2, 2, 2>} : (tensor<1x4x8x8x8xf32>) -> tensor<1x4x4x4x4xf32>
    ```
    """

    name = "ml.max_pool3d"
    SPATIAL: ClassVar[int] = 3
    kernel, strides, dilations, pads = pool_props(3)


@irdl_op_definition
class AvgPool1dOp(AvgPoolOp):
    """
    Average pooling over the W dim of an NCW tensor (see `ml.avg_pool2d`).

    ```mlir
    %y = ml.avg_pool1d %x {kernel = array<i64: 3>, pads = array<i64: 1, 1>} : (tensor<1x16x8xf32>) -> tensor<1x16x8xf32>
    ```
    """

    name = "ml.avg_pool1d"
    SPATIAL: ClassVar[int] = 1
    kernel, strides, dilations, pads = pool_props(1)


@irdl_op_definition
class AvgPool2dOp(AvgPoolOp):
    """
    Average pooling (onnx AveragePool, count_include_pad = 0).

    Each output averages the input elements its window covers; padding is not
    counted. Attributes as for `ml.max_pool2d`.

    ```mlir
    %y = ml.avg_pool2d %x {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
    ```
    """

    name = "ml.avg_pool2d"
    SPATIAL: ClassVar[int] = 2
    kernel, strides, dilations, pads = pool_props(2)


@irdl_op_definition
class AvgPool3dOp(AvgPoolOp):
    """
    Average pooling over the D, H and W dims of an NCDHW tensor (see `ml.avg_pool2d`).

    ```mlir
    %y = ml.avg_pool3d %x {kernel = array<i64: 2, 2, 2>} : (tensor<1x4x8x8x8xf32>) -> tensor<1x4x7x7x7xf32>
    ```
    """

    name = "ml.avg_pool3d"
    SPATIAL: ClassVar[int] = 3
    kernel, strides, dilations, pads = pool_props(3)
