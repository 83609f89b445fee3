"""
linalg-tile: cache-tiled, vectorised, parallel loops for matmul generics on memrefs.

Runs after `bufferize`, on `linalg.generic`s over memrefs (tiling on buffers needs no
tensor slicing machinery, and packing needs a buffer anyway); see
docs/design/lowering.md, level 3. A generic that is a float matmul,

    linalg.generic {indexing_maps = [(i, k, j) -> (i, k), (i, k, j) -> (k, j),
                                     (i, k, j) -> (i, j)],
                    iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%a, %b : memref<MxKxf32>, memref<KxNxf32>) outs(%c : memref<MxNxf32>)
        { c + a * b }

on row-major operands (unit stride in the last dimension) becomes the loop nest of
`mlc.lowering.matmul_kernels`:

- N = 1 (matrix-vector, e.g. PageRank's `G @ p`): vectorised dot products over the
  rows of A, several rows per task, tasks in an `scf.parallel`;
- N >= one vector: B packed into NR-wide panels, an `scf.parallel` over blocks of rows,
  a KC-deep loop, and an MR x NR register-blocked FMA micro-kernel in `vector` ops.

Tile sizes come from `mlc.tiling_model` (the host's vector width and cache sizes) and
can be pinned with `tile-sizes=MR,NR,KC,MC` (NR a multiple of `vector-length`).

Every other generic on memrefs (elementwise, reductions, convolutions, integer or
batched matmuls) with enough work is split along its outermost parallel loop that
indexes its operands plainly into one block per thread (`mlc.lowering.parallel_generic`),
inside an `scf.parallel`; `convert-linalg-to-loops` then lowers each block as before.
`threads=1` turns the split off.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import AnyFloat, MemRefType, ModuleOp, NoneAttr, StridedLayoutAttr
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlc.lowering.matmul_kernels import matmul_nest, matvec_nest
from mlc.lowering.parallel_generic import split_generic, splittable_loop, total_iterations
from mlc.tiling_model import (
    PARALLEL_THRESHOLD,
    MatmulTiles,
    balanced_rows,
    matmul_tiles,
    thread_count,
)

MATMUL_MAPS = (
    AffineMap.from_callable(lambda i, k, j: (i, k)),
    AffineMap.from_callable(lambda i, k, j: (k, j)),
    AffineMap.from_callable(lambda i, k, j: (i, j)),
)


def is_row_major(type_: MemRefType) -> bool:
    """Unit stride in the last dimension: rows are contiguous."""
    layout = type_.layout
    if isinstance(layout, NoneAttr):
        return True
    if isinstance(layout, StridedLayoutAttr):
        strides = layout.get_strides()
        return bool(strides) and strides[-1] == 1
    return False


def _is_multiply_add(op: GenericOp) -> bool:
    """The body is `yield c + a * b` (or `a * b + c`) of the block arguments (a, b, c)."""
    block = op.body.block
    a, b, c = block.args
    ops = list(block.ops)
    if (
        len(ops) != 3
        or not isinstance(ops[0], arith.MulfOp)
        or not isinstance(ops[1], arith.AddfOp)
    ):
        return False
    mul, add, yield_ = ops
    if {mul.lhs, mul.rhs} != {a, b} or {add.lhs, add.rhs} != {c, mul.result}:
        return False
    return isinstance(yield_, YieldOp) and list(yield_.operands) == [add.result]


def matmul_operands(op: GenericOp) -> tuple[SSAValue, SSAValue, SSAValue] | None:
    """(A, B, C) if `op` is a float `C += A @ B` on row-major memrefs, else None."""
    if op.res or len(op.inputs) != 2 or len(op.outputs) != 1:
        return None
    maps = tuple(m.data for m in op.indexing_maps.data)
    iterators = [it.data.value for it in op.iterator_types.data]
    if maps != MATMUL_MAPS or iterators != ["parallel", "reduction", "parallel"]:
        return None
    operands = (op.inputs[0], op.inputs[1], op.outputs[0])
    types = [v.type for v in operands]
    if not all(isinstance(t, MemRefType) and is_row_major(t) for t in types):
        return None
    elements = {t.element_type for t in types if isinstance(t, MemRefType)}
    if len(elements) != 1 or not isinstance(next(iter(elements)), AnyFloat):
        return None
    return operands if _is_multiply_add(op) else None


def _static_dim(value: SSAValue, d: int) -> int | None:
    type_ = value.type
    assert isinstance(type_, MemRefType)
    size = type_.get_shape()[d]
    return size if size >= 0 else None


class TileMatmul(RewritePattern):
    """A matmul generic -> the packed micro-kernel nest, or dot products when N = 1."""

    def __init__(self, tiles: MatmulTiles | None):
        self.tiles = tiles

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter, /) -> None:
        if (operands := matmul_operands(op)) is None:
            return  # not a float matmul on row-major buffers: convert-linalg-to-loops does it
        a, b, c = operands
        c_type = c.type
        assert isinstance(c_type, MemRefType)
        element = c_type.element_type
        assert isinstance(element, AnyFloat)
        tiles = self.tiles or matmul_tiles(element.bitwidth // 8)
        n = _static_dim(b, 1)
        if n == 1:
            nest = matvec_nest(a, b, c, tiles.vector)
        elif n is not None and n < tiles.vector:
            return  # too narrow for one vector: the plain loops vectorise along j well enough
        else:
            m = _static_dim(a, 0)
            rows = tiles.mc if m is None else balanced_rows(m, tiles, thread_count())
            nest = matmul_nest(a, b, c, tiles, rows)
        for new in nest:
            for inner in new.walk():
                inner.location = op.location
        rewriter.replace(op, nest, [])


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
        if total is not None and total * len(op.body.block.ops) < PARALLEL_THRESHOLD:
            return  # too little work to pay for waking the threads
        nest = split_generic(op, d, self.threads)
        for new in nest:
            for inner in new.walk():
                if inner is not op:
                    inner.location = op.location
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

    def __post_init__(self) -> None:
        self.tiles()  # a bad option is a one-line error when the pipeline is built
        if self.threads < 0:
            raise ValueError(f"threads must be 0 (the host's) or positive, got {self.threads}")

    def tiles(self) -> MatmulTiles | None:
        """The pinned blocking, or None for the host model's."""
        if not self.tile_sizes and not self.vector_length:
            return None
        if self.tile_sizes and len(self.tile_sizes) != 4:
            raise ValueError(f"tile-sizes takes 4 values (MR,NR,KC,MC), got {len(self.tile_sizes)}")
        mr, nr, kc, mc = self.tile_sizes or (0, 0, 0, 0)
        lanes = self.vector_length or (nr // 2 if nr else 8)
        default = matmul_tiles(4)
        return MatmulTiles(
            mr or default.mr, nr or 2 * lanes, kc or default.kc, mc or default.mc, lanes
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        threads = self.threads or thread_count()
        patterns = GreedyRewritePatternApplier([TileMatmul(self.tiles()), SplitGeneric(threads)])
        PatternRewriteWalker(patterns, apply_recursively=False).rewrite_module(op)
