"""Elementwise `ml` ops: arithmetic, comparison, selection, activations and casts."""

from typing import ClassVar

from xdsl.dialects.builtin import StringAttr, TensorType, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Commutative
from xdsl.utils.exceptions import VerifyException

from mlc import shapes
from mlc.dialects.ml.base import (
    FUNCTIONAL_TYPE,
    ElementKind,
    MLOp,
    canonicalized_by,
    is_bool,
    is_element_type,
    is_float,
    shape_of,
    tensor_type,
)

# ---------------------------------------------------------------------------
# Binary arithmetic
# ---------------------------------------------------------------------------


class BinaryOp(MLOp):
    """An elementwise op on two tensors of one element type, numpy-broadcast."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC
    assembly_format = f"$lhs `,` $rhs {FUNCTIONAL_TYPE}"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, result_type: Attribute | None = None):
        super().__init__([lhs, rhs], result_type)

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.broadcast(shape_of(self.lhs), shape_of(self.rhs))
        return TensorType(tensor_type(self.lhs).element_type, shape)


@irdl_op_definition
class AddOp(BinaryOp):
    """
    Elementwise sum, with numpy broadcasting.

    The operands share one numeric element type; the result shape is the numpy
    broadcast of the operand shapes.

    ```mlir
    %s = ml.add %a, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    ```
    """

    name = "ml.add"
    traits = canonicalized_by("BinaryCanonicalization", Commutative())


@irdl_op_definition
class SubOp(BinaryOp):
    """
    Elementwise difference `lhs - rhs`, with numpy broadcasting.

    ```mlir
    %d = ml.sub %a, %b : (tensor<?x8xf32>, tensor<1x8xf32>) -> tensor<?x8xf32>
    ```
    """

    name = "ml.sub"
    traits = canonicalized_by("BinaryCanonicalization")


@irdl_op_definition
class MulOp(BinaryOp):
    """
    Elementwise product, with numpy broadcasting.

    ```mlir
    %p = ml.mul %a, %b : (tensor<4x8xf32>, tensor<f32>) -> tensor<4x8xf32>
    ```
    """

    name = "ml.mul"
    traits = canonicalized_by("BinaryCanonicalization", Commutative())


@irdl_op_definition
class DivOp(BinaryOp):
    """
    Elementwise quotient `lhs / rhs`, with numpy broadcasting.

    Floats divide as IEEE 754; integers divide truncating toward zero (as C and
    ONNX do), and an integer division by zero is undefined behaviour.

    ```mlir
    %q = ml.div %a, %b : (tensor<4x8xf32>, tensor<4x1xf32>) -> tensor<4x8xf32>
    ```
    """

    name = "ml.div"
    traits = canonicalized_by("BinaryCanonicalization")

    def speculatable(self) -> bool:
        return is_float(tensor_type(self.lhs).element_type)


@irdl_op_definition
class PowOp(BinaryOp):
    """
    Elementwise power `lhs ** rhs`, with numpy broadcasting.

    ```mlir
    %p = ml.pow %a, %b : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
    """

    name = "ml.pow"
    traits = canonicalized_by("BinaryCanonicalization")


@irdl_op_definition
class MaxOp(BinaryOp):
    """
    Elementwise maximum (numpy.maximum: a NaN operand gives NaN), broadcasting.

    ```mlir
    %m = ml.max %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.max"
    traits = traits_def(Commutative())


@irdl_op_definition
class MinOp(BinaryOp):
    """
    Elementwise minimum (numpy.minimum: a NaN operand gives NaN), broadcasting.

    ```mlir
    %m = ml.min %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    ```
    """

    name = "ml.min"
    traits = traits_def(Commutative())


# ---------------------------------------------------------------------------
# Comparison and selection
# ---------------------------------------------------------------------------


@irdl_op_definition
class CmpOp(MLOp):
    """
    Elementwise comparison, broadcasting; the result has element type i1.

    `predicate` is one of "eq", "ne", "lt", "le", "gt", "ge". Float comparisons are
    ordered (false when an operand is NaN), except "ne", which is true for NaN, as
    in numpy.

    ```mlir
    %c = ml.cmp "lt", %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
    ```
    """

    name = "ml.cmp"
    PREDICATES: ClassVar[tuple[str, ...]] = ("eq", "ne", "lt", "le", "gt", "ge")

    predicate = prop_def(StringAttr)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = f"$predicate `,` $lhs `,` $rhs {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        predicate: str,
        lhs: SSAValue,
        rhs: SSAValue,
        result_type: Attribute | None = None,
    ):
        props: dict[str, Attribute] = {"predicate": StringAttr(predicate)}
        super().__init__([lhs, rhs], result_type, props)

    def verify_attributes(self) -> None:
        if self.predicate.data not in self.PREDICATES:
            raise VerifyException(
                f'unknown predicate "{self.predicate.data}", expected one of '
                + ", ".join(f'"{p}"' for p in self.PREDICATES)
            )

    def infer_result_type(self) -> TensorType[Attribute]:
        return TensorType(i1, shapes.broadcast(shape_of(self.lhs), shape_of(self.rhs)))


@irdl_op_definition
class SelectOp(MLOp):
    """
    Elementwise choice `cond ? a : b` (numpy.where), broadcasting all three.

    ```mlir
    %r = ml.select %c, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
    ```
    """

    name = "ml.select"

    cond = operand_def(TensorType)
    a = operand_def(TensorType)
    b = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = f"$cond `,` $a `,` $b {FUNCTIONAL_TYPE}"

    def __init__(
        self, cond: SSAValue, a: SSAValue, b: SSAValue, result_type: Attribute | None = None
    ):
        super().__init__([cond, a, b], result_type)

    def data_operands(self) -> tuple[SSAValue, ...]:
        return (self.a, self.b)

    def verify_attributes(self) -> None:
        cond = self.cond.type
        if not isinstance(cond, TensorType) or not is_bool(cond.element_type):  # pyright: ignore[reportUnknownMemberType]
            raise VerifyException(f"expects cond to be a tensor of i1, got {cond}")

    def infer_result_type(self) -> TensorType[Attribute]:
        shape = shapes.broadcast(shape_of(self.cond), shape_of(self.a), shape_of(self.b))
        return TensorType(tensor_type(self.a).element_type, shape)


# ---------------------------------------------------------------------------
# Unary
# ---------------------------------------------------------------------------


class UnaryOp(MLOp):
    """An elementwise op on one tensor; the result type is the operand type."""

    x = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = f"$x {FUNCTIONAL_TYPE}"

    def __init__(self, x: SSAValue, result_type: Attribute | None = None):
        super().__init__([x], result_type)

    def infer_result_type(self) -> TensorType[Attribute]:
        return TensorType(tensor_type(self.x).element_type, shape_of(self.x))


class FloatUnaryOp(UnaryOp):
    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.FLOAT


@irdl_op_definition
class NegOp(UnaryOp):
    """
    Elementwise negation `-x`.

    ```mlir
    %n = ml.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.neg"
    traits = canonicalized_by("UnaryCanonicalization")
    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC


@irdl_op_definition
class AbsOp(UnaryOp):
    """
    Elementwise absolute value.

    ```mlir
    %a = ml.abs %x : (tensor<4xi32>) -> tensor<4xi32>
    ```
    """

    name = "ml.abs"
    traits = canonicalized_by("UnaryCanonicalization")
    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC


@irdl_op_definition
class ReluOp(UnaryOp):
    """
    Elementwise `max(x, 0)`.

    ```mlir
    %r = ml.relu %x : (tensor<?x16xf32>) -> tensor<?x16xf32>
    ```
    """

    name = "ml.relu"
    traits = canonicalized_by("UnaryCanonicalization")
    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC


@irdl_op_definition
class ExpOp(FloatUnaryOp):
    """
    Elementwise `e ** x`.

    ```mlir
    %e = ml.exp %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.exp"


@irdl_op_definition
class LogOp(FloatUnaryOp):
    """
    Elementwise natural logarithm.

    ```mlir
    %l = ml.log %x : (tensor<4xf64>) -> tensor<4xf64>
    ```
    """

    name = "ml.log"


@irdl_op_definition
class SqrtOp(FloatUnaryOp):
    """
    Elementwise square root.

    ```mlir
    %s = ml.sqrt %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.sqrt"


@irdl_op_definition
class RsqrtOp(FloatUnaryOp):
    """
    Elementwise reciprocal square root `1 / sqrt(x)`.

    ```mlir
    %r = ml.rsqrt %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.rsqrt"


@irdl_op_definition
class TanhOp(FloatUnaryOp):
    """
    Elementwise hyperbolic tangent.

    ```mlir
    %t = ml.tanh %x : (tensor<4xf16>) -> tensor<4xf16>
    ```
    """

    name = "ml.tanh"


@irdl_op_definition
class SigmoidOp(FloatUnaryOp):
    """
    Elementwise logistic function `1 / (1 + exp(-x))`.

    ```mlir
    %s = ml.sigmoid %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.sigmoid"


@irdl_op_definition
class ErfOp(FloatUnaryOp):
    """
    Elementwise Gauss error function.

    ```mlir
    %e = ml.erf %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.erf"


@irdl_op_definition
class GeluOp(FloatUnaryOp):
    """
    Elementwise GELU, exact (`approximate = "none"`, the default) or tanh-approximated.

    "none": `0.5 * x * (1 + erf(x / sqrt(2)))`;
    "tanh": `0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x**3)))`.

    ```mlir
    %g = ml.gelu %x {approximate = "tanh"} : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.gelu"
    APPROXIMATIONS: ClassVar[tuple[str, ...]] = ("none", "tanh")

    approximate = opt_prop_def(StringAttr, default_value=StringAttr("none"))

    def __init__(
        self, x: SSAValue, approximate: str = "none", result_type: Attribute | None = None
    ):
        MLOp.__init__(self, [x], result_type, {"approximate": StringAttr(approximate)})

    def verify_attributes(self) -> None:
        if self.approximate.data not in self.APPROXIMATIONS:
            raise VerifyException(
                f'unknown approximate "{self.approximate.data}", expected "none" or "tanh"'
            )


@irdl_op_definition
class CastOp(MLOp):
    """
    Elementwise conversion to the element type of the result type.

    Float to integer truncates toward zero; integer to float rounds to nearest;
    to i1 means `x != 0`; i1 to a number gives 0 or 1. Unsigned integers (`ui8`...)
    convert as unsigned values.

    ```mlir
    %c = ml.cast %x : (tensor<4xf32>) -> tensor<4xi32>
    ```
    """

    name = "ml.cast"
    traits = canonicalized_by("UnaryCanonicalization")

    x = operand_def(TensorType)
    result = result_def(TensorType)

    assembly_format = f"$x {FUNCTIONAL_TYPE}"

    def __init__(self, x: SSAValue, result_type: Attribute):
        super().__init__([x], result_type)

    def infer_result_type(self) -> TensorType[Attribute]:
        # The target element type is the op's own choice; only the shape follows.
        result = self.result.type
        element = result.element_type if isinstance(result, TensorType) else result  # pyright: ignore[reportUnknownMemberType]
        return TensorType(element, shape_of(self.x))

    def verify_attributes(self) -> None:
        result = self.result.type
        if isinstance(result, TensorType) and not is_element_type(result.element_type):  # pyright: ignore[reportUnknownMemberType]
            raise VerifyException(
                f"result has element type {result.element_type}, "  # pyright: ignore[reportUnknownMemberType]
                "which is not an ml element type"
            )
