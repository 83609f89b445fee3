"""
The shapes the GPU's tiled contraction kernel (`mlc.lowering.gpu.contraction.tiled_kernel`) is
built for: a block's output tile, each thread's part of it, the K slice depth, the
groups of threads sharing each slice, the depth of its `cp.async` pipeline, and why a
shape cannot be built; and the warp and `mma.sync` tiles the tensor-core paths build on
(tf32 `m16n8k8`, 16-bit `m16n8k16`).
"""

from dataclasses import dataclass

from mlc.lowering.gpu.contraction.tile_staging import QUAD, half_tile_bytes, tile_bytes

SHARED_BYTES = 48 * 1024  # static shared memory a block may have
# The tensor-core path (`mlc.lowering.gpu.contraction.mma`): a warp's tile of the block's
# output, and the `mma.sync.m16n8k8` tile it is made of.
WARP_ROWS, WARP_COLS = 64, 32
MMA_ROWS, MMA_COLS, MMA_DEPTH = 16, 8, 8
HALF_MMA_DEPTH = 16  # `mma.sync.m16n8k16` on f16 and bf16 (`mma_half`)


@dataclass(frozen=True)
class TileShape:
    """A block's output tile, each thread's part of it, and the K slice depth."""

    rows: int
    cols: int
    thread_rows: int
    thread_cols: int
    depth: int = 8
    tf32: bool = False  # tensor cores (`mlc.lowering.gpu.contraction.mma`) instead of `math.fma`
    groups: int = 1  # thread groups sharing each slice's K steps (`_Kernel._reduce`)
    # Slices in shared memory at once, copied by `cp.async` (sm_80 and later) where the
    # operands allow 16-byte copies; 0: slices pass through registers, two buffers.
    stages: int = 0
    # 16-bit operands (f16, bf16) on the tensor cores (`mlc.lowering.gpu.contraction.mma_half`)
    half: bool = False
    # Blocks launched in groups of this many tile rows, column by column (0: row by row),
    # so that the blocks resident at once share their A and B panels in L2.
    block_group: int = 0

    @property
    def tensor_cores(self) -> bool:
        """Whether the warps multiply with `mma.sync` (64x32 warp tiles) instead of FMAs."""
        return self.tf32 or self.half

    @property
    def buffers(self) -> int:
        """Slices each operand's shared tile holds."""
        return max(2, self.stages)

    @property
    def group_threads(self) -> int:
        """Threads of one group: one a `thread_rows x thread_cols` patch of the tile."""
        return (self.rows // self.thread_rows) * (self.cols // self.thread_cols)

    @property
    def threads(self) -> int:
        return self.groups * self.group_threads

    @property
    def outputs(self) -> int:
        return self.thread_rows * self.thread_cols

    def problem(self) -> str | None:
        """Why this shape cannot be built, or None."""
        if self.thread_rows % QUAD or self.thread_cols % QUAD:
            return "thread tiles must be multiples of 4 in both dims"
        if self.rows % self.thread_rows or self.cols % self.thread_cols:
            return "the block tile must be a multiple of the thread tile"
        if (self.rows // self.thread_rows) % QUAD or (self.cols // self.thread_cols) % QUAD:
            return "a block needs a multiple of 4 threads along rows and columns"
        if not 32 <= self.threads <= 1024:
            return f"{self.threads} threads a block (32 to 1024 allowed)"
        if self.tensor_cores and (problem := self._tensor_core_problem()) is not None:
            return problem
        if self.groups < 1 or self.depth % (QUAD * self.groups):
            return "the K slice depth must be a multiple of 4 steps a group"
        if self.stages == 1 or self.stages < 0:
            return "stages must be 0 (through registers) or 2 and more (cp.async)"
        runs = [extent * self.depth // self.threads for extent in (self.rows, self.cols)]
        if self.stages and any(run % QUAD for run in runs):
            return "cp.async stages need runs of 4 floats a thread (rows x depth / threads)"
        return self._sharing_problem()

    def _tensor_core_problem(self) -> str | None:
        """Why this tf32 or 16-bit (`mma.sync`) shape cannot be built, or None."""
        if self.tf32 and self.half:
            return "a tile is tf32 or 16-bit, not both"
        kind, steps = ("16-bit", HALF_MMA_DEPTH) if self.half else ("tf32", MMA_DEPTH)
        if (
            (self.thread_rows, self.thread_cols) != (8, 8)
            or self.rows % WARP_ROWS
            or self.cols % WARP_COLS
            or self.depth % steps
        ):
            return f"{kind} tiles are 64x32 warp tiles of 8x8 a thread, {steps}-deep steps"
        if self.groups != 1:
            return f"{kind} tiles take one group"
        if self.half and self.stages < 2:
            return "16-bit tiles take a cp.async pipeline (2 stages or more)"
        return None

    def _sharing_problem(self) -> str | None:
        """Why the threads cannot share the copies, or shared memory cannot hold it all."""
        for extent in (self.rows, self.cols):
            copies = extent * self.depth // self.threads
            if copies == 0 or self.depth % copies or extent % copies:
                return "the threads cannot share the slice copies evenly"
        sums = 4 * (self.groups - 1) * self.outputs * self.group_threads
        size = half_tile_bytes if self.half else tile_bytes
        tiles = [size(e, self.depth, self.buffers) for e in (self.rows, self.cols)]
        used = sum(tiles) + sums
        if used > SHARED_BYTES:
            return f"{used} bytes of shared memory a block ({SHARED_BYTES} allowed)"
        return None

    def __str__(self) -> str:
        text = f"{self.rows}x{self.cols}/{self.thread_rows}x{self.thread_cols}/{self.depth}"
        text += f"/{self.groups}" if self.groups > 1 or self.stages else ""
        text += f"/{self.stages}" if self.stages else ""
        text += f"/g{self.block_group}" if self.block_group > 1 else ""
        return text + ("/half" if self.half else "")
