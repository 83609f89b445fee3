"""
The online softmax statistics (Milakov and Gimelshein): a row's running max `m` and the
sum `s` of `exp(x - m)`, rescaled whenever the max grows. `step` takes one element (the
reduction body `convert-ml-to-linalg{online-softmax=true}` builds), `merge` two partial
results (how a warp's lanes, each with every 32nd element of a row, combine theirs on
the GPU), and `is_step` recognises a loop that carries `step`, so that the GPU pass
knows to combine its lanes with `merge`.

Both spend one `exp`, on the smaller side:

    step(x):          m' = max(m, x)      e = exp(min(m, x) - m')
                      s' = x > m ? s * e + (x - m') + 1 : s + e
    merge(m2, s2):    m' = max(m, m2)     e = exp(min(m, m2) - m')
                      s' = m >= m2 ? s + s2 * e : s * e + s2

`e` is 0 where `min - max` is NaN: both sides -inf (masked entries, or a lane that saw
none of a row's finite ones) add nothing, so a row is NaN only if it is entirely -inf,
as in numpy. `(x - m') + 1` is the new max's own term `exp(x - m')` without an `exp`:
1, or NaN when x is +inf, so a row holding +inf (or NaN, through the max) is NaN too.
The identity, a lane's start, is (-inf, 0).
"""

import math as pymath

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import FloatAttr
from xdsl.ir import Operation, SSAValue

from mlc.lowering.support.loop_builder import scalar_constant

IDENTITY = (-pymath.inf, 0.0)


def _rescale(gap: SSAValue) -> SSAValue:
    """`exp(gap)`, or 0 where `gap` is NaN (both sides -inf)."""
    ordered = arith.CmpfOp(gap, gap, "ord").result
    return arith.SelectOp(ordered, math.ExpOp(gap), scalar_constant(0, gap.type)).result


def step(x: SSAValue, m: SSAValue, s: SSAValue) -> list[SSAValue]:
    """The running max and sum after element `x`, built under an implicit builder."""
    new_max = arith.MaximumfOp(m, x).result
    scale = _rescale(arith.SubfOp(arith.MinimumfOp(m, x), new_max).result)
    own = arith.AddfOp(arith.SubfOp(x, new_max), scalar_constant(1, x.type)).result
    grown = arith.AddfOp(arith.MulfOp(s, scale), own).result
    kept = arith.AddfOp(s, scale).result
    return [new_max, arith.SelectOp(arith.CmpfOp(x, m, "ogt"), grown, kept).result]


def merge(m: SSAValue, s: SSAValue, m2: SSAValue, s2: SSAValue) -> list[SSAValue]:
    """The statistics of two parts of a row, built under an implicit builder."""
    new_max = arith.MaximumfOp(m, m2).result
    scale = _rescale(arith.SubfOp(arith.MinimumfOp(m, m2), new_max).result)
    mine_larger = arith.AddfOp(s, arith.MulfOp(s2, scale)).result
    theirs_larger = arith.AddfOp(arith.MulfOp(s, scale), s2).result
    larger = arith.CmpfOp(m, m2, "oge").result
    return [new_max, arith.SelectOp(larger, mine_larger, theirs_larger).result]


def _owner(value: SSAValue, kind: type[Operation], *operands: SSAValue | None) -> Operation | None:
    """`value`'s defining op if it is a `kind` whose operands are `operands` (None: any)."""
    op = value.owner
    if not isinstance(op, kind) or len(op.operands) != len(operands):
        return None
    if any(want is not None and got is not want for got, want in zip(op.operands, operands)):
        return None
    return op


def _compares(value: SSAValue, predicate: str, lhs: SSAValue, rhs: SSAValue) -> bool:
    op = _owner(value, arith.CmpfOp, lhs, rhs)
    return isinstance(op, arith.CmpfOp) and (
        arith.CMPF_COMPARISON_OPERATIONS[op.predicate.value.data] == predicate
    )


def is_constant(value: SSAValue, number: float) -> bool:
    """Whether `value` is a float `arith.constant` of `number` (a reduction's identity)."""
    op = value.owner
    return (
        isinstance(op, arith.ConstantOp)
        and isinstance(op.value, FloatAttr)
        and op.value.value.data == number
    )


def is_step(m: SSAValue, s: SSAValue, new_max: SSAValue, new_sum: SSAValue) -> bool:
    """Whether `(new_max, new_sum)` is `step(x, m, s)` for some `x`, op for op."""
    maximum = _owner(new_max, arith.MaximumfOp, m, None)
    chosen = _owner(new_sum, arith.SelectOp, None, None, None)
    if maximum is None or chosen is None:
        return False
    x = maximum.operands[1]
    condition, grown, kept = chosen.operands
    if not _compares(condition, "ogt", x, m):
        return False
    kept_op = _owner(kept, arith.AddfOp, s, None)
    grown_op = _owner(grown, arith.AddfOp, None, None)
    if kept_op is None or grown_op is None:
        return False
    scale = kept_op.operands[1]
    product, own = grown_op.operands
    if _owner(product, arith.MulfOp, s, scale) is None:
        return False
    own_op = _owner(own, arith.AddfOp, None, None)
    if own_op is None or _owner(own_op.operands[0], arith.SubfOp, x, new_max) is None:
        return False
    if not is_constant(own_op.operands[1], 1):
        return False
    picked = _owner(scale, arith.SelectOp, None, None, None)
    if picked is None or not is_constant(picked.operands[2], 0):
        return False
    exp = _owner(picked.operands[1], math.ExpOp, None)
    if exp is None:
        return False
    gap = exp.operands[0]
    if not _compares(picked.operands[0], "ord", gap, gap):
        return False
    difference = _owner(gap, arith.SubfOp, None, new_max)
    return (
        difference is not None
        and _owner(difference.operands[0], arith.MinimumfOp, m, x) is not None
    )
