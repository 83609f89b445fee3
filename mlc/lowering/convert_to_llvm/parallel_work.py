"""
The work of one iteration of a parallel loop, as `convert-to-llvm` weighs it to choose
between the thread pool and a serial call (mlc.lowering.convert_to_llvm.parallel).

An iteration's work is its ops (`tiling_model.op_weight`), loops counted by their trip
counts: constant bounds, bounds read through `arith.minsi` and the sizes of
`memref.subview`s (a block of a split generic runs `min(block, n - start)` rows), and a
bound that is the loop's own step, the block size, counted per unit of the step
(`per_step`) and read when the loop runs; others count `UNKNOWN_TRIP_COUNT` iterations.

A call of a function defined in the module weighs what its body does (`Callees`): a
matmul's iteration is a call of its shared micro-kernel, a B packing's one of its packer,
and counted as one op such loops stayed on one thread whatever their size (64 x 784 x
1024 ran on one core of sixteen).
"""

from collections.abc import Callable

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, ModuleOp
from xdsl.ir import Block, SSAValue

from mlc.lowering.support.loop_builder import constant_index
from mlc.tiling_model import op_weight

UNKNOWN_TRIP_COUNT = 1024  # loops with dynamic bounds are assumed long: parallel

STEP = "step"
"""The bound of an inner loop that is the outer parallel loop's step: its block size."""

Bound = int | str | None


def _bound(value: SSAValue, step: SSAValue | None) -> Bound:
    """
    An upper bound of an index value: a constant, `STEP` (the parallel loop's step, a
    block's size), or None. Read through `arith.minsi` (the smaller known bound) and
    `memref.dim` of a `memref.subview` (its size) or of a static shape: how a block of
    a split generic bounds its loops, `min(block, extent - start)`.
    """
    if (constant := constant_index(value)) is not None:
        return constant
    if value is step:
        return STEP
    owner = value.owner
    if isinstance(owner, arith.MinSIOp):
        bounds = [_bound(v, step) for v in owner.operands]
        known = [b for b in bounds if isinstance(b, int)]
        return min(known) if known else (STEP if STEP in bounds else None)
    if isinstance(owner, memref.DimOp) and (d := constant_index(owner.index)) is not None:
        return _dim_bound(owner.source, d, step)
    return None


def _dim_bound(source: SSAValue, d: int, step: SSAValue | None) -> Bound:
    """The bound of dim `d` of a memref: static, or a subview's size."""
    type_ = source.type
    if isinstance(type_, MemRefType) and 0 <= d < type_.get_num_dims():
        if (size := type_.get_shape()[d]) != DYNAMIC_INDEX:
            return size
    view = source.owner
    if not isinstance(view, memref.SubviewOp):
        return None
    sizes = view.static_sizes.get_values()
    if not 0 <= d < len(sizes):
        return None
    if sizes[d] != DYNAMIC_INDEX:
        return sizes[d]
    dynamic = sum(1 for size in sizes[:d] if size == DYNAMIC_INDEX)
    return _bound(view.sizes[dynamic], step)


def _trip_count(lb: SSAValue, ub: SSAValue, step: SSAValue, outer: SSAValue | None) -> Bound:
    """The iterations of a loop: a number, `STEP` (a block of the outer loop), or None."""
    low, stride, high = constant_index(lb), constant_index(step), _bound(ub, outer)
    if low is None or not stride:
        return None
    if high == STEP:
        return STEP if low == 0 and stride == 1 else None
    if high is None:
        return None
    assert isinstance(high, int)
    return max(0, -(-(high - low) // stride))


Work = tuple[int, int]
"""Ops executed as `fixed + per_step * step` of the outer parallel loop."""

CalleeWork = Callable[[str], int]
"""The ops one call of a function executes, by the function's name."""


class Callees:
    """The work of the module's functions, each weighed once (`work` of its body; a
    function without a body, or one reached again while it is weighed, counts one op)."""

    def __init__(self, module: ModuleOp) -> None:
        self.bodies = {
            f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp) and f.body.blocks
        }
        self.known: dict[str, int] = {}

    def __call__(self, name: str) -> int:
        if name not in self.known:
            self.known[name] = 1  # a recursive call counts one op while its body is weighed
            if (function := self.bodies.get(name)) is not None:
                self.known[name] = max(1, work(function.body.block, self))
        return self.known[name]


def _times(work: Work, count: Bound) -> Work:
    fixed, per_step = work
    if isinstance(count, int):
        return fixed * count, per_step * count
    if count == STEP and per_step == 0:
        return 0, fixed
    return fixed * UNKNOWN_TRIP_COUNT, per_step * UNKNOWN_TRIP_COUNT


def weigh(block: Block, step: SSAValue | None = None, callees: CalleeWork | None = None) -> Work:
    """
    The ops one run of `block` executes, loops counted by their trip count: known, a
    block of the parallel loop whose step is `step` (counted per unit of the step), or
    else estimated as `UNKNOWN_TRIP_COUNT`; calls as `callees` weighs their functions.
    """
    fixed, per_step = 0, 0
    for op in block.ops:
        inner: Work = (0, 0)
        if callees is not None and isinstance(op, func.CallOp):
            inner = (callees(op.callee.root_reference.data), 0)
        for region in op.regions:
            for b in region.blocks:
                f, p = weigh(b, step, callees)
                inner = (inner[0] + f, inner[1] + p)
        if isinstance(op, scf.ForOp):
            inner = _times(inner, _trip_count(op.lb, op.ub, op.step, step))
        elif isinstance(op, scf.ParallelOp):
            for bounds in zip(op.lowerBound, op.upperBound, op.step, strict=True):
                inner = _times(inner, _trip_count(*bounds, step))
        fixed, per_step = fixed + op_weight(op.name) + inner[0], per_step + inner[1]
    return fixed, per_step


def work(block: Block, callees: CalleeWork | None = None) -> int:
    """The ops one run of `block` executes, loops counted by their (estimated) trip count."""
    fixed, per_step = weigh(block, None, callees)
    return fixed + per_step
