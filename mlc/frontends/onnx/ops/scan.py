"""
ONNX `Scan` -> one `scf.for` over the scanned axis (Scan-8: inside one over the batch).

Its inputs are N states then `num_scan_inputs` sequences; the body takes the states and
one slice of each sequence (along `scan_input_axes`, backwards where
`scan_input_directions` is 1) and gives the next states and one slice of each scan
output, stacked along `scan_output_axes` (from the end where `scan_output_directions` is
1). The loop carries the states and the stacked outputs: each step takes its slices
(`tensor.extract_slice` at the step) and writes its rows (`tensor.insert_slice`). The
sequences' length along their axes may be known only at run time; the scan outputs'
shapes must be static. States whose shape changes between steps are carried with `?`
dims (`regions.joined_types`).
"""

from collections.abc import Sequence

import onnx
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import IndexType, TensorType
from xdsl.ir import Attribute, Block, SSAValue

from mlc import shapes
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import shape_of, tensor_of
from mlc.frontends.onnx.ops.control_flow import as_ssa, discard
from mlc.frontends.onnx.ops.regions import (
    Rows,
    conform,
    index,
    joined_types,
    place,
    stack_init,
    stack_update,
    stacked_type,
    take_row,
)
from mlc.frontends.onnx.ops.table import converts


def _ints(node: Node, name: str, count: int) -> list[int]:
    values = [int(v) for v in node.attr(name, [0] * count)]
    if len(values) != count:
        raise NodeError(f"{name} has {len(values)} entries for {count} values")
    return values


def counts(node: Node, first: int) -> tuple[int, int, int]:
    """The numbers of states, scanned inputs and scan outputs (inputs from `first` on)."""
    body: onnx.GraphProto = node.attr("body")
    given = len(node.proto.input) - first
    sequences = int(node.attr("num_scan_inputs", 0))
    states = given - sequences
    outputs = len(body.output) - states
    if sequences < 1 or states < 0 or outputs < 0 or len(body.input) != given:
        raise NodeError(
            f"the body takes {len(body.input)} inputs and gives {len(body.output)} outputs, "
            f"which do not fit {given} inputs of which {sequences} scanned"
        )
    return states, sequences, outputs


@converts("Scan", since=9)
def scan(node: Node) -> Sequence[Value]:
    states, sequences, outputs = counts(node, 0)
    xs = [node.input(states + j) for j in range(sequences)]
    in_axes = [
        shapes.normalize_axis(a, len(shape_of(x)))
        for a, x in zip(_ints(node, "scan_input_axes", sequences), xs, strict=True)
    ]
    backwards = [bool(d) for d in _ints(node, "scan_input_directions", sequences)]
    out_axes = _ints(node, "scan_output_axes", outputs)
    out_back = [bool(d) for d in _ints(node, "scan_output_directions", outputs)]
    inits = [node.input(k) for k in range(states)]
    return build(node, inits, xs, in_axes, backwards, out_axes, out_back)


@converts("Scan", since=8)
def scan8(node: Node) -> Sequence[Value]:
    """Scan-8: every input has a batch axis 0 (the scanned ones their sequence axis 1);
    an `scf.for` over the batch runs the scan of each batch entry."""
    if node.has(0):
        raise NodeError("sequence_lens is not supported (every sequence has its full length)")
    states, sequences, outputs = counts(node, 1)
    values = [node.input(1 + k) for k in range(states + sequences)]
    batch = scan_length(node, values, [0] * len(values))
    block = Block(arg_types=[IndexType()])
    inner = node.within(node.graph.nested(block, f"{node.name}/batch"))
    entry = block.args[0]
    rows = [take_row(inner, v, entry, 0) for v in values]
    backwards = [bool(d) for d in _ints(node, "directions", sequences)]
    results = build(
        inner,
        rows[:states],
        rows[states:],
        [0] * sequences,
        backwards,
        [0] * outputs,
        [False] * outputs,
    )
    first = inner.emit(arith.CmpiOp(entry, index(inner, 0), "eq"))
    inits, stacks = [], []
    for result in results:
        stacked = block.insert_arg(stacked_type(result, batch, 0), len(block.args))
        stacks.append(stack_update(inner, result, stacked, entry, first, 0))
        inits.append(stack_init(node, result, batch, 0))
    place(inner, scf.YieldOp(*stacks))
    op = scf.ForOp(index(node, 0), _index(node, batch), index(node, 1), inits, block)
    node.emit(op)
    return list(op.results)


def build(
    node: Node,
    inits: Sequence[SSAValue],
    xs: Sequence[SSAValue],
    in_axes: Sequence[int],
    backwards: Sequence[bool],
    out_axes: Sequence[int],
    out_back: Sequence[bool],
) -> list[SSAValue]:
    """The `scf.for` of a scan over `xs` (along `in_axes`) carrying states `inits`: the
    final states, then the scan outputs stacked along `out_axes`."""
    body: onnx.GraphProto = node.attr("body")
    states = len(inits)
    length = scan_length(node, xs, in_axes)
    names = [info.name for info in body.input[:states]]
    types: list[TensorType[Attribute]] = [tensor_of(v) for v in inits]
    while True:  # until the state types hold what the body gives back
        block = Block(arg_types=[IndexType(), *types])
        inner = node.within(node.graph.nested(block, f"{node.name}/body"))
        step = block.args[0]
        last = inner.emit(arith.SubiOp(_index(inner, length), index(inner, 1)))
        reverse = inner.emit(arith.SubiOp(last, step))
        slices = [
            take_row(inner, x, reverse if back else step, axis)
            for x, axis, back in zip(xs, in_axes, backwards, strict=True)
        ]
        values = inner.graph.convert_graph(body, [*block.args[1:], *slices])
        values = [as_ssa(inner, v, "a body output") for v in values]
        joined = joined_types("state", names, types, values[:states])
        if joined == types:
            break
        discard(block)
        types = joined
    ys = values[states:]
    first = inner.emit(arith.CmpiOp(step, index(inner, 0), "eq"))
    stack_inits, stacks = [], []
    for y, axis, back in zip(ys, out_axes, out_back, strict=True):
        axis = shapes.normalize_axis(axis, len(shape_of(y)) + 1)
        stacked = block.insert_arg(stacked_type(y, length, axis), len(block.args))
        stacks.append(stack_update(inner, y, stacked, reverse if back else step, first, axis))
        stack_inits.append(stack_init(node, y, length, axis))
    carried_out = [conform(inner, v, t) for v, t in zip(values[:states], types, strict=True)]
    place(inner, scf.YieldOp(*carried_out, *stacks))
    starts = [conform(node, v, t) for v, t in zip(inits, types, strict=True)]
    op = scf.ForOp(
        index(node, 0), _index(node, length), index(node, 1), [*starts, *stack_inits], block
    )
    node.emit(op)
    return list(op.results)


def scan_length(node: Node, xs: Sequence[SSAValue], axes: Sequence[int]) -> Rows:
    """The sequences' length: static where one says, else read from the first at run time."""
    lengths = {shape_of(x)[axis] for x, axis in zip(xs, axes, strict=True)}
    static = sorted(d for d in lengths if d >= 0)
    if len(static) > 1:
        raise NodeError(f"the scanned inputs have different lengths {static} along their axes")
    if static:
        return static[0]
    return node.emit(tensor.DimOp(xs[0], index(node, axes[0])))


def _index(node: Node, rows: Rows) -> SSAValue:
    return index(node, rows) if isinstance(rows, int) else rows
