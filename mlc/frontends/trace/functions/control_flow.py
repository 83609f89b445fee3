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
    ops.scan(f, init, xs)                       jax.lax.scan: carry, ys = f(carry, xs[t])
                                                over t, the ys stacked (`scf.for`)

`fori_loop` carries `i` as a rank-0 int64 array next to the state, so the body
sees it as a traced array; it promotes as a Python int would (`x * i` keeps the
dtype of a float32 `x`).
"""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from mlc import shapes
from mlc.dialects import ml
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


def scan(
    f: Callable[[Any, Any], Any],
    init: Any,
    xs: Any = None,
    length: int | None = None,
    reverse: bool = False,
) -> tuple[Any, Any]:
    """
    jax.lax.scan: `carry, y = f(carry, x)` for each `x` along the leading axis of `xs`
    (a single array or a tuple/list of them, one leading size; None with `length`
    steps), giving the last carry and the `y`s stacked along a new leading axis
    (`y` is None, an array or a tuple/list of them). One `scf.for` carries the carry
    and the stacked outputs, into which each step inserts its `y` (`tensor.insert_slice`);
    `reverse` runs the steps backwards, each `y` still stored at its step's index.
    """
    leaves, rebuild = _flatten(init)
    x_leaves, x_rebuild = ([], None) if xs is None else _flatten(xs)
    tracer = active_tracer(*leaves, *x_leaves)
    inits = [lift(tracer, leaf) for leaf in leaves]
    sequences = [lift(tracer, x) for x in x_leaves]
    steps, size = _scan_length(tracer, sequences, length)
    types = [v.type for v in inits]
    body = Block(arg_types=[IndexType(), *types])
    with tracer.region(body):
        t = body.args[0]
        if reverse:
            last = tracer.emit(arith.SubiOp(steps, _index(tracer, 1))).results[0]
            t = tracer.emit(arith.SubiOp(last, t)).results[0]
        x = None if x_rebuild is None else x_rebuild([_row(tracer, s, t) for s in sequences])
        out = f(rebuild([TracedArray(tracer, a) for a in body.args[1:]]), x)
        if not isinstance(out, tuple | list) or len(out) != 2:
            trace_error("the ops.scan function must return a pair (carry, y)")
        new_leaves, _ = _flatten(out[0])
        values = _state_values(tracer, new_leaves, types, "the ops.scan function")
        y_leaves, y_rebuild = ([], None) if out[1] is None else _flatten(out[1])
        ys = [lift(tracer, y) for y in y_leaves]
        stacked = [body.insert_arg(_stacked_type(y, size), len(body.args)) for y in ys]
        inserted = [_insert_row(tracer, y, s, t) for y, s in zip(ys, stacked, strict=True)]
        tracer.emit(scf.YieldOp(*values, *inserted))
    outputs = [_stack_init(tracer, y, steps, size) for y in ys]
    lb, one = _index(tracer, 0), _index(tracer, 1)
    op = tracer.emit(scf.ForOp(lb, steps, one, [*(v.value for v in inits), *outputs], body))
    results = [TracedArray(tracer, r) for r in op.results]
    carry = rebuild(results[: len(inits)])
    return carry, (None if y_rebuild is None else y_rebuild(results[len(inits) :]))


def _index(tracer: Tracer, number: int) -> SSAValue:
    return tracer.emit(arith.ConstantOp(IntegerAttr(number, IndexType()))).results[0]


def _scan_length(
    tracer: Tracer, sequences: Sequence[TracedArray], length: Any
) -> tuple[SSAValue, int]:
    """The step count as an `index` and a size: `length`, or the leading size of `xs`."""
    if not sequences:
        if length is None:
            trace_error("ops.scan needs xs or length")
        if is_traced(length) or int(length) < 0:
            trace_error(f"ops.scan: length must be a non-negative Python integer, got {length!r}")
        return _index(tracer, int(length)), int(length)
    if any(s.ndim == 0 for s in sequences):
        trace_error("ops.scan: each array in xs needs a leading axis to scan over")
    sizes = {s.raw_shape[0] for s in sequences}
    static = [d for d in sizes if shapes.is_static(d)]
    if len(static) > 1 or (length is not None and static and static[0] != length):
        listed = ", ".join(shapes.format_shape([d]) for d in sorted(sizes))
        trace_error(f"ops.scan: xs have different leading sizes ({listed}) or not `length`")
    if static:
        return _index(tracer, static[0]), static[0]
    dim = tracer.emit(tensor.DimOp(sequences[0].value, _index(tracer, 0))).results[0]
    return dim, shapes.DYNAMIC


def _row(tracer: Tracer, x: TracedArray, t: SSAValue) -> TracedArray:
    """`x[t]` for an `index` `t` (`tensor.extract_slice` of one row, then a reshape)."""
    rest = list(x.raw_shape[1:])
    dynamic = [
        tracer.emit(tensor.DimOp(x.value, _index(tracer, k + 1))).results[0]
        for k, d in enumerate(rest)
        if not shapes.is_static(d)
    ]
    static_sizes = [1, *(d if shapes.is_static(d) else DYNAMIC_INDEX for d in rest)]
    op = tensor.ExtractSliceOp.build(
        operands=[x.value, [t], dynamic, []],
        result_types=[TensorType(x.type.element_type, [1, *rest])],
        properties=_slice_properties(len(static_sizes), static_sizes),
    )
    return reshape_to(TracedArray(tracer, tracer.emit(op).results[0]), rest)


def _slice_properties(rank: int, sizes: Sequence[int]) -> dict[str, Attribute]:
    offsets = [DYNAMIC_INDEX, *([0] * (rank - 1))]
    return {
        "static_offsets": DenseArrayBase.from_list(i64, offsets),
        "static_sizes": DenseArrayBase.from_list(i64, list(sizes)),
        "static_strides": DenseArrayBase.from_list(i64, [1] * rank),
    }


def _stacked_type(y: TracedArray, size: int) -> TensorType[Attribute]:
    if not all(shapes.is_static(d) for d in y.raw_shape):
        trace_error(
            f"ops.scan: a step's output {y!r} has a dim known only at run time; "
            "stacked outputs need static shapes"
        )
    return TensorType(y.type.element_type, [size, *y.raw_shape])


def _stack_init(tracer: Tracer, y: TracedArray, steps: SSAValue, size: int) -> SSAValue:
    """Zeros of `y`'s dtype, `[steps, *y.shape]`, for the steps to write into."""
    zero = lift(tracer, np.zeros((), y.dtype)).value
    result = _stacked_type(y, size)
    if shapes.is_static(size):
        return tracer.emit(ml.BroadcastToOp(zero, result)).results[0]
    count = tracer.emit(arith.IndexCastOp(steps, i64)).results[0]
    dims = [tracer.emit(arith.ConstantOp(IntegerAttr(d, i64))).results[0] for d in y.raw_shape]
    shape_type = TensorType(i64, [1 + y.ndim])
    shape = tracer.emit(tensor.FromElementsOp(count, *dims, result_type=shape_type)).results[0]
    return tracer.emit(ml.BroadcastToOp(zero, result, shape)).results[0]


def _insert_row(tracer: Tracer, y: TracedArray, stacked: SSAValue, t: SSAValue) -> SSAValue:
    """`stacked[t] = y` (`tensor.insert_slice`)."""
    rank = 1 + y.ndim
    row = reshape_to(y, [1, *y.raw_shape])
    op = tensor.InsertSliceOp.build(
        operands=[row.value, stacked, [t], [], []],
        result_types=[stacked.type],
        properties=_slice_properties(rank, [1, *y.raw_shape]),
    )
    return tracer.emit(op).results[0]
