"""
Reverse mode through structured control flow: `scf.if` (`ops.cond`), `scf.for`
(`ops.fori_loop`, `ops.scan`) and `scf.while` (`ops.while_loop`), by its trip count.

`scf.if`: the backward program is an `scf.if` on the same condition whose branches
recompute their forward branch (its values are not visible outside it) and run its
VJP, seeded with the cotangents of the if's results; each yields the cotangents of the
values from outside that the branch reads (zeros where a branch does not read one).

    %r = scf.if %c { A; yield a } else { B; yield b }
==>
    %g:k = scf.if %c { A'; VJP(A) at ct(r); yield ct(x1..xk) } else { B'; VJP(B) ... }

`scf.for`: the forward states are saved, then walked backwards. A taping copy of the
loop (after the forward program) writes each iteration's carried values into a stack,
one tensor of trip-count rows per carried value (`tensor.insert_slice` at row
`(iv - lb) / step`); a reverse `scf.for` over the rows, last first, reads an iteration's
states back (`tensor.extract_slice`), recomputes its body and runs the body's VJP: it
carries the carried values' cotangents (the results' cotangents first) and sums the
cotangents of the outside values the body reads.

    %r = scf.for %i = %lb to %ub step %s iter_args(%a = %init) { body; yield a' }
==>
    %r', %stack = scf.for ... iter_args(%a = %init, %st = zeros) { st[k] = a; body; ... }
    %ga, %gx = scf.for %j = 0 to T iter_args(%ct = ct(r), %acc = 0) {
      %a_k = %stack[T - 1 - j]; body'(a_k); VJP(body) at ct; yield ct(a_k), acc + ct(x)
    }

The trip count may be dynamic (a run-time row count), the carried values must have
static shapes. Saving every state costs `T` times a state's memory (a scan's stacked
outputs, carried whole, `T` times theirs); nothing is recomputed but the body once per
reverse step (the cost model does not choose between saving and recomputing yet).
`scf.while` (`ops.while_loop`): its trip count is recorded first, by a copy of the loop
that also carries a counter; the loop is then a for loop of its body over that count
(a count known at run time: the stacks are sized by it), differentiated as above. The
forward loop so runs three times (the value, the count, the taping); counting first
keeps the stacks one allocation each, where growing them in the loop would copy. A
while differentiates where its condition region passes its state on unchanged (what
`ops.while_loop` builds); another is refused at its location.
"""

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mlc import shapes
from mlc.autodiff.emitter import Emitter, element_type, shape_of
from mlc.diagnostics import op_error
from mlc.dialects import ml
from mlc.dialects.ml.base import is_float

# backprop(ops, wrt, seeds, em) -> the cotangents of wrt (zeros where none reach them)
Backprop = Callable[
    [Sequence[Operation], Sequence[SSAValue], Sequence[tuple[SSAValue, SSAValue]], Emitter],
    list[SSAValue],
]
Grads = list[tuple[SSAValue, SSAValue]]  # (outside value, its cotangent)

CONTROL_FLOW = (scf.IfOp, scf.ForOp, scf.WhileOp)


def free_values(op: Operation, active: dict[SSAValue, int]) -> list[SSAValue]:
    """The active floating-point values defined outside `op` that its regions read."""
    inside = {r for inner in op.walk() for r in inner.results} | {
        a for region in op.regions for block in region.blocks for a in block.args
    }
    seen: dict[SSAValue, None] = {}
    for inner in op.walk():
        if inner is op:
            continue
        for v in inner.operands:
            if v not in inside and active.get(v, 0) and _is_float(v):
                seen[v] = None
    return list(seen)


def _is_float(value: SSAValue) -> bool:
    return isinstance(value.type, TensorType) and is_float(element_type(value))


def pull_back(
    op: Operation,
    cotangents: dict[SSAValue, SSAValue],
    active: dict[SSAValue, int],
    em: Emitter,
    backprop: Backprop,
) -> Grads:
    """The cotangents `op` (an scf op) gives its active outside values."""
    if isinstance(op, scf.WhileOp):
        _check_while(op)
    cts = [_seed(em, r, cotangents) for r in op.results]
    if isinstance(op, scf.IfOp):
        return _pull_back_if(op, cts, active, em, backprop)
    if isinstance(op, scf.WhileOp):
        return _pull_back_while(op, cts, active, em, backprop)
    assert isinstance(op, scf.ForOp)
    return _pull_back_for(op, cts, active, em, backprop)


def _seed(em: Emitter, result: SSAValue, cotangents: dict[SSAValue, SSAValue]) -> SSAValue | None:
    """The result's cotangent, zeros for a float result without one, None otherwise."""
    if result in cotangents:
        return cotangents[result]
    return em.zeros_like(result) if _is_float(result) else None


def _recompute(ops: Sequence[Operation], mapping: dict[SSAValue, SSAValue], em: Emitter):
    """Clone `ops` (a region's, its terminator left out) at `em`'s point, at their locations."""
    clones = []
    for op in ops:
        clone = op.clone(value_mapper=mapping)
        Rewriter.insert_op(clone, em.point)
        clones.append(clone)
    return clones


def _body_ops(block: Block) -> list[Operation]:
    return list(block.ops)[:-1]


# ---------------------------------------------------------------------------
# scf.if
# ---------------------------------------------------------------------------


def _pull_back_if(
    op: scf.IfOp, cts: list[SSAValue | None], active: dict[SSAValue, int], em, backprop
) -> Grads:
    free = free_values(op, active)
    if not free:
        return []
    branches = []
    for region in (op.true_region, op.false_region):
        block = Block()
        inner = Emitter(InsertPoint.at_end(block))
        inner.location = em.location
        if region.blocks:
            mapping: dict[SSAValue, SSAValue] = {}
            _recompute(_body_ops(region.block), mapping, inner)
            yielded = [mapping.get(v, v) for v in region.block.last_op.operands]  # pyright: ignore[reportOptionalMemberAccess]
            seeds = [(v, ct) for v, ct in zip(yielded, cts, strict=True) if ct is not None]
            grads = backprop(list(block.ops), free, seeds, inner)
        else:  # an else without a region reads nothing
            grads = [inner.zeros_like(v) for v in free]
        located_yield(inner, grads)
        branches.append(Region(block))
    new = scf.IfOp(op.cond, [v.type for v in free], branches[0], branches[1])
    em(new)
    return list(zip(free, new.results, strict=True))


def located_yield(em: Emitter, values: Sequence[SSAValue]) -> None:
    done = scf.YieldOp(*values)
    done.location = em.location
    Rewriter.insert_op(done, em.point)


# ---------------------------------------------------------------------------
# scf.for
# ---------------------------------------------------------------------------


def _index(em: Emitter, value: int) -> SSAValue:
    return em(arith.ConstantOp(IntegerAttr(value, IndexType())))


def _constant_index(value: SSAValue) -> int | None:
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, IntegerAttr):
        return op.value.value.data  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return None


def _trip_count(em: Emitter, op: scf.ForOp) -> tuple[SSAValue, int]:
    """The iterations as an index value, and as a number (or DYNAMIC)."""
    bounds = [_constant_index(v) for v in (op.lb, op.ub, op.step)]
    if all(b is not None for b in bounds):
        lb, ub, step = bounds  # pyright: ignore[reportAssignmentType]
        count = max(0, -(-(ub - lb) // step))  # pyright: ignore[reportOperatorIssue]
        return _index(em, count), count
    span = em(arith.SubiOp(op.ub, op.lb))
    count = em(arith.CeilDivSIOp(span, op.step))
    return em(arith.MaxSIOp(count, _index(em, 0))), shapes.DYNAMIC


def _slice_props(rank: int, sizes: Sequence[int]) -> dict[str, Attribute]:
    return {
        "static_offsets": DenseArrayBase.from_list(i64, [DYNAMIC_INDEX, *[0] * (rank - 1)]),
        "static_sizes": DenseArrayBase.from_list(i64, list(sizes)),
        "static_strides": DenseArrayBase.from_list(i64, [1] * rank),
    }


def _stack_type(state: SSAValue, rows: int) -> TensorType[Attribute]:
    shape = shape_of(state)
    if not all(shapes.is_static(d) for d in shape):
        raise shapes.ShapeError(
            f"saving a loop's state of shape ({shapes.format_shape(shape)}) needs static dims"
        )
    return TensorType(element_type(state), [rows, *shape])


def _empty_stack(em: Emitter, state: SSAValue, count: SSAValue, rows: int) -> SSAValue:
    stack = _stack_type(state, rows)
    zero = em.scalar(0.0, state)
    if shapes.is_static(rows):
        return em(ml.BroadcastToOp(zero, stack))
    rank = len(shape_of(state))
    dims = [em(arith.IndexCastOp(count, i64)), *(em.dim(state, d) for d in range(rank))]
    shape = em(tensor.FromElementsOp(*dims, result_type=TensorType(i64, [len(dims)])))
    return em(ml.BroadcastToOp(zero, stack, shape))


def _push(em: Emitter, stack: SSAValue, state: SSAValue, row: SSAValue) -> SSAValue:
    shape = list(shape_of(state))
    one_row = em.reshape(state, [1, *shape])
    op = tensor.InsertSliceOp.build(
        operands=[one_row, stack, [row], [], []],
        result_types=[stack.type],
        properties=_slice_props(1 + len(shape), [1, *shape]),
    )
    return em(op)


def _read(em: Emitter, stack: SSAValue, row: SSAValue) -> SSAValue:
    shape = list(shape_of(stack)[1:])
    op = tensor.ExtractSliceOp.build(
        operands=[stack, [row], [], []],
        result_types=[TensorType(element_type(stack), [1, *shape])],
        properties=_slice_props(1 + len(shape), [1, *shape]),
    )
    return em.reshape(em(op), shape)


def _row_of(em: Emitter, op: scf.ForOp, iv: SSAValue) -> SSAValue:
    """(iv - lb) / step: the row of the iteration at `iv`."""
    if _constant_index(op.lb) == 0 and _constant_index(op.step) == 1:
        return iv
    return em(arith.DivSIOp(em(arith.SubiOp(iv, op.lb)), op.step))


def _tape(em: Emitter, op: scf.ForOp, count: SSAValue, rows: int) -> list[SSAValue]:
    """A copy of the loop that also stacks each iteration's carried values: the stacks."""
    for value in op.iter_args:
        if not isinstance(value.type, TensorType):
            op_error(op, f"cannot be differentiated: it carries a {value.type}, not a tensor")
    stacks = [_empty_stack(em, v, count, rows) for v in op.iter_args]
    forward = op.body.block
    body = Block(arg_types=[a.type for a in forward.args] + [s.type for s in stacks])
    inner = Emitter(InsertPoint.at_end(body))
    inner.location = em.location
    carried = len(op.iter_args)
    row = _row_of(inner, op, body.args[0])
    pushed = [
        _push(inner, stack, state, row)
        for stack, state in zip(body.args[1 + carried :], body.args[1 : 1 + carried], strict=True)
    ]
    mapping = dict(zip(forward.args, body.args[: 1 + carried], strict=True))
    _recompute(_body_ops(forward), mapping, inner)
    yielded = [mapping.get(v, v) for v in forward.last_op.operands]  # pyright: ignore[reportOptionalMemberAccess]
    located_yield(inner, [*yielded, *pushed])
    taped = scf.ForOp(op.lb, op.ub, op.step, [*op.iter_args, *stacks], body)
    em(taped)
    return list(taped.results[carried:])


def _pull_back_for(
    op: scf.ForOp, cts: list[SSAValue | None], active: dict[SSAValue, int], em, backprop
) -> Grads:
    free = free_values(op, active)
    floats = [i for i, v in enumerate(op.iter_args) if _is_float(v)]
    if not floats:
        return []
    count, rows = _trip_count(em, op)
    stacks = _tape(em, op, count, rows)
    accumulators = [em.zeros_like(v) for v in free]
    seeds = [cts[i] for i in floats]
    forward = op.body.block
    body = Block(arg_types=[IndexType(), *(s.type for s in seeds), *(a.type for a in accumulators)])  # pyright: ignore[reportOptionalMemberAccess]
    inner = Emitter(InsertPoint.at_end(body))
    inner.location = em.location
    last = inner(arith.SubiOp(count, _index(inner, 1)))
    row = inner(arith.SubiOp(last, body.args[0]))
    iv = row
    if not (_constant_index(op.lb) == 0 and _constant_index(op.step) == 1):
        iv = inner(arith.AddiOp(op.lb, inner(arith.MuliOp(row, op.step))))
    states = [_read(inner, stack, row) for stack in stacks]
    mapping = dict(zip(forward.args, [iv, *states], strict=True))
    start = len(list(body.ops))
    _recompute(_body_ops(forward), mapping, inner)
    recomputed = list(body.ops)[start:]
    yielded = [mapping.get(v, v) for v in forward.last_op.operands]  # pyright: ignore[reportOptionalMemberAccess]
    ct_args = body.args[1 : 1 + len(floats)]
    step_seeds = [(yielded[i], ct) for i, ct in zip(floats, ct_args, strict=True)]
    wrt = [states[i] for i in floats] + free
    grads = backprop(recomputed, wrt, step_seeds, inner)
    sums = [
        inner.add(acc, g)
        for acc, g in zip(body.args[1 + len(floats) :], grads[len(floats) :], strict=True)
    ]
    located_yield(inner, [*grads[: len(floats)], *sums])
    reverse = scf.ForOp(_index(em, 0), count, _index(em, 1), [*seeds, *accumulators], body)  # pyright: ignore[reportArgumentType]
    em(reverse)
    results = list(reverse.results)
    inits = [(op.iter_args[i], results[k]) for k, i in enumerate(floats)]
    return inits + list(zip(free, results[len(floats) :], strict=True))


# ---------------------------------------------------------------------------
# scf.while
# ---------------------------------------------------------------------------


def _check_while(op: scf.WhileOp) -> None:
    """A while differentiates where its condition passes its state on unchanged (what
    `ops.while_loop` builds): it is then a for loop of its body over its trip count."""
    condition = op.before_region.block.last_op
    assert isinstance(condition, scf.ConditionOp)
    if list(condition.args) != list(op.before_region.block.args):
        op_error(
            op,
            "cannot be differentiated: its condition region passes on values other than "
            "the loop's state, unchanged and in order (as ops.while_loop does); write it "
            "with ops.fori_loop or ops.scan (scf.for)",
        )
    for value in op.arguments:
        if not isinstance(value.type, TensorType):
            op_error(op, f"cannot be differentiated: it carries a {value.type}, not a tensor")


def _trip_counter(em: Emitter, op: scf.WhileOp) -> SSAValue:
    """A copy of the loop that also counts its iterations (an index carried along): the count."""
    types = [*op.result_types, IndexType()]
    before, after = Block(arg_types=types), Block(arg_types=types)
    first, then = Emitter(InsertPoint.at_end(before)), Emitter(InsertPoint.at_end(after))
    first.location = then.location = em.location
    # The new blocks take the counter last: zip leaves it out of the mappings.
    mapping = dict(zip(op.before_region.block.args, before.args, strict=False))
    _recompute(_body_ops(op.before_region.block), mapping, first)
    condition = op.before_region.block.last_op
    assert isinstance(condition, scf.ConditionOp)
    flag = mapping.get(condition.condition, condition.condition)
    passed = scf.ConditionOp(flag, *before.args)
    passed.location = em.location
    Rewriter.insert_op(passed, first.point)
    mapping = dict(zip(op.after_region.block.args, after.args, strict=False))
    _recompute(_body_ops(op.after_region.block), mapping, then)
    yielded = [mapping.get(v, v) for v in op.after_region.block.last_op.operands]  # pyright: ignore[reportOptionalMemberAccess]
    located_yield(then, [*yielded, then(arith.AddiOp(after.args[-1], _index(then, 1)))])
    counting = scf.WhileOp([*op.arguments, _index(em, 0)], types, [before], [after])
    em(counting)
    return counting.results[-1]


def _pull_back_while(
    op: scf.WhileOp, cts: list[SSAValue | None], active: dict[SSAValue, int], em, backprop
) -> Grads:
    """
    A counting copy of the loop records its trip count `T`; the loop is then the for
    loop `for k in 0..T: state = body(state)`, whose pullback (`_pull_back_for`: a
    taping copy stacking `T` states, a reverse loop) is the while's.
    """
    if not any(_is_float(v) for v in op.arguments):
        return []
    count = _trip_counter(em, op)
    body = Block(arg_types=[IndexType(), *op.result_types])
    inner = Emitter(InsertPoint.at_end(body))
    inner.location = em.location
    after = op.after_region.block
    mapping = dict(zip(after.args, body.args[1:], strict=True))
    _recompute(_body_ops(after), mapping, inner)
    located_yield(inner, [mapping.get(v, v) for v in after.last_op.operands])  # pyright: ignore[reportOptionalMemberAccess]
    as_for = scf.ForOp(_index(em, 0), count, _index(em, 1), list(op.arguments), body)
    try:
        return _pull_back_for(as_for, cts, active, em, backprop)
    finally:
        as_for.erase()  # a template, never inserted: drop its uses of outside values
