"""
convert-contractions-to-gpu: f32, f16 and bf16 matmul-like `linalg.generic`s to tiled
`gpu.launch`es.

The generic loop mapping (`convert-linalg-to-parallel-loops`) gives each thread a few
outputs and reads every operand through L1; a matmul then runs at a sixth of cuBLAS.
Each contraction this pass matches (`mlc.lowering.gpu.contraction.match`: f32, one
reduction dim, `acc + a * b`, batch dims in front, fused epilogues) becomes instead the
classic shared-memory kernel of `mlc.lowering.gpu.contraction.tiled_kernel`, in two variants:

- `tile` (default 128x128 outputs a block, 8x8 a thread, K slices of 8) for big
  outputs; with `blocks-per-sm` above 1 its launch is marked `nvvm.minctasm`, so that
  the register allocator leaves room for that many resident blocks per SM;
- `small-tile` (default 64x64, 8x4 a thread, K slices of 16 shared by two groups of
  threads, 3 slices in flight through `cp.async`) when the big grid has fewer than
  `few-blocks` blocks (an MLP's 8192x128 output has 64: half an H100 idle); the groups
  give each SM twice the warps to hide latency with.

With `tf32=true` (reduced precision, allowed by the user: `mlc.compile(...,
allow_tf32=True)`), both variants multiply on the tensor cores instead
(`mlc.lowering.gpu.contraction.mma`: 128x128 and 64x64 tiles of 64x32 warp tiles, tf32
`mma.sync`, f32 accumulators, 4 slices in flight through `cp.async`); the tile options
are then not used.

f16 and bf16 contractions (`Contraction.half`) always multiply on the tensor cores
(`mlc.lowering.gpu.contraction.mma_half`: `ldmatrix` fragments, `mma.sync.m16n8k16`,
f32 accumulators; `HALF_TILE` and `HALF_SMALL_TILE`, which no option changes); below
sm_80 they are left to the loop mapping with a remark.

With `wgmma=auto` and `sm=90`, 16-bit matmuls of static sizes (multiples of 8) take
the Hopper kernel instead (`mlc.lowering.gpu.contraction.wgmma_kernel`: warpgroups
multiplying by `wgmma.mma_async` from 128-byte swizzled shared slices, `WGMMA_TILE` or
`wgmma-tile=ROWS,COLS,STAGES`; its PTX needs sm_90a); those it declines keep mma.sync,
with a remark: 0.91x cuBLAS at 8192 on an H200, against mma.sync's 0.38x
(bench/results/gpu-wgmma.md). With `tf32=true` too, f32 matmuls of static sizes
(multiples of 4) take it in tf32 (`m64nNk8`, 32-deep slices); tf32 reads both
operands K-major, so a row-major B (a transposed A) is transposed first
(`mlc.lowering.gpu.contraction.kmajor_operand`: at compile time for a constant, else
by a tiled transpose kernel into a temporary freed after the matmul). `auto` is the
default; `wgmma=off` keeps mma.sync. With `wgmma-tma=true`, the wgmma kernel's
operands (16-bit or tf32, batched or not) are copied by TMA from a producer warpgroup
instead of by every thread's cp.async (`mlc.lowering.gpu.contraction.wgmma_tma`:
tensor maps made by the host before the launch, mbarriers between producer and
consumers, `setmaxnreg`); what it declines (batch dims inside an operand's matrix)
keeps cp.async, with a remark. It is the default.

`sm` is the target's compute capability (default 80: the kernels run on sm_80 and
later). Below 80 there is no `cp.async` and no tf32 `mma.sync`: every tile is built
with its slices staged through registers (stages dropped), and `tf32=true` declines to
f32 with a remark on each contraction.

A 2-D convolution generic becomes the same kernel as an implicit GEMM
(`mlc.lowering.gpu.contraction.conv_match`: filters x output pixels x (c, kh, kw), the image
gathered as it is staged, padding read as a predicate so the padded copy goes), with
tiles whose rows follow the filter count (`CONV_TILES`); what it declines is left to
the loop mapping with a remark saying why. f16 and bf16 convolutions take the 16-bit
tensor-core tiles (`HALF_CONV_TILE` for at most 64 filters, `HALF_CONV_SMALL_TILE`
for small grids), the image gathered into the shared tile as it is staged
(`mlc.lowering.gpu.contraction.conv_half_staging`).

Both are compiled; the choice is one `scf.if` on the host. When the sizes are static
the choice is made here: only the chosen variant is built (a tiled kernel is thousands
of ops for every later pass), the other branch left empty for canonicalize to fold.
A tile option is `ROWS,COLS,THREAD_ROWS,THREAD_COLS,DEPTH[,GROUPS[,STAGES]]`
(STAGES: slices in flight through `cp.async`, sm_80 and later; 0: through registers).
When a fill generic (a constant, as the zeros `convert-ml-to-linalg` starts a matmul
from) writes the output just before, the accumulators start at that constant and the
fill is dropped. Contractions whose sizes are all static with fewer than `SMALL_OUTPUT` outputs
are left to the loop mapping, which gives each output a warp, and so are those with at
most `NARROW_COLUMNS` static columns, which it gives a warp a row.
"""

import operator
from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i32
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.convert_linalg_to_loops import materialize_loop_bound

from mlc.diagnostics import op_remark
from mlc.gpu_architectures import ASYNC_COPY_SM, COMPUTE_CAPABILITIES
from mlc.lowering.gpu.contraction.conv_half_staging import pointwise
from mlc.lowering.gpu.contraction.conv_match import match_conv
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.kmajor_operand import make_k_major
from mlc.lowering.gpu.contraction.match import Contraction, match
from mlc.lowering.gpu.contraction.tile_shape import TileShape
from mlc.lowering.gpu.contraction.tiled_kernel import grid, kernel_body
from mlc.lowering.gpu.contraction.wgmma_kernel import WGMMA_SM, WgmmaShape, declined
from mlc.lowering.gpu.contraction.wgmma_kernel import launch as wgmma_launch
from mlc.lowering.gpu.contraction.wgmma_staging import k_major
from mlc.lowering.gpu.contraction.wgmma_tma import launch as tma_launch
from mlc.lowering.gpu.contraction.wgmma_tma import tma_declined

BIG_TILE = TileShape(128, 128, 8, 8, 8)
# A 3-deep cp.async pipeline: the MLP's first layer 50 against 56 us on an H100. The
# big tile stays register-staged: with 3 or 4 stages it ran at 37 against 43 TFLOP/s.
SMALL_TILE = TileShape(64, 64, 8, 4, 16, groups=2, stages=3)
# tf32 tiles copy 4 slices ahead (cp.async): 104 against 79 TFLOP/s at 4096 on an H100;
# blocks launched 8 tile rows at a time (`TileShape.block_group`): 111 against 106 at
# 8192 on an H200.
TF32_TILE = TileShape(128, 128, 8, 8, 8, tf32=True, stages=4, block_group=8)  # 8 warps of 64x32
TF32_SMALL_TILE = TileShape(64, 64, 8, 8, 8, tf32=True, stages=4)  # 2 warps of 64x32
# f16 and bf16 (`mma.sync.m16n8k16`): 16-deep slices (one mma step) 4 in flight, 128
# registers a thread, two blocks an SM; the small tile takes 32-deep slices. At 8192 on
# an H200 (f16): 237 TFLOP/s before the 32-bit shared addresses (`half_staging`), 260
# with them, 300 with the blocks launched 8 tile rows at a time (`block_group`). 32-deep
# slices (2 or 3 stages) took 168 to 240 registers, one block an SM: 152 to 200.
HALF_TILE = TileShape(128, 128, 8, 8, 16, half=True, stages=4, block_group=8)  # 8 warps
HALF_SMALL_TILE = TileShape(64, 64, 8, 8, 32, half=True, stages=4)  # 2 warps of 64x32
# A 16-bit convolution of at most 64 filters: 64 rows (one warp tile) by 128 pixels.
HALF_CONV_TILE = TileShape(64, 128, 8, 8, 16, half=True, stages=4, block_group=8)  # 4 warps
# Its small-grid tile when the image is gathered through registers: 16 deep, half the
# staged values of the matmul's 32-deep one (which ptxas spilled at 255 registers).
HALF_CONV_SMALL_TILE = TileShape(64, 64, 8, 8, 16, half=True, stages=4)
# sm_90a, 16-bit matmuls with `wgmma=auto` (`wgmma_kernel`): 2 warpgroups of 64x256.
WGMMA_TILE = WgmmaShape(128, 256, stages=4, block_group=8)
FEW_BLOCKS = 264  # fewer big blocks than this (2 per SM of an H100): small tiles
# The big kernel's launch bound (nvvm.minctasm): 2 caps it at 128 registers, but on an
# H100 that ran no faster than one block an SM (36.4 against 37.5 TFLOP/s at 4096).
BLOCKS_PER_SM = 1
DEFAULT_SM = 80  # the compute capability kernels are built for: cp.async and tf32 mma
MIN_BLOCKS_ATTR = "nvvm.minctasm"  # on a launch: blocks per SM its kernel is built for
# A convolution's tiles by its filters (rows): a 128-row tile would leave most of its
# threads idle on the 16 or 32 filters of a small CNN. Columns are output pixels. The
# small-grid variants are narrow and 16 deep: on an H100 they ran 10-13% faster than
# 64 pixels 8 deep on the CNN's 16- and 32-filter layers at batch 32 (few blocks: each
# slice's load latency is what they wait on), bench/results/gpu.md.
CONV_TILES = (
    (16, (TileShape(16, 128, 4, 4, 8), TileShape(16, 32, 4, 4, 16))),
    (32, (TileShape(32, 128, 4, 8, 8), TileShape(32, 32, 4, 4, 16))),
    (64, (TileShape(64, 128, 8, 8, 8), SMALL_TILE)),
)


class ContractionToTiledLaunch(RewritePattern):
    """One matched contraction to tiled `gpu.launch`es (module docstring)."""

    def __init__(
        self,
        big: TileShape,
        small: TileShape,
        few_blocks: int,
        blocks_per_sm: int,
        sm: int = DEFAULT_SM,
        declined_tf32: bool = False,
        wgmma: WgmmaShape | None = None,
    ):
        self.big, self.small = big, small
        self.few_blocks, self.blocks_per_sm = few_blocks, blocks_per_sm
        self.sm, self.declined_tf32 = sm, declined_tf32
        self.wgmma = wgmma  # the sm_90a kernel's shape for 16-bit matmuls, or None

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        if (contraction := match(op) or match_conv(op)) is None or self.left(contraction):
            return
        host = Emitter(rewriter, InsertPoint.before(op), op)
        conv = contraction.conv
        padded = op.operands[contraction.b] if conv is not None and conv.padding_ops else None
        bounds = [  # a padded image's batch and channels: the unpadded one's, which stays
            materialize_loop_bound(
                rewriter, host.point, conv.source if operand is padded else operand, dim, size
            )
            for operand, dim, size in op.get_loop_bound_sources()
        ]
        batch = host.index(1)
        for dim in contraction.batch:
            batch = host.mul(batch, bounds[dim])
        if self.took_wgmma(host, contraction, bounds, batch):
            return erase_absorbed(rewriter, contraction)
        one = host.index(1)
        shapes = (HALF_TILE, HALF_SMALL_TILE) if contraction.half else (self.big, self.small)
        if conv is not None:
            bounds += conv.merged_bounds(host, bounds)
            filters = op.get_static_loop_ranges()[conv.f]
            shapes = self.conv_shapes(filters, contraction.half, not pointwise(contraction))
        bounded = shapes[0] is self.big and self.blocks_per_sm > 1  # nvvm.minctasm
        if self.sm < ASYNC_COPY_SM:  # no cp.async: slices through registers
            shapes = tuple(replace(shape, stages=0) for shape in shapes)
        grids = [grid(host, contraction, bounds, batch, s.rows, s.cols) for s in shapes]
        x, y, z = grids[0]
        big_blocks = host(arith.MuliOp(host(arith.MuliOp(x, y)), z))
        big = host(arith.CmpiOp(big_blocks, host.index(self.few_blocks), "uge"))
        branches = (Block(), Block())
        host(scf.IfOp(big, [], [branches[0]], [branches[1]]))
        # Static sizes decide now: the other variant would be built only to be folded away.
        count = static_index(big_blocks)
        wanted = None if count is None else 0 if count >= self.few_blocks else 1
        for index, (shape, blocks, branch) in enumerate(zip(shapes, grids, branches, strict=True)):
            inside = host.region(branch)
            if wanted is not None and index != wanted:
                inside(scf.YieldOp())
                continue
            body = Block(arg_types=[IndexType()] * 12)
            launch = gpu.LaunchOp(Region(body), blocks, [inside.index(shape.threads), one, one])
            if bounded and shape is shapes[0]:
                launch.attributes[MIN_BLOCKS_ATTR] = IntegerAttr(self.blocks_per_sm, i32)
            inside(launch)
            inside(scf.YieldOp())
            kernel_body(host.region(body), contraction, bounds, batch, shape)
        erase_absorbed(rewriter, contraction)

    def left(self, contraction: Contraction) -> bool:
        """Whether `contraction` is left to the loop mapping (16-bit below sm_80), with a
        remark, as a tf32 one declined to f32 gets."""
        op = contraction.op
        if contraction.half and self.sm < ASYNC_COPY_SM:
            op_remark(
                op, f"16-bit contraction left to the loop mapping: sm_{self.sm} has no "
                "m16n8k16 mma.sync (sm_80 on)",
            )  # fmt: skip
            return True
        if self.declined_tf32 and not contraction.half:
            op_remark(op, f"tf32 declined: sm_{self.sm} has no tf32 mma (sm_80 on); f32 FMAs")
        return False

    def took_wgmma(
        self, host: Emitter, c: Contraction, bounds: list[SSAValue], batch: SSAValue
    ) -> bool:
        """Whether the wgmma kernel (`wgmma=auto` on sm_90) took `c`: its launch is at
        `host`. A 16-bit contraction it declines (a tf32 one with `tf32=true`) gets a
        remark saying why."""
        tf32 = self.big.tf32
        if self.wgmma is None or not (c.half or tf32) or c.conv is not None:
            return False
        if (why := declined(c, self.wgmma, tf32)) is not None:
            op_remark(c.op, f"wgmma declined: {why}; mma.sync")
            return False
        shape = self.wgmma
        if shape.tma and (why := tma_declined(c, shape)) is not None:
            op_remark(c.op, f"wgmma TMA declined: {why}; cp.async copies")
            shape = replace(shape, tma=False)
        frees = []
        if not c.half:  # tf32 reads both operands K-major: one not is transposed first
            for operand, extent in ((c.a, c.rows), (c.b, c.cols)):
                if not k_major(c.op, operand, c.k, extent):
                    frees += make_k_major(host, c.op, operand)
        (tma_launch if shape.tma else wgmma_launch)(host, c, bounds, batch, shape)
        for free in frees:  # the K-major copy, once the kernel is done
            host(free)
        return True

    def conv_shapes(
        self, filters: int, half: bool = False, gathered: bool = True
    ) -> tuple[TileShape, TileShape]:
        """A convolution's tiles: as many rows as its filters need (1 to 4 row groups);
        16-bit ones with a gathered image take 16-deep small tiles."""
        if half:
            small = HALF_CONV_SMALL_TILE if gathered else HALF_SMALL_TILE
            return (HALF_CONV_TILE if 0 < filters <= 64 else HALF_TILE), small
        if self.big.tf32:
            return self.big, self.small
        for most, shapes in CONV_TILES:
            if 0 < filters <= most:
                return shapes
        return self.big, self.small


def static_index(value: SSAValue) -> int | None:
    """The value of an index computed by the host from constants (a grid size), or None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return owner.value.value.data
    if not isinstance(owner, arith.SignlessIntegerBinaryOperation):
        return None
    operation = _STATIC_INDEX_OPS.get(type(owner))
    lhs, rhs = static_index(owner.lhs), static_index(owner.rhs)
    if operation is None or lhs is None or rhs is None:
        return None
    return operation(lhs, rhs)


_STATIC_INDEX_OPS = {  # what the host's grid sizes are made of (non-negative indices)
    arith.AddiOp: operator.add,
    arith.MuliOp: operator.mul,
    arith.DivUIOp: operator.floordiv,
    arith.MaxUIOp: max,
}


def erase_absorbed(rewriter: PatternRewriter, contraction: Contraction) -> None:
    """Erase the contraction's generic and what its kernel absorbed: a fill, a
    convolution's padded copy (its fill and buffer) and its bias broadcast."""
    op, conv = contraction.op, contraction.conv
    if conv is not None:
        read = ([conv.source] if conv.padding_ops else []) + (
            [conv.bias.inputs[0]] if conv.bias is not None else []
        )
        for value in read:
            keep_alive(rewriter, value, op)
    rewriter.erase(op)
    absorbed = [contraction.fill] if contraction.fill is not None else []
    if conv is not None:
        absorbed += conv.padding_ops + ([conv.bias] if conv.bias is not None else [])
    for other in absorbed:
        rewriter.erase(other)


def keep_alive(rewriter: PatternRewriter, value: SSAValue, op: GenericOp) -> None:
    """
    Move a dealloc of `value` that comes before the convolution (the padded copy or the
    bias broadcast it absorbs was its last use) to just after it: the kernel reads it.
    """
    for use in list(value.uses):
        free = use.operation
        if not isinstance(free, memref.DeallocOp) or free.parent_block() is not op.parent_block():
            continue
        if free.is_before_in_block(op):
            free.detach()
            rewriter.insert(free, InsertPoint.after(op))


def _shape(option: str, sizes: tuple[int, ...]) -> TileShape:
    if len(sizes) not in (5, 6, 7):
        raise ValueError(
            f"{option} takes ROWS,COLS,THREAD_ROWS,THREAD_COLS,DEPTH[,GROUPS[,STAGES]], "
            f"got {list(sizes)}"
        )
    if min(sizes[:5]) < 1:
        raise ValueError(f"{option}={','.join(map(str, sizes))}: tile sizes must be positive")
    groups = sizes[5] if len(sizes) > 5 else 1
    shape = TileShape(*sizes[:5], groups=groups, stages=sizes[6] if len(sizes) > 6 else 0)
    if (problem := shape.problem()) is not None:
        raise ValueError(f"{option}={','.join(map(str, sizes))}: {problem}")
    return shape


def _wgmma_shape(sizes: tuple[int, ...], tma: bool = False) -> WgmmaShape:
    if len(sizes) != 3:
        raise ValueError(f"wgmma-tile takes ROWS,COLS,STAGES, got {list(sizes)}")
    shape = WgmmaShape(*sizes, tma=tma)
    if (problem := shape.problem()) is not None:
        feed = " with wgmma-tma" if tma else ""
        raise ValueError(f"wgmma-tile={','.join(map(str, sizes))}{feed}: {problem}")
    return shape


def _fields(shape: TileShape) -> tuple[int, ...]:
    fields = (shape.rows, shape.cols, shape.thread_rows, shape.thread_cols, shape.depth)
    if shape.stages:
        return (*fields, shape.groups, shape.stages)
    return fields + ((shape.groups,) if shape.groups > 1 else ())


@dataclass(frozen=True)
class ConvertContractionsToGPUPass(ModulePass):
    """f32 contraction generics on memrefs to shared-memory tiled kernels (module docstring)."""

    name = "convert-contractions-to-gpu"

    tile: tuple[int, ...] = _fields(BIG_TILE)
    small_tile: tuple[int, ...] = _fields(SMALL_TILE)
    few_blocks: int = FEW_BLOCKS
    blocks_per_sm: int = BLOCKS_PER_SM
    tf32: bool = False
    sm: int = DEFAULT_SM
    wgmma: str = "auto"
    wgmma_tile: tuple[int, ...] = (WGMMA_TILE.rows, WGMMA_TILE.cols, WGMMA_TILE.stages)
    wgmma_tma: bool = True

    def __post_init__(self) -> None:
        if self.sm not in COMPUTE_CAPABILITIES:
            known = ", ".join(map(str, COMPUTE_CAPABILITIES))
            raise ValueError(f"sm={self.sm}: not a compute capability mlc targets ({known})")
        if self.wgmma not in ("auto", "off"):
            raise ValueError(f"wgmma={self.wgmma}: auto or off")
        _wgmma_shape(self.wgmma_tile, self.wgmma_tma)
        _shape("tile", self.tile)
        _shape("small-tile", self.small_tile)
        if self.few_blocks < 0 or not 1 <= self.blocks_per_sm <= 32:
            raise ValueError(
                f"few-blocks must be >= 0 and blocks-per-sm in [1, 32], got "
                f"{self.few_blocks} and {self.blocks_per_sm}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        tf32 = self.tf32 and self.sm >= ASYNC_COPY_SM
        if tf32:
            big, small = TF32_TILE, TF32_SMALL_TILE
        else:
            big, small = _shape("tile", self.tile), _shape("small-tile", self.small_tile)
        wgmma = self.wgmma == "auto" and self.sm == WGMMA_SM  # sm_90a alone has wgmma
        pattern = ContractionToTiledLaunch(
            big, small, self.few_blocks, self.blocks_per_sm, self.sm, self.tf32 and not tf32,
            _wgmma_shape(self.wgmma_tile, self.wgmma_tma) if wgmma else None,
        )  # fmt: skip
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
