"""
The tensor-core (tf32 `mma.sync`) inner step of the GPU's tiled contraction kernel.

With `TileShape.tf32`, the tiled kernel (`tiled_kernel`) keeps its shared-memory tiles
(`tile_staging`) and K slices but multiplies them with NVVM's
`llvm.nvvm.mma.m16n8k8.row.col.tf32` (`mma.sync.aligned.m16n8k8`, sm_80 and later)
instead of `math.fma`. The block's warps form a grid of 64x32 warp tiles, each
4 x 4 mma tiles of 16x8; per 8-deep step a lane (group `g = lane / 4`, thread
`t = lane % 4` of PTX's fragment layouts) reads its A fragment `A[g (+8), t (+4)]`
and B fragment `B[t (+4), g]` from shared memory, rounds them to tf32
(`llvm.nvvm.f2tf32.rna`: `cvt.rna.tf32.f32`) and accumulates `C[g (+8), 2t (+1)]` in
f32. So a lane owns rows `g + 8h + 16i` and columns `2t + j + 8n` of its warp tile:
still a Cartesian product of 8 rows and 8 columns, stored (and finished by a fused
epilogue) as the FMA kernel's are.

tf32 keeps 10 bits of mantissa: products are rounded, sums stay f32. It is used only
when asked for (`convert-contractions-to-gpu{tf32=true}`), as torch's
`allow_tf32`.
"""

from xdsl.dialects import llvm, memref
from xdsl.dialects.builtin import DenseArrayBase, f32, i32, i64
from xdsl.ir import SSAValue

from mlc.gpu_architectures import WARP
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.tile_shape import (
    MMA_COLS,
    MMA_ROWS,
    WARP_COLS,
    WARP_ROWS,
    TileShape,
)
from mlc.lowering.gpu.contraction.tile_staging import Staging

FRAGMENT = llvm.LLVMStructType.from_type_list([f32] * 4)
Lanes = tuple[SSAValue, SSAValue, SSAValue, SSAValue]  # g, t, the warp tile's row, column


def lane_rows_cols(
    emit: Emitter, shape: TileShape, row0: SSAValue, col0: SSAValue, tid: SSAValue
) -> tuple[list[SSAValue], list[SSAValue], Lanes]:
    """A lane's output rows and columns (module docstring), and where its fragments are."""
    warps_across = shape.cols // WARP_COLS
    warp, lane = emit.div(tid, WARP), emit.rem(tid, WARP)
    warp_row = emit.mul(emit.div(warp, warps_across), WARP_ROWS)
    warp_col = emit.mul(emit.rem(warp, warps_across), WARP_COLS)
    g, t = emit.div(lane, 4), emit.rem(lane, 4)
    first_row = emit.add(emit.add(row0, warp_row), g)
    first_col = emit.add(emit.add(col0, warp_col), emit.mul(t, 2))
    rows = [emit.add(first_row, i * MMA_ROWS + h * 8) for i in range(4) for h in range(2)]
    cols = [emit.add(first_col, n * MMA_COLS + j) for n in range(4) for j in range(2)]
    return rows, cols, (g, t, warp_row, warp_col)


def _tf32(e: Emitter, staging: Staging, buffer: SSAValue, k: SSAValue, along: SSAValue) -> SSAValue:
    """A shared tile's float at step `k`, row (or column) `along`, rounded to tf32."""
    assert staging.tile is not None
    value = e(memref.LoadOp.get(staging.tile, staging.at(buffer, k, along)))
    return e(llvm.CallIntrinsicOp("llvm.nvvm.f2tf32.rna", [value], [i32]))


def mma_step(
    e: Emitter,
    stagings: tuple[Staging, Staging],
    buffer: SSAValue,
    kk: int,
    accs: list[SSAValue],
    lanes: Lanes,
) -> None:
    """One 8-deep step of a warp tile: 16 `mma.sync`s into `accs` (8 x 8, row-major)."""
    a_tiles, b_tiles = stagings
    g, t, warp_row, warp_col = lanes
    k_low, k_high = e.add(t, kk), e.add(t, kk + 4)
    a_fragments = []
    for i in range(4):
        row = e.add(e.add(warp_row, g), i * MMA_ROWS)
        row8 = e.add(row, 8)
        places = ((k_low, row), (k_low, row8), (k_high, row), (k_high, row8))
        a_fragments.append([_tf32(e, a_tiles, buffer, k, r) for k, r in places])
    b_fragments = []
    for n in range(4):
        col = e.add(e.add(warp_col, g), n * MMA_COLS)
        b_fragments.append([_tf32(e, b_tiles, buffer, k, col) for k in (k_low, k_high)])
    for i, a in enumerate(a_fragments):
        for n, b in enumerate(b_fragments):
            slots = [(2 * i + h) * 8 + 2 * n + j for h in range(2) for j in range(2)]
            operands = [*a, *b, *(accs[s] for s in slots)]
            call = llvm.CallIntrinsicOp("llvm.nvvm.mma.m16n8k8.row.col.tf32", operands, [FRAGMENT])
            result = e(call)
            for index, slot in enumerate(slots):
                position = DenseArrayBase.from_list(i64, [index])
                accs[slot] = e(llvm.ExtractValueOp(position, result, f32))
