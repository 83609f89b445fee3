"""
The work of one iteration of a parallel loop, as `convert-to-llvm` weighs it to choose
between the thread pool and a serial call (mlc.lowering.convert_to_llvm.parallel).

An iteration's work is its ops (`tiling_model.op_weight`), loops counted by their trip
counts: constant bounds, bounds read through `arith.minsi` and the sizes of
`memref.subview`s (a block of a split generic runs `min(block, n - start)` rows), and a
bound that is the loop's own step, the block size, counted per unit of the step
(`per_step`) and read when the loop runs; others count `UNKNOWN_TRIP_COUNT` iterations.
A call of a function of the module weighs what the function's body does: a loop whose
body calls a shared function (a matmul's B packing, `mlc.lowering.cpu.shared_packing`)
weighs as the loop it replaced, not as one op (4 MiB of B packed in four calls on the
calling thread, while the other cores waited for it, until this counted them).
"""

from xdsl.dialects import arith, func, memref, scf
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType
from xdsl.ir import Block, SSAValue
from xdsl.traits import SymbolTable

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


def _times(work: Work, count: Bound) -> Work:
    fixed, per_step = work
    if isinstance(count, int):
        return fixed * count, per_step * count
    if count == STEP and per_step == 0:
        return 0, fixed
    return fixed * UNKNOWN_TRIP_COUNT, per_step * UNKNOWN_TRIP_COUNT


def _callee_work(call: func.CallOp, calling: frozenset[str]) -> int:
    """The ops a run of the function `call` calls executes (0 where the module does not
    define it, or where it is already being weighed: a recursive call)."""
    name = call.callee.root_reference.data
    if name in calling:
        return 0
    try:
        callee = SymbolTable.lookup_symbol(call, call.callee)
    except ValueError:  # a call in no module yet
        return 0
    if not isinstance(callee, func.FuncOp) or not callee.body.blocks:
        return 0
    fixed, per_step = weigh(callee.body.blocks.first, None, calling | {name})
    return fixed + per_step


def weigh(
    block: Block, step: SSAValue | None = None, calling: frozenset[str] = frozenset()
) -> Work:
    """
    The ops one run of `block` executes, loops counted by their trip count: known, a
    block of the parallel loop whose step is `step` (counted per unit of the step), or
    else estimated as `UNKNOWN_TRIP_COUNT`; calls by their callee's body (`calling`:
    the functions being weighed, whose calls count one op).
    """
    fixed, per_step = 0, 0
    for op in block.ops:
        inner: Work = (0, 0)
        for region in op.regions:
            for b in region.blocks:
                f, p = weigh(b, step, calling)
                inner = (inner[0] + f, inner[1] + p)
        if isinstance(op, func.CallOp):
            inner = (_callee_work(op, calling), 0)
        elif isinstance(op, scf.ForOp):
            inner = _times(inner, _trip_count(op.lb, op.ub, op.step, step))
        elif isinstance(op, scf.ParallelOp):
            for bounds in zip(op.lowerBound, op.upperBound, op.step, strict=True):
                inner = _times(inner, _trip_count(*bounds, step))
        fixed, per_step = fixed + op_weight(op.name) + inner[0], per_step + inner[1]
    return fixed, per_step


def work(block: Block) -> int:
    """The ops one run of `block` executes, loops counted by their (estimated) trip count."""
    fixed, per_step = weigh(block)
    return fixed + per_step
