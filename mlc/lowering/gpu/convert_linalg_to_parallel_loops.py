"""
convert-linalg-to-parallel-loops: `linalg.generic` on memrefs to `scf.parallel` nests.

The GPU counterpart of `convert-linalg-to-loops`. The parallel iterators of a generic
become one `scf.parallel` (outermost, in the order of the map dims, so the last
parallel dim walks the output's contiguous axis); its reduction iterators become
`scf.for` loops inside. When no output map uses a reduction dim (every `ml`
reduction and matmul), each output element is loaded once before the reduction
loops, carried through them in `iter_args` (a register on the GPU) and stored once
after:

    linalg.generic {iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%a, %b) outs(%c)     // matmul (i, k, j)
==>
    scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
      %init = memref.load %c[%i, %j]
      %acc = scf.for %k = %c0 to %kk step %c1 iter_args(%s = %init) -> (f32) {
        ...loads of %a[%i, %k] and %b[%k, %j], the generic's body...
        scf.yield %sum
      }
      memref.store %acc, %c[%i, %j]
      scf.reduce
    }

When a fill generic (`mlc.lowering.gpu.fills`) writes such an output just before, with
nothing between reading it, the carried value starts at the fill's constant instead
of a load, and the fill goes (one kernel fewer: softmax's and layer_norm's `-inf`
and 0). A scan generic (`ml.cumsum`'s) carries its running totals the same way and
stores its step outputs each iteration (`mlc.lowering.gpu.loop_nests.scan_loops`),
absorbing its fill of zeros too. A generic with no parallel iterator (a full
reduction) gets a one-iteration `scf.parallel`, so it still becomes one kernel.
`memref.copy` becomes an `scf.parallel` of loads and stores too: on the GPU target
buffers live in device memory, where a copy is a kernel (or a driver copy) rather
than a host `memcpy`.

The decisions are `mlc.lowering.gpu.loop_analysis`'s (which dims are parallel, the
sizes that pick a register tile) and `mlc.lowering.gpu.fills`' (the fills a reduction
absorbs); the nest is built in `mlc.lowering.gpu.loop_nests`.

Loops over a scatter's updates (`mlc.atomic_updates`) become parallel loops of atomics
first (`mlc.lowering.gpu.atomic_loops`), and loops marked `mlc.sequential` one-iteration
parallel loops (`mlc.lowering.gpu.sequential_loops`). Afterwards adjacent elementwise
parallel loops over one iteration space that touch shared buffers only element by
element merge into one (`mlc.lowering.gpu.loop_fusion`): one kernel, not several.

Precondition: buffer semantics (run `bufferize` first). Index arithmetic of
non-trivial maps is left as `affine.apply` for `lower-affine`.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

from xdsl.context import Context
from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import MemRefType, ModuleOp
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Attribute, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.convert_linalg_to_loops import materialize_loop_bound

from mlc.diagnostics import op_error
from mlc.lowering.gpu.atomic_loops import parallelize_atomic_loops
from mlc.lowering.gpu.fills import absorbable_fills
from mlc.lowering.gpu.loop_analysis import (
    outputs_independent_of,
    scan_carried_outputs,
    split_iterators,
)
from mlc.lowering.gpu.loop_fusion import fuse_parallel_loops
from mlc.lowering.gpu.loop_nests.carried_outputs import lower_carried
from mlc.lowering.gpu.loop_nests.loop_emitter import (
    LoopEmitter,
    clone_body,
    for_nest,
    parallel_loop,
)
from mlc.lowering.gpu.loop_nests.register_tile import register_tile
from mlc.lowering.gpu.loop_nests.scan_loops import lower_scan
from mlc.lowering.gpu.sequential_loops import wrap_sequential_loops


def _nested(
    op: GenericOp,
    emit: LoopEmitter,
    bounds: Sequence[SSAValue],
    reduction: Sequence[int],
    ivs: list[SSAValue | None],
) -> None:
    """The body of the parallel loop at `emit` for outputs read and written in place:
    the reduction loops, each iteration loading, computing and storing."""
    loops, _ = for_nest(emit, bounds, reduction, ivs, [])
    every = cast(list[SSAValue], ivs)  # each dim parallel or reduction: all set now
    values = emit.loads(op, every, range(len(op.operands)))
    results = clone_body(emit, op.body.block, values, every)
    emit.stores(op, every, results)
    for loop in reversed(loops):
        emit(scf.YieldOp())
        emit.point = InsertPoint.after(loop)


@dataclass
class GenericToParallelLoops(RewritePattern):
    """One `linalg.generic` on memrefs to `scf.parallel` over `scf.for` (module docstring)."""

    register_tile: tuple[int, int] = (1, 1)
    # id of a generic -> {output index: the constant its carried value starts at}
    starts: dict[int, dict[int, Attribute]] = field(default_factory=dict[int, dict[int, Attribute]])
    absorbed: set[int] = field(default_factory=set[int])  # ids of the fills those replace

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        if id(op) in self.absorbed:
            rewriter.erase(op)
            return
        if op.res:
            op_error(op, "requires buffer semantics: run bufferize before this pass")
        emit = LoopEmitter(rewriter, op)
        bounds: list[SSAValue] = []
        for operand, dim_index, dim_size in op.get_loop_bound_sources():
            if not isinstance(operand.type, MemRefType):
                op_error(op, "requires buffer semantics: run bufferize before this pass")
            bounds.append(
                materialize_loop_bound(rewriter, emit.point, operand, dim_index, dim_size)
            )
        parallel, reduction = split_iterators(op)
        carried = bool(reduction) and outputs_independent_of(op, reduction)
        scan = None if carried else scan_carried_outputs(op, reduction)
        tile = register_tile(op, parallel, bounds, self.register_tile) if carried else None
        looped = list(parallel)
        counts = [bounds[d] for d in parallel]
        if tile is not None:
            counts[-2] = emit.ceil_div(bounds[tile.rows], tile.tile_rows)
            if tile.whole_columns:  # one column tile: no loop over it
                looped, counts = looped[:-1], counts[:-1]
            else:
                counts[-1] = emit.ceil_div(bounds[tile.cols], tile.tile_cols)
        _, body = parallel_loop(emit, counts)
        emit.point = InsertPoint.at_start(body)
        ivs: list[SSAValue | None] = [None] * len(bounds)
        for dim, iv in zip(looped, body.args):
            ivs[dim] = iv
        if carried:
            starts = self.starts.get(id(op), {})
            lower_carried(op, emit, bounds, reduction, ivs, tile, starts)
        elif scan is not None:
            lower_scan(op, emit, bounds, reduction, ivs, scan, self.starts.get(id(op), {}))
        else:
            _nested(op, emit, bounds, reduction, ivs)
        emit(scf.ReduceOp())
        rewriter.erase(op)


class CopyToParallelLoops(RewritePattern):
    """`memref.copy` to an `scf.parallel` of element loads and stores."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CopyOp, rewriter: PatternRewriter) -> None:
        target = op.destination.type
        assert isinstance(target, MemRefType)
        emit = LoopEmitter(rewriter, op)
        bounds = [
            materialize_loop_bound(rewriter, emit.point, op.destination, dim, size)
            for dim, size in enumerate(target.get_shape())
        ]
        _, body = parallel_loop(emit, bounds)
        emit.point = InsertPoint.at_start(body)
        ivs = list(body.args) if bounds else []
        value = emit(memref.LoadOp.get(op.source, ivs)).results[0]
        emit(memref.StoreOp.get(value, op.destination, ivs))
        emit(scf.ReduceOp())
        rewriter.erase(op)


def _reject_other_linalg(module: ModuleOp) -> None:
    for op in module.walk():
        if op.dialect_name() == "linalg" and not isinstance(op, GenericOp | YieldOp | IndexOp):
            op_error(
                op,
                f"'{op.name}' is not supported by convert-linalg-to-parallel-loops "
                "(convert-ml-to-linalg emits linalg.generic only)",
            )


@dataclass(frozen=True)
class ConvertLinalgToParallelLoopsPass(ModulePass):
    """Lower `linalg.generic`s and `memref.copy`s on memrefs to `scf.parallel` nests."""

    name = "convert-linalg-to-parallel-loops"

    register_tile: tuple[int, ...] = (4, 4)

    def __post_init__(self) -> None:
        if len(self.register_tile) != 2 or not all(1 <= t <= 8 for t in self.register_tile):
            raise ValueError(
                f"register-tile takes two sizes in [1, 8], got {list(self.register_tile)}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _reject_other_linalg(op)
        parallelize_atomic_loops(op)
        wrap_sequential_loops(op)
        tile = (self.register_tile[0], self.register_tile[1])
        starts, absorbed = absorbable_fills(op)
        lower_generics = GenericToParallelLoops(tile, starts, absorbed)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([lower_generics, CopyToParallelLoops()]),
            apply_recursively=False,
        ).rewrite_module(op)
        fuse_parallel_loops(op)
