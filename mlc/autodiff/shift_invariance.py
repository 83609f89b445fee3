"""
Maxima subtracted for stability only: the `m` of `x - m` (`m = reduce_max(x, [a],
keepdims)`, or a min) where everything computed from the difference is invariant to `m`.

A log-softmax or softmax written out by hand,

    m = reduce_max(x, [a], keepdims)    s = x - m
    y = s - log(reduce_sum(exp(s), [a], keepdims))        (or exp(s) / reduce_sum(...))

gives the same `y` for any `m` constant along `a`: the max is there so that `exp` does
not overflow. Its cotangent, `-sum(ct_s, a)`, is zero in exact arithmetic, yet the max's
rule sends it to the elements equal to the max through a comparison, a count of ties
and two more reductions over every row (in a softmax cross-entropy's backward, half
its loops). Like JAX's `log_softmax`, which wraps its max in `stop_gradient`,
`differentiate` treats such an `m` as a constant.

The check follows what the difference reaches, in program order, as one of three kinds
relative to a shift `c` of `m` (constant along `a`): `SHIFTED` (moves by `-c`: `s`, the
log of a scaled value), `SCALED` (multiplied by `exp(-c)`: the exp of a shifted value,
a sum of scaled values along `a` alone, a scaled value times or over an invariant one)
and invariant (the difference of two shifted values, the quotient of two scaled ones,
a softmax along `a`, anything not computed from `m`). Any other use of a shifted or
scaled value (a return, an op of another kind, a reduction over other axes, a
broadcast that changes the rows) makes `m` an ordinary, differentiated value.
"""

from collections.abc import Iterable, Sequence
from enum import Enum

from xdsl.ir import Operation, SSAValue

from mlc import shapes
from mlc.autodiff.emitter import shape_of
from mlc.dialects import ml


class Kind(Enum):
    SHIFTED = "shifted"
    SCALED = "scaled"
    INVARIANT = "invariant"


I = Kind.INVARIANT  # noqa: E741  (short names for the tables below)
SH = Kind.SHIFTED
SC = Kind.SCALED

# The kind of a binary op's result for the kinds of its operands; pairs not listed
# (a shifted value times anything, a sum of two shifted ones, ...) end the analysis.
BINARY: dict[type[Operation], dict[tuple[Kind, Kind], Kind]] = {
    ml.AddOp: {(SH, I): SH, (I, SH): SH},
    ml.SubOp: {(SH, SH): I, (SH, I): SH},
    ml.MulOp: {(SC, I): SC, (I, SC): SC},
    ml.DivOp: {(SC, SC): I, (SC, I): SC},
}


def _reduced_axes(op: ml.ReduceOp) -> tuple[int, ...] | None:
    """The axes `op` reduces, when it keeps them (None otherwise)."""
    if not op.keepdims.value.data:
        return None
    return shapes.normalize_axes(op.axes.get_values(), len(shape_of(op.x)))


def _result_kind(op: Operation, kinds: dict[SSAValue, Kind], axis: int) -> Kind | None:
    """The kind of `op`'s result for its operands' kinds (None: `m` is not invariant)."""
    operands = [kinds.get(v, I) for v in op.operands]
    if isinstance(op, ml.ExpOp):
        return SC if operands == [SH] else None
    if isinstance(op, ml.LogOp):
        return SH if operands == [SC] else None
    if isinstance(op, ml.ReduceSumOp):
        return SC if operands == [SC] and _reduced_axes(op) == (axis,) else None
    if isinstance(op, ml.SoftmaxOp):
        rank = len(shape_of(op.x))
        along = shapes.normalize_axis(op.axis.value.data, rank) == axis
        return I if operands == [SH] and along else None
    table = BINARY.get(type(op))
    if table is None or len(operands) != 2:
        return None
    return table.get((operands[0], operands[1]))


def _same_rows(value: SSAValue, x_shape: Sequence[int], axis: int) -> bool:
    """Whether `value` has `x`'s shape, but for a size-1 dim `axis`: one shift a row."""
    shape = shape_of(value)
    if len(shape) != len(x_shape):
        return False
    return all(d == e or (i == axis and d == 1) for i, (d, e) in enumerate(zip(shape, x_shape)))


def _differenced_away(
    op: ml.ReduceOp, ops: Sequence[Operation], index: dict[Operation, int]
) -> bool:
    """Whether every use of `op`'s result is `x - m` and what those differences reach
    is invariant to `m` (module docstring)."""
    axes = _reduced_axes(op)
    m = op.result
    if axes is None or len(axes) != 1 or not m.uses:
        return False
    x = op.x
    kinds: dict[SSAValue, Kind] = {}
    for use in m.uses:
        sub = use.operation
        if not (isinstance(sub, ml.SubOp) and sub.lhs is x and sub.rhs is m and sub in index):
            return False
        kinds[sub.result] = SH
    axis = axes[0]
    x_shape = shape_of(x)
    first = min(index[use.operation] for use in m.uses)
    for later in ops[first:]:
        if later.results and later.results[0] in kinds:
            continue  # one of the differences
        if not any(kinds.get(v, I) is not I for v in later.operands):
            continue
        kind = _result_kind(later, kinds, axis)
        if kind is None or len(later.results) != 1:
            return False
        if kind is not I and not _same_rows(later.results[0], x_shape, axis):
            return False
        kinds[later.results[0]] = kind
    # a shifted or scaled value used outside `ops` (a return, a nested region) escapes
    return all(use.operation in index for v, k in kinds.items() if k is not I for use in v.uses)


def invariant_maxima(ops: Sequence[Operation], outputs: Iterable[SSAValue]) -> set[SSAValue]:
    """The results of the max and min reductions in `ops` whose every use is a difference
    that the rest of `ops` uses only shift-invariantly (module docstring); `outputs`
    (the values differentiated) are never among them."""
    index = {op: i for i, op in enumerate(ops)}
    excluded = set(outputs)
    return {
        op.result
        for op in ops
        if isinstance(op, ml.ReduceMaxOp | ml.ReduceMinOp)
        and op.result not in excluded
        and _differenced_away(op, ops, index)
    }
