"""Index reductions and scans along one axis: argmax, argmin, cumsum."""

from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, IntegerAttr, IntegerType, TensorType, i1, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def

from mlc import shapes
from mlc.dialects.ml.base import FUNCTIONAL_TYPE, ElementKind, MLOp, shape_of, tensor_type

FALSE = IntegerAttr(0, i1)


def _flag(value: bool) -> IntegerAttr[IntegerType]:
    return IntegerAttr(int(value), i1)


# ---------------------------------------------------------------------------
# Index reductions
# ---------------------------------------------------------------------------


class ArgReduceOp(MLOp):
    """The index of the extreme element along `axis`, as i64 (onnx ArgMax / ArgMin)."""

    x = operand_def(TensorType)
    axis = prop_def(IntegerAttr[IntegerType])
    keepdims = prop_def(BoolAttr)
    select_last_index = opt_prop_def(BoolAttr, default_value=FALSE)
    result = result_def(TensorType)

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC
    assembly_format = f"$x {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        x: SSAValue,
        axis: int,
        keepdims: bool = False,
        select_last_index: bool = False,
        result_type: Attribute | None = None,
    ):
        props: dict[str, Attribute] = {
            "axis": IntegerAttr(axis, i64),
            "keepdims": _flag(keepdims),
            "select_last_index": _flag(select_last_index),
        }
        super().__init__([x], result_type, props)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.arg_reduce(
            shape_of(self.x), self.axis.value.data, bool(self.keepdims.value.data)
        )
        return TensorType(i64, shape)


@irdl_op_definition
class ArgMaxOp(ArgReduceOp):
    """
    The index of the largest element along `axis` (numpy.argmax), as i64.

    Ties give the first index, or the last with `select_last_index`; a NaN counts as
    larger than any number (the first NaN wins, as in numpy). The axis must not be
    empty. With `keepdims` the reduced dim stays as size 1.

    ```mlir
    %i = ml.argmax %x {axis = 1 : i64, keepdims = false} : (tensor<4x8xf32>) -> tensor<4xi64>
    ```
    """

    name = "ml.argmax"


@irdl_op_definition
class ArgMinOp(ArgReduceOp):
    """
    The index of the smallest element along `axis` (numpy.argmin), as i64.

    Ties and NaN as for `ml.argmax`.

    ```mlir
    %i = ml.argmin %x {axis = -1 : i64, keepdims = true, select_last_index = true} : (tensor<?x8xi32>) -> tensor<?x1xi64>
    ```
    """

    name = "ml.argmin"


# ---------------------------------------------------------------------------
# Scans
# ---------------------------------------------------------------------------


@irdl_op_definition
class CumSumOp(MLOp):
    """
    Cumulative sum along `axis` (numpy.cumsum, onnx CumSum); the result has `x`'s shape.

    With `exclusive`, element `i` sums the elements before `i` only (the first is 0);
    with `reverse`, the sums run from the end of the axis towards its start.

    ```mlir
    %s = ml.cumsum %x {axis = 1 : i64, exclusive = true} : (tensor<4x?xf32>) -> tensor<4x?xf32>
    ```
    """

    name = "ml.cumsum"

    x = operand_def(TensorType)
    axis = prop_def(IntegerAttr[IntegerType])
    exclusive = opt_prop_def(BoolAttr, default_value=FALSE)
    reverse = opt_prop_def(BoolAttr, default_value=FALSE)
    result = result_def(TensorType)

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC
    assembly_format = f"$x {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        x: SSAValue,
        axis: int,
        exclusive: bool = False,
        reverse: bool = False,
        result_type: Attribute | None = None,
    ):
        props: dict[str, Attribute] = {
            "axis": IntegerAttr(axis, i64),
            "exclusive": _flag(exclusive),
            "reverse": _flag(reverse),
        }
        super().__init__([x], result_type, props)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.scan(shape_of(self.x), self.axis.value.data)
        return TensorType(tensor_type(self.x).element_type, shape)


OPS = [ArgMaxOp, ArgMinOp, CumSumOp]
