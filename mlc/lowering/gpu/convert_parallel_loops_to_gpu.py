"""
convert-parallel-loops-to-gpu: each outermost `scf.parallel` becomes one `gpu.launch`.

Mapping: the loop's iteration space is flattened, row-major (the last dim fastest),
and spread over a 1-D grid of `block-size` threads per block; thread `t` of block `b`
runs iteration `b * block-size + t`, delinearised back into the loop's indices, and
threads past the end do nothing. Neighbouring threads of a warp thus take neighbouring
iterations of the last dim, which is the contiguous axis of the output that
`convert-ml-to-linalg` puts last, so loads and stores are coalesced; any number of
dims maps, unlike a dim-per-grid-axis mapping (xDSL's `gpu-map-parallel-loops`),
which stops at three and leaves small dims with idle threads.

    scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) { body(%i, %j) }
==>
    %total = %m * %n ; %blocks = max(ceildiv(%total, 256), 1)
    gpu.launch blocks(...) in (%blocks, 1, 1) threads(...) in (256, 1, 1) {
      %t = gpu.block_id x * 256 + gpu.thread_id x
      scf.if %t < %total { %i = %t / %n ; %j = %t % %n ; body(%i, %j) }
      gpu.terminator
    }

An elementwise loop (f32 loads, scalar arithmetic, stores, contiguous along the last
dim) gives each thread four consecutive iterations of its last dim instead, with
16-byte vector loads and stores where the buffers are aligned and a scalar path
for the rest (`loop_mapping.vector_lanes`; `vector-lanes=false` turns it off). A
row reduction (softmax's statistics, layer norm's sums, `reduce_*` over the last axes)
gets a warp per iteration, its lanes splitting the row (`loop_mapping.warp_reduction`);
a row of at most 16 static elements gets a power-of-two part of a warp, several rows a
warp, with the shuffles limited to the lanes whose rows are inside (`vote.ballot.sync`).
A row scan (`ml.cumsum`'s running totals) gets a warp per row too, each lane a chunk
of it, the lanes' sums combined by `shfl.sync.up` (`loop_mapping.warp_scan`).
Small buffers that every row reads across its lanes (a narrow contraction's weights)
are copied into shared memory by the block first (`mlc.lowering.gpu.loop_mapping.row_staging`).

Nested `scf.parallel`s run sequentially inside their kernel thread (as `scf.for`s,
after `convert-scf-to-cf`'s lowering of `scf.parallel`). Preconditions: bounds and
steps are index values; reductions inside `scf.parallel` (`init_vals`) are rejected.
"""

from dataclasses import dataclass

from xdsl.builder import ImplicitBuilder
from xdsl.context import Context
from xdsl.dialects import arith, gpu, llvm, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i32
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from mlc.diagnostics import op_error
from mlc.gpu_architectures import WARP
from mlc.lowering.gpu.loop_mapping.row_staging import read_copies, stage, staged_buffers
from mlc.lowering.gpu.loop_mapping.vector_lanes import LANES, LaneEmitter, plan_lanes
from mlc.lowering.gpu.loop_mapping.warp_reduction import (
    WarpReduction,
    share_with_warp,
    warp_reduction,
)
from mlc.lowering.gpu.loop_mapping.warp_scan import WarpScan, scan_with_warp, warp_scan
from mlc.lowering.support.locations import LocatedEmitter, located_builder


def is_outermost(op: scf.ParallelOp) -> bool:
    """Whether no `scf.parallel` or `gpu.launch` encloses `op`."""
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, scf.ParallelOp | gpu.LaunchOp):
            return False
        parent = parent.parent_op()
    return True


class _Emitter(LocatedEmitter):
    """Appends ops at a point, each at the location of the loop being mapped."""

    def at(self, block: Block) -> "_Emitter":
        """An emitter appending to `block`, with the same location."""
        return _Emitter(InsertPoint.at_end(block), self.location)


def _ceil_div(emit: _Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """`(a + b - 1) / b` for a >= 0, b >= 1 (convert-to-llvm has no `arith.ceildivui`)."""
    bump = emit(arith.SubiOp(b, emit.index(1)))
    return emit(arith.DivUIOp(emit(arith.AddiOp(a, bump)), b))


def lane_mask(emit: _Emitter, inside: SSAValue) -> SSAValue:
    """The warp's lanes for which `inside` holds (`vote.ballot.sync` over all lanes)."""
    every_lane = emit(llvm.ConstantOp(IntegerAttr(-1, i32), i32))
    ballot = llvm.CallIntrinsicOp("llvm.nvvm.vote.ballot.sync", [every_lane, inside], [i32])
    return emit(ballot)


def _delinearise(
    emit: _Emitter, op: scf.ParallelOp, linear: SSAValue, counts: list[SSAValue]
) -> list[SSAValue]:
    """The loop indices of flat iteration `linear` (row-major, the last dim fastest)."""
    ivs: list[SSAValue] = []
    rest = linear
    for dim in reversed(range(len(counts))):
        if dim:
            position = emit(arith.RemUIOp(rest, counts[dim]))
            rest = emit(arith.DivUIOp(rest, counts[dim]))
        else:
            position = rest
        scaled = emit(arith.MuliOp(position, op.step[dim]))
        ivs.append(emit(arith.AddiOp(op.lowerBound[dim], scaled)))
    ivs.reverse()
    return ivs


def _share(
    reduction: WarpReduction | None,
    scan: WarpScan | None,
    lane: SSAValue,
    location: object,
    active: SSAValue | None,
) -> None:
    """Split the inlined row's reduction or scan among its lanes."""
    if reduction is not None:
        share_with_warp(reduction, lane, location, active)
    if scan is not None:
        scan_with_warp(scan, lane, location)


@dataclass
class ParallelToLaunch(RewritePattern):
    """One outermost `scf.parallel` to a `gpu.launch` (module docstring)."""

    block_size: int
    vector_lanes: bool = True

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: scf.ParallelOp, rewriter: PatternRewriter) -> None:
        if not is_outermost(op):
            return  # runs inside the kernel of the loop that encloses it
        if op.initVals:
            op_error(op, "scf.parallel with reductions is not supported on the GPU target")
        host = _Emitter(InsertPoint.before(op), op.location)
        counts: list[SSAValue] = []
        for lower, upper, step in zip(op.lowerBound, op.upperBound, op.step, strict=True):
            span = host(arith.SubiOp(upper, lower))
            counts.append(_ceil_div(host, span, step))
        reduction = warp_reduction(op)
        scan = warp_scan(op) if reduction is None else None
        shared = reduction is not None or scan is not None  # a warp (or part) an iteration
        lanes = plan_lanes(op) if not shared and self.vector_lanes else None
        last_count = counts[-1]
        if lanes is not None:  # a thread per 4 iterations of the last dim
            counts[-1] = _ceil_div(host, last_count, host.index(LANES))
        total = counts[0]
        for count in counts[1:]:
            total = host(arith.MuliOp(total, count))
        threads = host.index(self.block_size)
        width = reduction.width if reduction is not None else WARP if scan else 1
        workers = host(arith.MuliOp(total, host.index(width))) if shared else total
        blocks = _ceil_div(host, workers, threads)
        blocks = host(arith.MaxUIOp(blocks, host.index(1)))  # a grid of 0 blocks is an error
        one = host.index(1)

        body = Block(arg_types=[IndexType()] * 12)
        launch = gpu.LaunchOp(Region(body), [blocks, one, one], [threads, one, one])
        host(launch)
        kernel = _Emitter(InsertPoint.at_end(body), op.location)
        x = gpu.DimensionAttr(gpu.DimensionEnum.X)
        block_id = kernel(gpu.BlockIdOp(x))
        thread_id = kernel(gpu.ThreadIdOp(x))
        first = kernel(arith.MuliOp(block_id, kernel(gpu.BlockDimOp(x))))
        linear = kernel(arith.AddiOp(first, thread_id))
        copies: dict[SSAValue, SSAValue] = {}
        if reduction is not None and (staged := staged_buffers(op, reduction.loop)):
            with ImplicitBuilder(located_builder(kernel.point, op.location)):
                copies = stage(staged, thread_id, self.block_size)
        lane = None
        if shared:  # a warp (or a part of one) per iteration
            lane = kernel(arith.RemUIOp(linear, kernel.index(width)))
            linear = kernel(arith.DivUIOp(linear, kernel.index(width)))
        inside = kernel(arith.CmpiOp(linear, total, "ult"))
        # lanes whose iteration is inside: the shuffles' participants, where a warp
        # holds several iterations and the last may be past the end
        active = lane_mask(kernel, inside) if reduction is not None and width < WARP else None
        then = Block()
        kernel(scf.IfOp(inside, [], Region(then)))
        kernel(gpu.TerminatorOp())

        inner = _Emitter(InsertPoint.at_end(then), op.location)
        ivs = _delinearise(inner, op, linear, counts)
        if lanes is not None:
            LaneEmitter(lanes, ivs, inner).build(op, last_count)
            inner(scf.YieldOp())
            rewriter.erase(op)
            return
        loop_body = op.body.block
        terminator = loop_body.last_op
        assert isinstance(terminator, scf.ReduceOp)
        rewriter.erase(terminator)
        rewriter.inline_block(loop_body, InsertPoint.at_end(then), ivs)
        inner(scf.YieldOp())
        read_copies(then.parent_region(), copies)
        if lane is not None:
            _share(reduction, scan, lane, op.location, active)
        rewriter.erase(op)


@dataclass(frozen=True)
class ConvertParallelLoopsToGPUPass(ModulePass):
    """Map each outermost `scf.parallel` to a 1-D `gpu.launch` (see the module docstring)."""

    name = "convert-parallel-loops-to-gpu"

    block_size: int = 256
    # Four iterations of an elementwise loop per thread, with 16-byte accesses
    # (`mlc.lowering.gpu.loop_mapping.vector_lanes`); off, one iteration per thread.
    vector_lanes: bool = True

    def __post_init__(self) -> None:
        if not 32 <= self.block_size <= 1024 or self.block_size % 32:
            raise ValueError(
                f"block-size must be a multiple of 32 in [32, 1024], got {self.block_size}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(
            ParallelToLaunch(self.block_size, self.vector_lanes),
            apply_recursively=False,
            walk_reverse=False,
        ).rewrite_module(op)
