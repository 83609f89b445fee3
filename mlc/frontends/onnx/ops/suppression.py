"""
NonMaxSuppression: greedy selection of boxes by score, per batch and class, as an
`scf.for` over the selection steps carrying a candidate mask.

Step t picks, for every (batch, class) at once, the candidate of highest score (the
lowest box index among equals), records t as its rank, and drops from the candidates it
and every box whose overlap with it (intersection over union, computed as onnxruntime
does) exceeds the IoU threshold. A box is thus kept exactly when no kept box of higher
score overlaps it, as in the sequential algorithm. There are `min(boxes,
max_output_boxes_per_class)` steps; once a (batch, class) runs out of candidates its
later steps select nothing.

The output `[num_selected, 3]` (batch, class, box) has a size known at run time: every
selected box is scattered (`ml.scatter_nd`) to row `offset(batch, class) + rank`, the
offsets an exclusive cumsum of the per-class counts, the others to a spare row past the
end, and the rows before the count are sliced out.
"""

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType, f32, i1, i64
from xdsl.ir import Block, SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import (
    Size,
    SizeCalc,
    cast,
    element_of,
    reshape_to,
    shape_of,
    shape_tensor,
    size_along,
    sizes,
    static_or_dynamic,
    types_text,
)
from mlc.frontends.onnx.ops.padding import full, slice_at_run_time
from mlc.frontends.onnx.ops.structure import arange
from mlc.frontends.onnx.ops.table import converts
from mlc.shapes import DYNAMIC

Corners = tuple[SSAValue, SSAValue, SSAValue, SSAValue]  # x min, x max, y min, y max


@converts("NonMaxSuppression", since=10)
def non_max_suppression(node: Node) -> Sequence[Value]:
    boxes, scores = node.input(0), node.input(1)
    check_inputs(node, boxes, scores)
    center = node.attr("center_point_box", 0)
    if center not in (0, 1):
        raise NodeError(f"center_point_box must be 0 or 1, got {center}")
    limit = max_output(node)
    if limit == 0:  # absent, 0 or negative: nothing is selected
        return [np.zeros((0, 3), np.int64)]
    batches, classes = size_along(node, scores, 0), size_along(node, scores, 1)
    count = size_along(node, boxes, 1)
    calc = SizeCalc(node)
    steps = count if limit is None else calc.min(count, limit)
    if isinstance(steps, SSAValue):  # min with the run-time limit (0 if negative)
        steps = calc.max(steps, 0)
    corners = box_corners(node, boxes, center, [batches, classes, count])
    area = node.emit(
        ml.MulOp(
            node.emit(ml.SubOp(corners[1], corners[0])),
            node.emit(ml.SubOp(corners[3], corners[2])),
        )
    )
    candidates = initial_candidates(node, scores)
    ranks = sweep(node, scores, candidates, [*corners, area], steps, count)
    return [gather_selected(node, ranks, [batches, classes, count])]


def check_inputs(node: Node, boxes: SSAValue, scores: SSAValue) -> None:
    b, s = shape_of(boxes), shape_of(scores)
    if len(b) != 3 or len(s) != 3 or b[2] not in (4, DYNAMIC):
        raise NodeError(
            f"boxes must be [batches, boxes, 4] and scores [batches, classes, boxes], got "
            f"{types_text(boxes)} and {types_text(scores)}"
        )
    if element_of(boxes) != f32 or element_of(scores) != f32:
        raise NodeError(f"boxes and scores must be f32, got {types_text(boxes)}")
    for x, y, what in ((b[0], s[0], "batches"), (b[1], s[2], "boxes")):
        if x >= 0 and y >= 0 and x != y:
            raise NodeError(f"boxes and scores disagree on the number of {what} ({x} vs {y})")


def max_output(node: Node) -> Size | None:
    """The limit per class: an int if known (0 when absent), else an i64 scalar."""
    if not node.has(2):
        return 0
    if (known := node.known(2)) is not None:
        return max(int(np.asarray(known).reshape(-1)[0]), 0)
    value = cast(node, reshape_to(node, node.input(2), []), i64)
    return node.emit(tensor.ExtractOp(value, [], i64))


def scalar_input(node: Node, i: int) -> SSAValue:
    return reshape_to(node, node.input(i), [])


def box_corners(node: Node, boxes: SSAValue, center: int, dims: Sequence[Size]) -> Corners:
    """Each box's x and y extents, shaped [batches, 1, boxes] and broadcast to `dims`."""
    batches, _, count = dims
    columns = [
        reshape_to(node, slice_at_run_time(node, boxes, 2, k, k + 1), [batches, 1, count])
        for k in range(4)
    ]
    if center:  # [x_center, y_center, width, height]
        half = node.scalar(2.0, boxes)
        x, y, w, h = columns
        hw, hh = node.emit(ml.DivOp(w, half)), node.emit(ml.DivOp(h, half))
        sides = [
            node.emit(ml.SubOp(x, hw)),
            node.emit(ml.AddOp(x, hw)),
            node.emit(ml.SubOp(y, hh)),
            node.emit(ml.AddOp(y, hh)),
        ]
    else:  # [y1, x1, y2, x2], either diagonal
        y1, x1, y2, x2 = columns
        sides = [
            node.emit(ml.MinOp(x1, x2)),
            node.emit(ml.MaxOp(x1, x2)),
            node.emit(ml.MinOp(y1, y2)),
            node.emit(ml.MaxOp(y1, y2)),
        ]
    shape = TensorType(f32, static_or_dynamic(dims))
    target = None if all(isinstance(d, int) for d in dims) else shape_tensor(node, dims)
    x0, x1_, y0, y1_ = (node.emit(ml.BroadcastToOp(s, shape, target)) for s in sides)
    return x0, x1_, y0, y1_


def initial_candidates(node: Node, scores: SSAValue) -> SSAValue:
    """The boxes above the score threshold (every box without one)."""
    if node.has(4):
        return node.emit(ml.CmpOp("gt", scores, scalar_input(node, 4)))
    return full(node, sizes(node, scores), node.scalar(True, TensorType(i1, [])))


def rank0(node: Node, size: Size) -> SSAValue:
    """A size as a rank-0 i64 tensor."""
    if isinstance(size, int):
        return node.constant(np.array(size, np.int64))
    return node.emit(tensor.FromElementsOp(size, result_type=TensorType(i64, [])))


def index_of(node: Node, size: Size) -> SSAValue:
    if isinstance(size, int):
        return node.emit(arith.ConstantOp(IntegerAttr(size, IndexType())))
    return node.emit(arith.IndexCastOp(size, IndexType()))


def sweep(
    node: Node,
    scores: SSAValue,
    candidates: SSAValue,
    table: Sequence[SSAValue],
    steps: Size,
    count: Size,
) -> SSAValue:
    """The `scf.for` over the selection steps: each box's rank among the selected of
    its (batch, class), -1 where not selected."""
    calc = SizeCalc(node)
    iota = reshape_to(node, arange(node, count), [1, 1, count])
    none = rank0(node, count)  # the index past every box: no pick
    last = rank0(node, calc.sub(count, 1))
    lowest = node.scalar(-np.inf, scores)
    threshold = scalar_input(node, 3) if node.has(3) else node.scalar(0.0, scores)
    ranks = full(node, sizes(node, scores), node.scalar(-1, TensorType(i64, [])))
    step = node.constant(np.array(0, np.int64))
    carried = [candidates, ranks, step]
    block = Block(arg_types=[IndexType(), *(v.type for v in carried)])
    b = node.within(node.graph.nested(block, f"{node.name}/step"))
    alive, ranks, step = block.args[1:]
    masked = b.emit(ml.SelectOp(alive, scores, lowest))
    top = b.emit(ml.ReduceMaxOp(masked, [2], keepdims=True))
    best = b.emit(ml.BitwiseAndOp(alive, b.emit(ml.CmpOp("eq", masked, top))))
    pick = b.emit(ml.ReduceMinOp(b.emit(ml.SelectOp(best, iota, none)), [2], keepdims=True))
    chosen = b.emit(ml.CmpOp("eq", iota, pick))
    new_ranks = b.emit(ml.SelectOp(chosen, step, ranks))
    at = b.emit(ml.MinOp(pick, last))  # in range where nothing was picked
    picked = [b.emit(ml.GatherElementsOp(t, at, 2)) for t in table]
    over = overlaps(b, picked, table, threshold)
    dropped = b.emit(ml.BitwiseOrOp(over, chosen))
    new_alive = b.emit(ml.SelectOp(dropped, b.scalar(False, alive), alive))
    following = b.emit(ml.AddOp(step, b.scalar(1, step)))
    yielded = scf.YieldOp(new_alive, new_ranks, following)
    yielded.location = node.location
    block.add_op(yielded)
    loop = scf.ForOp(index_of(node, 0), index_of(node, steps), index_of(node, 1), carried, block)
    node.emit(loop)
    return loop.results[1]


def overlaps(
    b: Node, picked: Sequence[SSAValue], table: Sequence[SSAValue], threshold: SSAValue
) -> SSAValue:
    """Where a box's IoU with the picked one exceeds `threshold`, computed as
    onnxruntime does: no overlap where the intersection or either area is empty."""
    px0, px1, py0, py1, parea = picked
    x0, x1, y0, y1, area = table
    ix0, ix1 = b.emit(ml.MaxOp(px0, x0)), b.emit(ml.MinOp(px1, x1))
    iy0, iy1 = b.emit(ml.MaxOp(py0, y0)), b.emit(ml.MinOp(py1, y1))
    inter = b.emit(ml.MulOp(b.emit(ml.SubOp(ix1, ix0)), b.emit(ml.SubOp(iy1, iy0))))
    union = b.emit(ml.SubOp(b.emit(ml.AddOp(parea, area)), inter))
    iou = b.emit(ml.DivOp(inter, union))
    zero = b.scalar(0.0, inter)
    tests = [
        b.emit(ml.CmpOp("gt", ix1, ix0)),
        b.emit(ml.CmpOp("gt", iy1, iy0)),
        b.emit(ml.CmpOp("gt", inter, zero)),
        b.emit(ml.CmpOp("gt", parea, zero)),
        b.emit(ml.CmpOp("gt", area, zero)),
        b.emit(ml.CmpOp("gt", union, zero)),
        b.emit(ml.CmpOp("gt", iou, threshold)),
    ]
    result = tests[0]
    for t in tests[1:]:
        result = b.emit(ml.BitwiseAndOp(result, t))
    return result


def gather_selected(node: Node, ranks: SSAValue, dims: Sequence[Size]) -> SSAValue:
    """The [num_selected, 3] rows (batch, class, box), by batch, class and rank."""
    batches, classes, count = dims
    calc = SizeCalc(node)
    selected = node.emit(ml.CmpOp("ge", ranks, node.scalar(0, ranks)))
    per_class = node.emit(ml.ReduceSumOp(cast(node, selected, i64), [2]))
    flat = reshape_to(node, per_class, [calc.mul(batches, classes)])
    offsets = reshape_to(
        node, node.emit(ml.CumSumOp(flat, 0, exclusive=True)), [batches, classes, 1]
    )
    total = node.emit(ml.ReduceSumOp(flat, [0]))
    total = node.emit(tensor.ExtractOp(total, [], i64))
    rows = calc.mul(calc.mul(batches, classes), count)
    row = node.emit(ml.AddOp(offsets, ranks))
    row = node.emit(ml.SelectOp(selected, row, rank0(node, rows)))  # the spare row
    where = [batches, classes, count]
    parts = []
    for axis, size in enumerate(where):
        shape: list[Size] = [1, 1, 1, 1]
        shape[axis] = size
        position = reshape_to(node, arange(node, size), shape)
        parts.append(full_like(node, position, [*where, 1]))
    triples = reshape_to(node, node.emit(ml.ConcatOp(parts, 3)), [rows, 3])
    spare = full(node, [calc.add(rows, 1), 3], node.scalar(0, TensorType(i64, [])))
    out = node.emit(ml.ScatterNdOp(spare, reshape_to(node, row, [rows, 1]), triples))
    return slice_at_run_time(node, out, 0, 0, total)


def full_like(node: Node, x: SSAValue, dims: Sequence[Size]) -> SSAValue:
    """`x` broadcast to `dims`."""
    shape = TensorType(element_of(x), static_or_dynamic(dims))
    target = None if all(isinstance(d, int) for d in dims) else shape_tensor(node, dims)
    return node.emit(ml.BroadcastToOp(x, shape, target))
