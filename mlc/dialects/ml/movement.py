"""
Data-movement `ml` ops: transpose, reshape, broadcast_to, concat, slice, gather.

They move or replicate elements without arithmetic, so they take any element type.
"""

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    IntegerType,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    result_def,
    var_operand_def,
)
from xdsl.utils.exceptions import VerifyException

from mlc import shapes
from mlc.dialects.ml.base import (
    FUNCTIONAL_TYPE,
    MLOp,
    canonicalized_by,
    i64_array,
    shape_of,
    tensor_type,
)
from mlc.dialects.ml.indexing import IndexingOp


def declared_type(op: MLOp) -> TensorType[Attribute]:
    """The op's written result type, for ops whose result shape is the op's choice."""
    result = op.results[0].type
    if not isinstance(result, TensorType):
        raise VerifyException(f"result must be a ranked tensor, got {result}")
    return result  # pyright: ignore[reportUnknownVariableType]


def verify_shape_operand(shape: SSAValue | None, result: TensorType[Attribute]) -> None:
    """A run-time shape is a `tensor<Nxi64>` with one entry per result dimension."""
    if shape is None:
        if not all(shapes.is_static(d) for d in result.get_shape()):
            raise VerifyException(f"expects a shape operand for the dynamic result type {result}")
        return
    t = shape.type
    rank = result.get_num_dims()
    if not (
        isinstance(t, TensorType)
        and t.element_type == i64  # pyright: ignore[reportUnknownMemberType]
        and t.get_shape() == (rank,)
    ):
        raise VerifyException(f"expects the shape operand to be tensor<{rank}xi64>, got {t}")


# ---------------------------------------------------------------------------
# Permutation and reshaping
# ---------------------------------------------------------------------------


@irdl_op_definition
class TransposeOp(MLOp):
    """
    Permutes dimensions (numpy.transpose): result dim `i` is operand dim `perm[i]`.

    ```mlir
    %t = ml.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
    ```
    """

    name = "ml.transpose"
    traits = canonicalized_by("MovementCanonicalization")

    x = operand_def(TensorType)
    perm = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)

    assembly_format = f"$x {FUNCTIONAL_TYPE}"

    def __init__(self, x: SSAValue, perm: Sequence[int], result_type: Attribute | None = None):
        super().__init__([x], result_type, {"perm": i64_array(perm)})

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.transpose(shape_of(self.x), self.perm.get_values())
        return TensorType(tensor_type(self.x).element_type, shape)


@irdl_op_definition
class ReshapeOp(MLOp):
    """
    Reshapes to the result type, keeping the row-major element order.

    A static result type needs no more. A result type with dynamic dimensions takes a
    `shape` operand (`tensor<Nxi64>`, one entry per result dimension) holding the
    sizes at run time; one entry may be -1, inferred from the element count as in
    numpy.reshape. Static element counts must agree.

    ```mlir
    %r = ml.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
    %d = ml.reshape %y, %shape : (tensor<?x4xf32>, tensor<2xi64>) -> tensor<?x2xf32>
    ```
    """

    name = "ml.reshape"
    traits = canonicalized_by("MovementCanonicalization")

    x = operand_def(TensorType)
    shape = opt_operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = f"$x (`,` $shape^)? {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        x: SSAValue,
        new_shape: Sequence[int] | None = None,
        *,
        shape: SSAValue | None = None,
        result_type: Attribute | None = None,
    ):
        """Reshape to `new_shape` (static, one -1 allowed) or to `result_type`."""
        if (new_shape is None) == (result_type is None):
            raise ValueError("ml.reshape takes either a new shape or a result type")
        if result_type is None:
            target = shapes.reshape(shape_of(x), new_shape)
            result_type = TensorType(tensor_type(x).element_type, target)
        super().__init__([x, [shape] if shape is not None else []], result_type)

    def data_operands(self) -> tuple[SSAValue, ...]:
        return (self.x,)

    def verify_attributes(self) -> None:
        verify_shape_operand(self.shape, declared_type(self))

    def infer_result_type(self) -> TensorType[Attribute]:
        declared = declared_type(self)
        target = shapes.reshape(shape_of(self.x), declared.get_shape())
        return TensorType(tensor_type(self.x).element_type, target)


@irdl_op_definition
class BroadcastToOp(MLOp):
    """
    Broadcasts to the result type (numpy.broadcast_to).

    A result dimension may be dynamic without a `shape` operand only where the
    operand's aligned dimension is dynamic too (the size is then the operand's);
    otherwise a `shape` operand (`tensor<Nxi64>`) gives the sizes at run time.

    ```mlir
    %b = ml.broadcast_to %x : (tensor<3x1xf32>) -> tensor<2x3x4xf32>
    ```
    """

    name = "ml.broadcast_to"
    traits = canonicalized_by("MovementCanonicalization")

    x = operand_def(TensorType)
    shape = opt_operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = f"$x (`,` $shape^)? {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        x: SSAValue,
        result_type: Attribute,
        shape: SSAValue | None = None,
    ):
        super().__init__([x, [shape] if shape is not None else []], result_type)

    def data_operands(self) -> tuple[SSAValue, ...]:
        return (self.x,)

    def verify_attributes(self) -> None:
        declared = declared_type(self)
        if self.shape is not None:
            verify_shape_operand(self.shape, declared)
            return
        source = shape_of(self.x)
        offset = declared.get_num_dims() - len(source)
        for i, dim in enumerate(declared.get_shape()):
            follows_operand = i >= offset and not shapes.is_static(source[i - offset])
            if not shapes.is_static(dim) and not follows_operand:
                raise VerifyException(
                    f"expects a shape operand: result dimension {i} is dynamic and "
                    "not given by the operand"
                )

    def infer_result_type(self) -> TensorType[Attribute]:
        target = shapes.broadcast_to(shape_of(self.x), declared_type(self).get_shape())
        return TensorType(tensor_type(self.x).element_type, target)


# ---------------------------------------------------------------------------
# Joining and selecting
# ---------------------------------------------------------------------------


@irdl_op_definition
class ConcatOp(MLOp):
    """
    Joins tensors of one rank along `axis` (numpy.concatenate).

    The other dimensions must agree; a negative axis counts from the end.

    ```mlir
    %c = ml.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
    """

    name = "ml.concat"

    inputs = var_operand_def(TensorType)
    axis = prop_def(IntegerAttr[IntegerType])
    result = result_def(TensorType)

    assembly_format = f"$inputs {FUNCTIONAL_TYPE}"

    def __init__(self, inputs: Sequence[SSAValue], axis: int, result_type: Attribute | None = None):
        super().__init__([inputs], result_type, {"axis": IntegerAttr(axis, i64)})

    def infer_result_type(self) -> TensorType[Attribute]:
        if not self.inputs:
            raise shapes.ShapeError("expects at least one operand")
        shape = shapes.concat([shape_of(v) for v in self.inputs], self.axis.value.data)
        return TensorType(tensor_type(self.inputs[0]).element_type, shape)


@irdl_op_definition
class SliceOp(MLOp):
    """
    Strided slice `x[s0:e0:t0, s1:e1:t1, ...]` with Python's slice semantics.

    One start, end and step per dimension; negative starts and ends count from the
    end, out-of-range ones are clamped, steps may be negative but not zero. To run
    to the end (or, with a negative step, to the beginning), use a large end such as
    9223372036854775807 (or -9223372036854775808).

    ```mlir
    %s = ml.slice %x {starts = array<i64: 0, 1>, ends = array<i64: 4, 9223372036854775807>, steps = array<i64: 2, 1>} : (tensor<4x6xf32>) -> tensor<2x5xf32>
    ```
    """

    name = "ml.slice"

    x = operand_def(TensorType)
    starts = prop_def(DenseArrayBase.constr(i64))
    ends = prop_def(DenseArrayBase.constr(i64))
    steps = prop_def(DenseArrayBase.constr(i64))
    result = result_def(TensorType)

    assembly_format = f"$x {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        x: SSAValue,
        starts: Sequence[int],
        ends: Sequence[int],
        steps: Sequence[int],
        result_type: Attribute | None = None,
    ):
        props: dict[str, Attribute] = {
            "starts": i64_array(starts),
            "ends": i64_array(ends),
            "steps": i64_array(steps),
        }
        super().__init__([x], result_type, props)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.slice_(
            shape_of(self.x),
            self.starts.get_values(),
            self.ends.get_values(),
            self.steps.get_values(),
        )
        return TensorType(tensor_type(self.x).element_type, shape)


@irdl_op_definition
class GatherOp(IndexingOp):
    """
    Gathers slices of `data` along `axis` at `indices` (onnx Gather).

    The result shape is `data.shape[:axis] + indices.shape + data.shape[axis+1:]`;
    indices are i32 or i64 and may be negative (counting from the end of the axis).
    An index out of range fails a run-time check (`mlc.RuntimeCheckError`).

    ```mlir
    %g = ml.gather %table, %ids {axis = 0 : i64} : (tensor<100x16xf32>, tensor<2x5xi64>) -> tensor<2x5x16xf32>
    ```
    """

    name = "ml.gather"

    data = operand_def(TensorType)
    indices = operand_def(TensorType)
    axis = prop_def(IntegerAttr[IntegerType])
    result = result_def(TensorType)

    assembly_format = f"$data `,` $indices {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        data: SSAValue,
        indices: SSAValue,
        axis: int,
        result_type: Attribute | None = None,
    ):
        super().__init__([data, indices], result_type, {"axis": IntegerAttr(axis, i64)})

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.gather(shape_of(self.data), shape_of(self.indices), self.axis.value.data)
        return TensorType(tensor_type(self.data).element_type, shape)
