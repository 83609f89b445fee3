"""
Algebraic canonicalizations of `ml` ops, attached through `HasCanonicalizationPatternsTrait`.

The trait classes at the bottom are attached to the ops by the dialect modules
through `mlc.dialects.ml.base.canonicalized_by`, lazily since this module imports
the ops; xDSL's own `canonicalize` pass then applies the patterns unchanged.

    %t = ml.transpose %x {perm = array<i64: 1, 0>}   ->  %x  (when the perms compose
    %u = ml.transpose %t {perm = array<i64: 1, 0>}          to the identity)
    %t = ml.transpose %x {perm = array<i64: 1, 0, 2>} : (tensor<1x8x9xf32>) -> tensor<8x1x9xf32>
                                                     ->  ml.reshape %x (only size-1 dims move)
    %n = ml.neg %x ; %m = ml.neg %n                  ->  %x
    %m = ml.mul %x, %one (dense<1.0>)                ->  %x
    %p = ml.pow %x, %three (dense<3.0>)              ->  ml.mul (ml.mul %x, %x), %x
    %y = ml.conv2d %x, %w, %zero (dense<0.0>)        ->  ml.conv2d %x, %w

Every rewrite keeps the type of the value it replaces: an identity that would change
a type (a broadcasting `x * 1`, a result more static than `x`) is left alone. Float
rewrites keep IEEE semantics: `x - x` and `x * 0` are not folded (NaN, inf), and
`x + 0.0` is not either (it turns -0.0 into +0.0); `x + (-0.0)` and `x - 0.0` are.
"""

import math
from collections.abc import Sequence

from xdsl.dialects.arith import ConstantOp
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, IntegerType, Signedness, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.traits import HasCanonicalizationPatternsTrait

from mlc import shapes
from mlc.dialects.ml.base import is_float
from mlc.dialects.ml.elementwise import (
    AbsOp,
    AddOp,
    BinaryOp,
    CastOp,
    CmpOp,
    DivOp,
    MulOp,
    NegOp,
    PowOp,
    ReluOp,
    SelectOp,
    SubOp,
)
from mlc.dialects.ml.movement import BroadcastToOp, ReshapeOp, TransposeOp
from mlc.dialects.ml.nn import ConvOp

# ---------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------


def compose_perms(inner: Sequence[int], outer: Sequence[int]) -> tuple[int, ...]:
    """
    The perm of `transpose(transpose(x, inner), outer)` as one transpose of `x`.

    Result dim `j` of the outer is its operand dim `outer[j]`, which is `x` dim
    `inner[outer[j]]`.
    """
    return tuple(inner[j] for j in outer)


def is_identity_perm(perm: Sequence[int]) -> bool:
    return tuple(perm) == tuple(range(len(perm)))


def is_static_type(t: Attribute) -> bool:
    return isinstance(t, TensorType) and all(shapes.is_static(d) for d in t.get_shape())


def is_identity_element(value: float | int, kind: str, floating: bool) -> bool:
    """
    Whether `x <kind> value == x` for every `x`, bit for bit.

    `kind` is "mul"/"div" (identity 1) or "add"/"sub" (identity 0). For floats the
    sign of zero matters: `-0.0 + 0.0` is `+0.0`, so only `-0.0` is the additive
    identity, and only `+0.0` is the subtractive one.
    """
    if kind in ("mul", "div"):
        return value == 1
    if value != 0:
        return False
    if not floating:
        return True
    negative_zero = math.copysign(1.0, value) < 0
    return negative_zero if kind == "add" else not negative_zero


def splat_value(value: SSAValue) -> float | int | None:
    """
    The one value of an `arith.constant` splat tensor, or None for anything else.

    Compares the raw bytes rather than unpacking every element: the constant may be
    a large weight tensor, and canonicalize looks at every op using it.
    """
    op = value.owner
    if not isinstance(op, ConstantOp) or not isinstance(op.value, DenseIntOrFPElementsAttr):
        return None
    return dense_splat(op.value)


def dense_splat(dense: DenseIntOrFPElementsAttr) -> float | int | None:
    """The one value of a splat dense attribute, or None (compared on the raw bytes)."""
    element = dense.get_element_type()
    raw, size = dense.data.data, element.size
    if not raw or raw != raw[:size] * (len(raw) // size):
        return None
    return element.unpack(raw[:size], 1)[0]


def forward(op: Operation, rewriter: PatternRewriter, value: SSAValue) -> None:
    """Replace `op` by an existing value; callers have checked the types agree."""
    rewriter.replace(op, [], [value])


def replace_by_new(op: Operation, rewriter: PatternRewriter, new: Operation) -> None:
    """Replace `op` by `new`, which takes `op`'s location (xDSL does not copy it)."""
    new.location = op.location
    rewriter.replace(op, [new], [new.results[0]])


# ---------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------


def moves_unit_dims_only(perm: Sequence[int], shape: Sequence[int]) -> bool:
    """Whether `perm` keeps the dims of `shape` larger than 1 in their order (it only
    moves size-1 dims): the elements stay in the same order, as with a reshape."""
    kept = [d for d in perm if shape[d] != 1]
    return kept == sorted(kept)


class FoldTranspose(RewritePattern):
    """
    transpose(transpose(x, p), q) -> transpose(x, p∘q); an identity perm -> x; a static
    transpose that only moves size-1 dims -> a reshape (no copy, and it folds into the
    reshapes around it).
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter, /):
        perm = op.perm.get_values()
        if is_identity_perm(perm):
            if op.x.type == op.result.type:
                forward(op, rewriter, op.x)
            return
        x_type = op.x.type
        if (
            isinstance(x_type, TensorType)
            and is_static_type(x_type)
            and is_static_type(op.result.type)
            and moves_unit_dims_only(perm, x_type.get_shape())
        ):
            replace_by_new(op, rewriter, ReshapeOp(op.x, result_type=op.result.type))
            return
        inner = op.x.owner
        if not isinstance(inner, TransposeOp):
            # Nothing to compose with.
            return
        composed = compose_perms(inner.perm.get_values(), perm)
        if is_identity_perm(composed):
            if inner.x.type == op.result.type:
                forward(op, rewriter, inner.x)
            return
        replace_by_new(op, rewriter, TransposeOp(inner.x, composed, op.result.type))


class FoldReshape(RewritePattern):
    """reshape(reshape(x)) -> reshape(x); a reshape to x's own static type -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter, /):
        if op.shape is not None:
            # A run-time shape: the target is not known statically.
            return
        if op.x.type == op.result.type and is_static_type(op.x.type):
            forward(op, rewriter, op.x)
            return
        inner = op.x.owner
        if not isinstance(inner, ReshapeOp) or inner.shape is not None:
            return
        new = ReshapeOp(inner.x, result_type=op.result.type)
        replace_by_new(op, rewriter, new)


class FoldIdentityBroadcast(RewritePattern):
    """broadcast_to x's own type -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: BroadcastToOp, rewriter: PatternRewriter, /):
        if op.x.type != op.result.type:
            return
        if op.shape is not None and not is_static_type(op.x.type):
            # A run-time shape may broadcast a dynamic size-1 dimension.
            return
        forward(op, rewriter, op.x)


# ---------------------------------------------------------------------------
# Unary
# ---------------------------------------------------------------------------


class FoldNegNeg(RewritePattern):
    """neg(neg(x)) -> x: negation is an involution (also with integer wrap-around)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: NegOp, rewriter: PatternRewriter, /):
        inner = op.x.owner
        if isinstance(inner, NegOp) and inner.x.type == op.result.type:
            forward(op, rewriter, inner.x)


class FoldIdempotent(RewritePattern):
    """relu(relu(x)) -> relu(x), abs(abs(x)) -> abs(x): applying twice changes nothing."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReluOp | AbsOp, rewriter: PatternRewriter, /):
        inner = op.x.owner
        if type(inner) is type(op) and inner.results[0].type == op.result.type:
            forward(op, rewriter, inner.results[0])


class FoldAbsNeg(RewritePattern):
    """abs(neg(x)) -> abs(x), except for unsigned integers, where neg wraps around."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AbsOp, rewriter: PatternRewriter, /):
        inner = op.x.owner
        if not isinstance(inner, NegOp):
            return
        element = op.result.type.element_type  # pyright: ignore[reportUnknownMemberType]
        if isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED:
            # abs of an unsigned value is the value, and neg(x) != x there.
            return
        replace_by_new(op, rewriter, AbsOp(inner.x, op.result.type))


class FoldSameTypeCast(RewritePattern):
    """cast to x's own type -> x."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter, /):
        if op.x.type == op.result.type:
            forward(op, rewriter, op.x)


# ---------------------------------------------------------------------------
# Binary identity elements
# ---------------------------------------------------------------------------

BINARY_KINDS: dict[type[BinaryOp], str] = {AddOp: "add", SubOp: "sub", MulOp: "mul", DivOp: "div"}


def identity_operand(op: BinaryOp) -> SSAValue | None:
    """The operand `x` when the other one is a splat identity constant, else None."""
    kind = BINARY_KINDS[type(op)]
    floating = is_float(op.result.type.element_type)  # pyright: ignore[reportUnknownMemberType]
    sides = [(op.lhs, op.rhs)]
    if kind in ("add", "mul"):
        sides.append((op.rhs, op.lhs))
    for x, constant in sides:
        value = splat_value(constant)
        if value is not None and is_identity_element(value, kind, floating):
            return x
    return None


class FoldSelfSubtract(RewritePattern):
    """
    x - x -> 0 for integers (exact: wrap-around cancels), as a broadcast scalar zero.

    Never for floats: `inf - inf` and `nan - nan` are NaN. The zero is a rank-0
    constant broadcast to the result type, so a large result costs no constant data.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SubOp, rewriter: PatternRewriter, /):
        result = op.result.type
        if op.lhs is not op.rhs or not is_static_type(result):
            return
        element = result.element_type  # pyright: ignore[reportUnknownMemberType]
        if is_float(element):
            return
        zero = ConstantOp(DenseIntOrFPElementsAttr.from_list(TensorType(element, []), [0]))  # pyright: ignore[reportUnknownArgumentType]
        broadcast = BroadcastToOp(zero.result, result)
        zero.location = broadcast.location = op.location
        rewriter.replace(op, [zero, broadcast], [broadcast.result])


def unbroadcast(value: SSAValue) -> SSAValue | None:
    """The operand of an `ml.broadcast_to` that `value` is the result of, or None."""
    owner = value.owner
    return owner.x if isinstance(owner, BroadcastToOp) else None


class FoldBroadcastOperand(RewritePattern):
    """
    op(broadcast_to(x), y) -> op(x, y) for elementwise ops, which broadcast themselves.

    Only where the result type stays the same (the other operands still give the
    broadcast shape), e.g. a scalar broadcast to a tensor then added to it.
    """

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /):
        if not isinstance(op, BinaryOp | CmpOp | SelectOp) or not is_static_type(op.result.type):
            return
        for operand in op.operands:
            if (source := unbroadcast(operand)) is None:
                continue
            operands = [source if v is operand else v for v in op.operands]
            try:
                shape = shapes.broadcast(*(v.type.get_shape() for v in operands))  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType, reportUnknownArgumentType]
            except shapes.ShapeError:
                continue
            if shape != op.result.type.get_shape():
                continue
            new = op.clone({operand: source})
            rewriter.replace(op, new)
            return


class FoldIdentityElement(RewritePattern):
    """x * 1, 1 * x, x + 0, 0 + x, x - 0, x / 1 -> x, when that keeps the type."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp | SubOp | MulOp | DivOp, rewriter: PatternRewriter, /):
        x = identity_operand(op)
        if x is None or x.type != op.result.type:
            # No identity constant, or the constant broadcasts x to a new type.
            return
        forward(op, rewriter, x)


# Exponents worth spelling out as products: one rounding per product, no libm call.
SMALL_POWERS = (2, 3)


class ExpandSmallPower(RewritePattern):
    """
    x ** 2 -> x * x and x ** 3 -> (x * x) * x, for a splat constant exponent.

    `llvm.pow` is a libm call that keeps the loop around it scalar (GPT-2's tanh GELU
    cubes every activation): the products vectorise and fuse like any elementwise op.
    x * x is exact to the rounding pow would do; the cube rounds twice (within 1.5 ulp
    of pow), and NaN, inf and signed zeros come out as pow gives them. Integer powers
    wrap the same way either way. Only where the result keeps x's type (the exponent
    does not broadcast x).
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PowOp, rewriter: PatternRewriter, /):
        x = op.lhs
        if splat_value(op.rhs) not in SMALL_POWERS or x.type != op.result.type:
            return
        square = MulOp(x, x)
        new: list[Operation] = [square]
        if splat_value(op.rhs) == 3:
            new.append(MulOp(square.result, x))
        for each in new:
            each.location = op.location
        rewriter.replace(op, new, [new[-1].results[0]])


class DropZeroBias(RewritePattern):
    """
    A convolution's bias of +0.0 everywhere: dropped. Its sums start from +0.0 either
    way, so no result changes, not even a zero's sign; without it the output starts
    from the zero fill that `linalg-tile` drops rather than a broadcast pass writing the
    whole output first (MobileNetV2's batch-norm-folded biases where a norm is the
    identity: features.2's 1x1 conv, 12 us of 46 at batch 8). A bias of -0.0 stays.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConvOp, rewriter: PatternRewriter, /) -> None:
        if op.bias is None:
            return
        value = splat_value(op.bias)
        if value is None or value != 0 or math.copysign(1.0, value) < 0:
            return
        new = op.with_operands(op.w)
        replace_by_new(op, rewriter, new)


# ---------------------------------------------------------------------------
# Traits, one per op family, attached by the dialect modules
# ---------------------------------------------------------------------------


# Each pattern matches on its root op's type (`op_type_rewrite_pattern`), so the ops of
# a family share one pattern list and a pattern skips the ops it is not about.


class MovementCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldTranspose(), FoldReshape(), FoldIdentityBroadcast())


class UnaryCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldNegNeg(), FoldIdempotent(), FoldAbsNeg(), FoldSameTypeCast())


class BinaryCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldIdentityElement(), FoldSelfSubtract(), ExpandSmallPower())


class ConvCanonicalization(HasCanonicalizationPatternsTrait):
    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (DropZeroBias(),)
