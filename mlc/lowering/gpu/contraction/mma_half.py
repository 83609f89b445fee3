"""
The 16-bit tensor-core step of the GPU's tiled contraction kernel: f16 or bf16 operands
multiplied by `mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}` into f32 accumulators
(sm_80 and later), fragments loaded from the shared tiles (`half_staging`) by
`ldmatrix.sync.aligned.m8n8.x4` (`.trans` for a tile laid out `[k, extent]`).

`ldmatrix` reads a 32-bit shared-window address (`half_staging.shared_address`).
Both are inline PTX (`llvm.inline_asm`): xDSL has no NVVM dialect, the NVVM
`ldmatrix` intrinsics take typed shared-space pointers xDSL cannot cast to, and the
registers are plain b32 pairs of 16-bit values for f16 and bf16 alike, so the kernel
never computes on a 16-bit value until its epilogue.

The warps tile the block as the tf32 path's (`mma`): 64x32 warp tiles, 4 x 4 mma tiles
of 16x8, a lane owning rows `g + 8h + 16i` and columns `2t + j + 8n` of its warp tile
(`g = lane / 4`, `t = lane % 4`). Per 16-deep step a warp loads, with one `ldmatrix.x4`
each, every 16x16 (rows x k) A fragment of its 4 mma rows and every 16x16 (k x
columns) B fragment of 2 pairs of mma columns: lane `l` gives the address of row
`l % 8` of 8x8 matrix `l / 8`, and receives in register `q` its pair of matrix `q`.
For A, matrix `q` is rows `8 (q % 2)`, k `8 (q / 2)`: the registers are the `a0..a7`
pairs in PTX's order; for B, columns `8 (q / 2)`, k `8 (q % 2)`: registers 0, 1 are
`b0..b3` of the first 8 columns, 2, 3 of the next.
"""

from xdsl.dialects import llvm
from xdsl.dialects.builtin import BFloat16Type, DenseArrayBase, f32, i32, i64
from xdsl.ir import SSAValue

from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.half_staging import HalfStaging, shared_address
from mlc.lowering.gpu.contraction.tile_shape import MMA_COLS, MMA_ROWS

FRAGMENTS = llvm.LLVMStructType.from_type_list([i32] * 4)
ACCUMULATORS = llvm.LLVMStructType.from_type_list([f32] * 4)
Lanes = tuple[SSAValue, SSAValue, SSAValue, SSAValue]  # g, t, the warp tile's row, column


def _ldmatrix(transposed: bool) -> str:
    trans = ".trans" if transposed else ""
    return f"ldmatrix.sync.aligned.m8n8.x4{trans}.shared.b16 {{$0, $1, $2, $3}}, [$4];"


def _mma(element: str) -> str:
    return (
        f"mma.sync.aligned.m16n8k16.row.col.f32.{element}.{element}.f32 "
        "{$0, $1, $2, $3}, {$4, $5, $6, $7}, {$8, $9}, {$10, $11, $12, $13};"
    )


def _fields(e: Emitter, value: SSAValue, type_, count: int = 4) -> list[SSAValue]:
    return [
        e(llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [q]), value, type_))
        for q in range(count)
    ]


def _fragments(
    e: Emitter,
    staging: HalfStaging,
    buffer: SSAValue,
    kk: int,
    first: SSAValue,
    matrix: tuple[SSAValue, SSAValue],
) -> list[SSAValue]:
    """
    One `ldmatrix.x4` of the 16x16 block at extent `first`, k `kk` of tile `buffer`;
    `matrix` is this lane's (extent, k) offset of its row's 8x8 matrix (module docstring).
    """
    assert staging.tile is not None
    along_offset, k_offset = matrix
    along = e.add(first, along_offset)
    k = e.add(k_offset, kk)
    address = shared_address(e, staging.tile, staging.at(buffer, k, along))
    return ldmatrix_x4(e, address, not staging.tile_along_k)


def ldmatrix_x4(e: Emitter, address: SSAValue, transposed: bool) -> list[SSAValue]:
    """
    `ldmatrix.x4` (`.trans` if `transposed`) at this lane's 32-bit shared address
    `address` (the row `lane % 8` of 8x8 matrix `lane / 8`): register `q` holds this
    lane's pair of matrix `q`, 4 b32 values.
    """
    load = llvm.InlineAsmOp(
        _ldmatrix(transposed),
        "=r,=r,=r,=r,r,~{memory}",
        [address],
        [FRAGMENTS],
        has_side_effects=True,  # stays between the barriers that publish the tile
    )
    return _fields(e, e(load), i32)


def mma_m16n8k16(
    e: Emitter, element: str, a: list[SSAValue], b: list[SSAValue], c: list[SSAValue]
) -> list[SSAValue]:
    """`d = a·b + c` for one 16x8 tile, 16 deep: 4 b32 `a`, 2 b32 `b`, 4 f32 `c` and `d`
    in PTX's fragment layouts; `element` is `f16` or `bf16`."""
    constraints = ",".join(["=f"] * 4 + ["r"] * 6 + ["f"] * 4)
    result = e(llvm.InlineAsmOp(_mma(element), constraints, [*a, *b, *c], [ACCUMULATORS]))
    return _fields(e, result, f32)


def lane_matrices(
    e: Emitter, stagings: tuple[HalfStaging, HalfStaging], lane: SSAValue
) -> list[tuple[SSAValue, SSAValue]]:
    """Per operand, the (extent, k) offset of the matrix row lane `lane` addresses."""
    row, matrix = e.rem(lane, 8), e.div(lane, 8)
    low, high = e.mul(e.rem(matrix, 2), 8), e.mul(e.div(matrix, 2), 8)
    offsets = []
    for staging, (along_half, k_half) in zip(stagings, ((low, high), (high, low)), strict=True):
        if staging.tile_along_k:  # rows of the matrices are the tile's rows
            offsets.append((e.add(along_half, row), k_half))
        else:  # rows of the matrices are k
            offsets.append((along_half, e.add(k_half, row)))
    return offsets


def half_mma_step(
    e: Emitter,
    stagings: tuple[HalfStaging, HalfStaging],
    buffer: SSAValue,
    kk: int,
    accs: list[SSAValue],
    lanes: Lanes,
    matrices: list[tuple[SSAValue, SSAValue]],
) -> None:
    """One 16-deep step of a warp tile: 16 `mma.sync`s into `accs` (8 x 8, row-major)."""
    a_tiles, b_tiles = stagings
    _, _, warp_row, warp_col = lanes
    element = "bf16" if isinstance(a_tiles.element, BFloat16Type) else "f16"
    a_fragments = [
        _fragments(e, a_tiles, buffer, kk, e.add(warp_row, i * MMA_ROWS), matrices[0])
        for i in range(4)
    ]
    b_fragments = []
    for pair in range(2):
        loaded = _fragments(
            e, b_tiles, buffer, kk, e.add(warp_col, 2 * pair * MMA_COLS), matrices[1]
        )
        b_fragments += [loaded[:2], loaded[2:]]
    for i, a in enumerate(a_fragments):
        for n, b in enumerate(b_fragments):
            slots = [(2 * i + h) * 8 + 2 * n + j for h in range(2) for j in range(2)]
            result = mma_m16n8k16(e, element, a, b, [accs[s] for s in slots])
            for slot, value in zip(slots, result, strict=True):
                accs[slot] = value
