"""
More elementwise `ml` ops: trigonometric and hyperbolic functions, rounding, the
truncated remainder, and the bitwise ops on integers.

They are `UnaryOp`s and `BinaryOp`s of `elementwise`, so shape rules, broadcasting,
cost and shape inference treat them as the other elementwise ops do; each lowers to
one scalar body of `convert_ml_to_linalg/elementwise.py`.
"""

from typing import ClassVar

from xdsl.irdl import irdl_op_definition, traits_def
from xdsl.traits import Commutative

from mlc.dialects.ml.base import ElementKind, is_float, tensor_type
from mlc.dialects.ml.elementwise import BinaryOp, FloatUnaryOp, UnaryOp

# ---------------------------------------------------------------------------
# Trigonometric, hyperbolic and rounding functions (float)
# ---------------------------------------------------------------------------


@irdl_op_definition
class SinOp(FloatUnaryOp):
    """
    Elementwise sine (radians).

    ```mlir
    %s = ml.sin %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.sin"


@irdl_op_definition
class CosOp(FloatUnaryOp):
    """
    Elementwise cosine (radians).

    ```mlir
    %c = ml.cos %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.cos"


@irdl_op_definition
class TanOp(FloatUnaryOp):
    """
    Elementwise tangent (radians).

    ```mlir
    %t = ml.tan %x : (tensor<4xf64>) -> tensor<4xf64>
    ```
    """

    name = "ml.tan"


@irdl_op_definition
class AsinOp(FloatUnaryOp):
    """
    Elementwise arcsine, in [-pi/2, pi/2]; NaN outside [-1, 1].

    ```mlir
    %a = ml.asin %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.asin"


@irdl_op_definition
class AcosOp(FloatUnaryOp):
    """
    Elementwise arccosine, in [0, pi]; NaN outside [-1, 1].

    ```mlir
    %a = ml.acos %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.acos"


@irdl_op_definition
class AtanOp(FloatUnaryOp):
    """
    Elementwise arctangent, in [-pi/2, pi/2].

    ```mlir
    %a = ml.atan %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.atan"


@irdl_op_definition
class SinhOp(FloatUnaryOp):
    """
    Elementwise hyperbolic sine.

    ```mlir
    %s = ml.sinh %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.sinh"


@irdl_op_definition
class CoshOp(FloatUnaryOp):
    """
    Elementwise hyperbolic cosine.

    ```mlir
    %c = ml.cosh %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.cosh"


@irdl_op_definition
class AsinhOp(FloatUnaryOp):
    """
    Elementwise inverse hyperbolic sine.

    ```mlir
    %a = ml.asinh %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.asinh"


@irdl_op_definition
class AcoshOp(FloatUnaryOp):
    """
    Elementwise inverse hyperbolic cosine; NaN below 1.

    ```mlir
    %a = ml.acosh %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.acosh"


@irdl_op_definition
class AtanhOp(FloatUnaryOp):
    """
    Elementwise inverse hyperbolic tangent; +-inf at +-1, NaN outside [-1, 1].

    ```mlir
    %a = ml.atanh %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.atanh"


@irdl_op_definition
class FloorOp(FloatUnaryOp):
    """
    Elementwise floor: the largest integral value not above `x`.

    ```mlir
    %f = ml.floor %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.floor"


@irdl_op_definition
class CeilOp(FloatUnaryOp):
    """
    Elementwise ceiling: the smallest integral value not below `x`.

    ```mlir
    %c = ml.ceil %x : (tensor<4xf32>) -> tensor<4xf32>
    ```
    """

    name = "ml.ceil"


@irdl_op_definition
class RoundOp(FloatUnaryOp):
    """
    Elementwise rounding to the nearest integral value, halves to even (numpy.round).

    ```mlir
    %r = ml.round %x : (tensor<4xf16>) -> tensor<4xf16>
    ```
    """

    name = "ml.round"


# ---------------------------------------------------------------------------
# Remainder
# ---------------------------------------------------------------------------


@irdl_op_definition
class RemOp(BinaryOp):
    """
    Elementwise truncated remainder `lhs - trunc(lhs / rhs) * rhs`, broadcasting.

    The result has the sign of `lhs` (C's `fmod` and `%`, numpy.fmod); floats are
    exact, a zero divisor gives NaN. An integer remainder by zero is undefined
    behaviour, as for `ml.div`.

    ```mlir
    %r = ml.rem %a, %b : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
    ```
    """

    name = "ml.rem"

    def speculatable(self) -> bool:
        return is_float(tensor_type(self.lhs).element_type)


# ---------------------------------------------------------------------------
# Bitwise (integers)
# ---------------------------------------------------------------------------


class BitwiseOp(BinaryOp):
    """A bitwise op on two integer (or i1) tensors, broadcasting."""

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.INTEGER


class ShiftOp(BinaryOp):
    """A shift of integers by integer amounts, broadcasting."""

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.NUMERIC_INTEGER


@irdl_op_definition
class BitwiseAndOp(BitwiseOp):
    """
    Elementwise bitwise and of integers (logical and of i1), broadcasting.

    ```mlir
    %r = ml.bitwise_and %a, %b : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
    ```
    """

    name = "ml.bitwise_and"
    traits = traits_def(Commutative())


@irdl_op_definition
class BitwiseOrOp(BitwiseOp):
    """
    Elementwise bitwise or of integers (logical or of i1), broadcasting.

    ```mlir
    %r = ml.bitwise_or %a, %b : (tensor<4xui8>, tensor<ui8>) -> tensor<4xui8>
    ```
    """

    name = "ml.bitwise_or"
    traits = traits_def(Commutative())


@irdl_op_definition
class BitwiseXorOp(BitwiseOp):
    """
    Elementwise bitwise exclusive or of integers, broadcasting.

    ```mlir
    %r = ml.bitwise_xor %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
    ```
    """

    name = "ml.bitwise_xor"
    traits = traits_def(Commutative())


@irdl_op_definition
class BitwiseNotOp(UnaryOp):
    """
    Elementwise bitwise complement of integers (`~x`; logical not of i1).

    ```mlir
    %n = ml.bitwise_not %x : (tensor<4xi8>) -> tensor<4xi8>
    ```
    """

    name = "ml.bitwise_not"
    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.INTEGER


@irdl_op_definition
class ShiftLeftOp(ShiftOp):
    """
    Elementwise `lhs << rhs` on integers, broadcasting.

    An amount at or past the bit width (or negative, read as unsigned) gives 0, as
    numpy.left_shift does.

    ```mlir
    %s = ml.shift_left %a, %b : (tensor<4xui32>, tensor<4xui32>) -> tensor<4xui32>
    ```
    """

    name = "ml.shift_left"


@irdl_op_definition
class ShiftRightOp(ShiftOp):
    """
    Elementwise `lhs >> rhs` on integers, broadcasting: arithmetic (sign-filling) for
    signless integers, logical for unsigned ones.

    An amount at or past the bit width (or negative, read as unsigned) fills every
    bit with the sign (0 for unsigned), as numpy.right_shift does.

    ```mlir
    %s = ml.shift_right %a, %b : (tensor<4xi32>, tensor<i32>) -> tensor<4xi32>
    ```
    """

    name = "ml.shift_right"


TRIGONOMETRIC = (
    SinOp,
    CosOp,
    TanOp,
    AsinOp,
    AcosOp,
    AtanOp,
    SinhOp,
    CoshOp,
    AsinhOp,
    AcoshOp,
    AtanhOp,
)
ROUNDING = (FloorOp, CeilOp, RoundOp)
BITWISE = (BitwiseAndOp, BitwiseOrOp, BitwiseXorOp, BitwiseNotOp, ShiftLeftOp, ShiftRightOp)

# Every op of this module, for the dialect's op list.
OPS = (*TRIGONOMETRIC, *ROUNDING, RemOp, *BITWISE)
