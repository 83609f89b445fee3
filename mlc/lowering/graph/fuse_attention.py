"""
fuse-attention: the unfused attention exporters and traced code write becomes `ml.attention`.

    %s = ml.matmul %q, %kt                  (%kt: a transpose of k, or anything: k = %ktᵀ)
    %t = ml.mul %s, %c  |  ml.div %s, %c    (any number of splat constants, also on q, kt)
    %u = ml.add %t, %mask                   (an additive mask)
       | ml.select %keep, %t, %ninf         (a bool mask, the others -inf)
    %p = ml.softmax %u {axis = -1}
    %w = ml.select (ml.cmp "ne" %p, %p), %zero, %p     (optional: NaN rows to 0, as
                                                        torch's exporter writes)
    %o = ml.matmul %w, %v
==>
    %o = ml.attention %q, %k, %v, %mask {scale = c...}   (then NaN to 0 if %w was there)

where `k` is `%kt` with its last two dims swapped (a transpose of a transpose composes to
one, or to the source). The scales multiply into `scale`. The optional NaN clean-up is
kept on the attention's result: a row the softmax made NaN (every score -inf) is a NaN
row of the attention too, and so becomes 0 as before; only a NaN inside `v` now zeroes
its row where the unfused form left NaN.

Only where the chain is private: the scores, the scaled and masked scores, the softmax
(and its clean-up) have no other user, so nothing is computed twice. The softmax must
run over the last dim, the result of the attention must have the final matmul's shape
(a mask that broadcasts the scores to a larger shape is left alone), and the operands
must form a valid `ml.attention` (q, k, v of one rank >= 3, equal batch dims). What is
left says why under `--remarks`, at the softmax. Causal masks stay masks (an operand):
recognising their `Trilu`/`Range` forms as `causal` is not done yet.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import VerifyException

from mlc import shapes
from mlc.diagnostics import op_remark
from mlc.dialects import ml
from mlc.lowering.graph.patterns.ml import splat_value
from mlc.lowering.support.locations import Located, fused_location


def only_user(value: SSAValue) -> Operation | None:
    """The one op that uses `value` (once or more), or None."""
    users = {id(use.operation): use.operation for use in value.uses}
    return next(iter(users.values())) if len(users) == 1 else None


def strip_scales(value: SSAValue, private: bool) -> tuple[SSAValue, float]:
    """
    `value` without the multiplications and divisions by splat constants that made it,
    and their product. With `private`, only through values with no other user.
    """
    scale = 1.0
    while isinstance(op := value.owner, ml.MulOp | ml.DivOp):
        if private and only_user(value) is None:
            break
        constant = splat_value(op.rhs)
        if constant is not None and constant != 0:
            scale, value = (
                scale * constant if isinstance(op, ml.MulOp) else scale / constant,
                op.lhs,
            )
            continue
        if isinstance(op, ml.MulOp) and (constant := splat_value(op.lhs)) is not None:
            scale, value = scale * constant, op.rhs
            continue
        break
    return value, scale


def is_nan_cleanup(op: Operation | None, p: SSAValue) -> bool:
    """`select(cmp "ne" p, p, 0, p)`: NaN probabilities to zero."""
    if not isinstance(op, ml.SelectOp) or op.b is not p or splat_value(op.a) != 0:
        return False
    cond = op.cond.owner
    return (
        isinstance(cond, ml.CmpOp)
        and cond.predicate.data == "ne"
        and cond.lhs is p
        and cond.rhs is p
        and only_user(cond.result) is op
    )


@dataclass
class Match:
    """An unfused attention, read back from its softmax."""

    softmax: ml.SoftmaxOp
    ops: list[Operation] = field(default_factory=list[Operation])
    scale: float = 1.0
    mask: SSAValue | None = None
    cleanup_zero: SSAValue | None = None  # the zero of the NaN clean-up, if there is one
    output: ml.MatmulOp | None = None
    scores: ml.MatmulOp | None = None


def read_mask(match: Match, value: SSAValue) -> SSAValue:
    """The scores under an additive or bool mask (recorded in `match`), or `value`."""
    op = value.owner
    if isinstance(op, ml.AddOp):
        for scores, mask in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            if isinstance(strip_scales(scores, True)[0].owner, ml.MatmulOp):
                match.mask, match.ops = mask, [*match.ops, op]
                return scores
    if isinstance(op, ml.SelectOp) and splat_value(op.b) == float("-inf"):
        match.mask, match.ops = op.cond, [*match.ops, op]
        return op.a
    return value


def read_forward(match: Match) -> str | None:
    """Find the matmul by v after the softmax (and its clean-up); a reason if there is none."""
    p = match.softmax.result
    users = {id(use.operation): use.operation for use in p.uses}.values()
    cleanups = [u for u in users if is_nan_cleanup(u, p)]
    if cleanups and len(users) == 2:
        cleanup = cleanups[0]
        assert isinstance(cleanup, ml.SelectOp)
        match.cleanup_zero = cleanup.a
        match.ops = [*match.ops, cleanup.cond.owner, cleanup]  # pyright: ignore[reportAttributeAccessIssue]
        p = cleanup.result
    user = only_user(p)
    if not isinstance(user, ml.MatmulOp) or user.a is not p or user.b is p:
        return "the softmax has another user than one matmul by v"
    match.output = user
    return None


def read_backward(match: Match) -> str | None:
    """Find the scores' matmul, the scales and the mask; a reason where they do not fit."""
    value = match.softmax.x
    if only_user(value) is None:
        return "the masked scores have another user"
    value, match.scale = strip_scales(read_mask(match, value), True)
    scores = value.owner
    if not isinstance(scores, ml.MatmulOp):
        return "the scores are not a matmul"
    if only_user(value) is None:
        return "the scores have another user"
    match.scores = scores
    return None


def key_of(e: Located, kt: SSAValue) -> SSAValue:
    """k, of which `kt` is the transpose of the last two dims."""
    rank = len(shapes_of(kt))
    swap = [*range(rank - 2), rank - 1, rank - 2]
    if isinstance(op := kt.owner, ml.TransposeOp):
        perm = [op.perm.get_values()[d] for d in swap]
        if perm == list(range(rank)):
            return op.x
        return e(ml.TransposeOp(op.x, perm))
    return e(ml.TransposeOp(kt, swap))


def shapes_of(value: SSAValue) -> shapes.Shape:
    assert isinstance(value.type, TensorType)
    return value.type.get_shape()


def build(match: Match) -> tuple[Located, SSAValue] | str:
    """The attention replacing the match, or why it cannot be built."""
    assert match.scores is not None and match.output is not None
    q, q_scale = strip_scales(match.scores.a, False)
    kt, k_scale = strip_scales(match.scores.b, False)
    ranks = {len(shapes_of(x)) for x in (q, kt, match.output.b)}
    if len(ranks) != 1 or min(ranks) < 3:
        return "q, k and v are not of one rank >= 3"
    ops: Sequence[Operation] = [match.scores, *match.ops, match.softmax, match.output]
    e = Located(fused_location(ops))
    scale = match.scale * q_scale * k_scale
    try:
        attention = ml.AttentionOp(q, key_of(e, kt), match.output.b, match.mask, scale=scale)
        attention.verify()
    except (VerifyException, shapes.ShapeError) as error:
        return f"not an ml.attention: {error}"
    if not shapes.compatible(shapes_of(match.output.result), shapes_of(attention.result)):
        return "the mask broadcasts the scores to a larger shape"
    result = e(attention)
    if match.cleanup_zero is not None:
        nan = e(ml.CmpOp("ne", result, result))
        result = e(ml.SelectOp(nan, match.cleanup_zero, result))
    return e, result


def looks_like_attention(softmax: ml.SoftmaxOp) -> bool:
    """Whether the softmax reads scores of a matmul (through scales and a mask)."""
    value, _ = strip_scales(read_mask(Match(softmax), softmax.x), False)
    return isinstance(value.owner, ml.MatmulOp)


def decline_reason(match: Match) -> str | None:
    """Why the softmax's chain is no fusable attention, or None (and `match` is filled)."""
    op = match.softmax
    rank = len(shapes_of(op.x))
    if shapes.normalize_axis(op.axis.value.data, rank) != rank - 1:
        return "the softmax is not over the last dim"
    return read_forward(match) or read_backward(match)


class FuseAttention(RewritePattern):
    """softmax(q @ kᵀ * scale + mask) @ v, from its softmax, to `ml.attention`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.SoftmaxOp, rewriter: PatternRewriter, /) -> None:
        if not looks_like_attention(op):
            return  # a softmax of something else: no candidate, nothing to say
        match = Match(op)
        reason = decline_reason(match)
        built = build(match) if reason is None else reason
        if isinstance(built, str):
            op_remark(op, f"not fused into ml.attention: {built}")
            return
        e, result = built
        assert match.output is not None
        # v may be defined after the softmax: the attention goes where the last matmul was.
        rewriter.replace(match.output, e.ops, [result])


@dataclass(frozen=True)
class FuseAttentionPass(ModulePass):
    """Fuse the unfused attention into `ml.attention` (see the module docstring)."""

    name = "fuse-attention"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # One sweep: each softmax is looked at once, so each remark is given once.
        PatternRewriteWalker(FuseAttention(), apply_recursively=False).rewrite_module(op)
        DeadCodeElimination().apply(ctx, op)
