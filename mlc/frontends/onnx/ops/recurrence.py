"""
The loop over time that ONNX's recurrent ops (`recurrent`) share.

For each direction, the input projection of every step is one matmul before the loop,
and the loop (`scf.for` carrying the state tensors) runs the recurrent matmul and the
gate nonlinearities of one step (a `Cell`), which `linalg-fuse-elementwise` fuses:

    xw  = X @ W[d]^T + (Wb + Rb)                 [seq * batch, gates * hidden], once
    y   = zeros                                  [seq * directions * batch, hidden]
    for k in 0 .. seq:                           (t = k forward, seq - 1 - k reverse)
        xt = xw[t * batch : (t + 1) * batch]     tensor.extract_slice
        h, c = cell(xt, h, c)                    LSTM, GRU or RNN cell
        y[(t * directions + d) * batch : ...] = h    tensor.insert_slice

The weights are transposed (and the biases summed) at import time when they are
initializers; with a batch of one, the recurrent products are matrix-vector products
`R @ h`, R as given. Layout 1 (batch first) is transposed to layout 0 around the loops. With
`sequence_lens`, the steps past a sequence's length keep its state and write zeros to Y,
as onnxruntime does (the reverse direction thus starts at each sequence's last step), and
an empty sequence's last states are zeros.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    TensorType,
    i64,
)
from xdsl.ir import Block, Operation, SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    Size,
    cast,
    element_of,
    product,
    reshape_to,
    shape_of,
    shape_tensor,
    size_along,
    sizes,
)
from mlc.frontends.onnx.ops.padding import INT64_MAX, full


class Builder:
    """Appends ops at the node's location to `block` (the function's, or a loop body)."""

    def __init__(self, node: Node, block: Block | None = None):
        self.node = node
        self.block = block

    def __call__(self, op: Operation) -> SSAValue:
        """Append `op`; its (first) result."""
        self.append(op)
        return op.results[0]

    def append(self, op: Operation) -> None:
        if self.block is None:
            self.node.emit(op)
            return
        op.location = self.node.location
        self.block.add_op(op)

    def scalar(self, value: float, like: SSAValue) -> SSAValue:
        """A rank-0 constant, emitted before the loop (the function's block)."""
        return self.node.scalar(value, like)

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(ml.AddOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(ml.MulOp(a, b))

    def one_minus(self, x: SSAValue) -> SSAValue:
        return self(ml.SubOp(self.scalar(1, x), x))

    def gate(self, x: SSAValue, k: int, hidden: int) -> SSAValue:
        """Columns `k * hidden : (k + 1) * hidden` of a `[batch, gates * hidden]` tensor."""
        return self(ml.SliceOp(x, [0, k * hidden], [INT64_MAX, (k + 1) * hidden], [1, 1]))


# (builder, the step's gate inputs `xt` [batch, gates * hidden], the states) -> new states
Cell = Callable[["Builder", SSAValue, list[SSAValue]], list[SSAValue]]

# ---------------------------------------------------------------------------
# Weights and states, per direction
# ---------------------------------------------------------------------------


def direction_of(node: Node, i: int, d: int) -> Value:
    """Input `i`'s slice for direction `d` (its first dim): a known array stays known."""
    known = node.known(i)
    if known is not None:
        return known[d]
    x = node.input(i)
    rank = len(shape_of(x))
    starts, ends = [d] + [0] * (rank - 1), [d + 1] + [INT64_MAX] * (rank - 1)
    part = node.emit(ml.SliceOp(x, starts, ends, [1] * rank))
    return reshape_to(node, part, sizes(node, x)[1:])


def as_ssa(node: Node, value: Value, like: SSAValue, dims: Sequence[Size] = ()) -> SSAValue:
    """
    A value as an SSA value of `like`'s element type, of shape `dims` if given (weights
    given at run time may have dynamic dims where the op fixes the size).
    """
    if isinstance(value, np.ndarray):
        value = node.constant(np.ascontiguousarray(value))
    value = cast(node, value, element_of(like))
    return reshape_to(node, value, dims) if dims else value


def transposed(node: Node, value: Value, like: SSAValue, dims: Sequence[Size]) -> SSAValue:
    """A weight `[rows, cols]` as `[cols, rows]` (= `dims`), transposed at import time if known."""
    if isinstance(value, np.ndarray):
        return as_ssa(node, value.T, like)
    return as_ssa(node, node.emit(ml.TransposeOp(value, [1, 0])), like, dims)


def columns(node: Node, value: Value, start: int, end: int) -> Value:
    """Elements `start:end` of a vector (a bias), known if the vector is."""
    if isinstance(value, np.ndarray):
        return value[start:end]
    return node.emit(ml.SliceOp(value, [start], [end], [1]))


def add_values(node: Node, a: Value, b: Value) -> Value:
    """`a + b`, computed at import time when both are known."""
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        return a + b
    return node.emit(ml.AddOp(as_ssa(node, a, node.input(0)), as_ssa(node, b, node.input(0))))


def concat_values(node: Node, parts: Sequence[Value]) -> Value:
    """Vectors end to end, at import time when all are known."""
    if all(isinstance(p, np.ndarray) for p in parts):
        return np.concatenate(parts)  # pyright: ignore[reportArgumentType]
    return node.emit(ml.ConcatOp([as_ssa(node, p, node.input(0)) for p in parts], 0))


@dataclass
class Recurrence:
    """What LSTM, GRU and RNN share: the input, sizes, directions, and options."""

    node: Node
    gates: int  # the blocks of `hidden` rows in W and R (4 for LSTM, 3 for GRU, 1 for RNN)
    x: SSAValue  # the input in layout 0: [seq, batch, input]
    hidden: int
    reverse: list[bool]  # per direction
    clip: float | None
    layout: int
    seq: Size
    batch: Size
    alive: SSAValue | None  # sequence_lens as [batch, 1] i64, or None when all are full

    @classmethod
    def of(cls, node: Node, gates: int) -> "Recurrence":
        x = node.input(0)
        layout = node.attr("layout", 0)
        if layout:
            x = node.emit(ml.TransposeOp(x, [1, 0, 2]))
        direction = node.attr("direction", "forward")
        reverse = {"forward": [False], "reverse": [True], "bidirectional": [False, True]}
        if direction not in reverse:
            raise NodeError(f"unknown direction '{direction}'")
        hidden = node.attr("hidden_size") or node.shape(2)[-1]
        if hidden < 0:
            raise NodeError("hidden_size must be given where R's last dim is dynamic")
        clip = node.attr("clip")
        seq, batch = size_along(node, x, 0), size_along(node, x, 1)
        alive = None
        lengths = node.known(4) if node.has(4) else None
        full_lengths = isinstance(seq, int) and lengths is not None and bool(np.all(lengths == seq))
        if node.has(4) and not full_lengths:
            alive = reshape_to(node, cast(node, node.input(4), i64), [batch, 1])
        return cls(node, gates, x, hidden, reverse[direction], clip, layout, seq, batch, alive)

    @property
    def directions(self) -> int:
        return len(self.reverse)

    def wants(self, output: int) -> bool:
        outputs = self.node.proto.output
        return output < len(outputs) and bool(outputs[output])

    def clipped(self, b: Builder, x: SSAValue) -> SSAValue:
        if self.clip is None:
            return x
        low = b(ml.MaxOp(x, b.scalar(-self.clip, x)))
        return b(ml.MinOp(low, b.scalar(self.clip, x)))

    def initial(self, i: int, d: int) -> SSAValue:
        """Initial state input `i` (initial_h, initial_c) of direction `d`, or zeros."""
        node = self.node
        if not node.has(i):
            return full(node, [self.batch, self.hidden], node.scalar(0, self.x))
        state = node.input(i)
        if node.attr("layout", 0):
            state = node.emit(ml.TransposeOp(state, [1, 0, 2]))
        part = node.emit(ml.SliceOp(state, [d, 0, 0], [d + 1, INT64_MAX, INT64_MAX], [1, 1, 1]))
        return as_ssa(node, part, self.x, [self.batch, self.hidden])

    @property
    def single(self) -> bool:
        """A batch of one: the recurrent products are matrix-vector products `R @ h`."""
        return isinstance(self.batch, int) and self.batch == 1

    def recurrent_weight(self, d: int, first: int, last: int) -> SSAValue:
        """
        Gates `first:last` of R[d] as `recurrent` multiplies by them: `R^T`
        (`[hidden, gates * hidden]`), or R itself for a batch of one.
        """
        node = self.node
        r = direction_of(node, 2, d)
        width = (last - first) * self.hidden
        rows = slice(first * self.hidden, last * self.hidden)
        if isinstance(r, np.ndarray):
            r = r[rows]
        elif (first, last) != (0, self.gates):
            r = node.emit(ml.SliceOp(r, [rows.start, 0], [rows.stop, INT64_MAX], [1, 1]))
        if self.single:
            return as_ssa(node, r, self.x, [width, self.hidden])
        return transposed(node, r, self.x, [self.hidden, width])

    def recurrent(self, b: Builder, h: SSAValue, weight: SSAValue) -> SSAValue:
        """`h @ R^T` (`[batch, gates * hidden]`) for a `recurrent_weight`."""
        if not self.single:
            return b(ml.MatmulOp(h, weight))
        # [1, hidden] and [hidden, 1] are one layout: the reshapes are free
        column = b(ml.ReshapeOp(h, [self.hidden, 1]))
        product = b(ml.MatmulOp(weight, column))
        return b(ml.ReshapeOp(product, [1, shape_of(weight)[0]]))

    def projection(self, d: int, bias: Value | None) -> SSAValue:
        """`X @ W[d]^T + bias` for every step: `[seq * batch, gates * hidden]`."""
        node = self.node
        rows = product(node, [self.seq, self.batch])
        flat = reshape_to(node, self.x, [rows, shape_of(self.x)[2]])
        width = self.gates * self.hidden
        w = transposed(node, direction_of(node, 1, d), self.x, [size_along(node, self.x, 2), width])
        result = node.emit(ml.MatmulOp(flat, w))
        if bias is not None:
            result = node.emit(ml.AddOp(result, as_ssa(node, bias, self.x, [width])))
        return result

    def run(
        self, cell_of: Callable[[int], Cell], bias_of: Callable[[int], Value | None], states: int
    ) -> list[SSAValue | None]:
        """
        Each direction's loop, from the initial states (inputs 5 and 6, as many as the
        cell has), then the outputs asked for: Y and each state's last value.
        """
        node = self.node
        rows = product(node, [self.seq, self.directions, self.batch])
        y = None
        if self.wants(0):
            y = full(node, [rows, self.hidden], node.scalar(0, self.x))
        finals: list[list[SSAValue]] = []
        for d in range(self.directions):
            xw = self.projection(d, bias_of(d))
            initial = [self.initial(5 + i, d) for i in range(states)]
            last, y = loop(self, d, xw, initial, y, cell_of(d))
            finals.append(last)
        results: list[SSAValue | None] = [None if y is None else self.sequence_output(y)]
        for i in range(states):
            wanted = self.wants(1 + i)
            results.append(self.state_output([f[i] for f in finals]) if wanted else None)
        return results

    def sequence_output(self, y: SSAValue) -> SSAValue:
        """Y as `[seq, directions, batch, hidden]` (`[batch, seq, ...]` in layout 1)."""
        dims = [self.seq, self.directions, self.batch, self.hidden]
        y = reshape_to(self.node, y, dims)
        return self.node.emit(ml.TransposeOp(y, [2, 0, 1, 3])) if self.layout else y

    def state_output(self, states: list[SSAValue]) -> SSAValue:
        """
        Last states as `[directions, batch, hidden]` (`[batch, directions, ...]`); those
        of empty sequences are zeros, as onnxruntime has them.
        """
        node = self.node
        if self.alive is not None:
            empty = node.emit(ml.CmpOp("le", self.alive, node.scalar(0, self.alive)))
            states = [node.emit(ml.SelectOp(empty, node.scalar(0, s), s)) for s in states]
        parts = [reshape_to(node, s, [1, self.batch, self.hidden]) for s in states]
        y = parts[0] if len(parts) == 1 else node.emit(ml.ConcatOp(parts, 0))
        return node.emit(ml.TransposeOp(y, [1, 0, 2])) if self.layout else y


def index_value(node: Node, size: Size) -> SSAValue:
    """A size as an `index`."""
    if isinstance(size, int):
        return node.emit(arith.ConstantOp(IntegerAttr(size, IndexType())))
    return node.emit(arith.IndexCastOp(size, IndexType()))


def loop(
    rec: Recurrence,
    d: int,
    xw: SSAValue,
    states: list[SSAValue],
    y: SSAValue | None,
    cell: Cell,
) -> tuple[list[SSAValue], SSAValue | None]:
    """
    Direction `d`'s `scf.for` over the steps: the last states, and `y` with this
    direction's rows of every step written (see the module docstring).
    """
    node = rec.node
    reverse = rec.reverse[d]
    seq, batch = index_value(node, rec.seq), index_value(node, rec.batch)
    one = index_value(node, 1)
    last = node.emit(arith.SubiOp(seq, one)) if reverse else None
    carried = list(states)
    if rec.alive is not None:  # the step count, as a tensor to compare with the lengths
        carried.append(node.constant(np.array(0, np.int64)))
        alive = rec.alive
        if reverse:  # the steps k >= seq - length of each sequence
            alive = node.emit(ml.SubOp(shape_tensor(node, [rec.seq]), alive))
    if y is not None:
        carried.append(y)
        directions, direction = index_value(node, rec.directions), index_value(node, d)
    body = Block(arg_types=[IndexType(), *(v.type for v in carried)])
    b = Builder(node, body)
    k, old = body.args[0], list(body.args[1 : 1 + len(states)])
    t = k if last is None else b(arith.SubiOp(last, k))
    width = rec.gates * rec.hidden
    static_batch = rec.batch if isinstance(rec.batch, int) else DYNAMIC_INDEX
    xt = b(
        tensor.ExtractSliceOp(
            xw,
            [b(arith.MuliOp(t, batch)), 0],
            [rec.batch if isinstance(rec.batch, int) else batch, width],
            [1, 1],
            TensorType(element_of(xw), [static_batch, width]),
        )
    )
    new = cell(b, xt, old)
    out = new[0]
    extra: list[SSAValue] = []
    if rec.alive is not None:
        step = body.args[1 + len(states)]
        live = b(ml.CmpOp("ge" if reverse else "lt", step, alive))
        out = b(ml.SelectOp(live, out, b.scalar(0, out)))
        new = [b(ml.SelectOp(live, n, o)) for n, o in zip(new, old, strict=True)]
        extra.append(b.add(step, b.scalar(1, step)))
    if y is not None:
        row = b(arith.MuliOp(b(arith.AddiOp(b(arith.MuliOp(t, directions)), direction)), batch))
        extra.append(insert_rows(b, out, body.args[-1], row, batch))
    b.append(scf.YieldOp(*new, *extra))
    op = scf.ForOp(index_value(node, 0), seq, one, carried, body)
    Builder(node).append(op)
    return list(op.results[: len(states)]), (op.results[-1] if y is not None else None)


def insert_rows(
    b: Builder, source: SSAValue, dest: SSAValue, row: SSAValue, rows: SSAValue
) -> SSAValue:
    """`dest[row : row + rows] = source` (`tensor.insert_slice`), unit strides."""
    static_rows, cols = shape_of(source)
    static_rows = static_rows if static_rows >= 0 else DYNAMIC_INDEX
    offsets = [DYNAMIC_INDEX, 0]
    sizes = [static_rows, cols]
    op = tensor.InsertSliceOp.build(
        operands=[source, dest, [row], [rows] if static_rows == DYNAMIC_INDEX else [], []],
        result_types=[dest.type],
        properties={
            "static_offsets": DenseArrayBase.from_list(i64, offsets),
            "static_sizes": DenseArrayBase.from_list(i64, sizes),
            "static_strides": DenseArrayBase.from_list(i64, [1, 1]),
        },
    )
    return b(op)
