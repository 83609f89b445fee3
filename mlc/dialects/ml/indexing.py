"""
Indexing `ml` ops beyond `ml.gather` (which is in `movement`): gather_elements,
gather_nd, scatter_elements, scatter_nd (onnx's GatherElements, GatherND,
ScatterElements, ScatterND) and top_k (onnx TopK, the one `ml` op with two results).

Indices are i32 or i64 tensors; a negative index counts from the end of its dim. An
index out of `[-n, n)` raises `mlc.RuntimeCheckError` when the compiled code runs
(the lowering checks every index, see convert_ml_to_linalg/index_checks.py).
"""

from typing import ClassVar

from xdsl.dialects.builtin import (
    BoolAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from mlc import shapes
from mlc.dialects.ml.base import FUNCTIONAL_TYPE, ElementKind, MLOp, shape_of, tensor_type


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


REDUCTIONS = ("none", "add", "mul", "max", "min")
NONE = StringAttr("none")


def verify_reduction(op: "ScatterOp") -> None:
    reduction = op.reduction.data
    if reduction not in REDUCTIONS:
        listed = ", ".join(REDUCTIONS)
        raise VerifyException(f"expects reduction to be one of {listed}, got '{reduction}'")
    element = tensor_type(op.data).element_type  # pyright: ignore[reportUnknownMemberType]
    if reduction != "none" and element == i1:
        raise VerifyException(f"expects a numeric element type for reduction '{reduction}'")


class IndexingOp(MLOp):
    """
    An op that reads (and, for scatters, writes) `data` at positions held in `indices`,
    a tensor of i32 or i64. An index out of range fails a run-time check, so the op is
    never speculated (hoisted or executed where it would not run).
    """

    def data_operands(self) -> tuple[SSAValue, ...]:
        return (self.data,)  # pyright: ignore[reportAttributeAccessIssue]

    def speculatable(self) -> bool:
        return False

    def verify_attributes(self) -> None:
        verify_index_type(self.indices)  # pyright: ignore[reportAttributeAccessIssue]


class ScatterOp(IndexingOp):
    """A copy of `data` with `updates` written at `indices`, combined by `reduction`."""

    def data_operands(self) -> tuple[SSAValue, ...]:
        return (self.data, self.updates)  # pyright: ignore[reportAttributeAccessIssue]

    def verify_attributes(self) -> None:
        super().verify_attributes()
        verify_reduction(self)


@irdl_op_definition
class GatherElementsOp(IndexingOp):
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

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.gather_elements(
            shape_of(self.data), shape_of(self.indices), self.axis.value.data
        )
        return TensorType(tensor_type(self.data).element_type, shape)


@irdl_op_definition
class GatherNdOp(IndexingOp):
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

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.gather_nd(
            shape_of(self.data), shape_of(self.indices), self.batch_dims.value.data
        )
        return TensorType(tensor_type(self.data).element_type, shape)


@irdl_op_definition
class ScatterElementsOp(ScatterOp):
    """
    A copy of `data` with `updates[p]` written at `p with p[axis] replaced by
    indices[p]` (onnx ScatterElements; numpy.put_along_axis for reduction `none`).
    `indices` and `updates` have one shape, of `data`'s rank. `reduction` (`none`,
    `add`, `mul`, `max`, `min`) combines each update with the element it lands on;
    several updates landing on one element apply in the row-major order of `updates`
    (with `none` the last one stays, as onnxruntime does).

    ```mlir
    %s = ml.scatter_elements %x, %i, %u {axis = 1 : i64, reduction = "add"} : (tensor<3x5xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<3x5xf32>
    ```
    """

    name = "ml.scatter_elements"

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    axis = prop_def(IntegerAttr[IntegerType])
    reduction = opt_prop_def(StringAttr, default_value=NONE)
    result = result_def(TensorType)

    assembly_format = f"$data `,` $indices `,` $updates {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        data: SSAValue,
        indices: SSAValue,
        updates: SSAValue,
        axis: int,
        reduction: str = "none",
        result_type: Attribute | None = None,
    ):
        props: dict[str, Attribute] = {
            "axis": IntegerAttr(axis, i64),
            "reduction": StringAttr(reduction),
        }
        super().__init__([data, indices, updates], result_type, props)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.scatter_elements(
            shape_of(self.data),
            shape_of(self.indices),
            shape_of(self.updates),
            self.axis.value.data,
        )
        return TensorType(tensor_type(self.data).element_type, shape)


@irdl_op_definition
class ScatterNdOp(ScatterOp):
    """
    onnx ScatterND: a copy of `data` in which the slice `data[indices[t]]` (the last dim
    of `indices`, static `k`, holds a tuple of indices into the first `k` dims) is
    replaced by, or combined by `reduction` with, `updates[t]`; `updates` has shape
    `indices.shape[:-1] + data.shape[k:]`. Tuples naming one slice twice apply in the
    row-major order of `indices` (with `none` the last one stays, as onnxruntime does).

    ```mlir
    %s = ml.scatter_nd %x, %i, %u : (tensor<4x5x6xf32>, tensor<3x2xi64>, tensor<3x6xf32>) -> tensor<4x5x6xf32>
    ```
    """

    name = "ml.scatter_nd"

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    updates = operand_def(TensorType)
    reduction = opt_prop_def(StringAttr, default_value=NONE)
    result = result_def(TensorType)

    assembly_format = f"$data `,` $indices `,` $updates {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        data: SSAValue,
        indices: SSAValue,
        updates: SSAValue,
        reduction: str = "none",
        result_type: Attribute | None = None,
    ):
        props: dict[str, Attribute] = {"reduction": StringAttr(reduction)}
        super().__init__([data, indices, updates], result_type, props)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.scatter_nd(
            shape_of(self.data), shape_of(self.indices), shape_of(self.updates)
        )
        return TensorType(tensor_type(self.data).element_type, shape)


TRUE = IntegerAttr(1, i1)


@irdl_op_definition
class TopKOp(MLOp):
    """
    The `k` largest (or, without `largest`, smallest) elements along `axis` and their
    positions there as i64 (onnx TopK): two results of `x`'s shape with `axis` of size
    `k`. They come in order, best first; equal elements in the order of their
    positions; NaN is above every number (first when largest, last when smallest), as
    onnxruntime orders them. `sorted = false` allows any order (mlc sorts anyway).

    ```mlir
    %v, %i = ml.top_k %x {k = 2 : i64, axis = -1 : i64} : (tensor<5x8xf32>) -> (tensor<5x2xf32>, tensor<5x2xi64>)
    ```
    """

    name = "ml.top_k"

    x = operand_def(TensorType)
    k = prop_def(IntegerAttr[IntegerType])
    axis = prop_def(IntegerAttr[IntegerType])
    largest = opt_prop_def(BoolAttr, default_value=TRUE)
    sorted = opt_prop_def(BoolAttr, default_value=TRUE)
    values = result_def(TensorType)
    indices = result_def(TensorType)

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC
    assembly_format = f"$x {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        x: SSAValue,
        k: int,
        axis: int = -1,
        largest: bool = True,
        sorted: bool = True,
        result_types: tuple[Attribute, Attribute] | None = None,
    ):
        props: dict[str, Attribute] = {
            "k": IntegerAttr(k, i64),
            "axis": IntegerAttr(axis, i64),
            "largest": IntegerAttr(int(largest), i1),
            "sorted": IntegerAttr(int(sorted), i1),
        }
        defaults = type(self).get_irdl_definition().properties
        props = {
            name: value
            for name, value in props.items()
            if getattr(defaults.get(name), "default_value", None) != value
        }
        IRDLOperation.__init__(self, operands=[x], properties=props, result_types=[i64, i64])
        inferred = self.infer_result_types()
        for result, type_ in zip(self.results, result_types or inferred, strict=True):
            result._type = type_  # pyright: ignore[reportPrivateUsage]

    def speculatable(self) -> bool:
        return False  # k above a dynamic axis's size fails a run-time check

    def infer_result_type(self) -> TensorType[Attribute]:
        """The values' type (the indices' is `infer_result_types()[1]`)."""
        shape = shapes.top_k(shape_of(self.x), self.k.value.data, self.axis.value.data)
        return TensorType(tensor_type(self.x).element_type, shape)

    def infer_result_types(self) -> tuple[TensorType[Attribute], TensorType[Attribute]]:
        values = self.infer_result_type()
        return values, TensorType(i64, values.get_shape())

    def verify_result(self, inferred: TensorType[Attribute]) -> None:
        super().verify_result(inferred)
        indices = self.indices.type
        expected = self.infer_result_types()[1]
        if not isinstance(indices, TensorType) or indices.element_type != i64:  # pyright: ignore[reportUnknownMemberType]
            raise VerifyException(f"expects indices of element type i64, got {indices}")
        if not shapes.compatible(indices.get_shape(), expected.get_shape()):
            raise VerifyException(
                f"indices type {indices} contradicts the inferred type {expected}"
            )


INDEXING_OPS = [GatherElementsOp, GatherNdOp, ScatterElementsOp, ScatterNdOp, TopKOp]
