"""Contractions and windows: matmul, conv2d, max_pool2d, avg_pool2d."""

from collections.abc import Sequence
from typing import ClassVar

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
    i64_array,
    shape_of,
    tensor_type,
)

PAIR_OF_ONES = i64_array((1, 1))
NO_PADS = i64_array((0, 0, 0, 0))


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


@irdl_op_definition
class Conv2dOp(MLOp):
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

    x = operand_def(TensorType)
    w = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    strides = opt_prop_def(DenseArrayBase.constr(i64), default_value=PAIR_OF_ONES)
    dilations = opt_prop_def(DenseArrayBase.constr(i64), default_value=PAIR_OF_ONES)
    pads = opt_prop_def(DenseArrayBase.constr(i64), default_value=NO_PADS)
    groups = opt_prop_def(IntegerAttr[IntegerType], default_value=IntegerAttr(1, i64))
    result = result_def(TensorType)

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.FLOAT
    assembly_format = f"$x `,` $w (`,` $bias^)? {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        x: SSAValue,
        w: SSAValue,
        bias: SSAValue | None = None,
        *,
        strides: Sequence[int] = (1, 1),
        dilations: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        groups: int = 1,
        result_type: Attribute | None = None,
    ):
        props: dict[str, Attribute] = {
            "strides": i64_array(strides),
            "dilations": i64_array(dilations),
            "pads": i64_array(pads),
            "groups": IntegerAttr(groups, i64),
        }
        operands = [x, w, [bias] if bias is not None else []]
        super().__init__(operands, result_type, props)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.conv2d(
            shape_of(self.x),
            shape_of(self.w),
            shape_of(self.bias) if self.bias is not None else None,
            self.strides.get_values(),
            self.dilations.get_values(),
            self.pads.get_values(),
            self.groups.value.data,
        )
        return TensorType(tensor_type(self.x).element_type, shape)


class Pool2dOp(MLOp):
    """A sliding-window reduction over the H and W dims of an NCHW tensor."""

    x = operand_def(TensorType)
    kernel = prop_def(DenseArrayBase.constr(i64))
    strides = opt_prop_def(DenseArrayBase.constr(i64), default_value=PAIR_OF_ONES)
    pads = opt_prop_def(DenseArrayBase.constr(i64), default_value=NO_PADS)
    result = result_def(TensorType)

    assembly_format = f"$x {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        x: SSAValue,
        kernel: Sequence[int],
        *,
        strides: Sequence[int] = (1, 1),
        pads: Sequence[int] = (0, 0, 0, 0),
        result_type: Attribute | None = None,
    ):
        props: dict[str, Attribute] = {
            "kernel": i64_array(kernel),
            "strides": i64_array(strides),
            "pads": i64_array(pads),
        }
        super().__init__([x], result_type, props)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.pool2d(
            shape_of(self.x),
            self.kernel.get_values(),
            self.strides.get_values(),
            self.pads.get_values(),
        )
        return TensorType(tensor_type(self.x).element_type, shape)


@irdl_op_definition
class MaxPool2dOp(Pool2dOp):
    """
    Max pooling (onnx MaxPool): padding never wins the maximum.

    `kernel` and `strides` hold (h, w), `pads` (top, left, bottom, right), each pad
    smaller than the kernel. Defaults: strides 1, pads 0.

    ```mlir
    %y = ml.max_pool2d %x {kernel = array<i64: 2, 2>, strides = array<i64: 2, 2>} : (tensor<1x16x32x32xf32>) -> tensor<1x16x16x16xf32>
    ```
    """

    name = "ml.max_pool2d"
    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC


@irdl_op_definition
class AvgPool2dOp(Pool2dOp):
    """
    Average pooling (onnx AveragePool, count_include_pad = 0).

    Each output averages the input elements its window covers; padding is not
    counted. Attributes as for `ml.max_pool2d`.

    ```mlir
    %y = ml.avg_pool2d %x {kernel = array<i64: 3, 3>, pads = array<i64: 1, 1, 1, 1>} : (tensor<1x16x8x8xf32>) -> tensor<1x16x8x8xf32>
    ```
    """

    name = "ml.avg_pool2d"
    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.FLOAT
