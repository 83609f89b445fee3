"""
Structured control flow for traced programs: `scf.if`, `scf.while` and `scf.for`.

Branches and loop bodies are Python functions traced once, each into the region
of its `scf` op. Traced arrays they capture from outside are plain uses of the
outer values (`scf` regions are not isolated from above). Loop state is a single
array or a tuple (or list) of arrays; Python numbers and numpy arrays in it become
constants. A loop body must give its state back with the same shapes and dtypes,
as `scf` requires; a Python number returned for a state entry takes that entry's
dtype.

    ops.while_loop(cond_fn, body_fn, init)      state = init
                                                while cond_fn(state): state = body_fn(state)
    ops.fori_loop(lo, hi, body_fn, init)        for i in range(lo, hi): state = body_fn(i, state)
    ops.cond(pred, true_fn, false_fn, *args)    true_fn(*args) if pred else false_fn(*args)

`fori_loop` carries `i` as a rank-0 int64 array next to the state, so the body
sees it as a traced array; it promotes as a Python int would (`x * i` keeps the
dtype of a float32 `x`).
"""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import IndexType, IntegerAttr, i1, i64
from xdsl.ir import Attribute, Block, Region, SSAValue

from mlc.frontends.trace.array import TracedArray, is_traced
from mlc.frontends.trace.recording import active_tracer, cast, lift, reshape_to
from mlc.frontends.trace.tracer import DTYPES, Tracer, trace_error
from mlc.ir import type_text

Rebuild = Callable[[Sequence[Any]], Any]


def _flatten(value: Any) -> tuple[list[Any], Rebuild]:
    """The leaves of a single value or a tuple/list of them, and how to rebuild it."""
    if isinstance(value, tuple | list):
        kind = type(value)
        return list(value), lambda leaves: kind(leaves)  # pyright: ignore[reportUnknownLambdaType]
    return [value], lambda leaves: leaves[0]


def _flag(tracer: Tracer, pred: Any, what: str) -> SSAValue:
    """The i1 a predicate holds: a rank-0 (or size-1) traced array, != 0 if not bool."""
    p = lift(tracer, pred)
    if any(d != 1 for d in p.raw_shape):
        trace_error(f"{what} needs a single value, got an array of shape {p.raw_shape}")
    if p.raw_shape:
        p = reshape_to(p, ())
    if p.dtype != np.bool_:
        p = p != 0
    return tracer.emit(tensor.ExtractOp(p.value, [], i1)).results[0]


def _state_values(
    tracer: Tracer, leaves: Sequence[Any], types: Sequence[Attribute], what: str
) -> list[SSAValue]:
    """A body's returned state as values of the state's types (lifting Python numbers)."""
    if len(leaves) != len(types):
        trace_error(f"{what} returns {len(leaves)} values for a state of {len(types)}")
    values = []
    for i, (leaf, type_) in enumerate(zip(leaves, types, strict=True)):
        dtype = DTYPES[type_.element_type]  # pyright: ignore[reportAttributeAccessIssue]
        value = lift(tracer, leaf, None if is_traced(leaf) else dtype)
        if value.type != type_:
            trace_error(
                f"{what} changes state entry {i} from {type_text(type_)} to "
                f"{type_text(value.type)}: loop state keeps its shape and dtype"
            )
        values.append(value.value)
    return values


def _index_value(tracer: Tracer, value: Any) -> SSAValue:
    """An `index` for a loop bound: a Python int, or a traced rank-0 integer."""
    if not is_traced(value):
        try:
            number = int(value)
        except (TypeError, ValueError):
            trace_error(f"loop bounds must be integers, got {type(value).__name__}")
        return tracer.emit(arith.ConstantOp(IntegerAttr(number, IndexType()))).results[0]
    if value.raw_shape or value.dtype.kind not in "iu":
        trace_error(f"a traced loop bound must be a rank-0 integer array, got {value!r}")
    scalar = cast(value, np.int64)
    element = tracer.emit(tensor.ExtractOp(scalar.value, [], i64)).results[0]
    return tracer.emit(arith.IndexCastOp(element, IndexType())).results[0]


def cond(
    pred: Any, true_fn: Callable[..., Any], false_fn: Callable[..., Any], *operands: Any
) -> Any:
    """`true_fn(*operands)` if `pred` else `false_fn(*operands)`, as one `scf.if`."""
    if not is_traced(pred):
        return (true_fn if bool(np.asarray(pred)) else false_fn)(*operands)
    tracer = active_tracer(pred, *operands)
    flag = _flag(tracer, pred, "ops.cond")
    blocks = [Block(), Block()]
    outputs: list[list[Any]] = []
    rebuild: Rebuild | None = None
    for block, branch in zip(blocks, (true_fn, false_fn), strict=True):
        with tracer.region(block):
            leaves, rebuild = _flatten(branch(*operands))
        outputs.append(leaves)
    if len(outputs[0]) != len(outputs[1]):
        trace_error(f"ops.cond: the branches return {len(outputs[0])} and {len(outputs[1])} values")
    values = _branch_results(tracer, blocks, outputs)
    types = [v.type for v in values[0]]
    for block, results in zip(blocks, values, strict=True):
        with tracer.region(block):
            tracer.emit(scf.YieldOp(*results))
    op = tracer.emit(scf.IfOp(flag, types, Region(blocks[0]), Region(blocks[1])))
    assert rebuild is not None
    return rebuild([TracedArray(tracer, r) for r in op.results])


def _branch_results(
    tracer: Tracer, blocks: Sequence[Block], outputs: Sequence[Sequence[Any]]
) -> list[list[SSAValue]]:
    """Each branch's results as values of one type per position."""
    results: list[list[SSAValue]] = [[], []]
    for i, pair in enumerate(zip(*outputs, strict=True)):
        like = next((v for v in pair if is_traced(v)), None)
        dtype = like.dtype if like is not None else None
        lifted = []
        for block, leaf, out in zip(blocks, pair, results, strict=True):
            with tracer.region(block):
                value = lift(tracer, leaf, None if is_traced(leaf) else dtype)
            lifted.append(value)
            out.append(value.value)
        if lifted[0].type != lifted[1].type:
            trace_error(
                f"ops.cond: the branches return different types for result {i}: "
                f"{type_text(lifted[0].type)} and {type_text(lifted[1].type)}"
            )
    return results


def while_loop(cond_fn: Callable[[Any], Any], body_fn: Callable[[Any], Any], init: Any) -> Any:
    """`while cond_fn(state): state = body_fn(state)`, as one `scf.while`."""
    leaves, rebuild = _flatten(init)
    tracer = active_tracer(*leaves)
    inits = [lift(tracer, leaf) for leaf in leaves]
    types = [v.type for v in inits]
    before, after = Block(arg_types=types), Block(arg_types=types)
    with tracer.region(before):
        state = rebuild([TracedArray(tracer, a) for a in before.args])
        flag = _flag(tracer, cond_fn(state), "the ops.while_loop condition")
        tracer.emit(scf.ConditionOp(flag, *before.args))
    with tracer.region(after):
        new_state = body_fn(rebuild([TracedArray(tracer, a) for a in after.args]))
        new_leaves, _ = _flatten(new_state)
        values = _state_values(tracer, new_leaves, types, "the ops.while_loop body")
        tracer.emit(scf.YieldOp(*values))
    op = tracer.emit(scf.WhileOp([v.value for v in inits], types, Region(before), Region(after)))
    return rebuild([TracedArray(tracer, r) for r in op.results])


def fori_loop(lower: Any, upper: Any, body_fn: Callable[[Any, Any], Any], init: Any) -> Any:
    """`for i in range(lower, upper): state = body_fn(i, state)`, as one `scf.for`."""
    leaves, rebuild = _flatten(init)
    tracer = active_tracer(lower, upper, *leaves)
    inits = [lift(tracer, leaf) for leaf in leaves]
    types = [v.type for v in inits]
    lb, ub = _index_value(tracer, lower), _index_value(tracer, upper)
    step = tracer.emit(arith.ConstantOp(IntegerAttr(1, IndexType()))).results[0]
    counter = (
        cast(lift(tracer, lower), np.int64)
        if is_traced(lower)
        else lift(tracer, np.int64(int(lower)))
    )
    body = Block(arg_types=[IndexType(), counter.type, *types])
    with tracer.region(body):
        i = TracedArray(tracer, body.args[1], weak=True)
        new_state = body_fn(i, rebuild([TracedArray(tracer, a) for a in body.args[2:]]))
        new_leaves, _ = _flatten(new_state)
        values = _state_values(tracer, new_leaves, types, "the ops.fori_loop body")
        tracer.emit(scf.YieldOp((i + 1).value, *values))
    op = tracer.emit(scf.ForOp(lb, ub, step, [counter.value, *(v.value for v in inits)], body))
    return rebuild([TracedArray(tracer, r) for r in op.results[1:]])
