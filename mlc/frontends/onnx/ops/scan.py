"""
ONNX `Scan` (opset 9 on) -> one `scf.for` over the scanned axis.

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


@converts("Scan", since=9)
def scan(node: Node) -> Sequence[Value]:
    body: onnx.GraphProto = node.attr("body")
    sequences = int(node.attr("num_scan_inputs", 0))
    states = len(node.proto.input) - sequences
    outputs = len(body.output) - states
    if sequences < 1 or states < 0 or outputs < 0 or len(body.input) != len(node.proto.input):
        raise NodeError(
            f"the body takes {len(body.input)} inputs and gives {len(body.output)} outputs, "
            f"which do not fit {len(node.proto.input)} inputs of which {sequences} scanned"
        )
    xs = [node.input(states + j) for j in range(sequences)]
    in_axes = [
        shapes.normalize_axis(a, len(shape_of(x)))
        for a, x in zip(_ints(node, "scan_input_axes", sequences), xs, strict=True)
    ]
    backwards = [bool(d) for d in _ints(node, "scan_input_directions", sequences)]
    length = scan_length(node, xs, in_axes)
    inits = [node.input(k) for k in range(states)]
    names = [node.proto.input[k] for k in range(states)]
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
    out_axes = _ints(node, "scan_output_axes", outputs)
    out_back = [bool(d) for d in _ints(node, "scan_output_directions", outputs)]
    first = inner.emit(arith.CmpiOp(step, index(inner, 0), "eq"))
    stack_inits, stacks = [], []
    for y, axis, back in zip(ys, out_axes, out_back, strict=True):
        axis = shapes.normalize_axis(axis, len(shape_of(y)) + 1)
        stacked = block.insert_arg(stacked_type(y, length, axis), len(block.args))
        stacks.append(stack_update(inner, y, stacked, reverse if back else step, first, axis))
        stack_inits.append(stack_init(node, y, length, axis))
    carried_out = [conform(inner, v, t) for v, t in zip(values[:states], types, strict=True)]
    place(inner, scf.YieldOp(*carried_out, *stacks))
    inits = [conform(node, v, t) for v, t in zip(inits, types, strict=True)]
    op = scf.ForOp(
        index(node, 0), _index(node, length), index(node, 1), [*inits, *stack_inits], block
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
