"""
linalg-tile: cache-tiled, vectorised, parallel loops for matmul and conv generics on memrefs.

Runs after `bufferize`, on `linalg.generic`s over memrefs (tiling on buffers needs no
tensor slicing machinery, and packing needs a buffer anyway); see
docs/design/lowering.md, level 3. A generic that is a float matmul,

    linalg.generic {indexing_maps = [(i, k, j) -> (i, k), (i, k, j) -> (k, j),
                                     (i, k, j) -> (i, j)],
                    iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%a, %b : memref<MxKxf32>, memref<KxNxf32>) outs(%c : memref<MxNxf32>)
        { c + a * b }

on row-major operands (unit stride in the last dimension) becomes the loop nest of
`mlc.lowering.cpu.matmul_nest` (`mlc.lowering.cpu.matvec_kernels` for N = 1):

- N = 1 (matrix-vector, e.g. PageRank's `G @ p`): vectorised dot products over the
  rows of A, several rows per task, tasks in an `scf.parallel`;
- N >= one vector: B packed into NR-wide panels, an `scf.parallel` over blocks of rows
  (tasks of at least `tiling_model.TASK_FLOPS`, so a small matmul runs on the calling
  thread; groups of column panels where M fits one block, `tiling_model.matmul_split`),
  a loop over K blocks of equal depth, at most KC (`tiling_model.balanced_depth`;
  each block of a transposed A packed when B has enough panels, `tiling_model.packs_a`;
  an A read along its rows is read in place), and an
  MR x NR register-blocked FMA micro-kernel in `vector` ops.

An elementwise generic right after a matmul that reads its result only as column
slices of one width (an LSTM step's gates) runs inside the matmul's tasks, each on the
units whose columns it computed in every slice, and so do generics after it that only
carry its outputs on unit by unit (the step's copy of h' into Y)
(`mlc.lowering.cpu.slice_consumers`).
The same kernel runs matmuls reading A or B transposed (`mlc.lowering.linalg.contraction`),
batched matmuls (a loop of batches around it), matmuls whose body ends in a fused
elementwise epilogue (applied to each finished tile; `mlc.lowering.linalg.contraction`) and
convolutions as implicit GEMMs, B packed from the image (`mlc.lowering.cpu.conv_gemm`;
a zero-padded copy of the image is not made, the packing writing the zeros itself).
A constant weight's B panels are packed at compile time (`mlc.lowering.cpu.constant_panels`);
a small-M matmul's row-major B argument is read in place, not packed on every call
(`tiling_model.reads_b_in_place`).
A depthwise convolution (one channel per group) is no matmul worth the name (one row per
channel): it gets a loop per channel with its taps unrolled (`mlc.lowering.cpu.depthwise_conv`).
f16 matmuls of any N take the kernel, which sums them in f32 and rounds once at the
store (`Matmul.accumulator`); the matrix-vector and plain loops would sum in f16.
A zero fill of C right before the matmul (ops without memory effects may lie between)
is dropped: the first K block stores instead of adding.

Tile sizes come from `mlc.tiling_model` (the host's vector width and cache sizes) and
can be pinned with `tile-sizes=MR,NR,KC,MC` (NR a multiple of `vector-length`), or per
contraction by its `mlc.tiles` mark (measured by `autotune-tiles`).

Every other generic on memrefs (elementwise, reductions, pooling, integer matmuls and
convolutions) with enough work is split along its outermost parallel loop that
indexes its operands plainly into one block per thread (`mlc.lowering.cpu.parallel_generic`),
inside an `scf.parallel`; `convert-linalg-to-loops` then lowers each block as before.
`threads=1` turns the split off. Before that, runs of generics over the same rows that
share a buffer (softmax, layer norm) become one loop over L2-sized blocks of rows
(`mlc.lowering.cpu.row_blocks`; `row-blocks=false` turns it off).
"""

from dataclasses import dataclass, replace
from math import prod

from xdsl.context import Context
from xdsl.dialects import memref, scf
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, MemRefType, ModuleOp, i64
from xdsl.dialects.func import FuncOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable

from mlc.lowering.cpu.constant_panels import constant_panels
from mlc.lowering.cpu.conv_gemm import absorb_padding, conv_of
from mlc.lowering.cpu.depthwise_conv import depthwise_of
from mlc.lowering.cpu.depthwise_loops import absorbed, depthwise_nest
from mlc.lowering.cpu.hoisted_panels import invariant_loop, packed_before
from mlc.lowering.cpu.matmul_nest import b_is_batched, matmul_nest
from mlc.lowering.cpu.matvec_kernels import matvec_nest
from mlc.lowering.cpu.parallel_generic import split_generic, splittable_loop, total_iterations
from mlc.lowering.cpu.row_blocks import fuse_row_blocks
from mlc.lowering.cpu.shared_micro_kernel import SharedKernels
from mlc.lowering.cpu.slice_consumers import SliceConsumer, slice_consumer
from mlc.lowering.linalg.absorbed_padding import Padding, frees_between
from mlc.lowering.linalg.contraction import Matmul, matmul_of, zero_fill_before
from mlc.lowering.support.locations import keep_location
from mlc.lowering.support.op_walk import walk_ops
from mlc.tiling_model import (
    PARALLEL_THRESHOLD,
    PLAIN_LOOP_COLUMNS,
    MatmulTiles,
    TaskSplit,
    balanced_depth,
    fitted_rows,
    matmul_split,
    matmul_tiles,
    narrow_tiles,
    op_weight,
    packs_a,
    reads_b_in_place,
    thread_count,
)

PANELS_ATTR = "mlc.panels"
"""On an outlined kernel's argument B: the number of the argument holding B's panels."""

TILES_ATTR = "mlc.tiles"
"""On a contraction: its blocking MR, NR, KC, MC, vector length, as `autotune-tiles`
measured it; taken as given, as `tile-sizes` is."""


def tiles_attribute(tiles: MatmulTiles) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, [tiles.mr, tiles.nr, tiles.kc, tiles.mc, tiles.vector])


def marked_tiles(op: Operation) -> MatmulTiles | None:
    """The blocking `op`'s `mlc.tiles` gives, or None (no mark, or not five sizes)."""
    mark = op.attributes.get(TILES_ATTR)
    if not isinstance(mark, DenseArrayBase) or len(sizes := mark.get_values()) != 5:
        return None
    mr, nr, kc, mc, vector = (int(size) for size in sizes)
    try:
        return MatmulTiles(mr, nr, kc, mc, vector)
    except ValueError:
        return None


class TileMatmul(RewritePattern):
    """A matmul generic -> the packed micro-kernel nest, or dot products when N = 1."""

    def __init__(self, tiles: MatmulTiles | None, share: bool = True):
        self.tiles = tiles
        self.share = share

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter, /) -> None:
        if (mm := matmul_of(op) or conv_of(op)) is None:
            return  # not a float matmul or conv on buffers: convert-linalg-to-loops does it
        m, n, k = mm.sizes
        pinned = marked_tiles(op) or self.tiles
        kind, tiles = kernel_choice(mm, pinned)
        padding = absorb_padding(op, mm, tiles) if kind == "kernel" else None
        if padding is not None:
            mm, padding = padding
        if kind == "matvec":
            nest = matvec_nest(mm.a, mm.b, mm.c, tiles.vector)
        elif kind == "loops":
            return  # a panel of mostly masked lanes: the plain loops do as well
        else:
            batches = total_iterations_of(mm.c, mm.batch)
            threads = 1 if batches is not None and batches >= thread_count() else thread_count()
            panels = panels_argument(mm.b) or module_global(op, constant_panels(mm, tiles.nr))
            if panels is None and not b_is_batched(mm):
                panels = _hoisted(op, mm, tiles, threads, rewriter)
            in_place = panels is None and reads_b_along_rows(mm)
            in_place = in_place and reads_b_in_place(m, n, k, tiles)
            split = matmul_split((m, n, k), tiles, threads, in_place)
            pack_a = packs_a(n, k, tiles, m, reads_a_along_rows(mm))
            if k is not None and not pinned:
                tiles = replace(tiles, kc=balanced_depth(k, tiles))
            fill = zero_fill_before(op, mm.c) if k is not None and k > 0 else None
            one_task = batches == 1 and split.one_task(m)
            kernels = SharedKernels(op) if self.share else None
            consumer = _slice_consumer(op, mm, tiles, split, rewriter)
            nest = matmul_nest(
                mm,
                tiles,
                split,
                fill is not None,
                panels,
                pack_a,
                one_task,
                kernels,
                b_in_place=in_place,
                consumer=consumer,
            )
            if fill is not None:
                rewriter.erase(fill)  # the first K block stores instead
            for gone in consumer.generics() if consumer is not None else []:
                rewriter.erase(gone)  # its body moved into the tasks
        _replace(op, nest, padding, rewriter)


def _replace(
    op: GenericOp, nest: list[Operation], padding: Padding | None, rewriter: PatternRewriter
) -> None:
    """`op` by `nest`; the padding it absorbed erased, the image freed after it."""
    kept: list[Operation] = []
    if padding is not None:  # the nest reads the image: frees of it wait for it
        kept = frees_between(padding.source, padding.ops[0], op)
        for free in kept:
            free.detach()
    with keep_location(rewriter, op):
        rewriter.replace(op, [*nest, *kept], [])
    for gone in padding.ops if padding is not None else []:
        rewriter.erase(gone)


def _slice_consumer(
    op: GenericOp, mm: Matmul, tiles: MatmulTiles, split: TaskSplit, rewriter: PatternRewriter
) -> SliceConsumer | None:
    """The generic after `op` that its tasks can run on their columns
    (`mlc.lowering.cpu.slice_consumers`): every task takes all rows of a plain matmul,
    and each task's share of a slice is whole panels. The ops its operands need are
    moved before `op`."""
    m, n, _ = mm.sizes
    if mm.batch or mm.image is not None or m is None or n is None or split.rows is None:
        return None
    if split.rows < m or (found := slice_consumer(op, mm.c)) is None:
        return None
    if found.width % (tiles.nr * split.column_groups):
        return None
    for moved in found.moved:
        moved.detach()
        rewriter.insert(moved, InsertPoint.before(op))
    return found


def kernel_choice(mm: Matmul, pinned: MatmulTiles | None) -> tuple[str, MatmulTiles]:
    """Which nest a matmul gets, "matvec", "loops" (left to `convert-linalg-to-loops`) or
    "kernel", and its blocking (`pinned`, or the host model's for its rows)."""
    m, n, _ = mm.sizes
    tiles = pinned or fitted_rows(m, matmul_tiles(mm.accumulator.bitwidth // 8))
    # Narrow floats (f16) always take the kernel, the one that sums them in f32.
    if n == 1 and is_matrix_vector(mm) and not mm.narrow:
        return "matvec", tiles
    if n is not None and n <= PLAIN_LOOP_COLUMNS and not mm.narrow:
        if mm.image is None:
            return "loops", tiles
        return "kernel", narrow_tiles(m, tiles)
    return "kernel", tiles


def reads_a_along_rows(mm: Matmul) -> bool:
    """Whether the kernel reads A as a row-major matrix, contiguous along k (not a
    transposed A, nor a convolution's weight, whose packing is left as measured there)."""
    return mm.image is None and not mm.transposed_a


def reads_b_along_rows(mm: Matmul) -> bool:
    """Whether B is one row-major K x N matrix the kernel may read in place: not
    transposed, batched, a convolution's image, nor widened from narrow floats."""
    return not (mm.transposed_b or mm.narrow or mm.batch or mm.image is not None)


def panels_argument(b: SSAValue) -> SSAValue | None:
    """B's panels packed at compile time and passed in, where B is an argument of an
    outlined kernel whose attributes name the argument that holds them
    (`mlc.lowering.cpu.outline_kernels`)."""
    if not isinstance(b, BlockArgument) or not isinstance(function := b.owner.parent_op(), FuncOp):
        return None
    if function.arg_attrs is None or b.owner is not function.body.blocks.first:
        return None
    found = function.arg_attrs.data[b.index].data.get(PANELS_ATTR)
    return b.owner.args[found.value.data] if isinstance(found, IntegerAttr) else None


def _hoisted(
    op: GenericOp, mm: Matmul, tiles: MatmulTiles, threads: int, rewriter: PatternRewriter
) -> SSAValue | None:
    """B's panels packed before the outermost loop in which B is invariant, freed after
    it (`mlc.lowering.cpu.hoisted_panels`); None where there is no such loop."""
    if (loop := invariant_loop(op, mm.b)) is None:
        return None
    ops, packed = packed_before(mm, tiles, threads)
    with keep_location(rewriter, op):
        rewriter.insert(ops, InsertPoint.before(loop))
        rewriter.insert(memref.DeallocOp.get(packed), InsertPoint.after(loop))
    return packed


def is_matrix_vector(mm: Matmul) -> bool:
    """What the dot-product kernel takes: one plain `(i, k)` A, one K x 1 B, nothing more."""
    plain = not (mm.transposed_a or mm.transposed_b)
    return plain and mm.batch == 0 and mm.epilogue is None and mm.image is None


def module_global(op: Operation, new: memref.GlobalOp | None) -> memref.GlobalOp | None:
    """`new`, or the module's global of the same name, defined once before `op`'s function."""
    if new is None:
        return None
    module = op.get_toplevel_object()
    assert isinstance(module, ModuleOp)
    if isinstance(found := SymbolTable.lookup_symbol(module, new.sym_name), memref.GlobalOp):
        return found
    function = op.parent_op()
    while function is not None and function.parent_op() is not module:
        function = function.parent_op()
    assert function is not None
    module.body.block.insert_op_before(new, function)
    return new


def total_iterations_of(value: SSAValue, dims: int) -> int | None:
    """The number of elements in the first `dims` dims of a memref, if static."""
    type_ = value.type
    assert isinstance(type_, MemRefType)
    shape = type_.get_shape()[:dims]
    return None if any(s < 0 for s in shape) else prod(shape)


class TileDepthwise(RewritePattern):
    """A depthwise convolution generic -> a loop per channel, its taps unrolled."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter, /) -> None:
        if (dw := depthwise_of(op)) is None:
            return  # not a depthwise convolution with a small static kernel
        nest = depthwise_nest(dw)
        with keep_location(rewriter, op):
            rewriter.replace(op, nest, [])
        for gone in absorbed(dw):  # the padded copy of x and the bias, now read in the nest
            rewriter.erase(gone)


def body_work(op: GenericOp) -> int:
    """The work of one iteration of `op`: its body's ops, weighed (`tiling_model.op_weight`)."""
    return sum(op_weight(inner.name) for inner in op.body.block.ops)


class SplitGeneric(RewritePattern):
    """Any other generic on memrefs -> an `scf.parallel` over blocks of one parallel loop."""

    def __init__(self, threads: int):
        self.threads = threads

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter, /) -> None:
        if self.threads < 2 or isinstance(op.parent_op(), scf.ParallelOp):
            return  # one thread, or already a block of a split generic
        if (d := splittable_loop(op)) is None:
            return  # no loop that splits into blocks of rows
        total = total_iterations(op)
        if total is not None and total * body_work(op) < PARALLEL_THRESHOLD:
            return  # too little work to pay for waking the threads
        nest = split_generic(op, d, self.threads)
        with keep_location(rewriter, op):
            rewriter.replace(op, nest, [])


@dataclass(frozen=True)
class LinalgTilePass(ModulePass):
    """Tile and vectorise matmul generics on memrefs (see the module docstring)."""

    name = "linalg-tile"

    tile_sizes: tuple[int, ...] = ()
    """MR, NR, KC, MC; empty: the host model's choice."""

    vector_length: int = 0
    """Elements per vector; 0: the host's widest vector for the element type."""

    threads: int = 0
    """Blocks other generics are split into; 0: the host's thread count; 1: no split."""

    row_blocks: bool = True
    """Fuse runs of generics over the same rows into blocks of rows (`row_blocks`)."""

    shared_micro_kernels: bool = True
    """Register tiles call one function per kind of micro-kernel (`shared_micro_kernel`),
    and B is packed by one per kind of packing (`shared_packing`)."""

    def __post_init__(self) -> None:
        # A bad option is a one-line error when the pipeline is built, never at apply.
        if self.tile_sizes and len(self.tile_sizes) != 4:
            raise ValueError(f"tile-sizes takes 4 values (MR,NR,KC,MC), got {len(self.tile_sizes)}")
        if any(size < 1 for size in self.tile_sizes):
            sizes = ",".join(map(str, self.tile_sizes))
            raise ValueError(f"tile-sizes must be positive, got {sizes}")
        for option, value in (("vector-length", self.vector_length), ("threads", self.threads)):
            if value < 0:
                raise ValueError(f"{option} must be 0 (the host's) or positive, got {value}")
        nr = self.tile_sizes[1] if self.tile_sizes else 0
        if nr and self.vector_length and nr % self.vector_length:
            raise ValueError(
                f"NR ({nr}) must be a multiple of the vector length ({self.vector_length})"
            )
        if nr and not self.vector_length and nr % 2:
            raise ValueError(f"NR ({nr}) must be even (two vectors) unless vector-length is given")

    def tiles(self) -> MatmulTiles | None:
        """The pinned blocking, or None for the host model's."""
        if not self.tile_sizes and not self.vector_length:
            return None
        default = matmul_tiles(4)
        if not self.tile_sizes:
            lanes = self.vector_length
            return MatmulTiles(default.mr, 2 * lanes, default.kc, default.mc, lanes)
        mr, nr, kc, mc = self.tile_sizes
        return MatmulTiles(mr, nr, kc, mc, self.vector_length or nr // 2)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        threads = self.threads or thread_count()
        # Matmuls first, so that a split does not hide the zero fill before one of them.
        rewrite_generics(op, TileMatmul(self.tiles(), self.shared_micro_kernels))
        rewrite_generics(op, TileDepthwise())
        if self.row_blocks:
            fuse_row_blocks(op, threads)
        rewrite_generics(op, SplitGeneric(threads))


def rewrite_generics(module: ModuleOp, pattern: RewritePattern) -> None:
    """
    Apply `pattern` once to each generic of `module`, in walk order: what
    `PatternRewriteWalker(pattern, apply_recursively=False)` does with these patterns,
    which rewrite only generics and make none they would rewrite (a split's block sits
    in an `scf.parallel`). The walker visits every op, the ~30k each tiled nest of
    ResNet-50 inserts included, three times over; this visits the ~150 generics.
    """
    for generic in [inner for inner in walk_ops(module) if isinstance(inner, GenericOp)]:
        if generic.parent is None:
            continue  # erased by an earlier rewrite (a zero fill a matmul absorbed)
        try:
            pattern.match_and_rewrite(generic, PatternRewriter(generic))
        except Exception as err:  # reported as the walker reports it
            generic.emit_error(f"Error while applying pattern: {err}", underlying_error=err)
