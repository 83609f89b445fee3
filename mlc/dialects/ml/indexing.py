"""
Indexing `ml` ops beyond `ml.gather` (which is in `movement`): gather_elements and
gather_nd, onnx's GatherElements and GatherND.

Indices are i32 or i64 tensors; a negative index counts from the end of its dim. An
index out of `[-n, n)` raises `mlc.RuntimeCheckError` when the compiled code runs
(the lowering checks every index, see convert_ml_to_linalg/index_checks.py).
"""

from xdsl.dialects.builtin import IntegerAttr, IntegerType, Signedness, TensorType, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def
from xdsl.utils.exceptions import VerifyException

from mlc import shapes
from mlc.dialects.ml.base import FUNCTIONAL_TYPE, MLOp, shape_of, tensor_type


def verify_index_type(indices: SSAValue) -> None:
    """Indices are a tensor of signless i32 or i64."""
    t = indices.type
    element = t.element_type if isinstance(t, TensorType) else None  # pyright: ignore[reportUnknownMemberType]
    if not (
        isinstance(element, IntegerType)
        and element.width.data in (32, 64)
        and element.signedness.data == Signedness.SIGNLESS
    ):
        raise VerifyException(f"expects indices to be a tensor of i32 or i64, got {t}")


@irdl_op_definition
class GatherElementsOp(MLOp):
    """
    `result[p] = data[p with p[axis] replaced by indices[p]]` (onnx GatherElements,
    numpy.take_along_axis). `indices` has the rank of `data`; the result its shape.

    ```mlir
    %g = ml.gather_elements %x, %i {axis = 1 : i64} : (tensor<3x5xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    ```
    """

    name = "ml.gather_elements"

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = prop_def(IntegerAttr[IntegerType])
    result = result_def(TensorType)

    assembly_format = f"$data `,` $indices {FUNCTIONAL_TYPE}"

    def __init__(
        self, data: SSAValue, indices: SSAValue, axis: int, result_type: Attribute | None = None
    ):
        super().__init__([data, indices], result_type, {"axis": IntegerAttr(axis, i64)})

    def data_operands(self) -> tuple[SSAValue, ...]:
        return (self.data,)

    def speculatable(self) -> bool:
        return False  # an out-of-range index fails a run-time check

    def verify_attributes(self) -> None:
        verify_index_type(self.indices)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.gather_elements(
            shape_of(self.data), shape_of(self.indices), self.axis.value.data
        )
        return TensorType(tensor_type(self.data).element_type, shape)


@irdl_op_definition
class GatherNdOp(MLOp):
    """
    onnx GatherND: the last dim of `indices` (static, `k`) holds index tuples into the
    dims `batch_dims .. batch_dims + k - 1` of `data`; the first `batch_dims` dims of
    `data` and `indices` are shared. Result shape:
    `indices.shape[:-1] + data.shape[batch_dims + k:]`.

    ```mlir
    %g = ml.gather_nd %x, %i : (tensor<4x5x6xf32>, tensor<3x2xi64>) -> tensor<3x6xf32>
    %b = ml.gather_nd %x, %j {batch_dims = 1 : i64} : (tensor<4x5x6xf32>, tensor<4x1xi64>) -> tensor<4x6xf32>
    ```
    """

    name = "ml.gather_nd"

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    batch_dims = prop_def(IntegerAttr[IntegerType], default_value=IntegerAttr(0, i64))
    result = result_def(TensorType)

    assembly_format = f"$data `,` $indices {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        data: SSAValue,
        indices: SSAValue,
        batch_dims: int = 0,
        result_type: Attribute | None = None,
    ):
        props = {"batch_dims": IntegerAttr(batch_dims, i64)}
        super().__init__([data, indices], result_type, props)

    def data_operands(self) -> tuple[SSAValue, ...]:
        return (self.data,)

    def speculatable(self) -> bool:
        return False  # an out-of-range index fails a run-time check

    def verify_attributes(self) -> None:
        verify_index_type(self.indices)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.gather_nd(
            shape_of(self.data), shape_of(self.indices), self.batch_dims.value.data
        )
        return TensorType(tensor_type(self.data).element_type, shape)


INDEXING_OPS = [GatherElementsOp, GatherNdOp]
