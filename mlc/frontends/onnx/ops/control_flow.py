"""
ONNX control flow: `If` -> `scf.if`, `Loop` -> `scf.for` or `scf.while` (`Scan`: `scan`).

A subgraph (a branch, a body) is converted into the region of its `scf` op, in a scope
nested in its node's (`GraphValues.nested`): it reads the values around it directly
(`scf` regions are not isolated from above), its initializers are known values, and its
names shadow outer ones. Its unnamed nodes are located as `<node>/<subgraph>/<Op>_<i>`.

If: a condition known at import inlines the branch it takes. Otherwise the branches'
outputs of different static shapes take one type with `?` where they differ.

Loop (trip count M, condition cond, loop-carried values v, scan outputs):

- `scf.for` over [0, M) when the condition cannot stop the loop: there is no cond input
  (ONNX then ignores the body's), or it is true and the body keeps it true (a constant,
  or passing it through); a condition known false runs no step;
- else `scf.while` carrying the step number and the condition (`index`, `i1`) before
  the values: `while cond and i < M`, the body giving the next condition.

Scan outputs: the for form writes each step's row into zeros of M rows. The while form
cannot size them (M may be INT64_MAX, as torch writes it, or absent): each step appends
its row (a concatenation, so a copy of the stack per step: quadratic in the steps).
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import onnx
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType, i1, i64
from xdsl.ir import Attribute, Block, BlockArgument, Region, SSAValue

from mlc.frontends.onnx.node import Node, NodeError, SequenceValue, Value
from mlc.frontends.onnx.ops.build import (
    element_of,
    reshape_to,
    shape_of,
    tensor_of,
    types_text,
)
from mlc.frontends.onnx.ops.regions import (
    Rows,
    conform,
    flag,
    grow_stack,
    index,
    index_of,
    join,
    joined_types,
    place,
    scalar_tensor,
    stack_init,
    stack_update,
    stacked_type,
)
from mlc.frontends.onnx.ops.table import converts
from mlc.shapes import DYNAMIC


def as_ssa(node: Node, value: Value, what: str) -> SSAValue:
    """A subgraph's output as an SSA value of the scope `node` emits into."""
    if isinstance(value, SequenceValue):
        raise NodeError(f"{what} is a sequence; only tensors leave a subgraph")
    if isinstance(value, np.ndarray):
        return node.constant(value)
    return value


def discard(block: Block) -> None:
    """Erase a block's ops, dropping their uses of values outside it."""
    for op in reversed(list(block.ops)):
        block.erase_op(op, safe_erase=False)


def is_true(value: Value) -> bool:
    return isinstance(value, np.ndarray) and value.size == 1 and bool(value.reshape(-1)[0])


# ---------------------------------------------------------------------------
# If
# ---------------------------------------------------------------------------


@converts("If")
def if_(node: Node) -> Sequence[Value]:
    branches: list[onnx.GraphProto] = [node.attr("then_branch"), node.attr("else_branch")]
    labels = ("then", "else")
    if (known := node.known(0)) is not None:
        if known.size != 1:
            raise NodeError(f"the condition must hold one value, got shape {known.shape}")
        taken = 0 if bool(known.reshape(-1)[0]) else 1
        scope = node.graph.nested(node.graph.block, f"{node.name}/{labels[taken]}")
        return scope.convert_graph(branches[taken], [])
    condition = flag(node, node.input(0), "condition")
    blocks = [Block(), Block()]
    inners: list[Node] = []
    outputs: list[list[SSAValue]] = []
    for block, graph, label in zip(blocks, branches, labels, strict=True):
        inner = node.within(node.graph.nested(block, f"{node.name}/{label}"))
        values = inner.graph.convert_graph(graph, [])
        inners.append(inner)
        outputs.append([as_ssa(inner, v, f"{label} output {i}") for i, v in enumerate(values)])
    if len(outputs[0]) != len(outputs[1]):
        raise NodeError(f"the branches give {len(outputs[0])} and {len(outputs[1])} outputs")
    types: list[Attribute] = []
    for i, (a, b) in enumerate(zip(*outputs, strict=True)):
        a, b = outputs[0][i], outputs[1][i] = same_rank_scalars(inners, a, b)
        both = join(tensor_of(a), tensor_of(b))
        if both is None:
            raise NodeError(
                f"output {i}: the branches give {types_text(a)} and {types_text(b)}, "
                "which differ in element type or rank"
            )
        types.append(both)
    for inner, values in zip(inners, outputs, strict=True):
        conformed = [conform(inner, v, t) for v, t in zip(values, types, strict=True)]  # pyright: ignore[reportArgumentType]
        place(inner, scf.YieldOp(*conformed))
    op = scf.IfOp(condition, types, Region(blocks[0]), Region(blocks[1]))
    node.emit(op)
    return list(op.results)


def same_rank_scalars(
    inners: Sequence[Node], a: SSAValue, b: SSAValue
) -> tuple[SSAValue, SSAValue]:
    """
    Branch outputs `a` and `b`, the one of lower rank reshaped to the other's when both
    hold one element (a `tensor<f32>` and a `tensor<1xf32>`, as AffineGrid's function
    body gives): the If's result then has the higher rank in either branch, where ONNX
    lets its shape follow the branch taken. Others are returned as they are.
    """
    dims = shape_of(a), shape_of(b)
    if len(dims[0]) == len(dims[1]) or any(d != 1 for s in dims for d in s):
        return a, b
    rank = max(len(s) for s in dims)
    a, b = (reshape_to(inner, v, [1] * rank) for inner, v in zip(inners, (a, b), strict=True))
    return a, b


# ---------------------------------------------------------------------------
# Loop
# ---------------------------------------------------------------------------


@dataclass
class Body:
    """A Loop body converted into `block` (args: step `index`, condition `i1`, values)."""

    block: Block
    inner: Node  # the node, emitting into the block
    outputs: list[Value]  # the body's: condition, carried values, scan outputs
    condition_in: SSAValue  # the condition the body reads, as a tensor

    @property
    def step(self) -> BlockArgument:
        return self.block.args[0]


def convert_body(node: Node, body: onnx.GraphProto, types: Sequence[Attribute]) -> Body:
    block = Block(arg_types=[IndexType(), i1, *types])
    inner = node.within(node.graph.nested(block, f"{node.name}/body"))
    step = scalar_tensor(inner, block.args[0], i64)
    condition = scalar_tensor(inner, block.args[1], i1)
    outputs = inner.graph.convert_graph(body, [step, condition, *block.args[2:]])
    return Body(block, inner, outputs, condition)


@converts("Loop")
def loop(node: Node) -> Sequence[Value]:
    body: onnx.GraphProto = node.attr("body")
    carried = len(node.proto.input) - 2
    if carried < 0 or len(body.input) != carried + 2:
        raise NodeError(
            f"the body takes {len(body.input)} inputs; with {max(carried, 0)} loop-carried "
            f"values it needs {max(carried, 0) + 2} (step number, condition, values)"
        )
    scans = len(body.output) - 1 - carried
    if scans < 0:
        raise NodeError(f"the body gives {len(body.output)} outputs, fewer than {carried + 1}")
    names = [node.proto.input[2 + k] for k in range(carried)]
    if not all(names):
        raise NodeError("every loop-carried value needs an initial value")
    inits = [node.input(2 + k) for k in range(carried)]
    types: list[TensorType[Attribute]] = [tensor_of(v) for v in inits]
    while True:  # until the carried types hold what the body gives back
        converted = convert_body(node, body, types)
        values = [as_ssa(converted.inner, v, "a body output") for v in converted.outputs]
        joined = joined_types("loop-carried value", names, types, values[1 : 1 + carried])
        if joined == types:
            break
        discard(converted.block)
        types = joined
    inits = [conform(node, v, t) for v, t in zip(inits, types, strict=True)]
    carried_out = [
        conform(converted.inner, v, t) for v, t in zip(values[1 : 1 + carried], types, strict=True)
    ]
    ys = values[1 + carried :]
    trip = trip_count(node)
    ignored = not node.has(1)  # no condition: ONNX ignores the body's
    if ignored and trip is None:
        raise NodeError("a Loop with neither a trip count (M) nor a condition never ends")
    start = None if ignored else node.known(1)
    stays_true = is_true(converted.outputs[0]) or converted.outputs[0] is converted.condition_in
    if start is not None and not is_true(start):
        return for_loop(node, converted, inits, carried_out, ys, 0)  # no step
    if trip is not None and (ignored or (start is not None and stays_true)):
        return for_loop(node, converted, inits, carried_out, ys, trip)
    return while_loop(node, converted, inits, carried_out, values[0], ys, trip)


def trip_count(node: Node) -> Rows | None:
    """M, at least 0: a number if known at import, else an `index`; None without one."""
    if not node.has(0):
        return None
    if (known := node.known(0)) is not None:
        return max(int(known.reshape(-1)[0]), 0)
    count = index_of(node, node.input(0), "trip count (M)")
    return node.emit(arith.MaxSIOp(count, index(node, 0)))


def stack_rows(
    node: Node, converted: Body, ys: Sequence[SSAValue], rows: Rows | None
) -> tuple[list[SSAValue], list[SSAValue]]:
    """The stacks' initial values and, in the body, the stacks with this step's row:
    written into `rows` rows, or without a row count appended (`grow_stack`)."""
    block, inner = converted.block, converted.inner
    first = inner.emit(arith.CmpiOp(converted.step, index(inner, 0), "eq"))
    inits, updated = [], []
    for y in ys:
        if rows is None:
            type_ = TensorType(element_of(y), [DYNAMIC, *shape_of(y)])
            stacked = block.insert_arg(type_, len(block.args))
            updated.append(grow_stack(inner, y, stacked, first))
            inits.append(conform(node, stack_init(node, y, 0, 0), type_))
            continue
        stacked = block.insert_arg(stacked_type(y, rows, 0), len(block.args))
        updated.append(stack_update(inner, y, stacked, converted.step, first, 0))
        inits.append(stack_init(node, y, rows, 0))
    return inits, updated


def for_loop(
    node: Node,
    converted: Body,
    inits: Sequence[SSAValue],
    carried_out: Sequence[SSAValue],
    ys: Sequence[SSAValue],
    trip: Rows,
) -> list[SSAValue]:
    block = converted.block
    true = arith.ConstantOp(IntegerAttr(1, i1))
    true.location = node.location
    assert block.first_op is not None  # the step and condition as tensors, at least
    block.insert_op_before(true, block.first_op)
    condition = block.args[1]
    condition.replace_all_uses_with(true.result)
    block.erase_arg(condition)
    stack_inits, stacks = stack_rows(node, converted, ys, trip)
    place(converted.inner, scf.YieldOp(*carried_out, *stacks))
    upper = index(node, trip) if isinstance(trip, int) else trip
    op = scf.ForOp(index(node, 0), upper, index(node, 1), [*inits, *stack_inits], block)
    node.emit(op)
    return list(op.results)


def while_loop(
    node: Node,
    converted: Body,
    inits: Sequence[SSAValue],
    carried_out: Sequence[SSAValue],
    condition_out: SSAValue,
    ys: Sequence[SSAValue],
    trip: Rows | None,
) -> list[SSAValue]:
    block, inner = converted.block, converted.inner
    start = flag(node, node.input(1), "condition")
    stack_inits, stacks = stack_rows(node, converted, ys, None)
    following = inner.emit(arith.AddiOp(converted.step, index(inner, 1)))
    going = flag(inner, condition_out, "condition the body gives")
    place(inner, scf.YieldOp(following, going, *carried_out, *stacks))
    before = Block(arg_types=block.arg_types)
    check = node.within(node.graph.nested(before, f"{node.name}/condition"))
    going = before.args[1]
    if trip is not None:
        upper = index(node, trip) if isinstance(trip, int) else trip
        below = check.emit(arith.CmpiOp(before.args[0], upper, "slt"))
        going = check.emit(arith.AndIOp(going, below))
    place(check, scf.ConditionOp(going, *before.args))
    arguments = [index(node, 0), start, *inits, *stack_inits]
    op = scf.WhileOp(arguments, block.arg_types, Region(before), Region(block))
    node.emit(op)
    return list(op.results[2:])
