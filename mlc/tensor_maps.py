"""
Tensor maps (`CUtensorMap`) for the Tensor Memory Accelerator: what a TMA copy
(`cp.async.bulk.tensor`, sm_90) reads to know a global tensor's shape and the box it
copies into shared memory.

A map is 128 opaque bytes that only the driver's `cuTensorMapEncodeTiled` writes (pycuda
does not wrap it). `TiledMap` holds the call's arguments and checks them against the
driver's documented limits, so a bad one is a one-line `ValueError` at compile time
rather than `CUDA_ERROR_INVALID_VALUE` at the first launch: the wgmma kernel's host code
(`mlc.lowering.gpu.tensor_map_host`) encodes its maps with these fields, and
`mlc.backend.tensor_map.encode` makes the same call through ctypes for a Python caller.
Here, apart from both, because lowering does not import the backend.

Dims, strides and box sizes are listed innermost (contiguous) first, as the driver wants
them; strides are in bytes, for every dim but the innermost (whose stride is the element).
"""

from dataclasses import dataclass

MAP_BYTES = 128  # sizeof(CUtensorMap)
MAP_ALIGNMENT = 64  # a map's address, on the host and as a kernel parameter

# CUtensorMapDataType of the element types mlc copies by TMA
DATA_TYPES = {"f16": 6, "f32": 7, "bf16": 9}
ELEMENT_BYTES = {"f16": 2, "f32": 4, "bf16": 2}
# CUtensorMapSwizzle by the swizzle's span in bytes (0: none); the inner box row must
# fit in the span
SWIZZLES = {0: 0, 32: 1, 64: 2, 128: 3}
INTERLEAVES = {0: 0, 16: 1, 32: 2}  # CUtensorMapInterleave by bytes
L2_PROMOTION_128B = 2  # CU_TENSOR_MAP_L2_PROMOTION_L2_128B, as CUTLASS's maps
OOB_FILL_ZEROS = 0  # CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE: elements outside read as 0

MAX_RANK = 5
MAX_BOX = 256  # elements a box may span along each dim
MAX_ELEMENT_STRIDE = 8
STRIDE_LIMIT = 1 << 40  # global strides are below 2^40 bytes
DIM_LIMIT = 1 << 32  # global dims are at most 2^32 elements
GLOBAL_ALIGNMENT = 16  # bytes: the global address and every stride (32 with 32B interleave)


@dataclass(frozen=True)
class TiledMap:
    """The arguments of one `cuTensorMapEncodeTiled` call, but the global address."""

    element: str  # a `DATA_TYPES` key
    dims: tuple[int, ...]  # elements along each dim, innermost first
    strides: tuple[int, ...]  # bytes between consecutive indices of dims 1 .. rank - 1
    box: tuple[int, ...]  # elements a copy moves along each dim
    swizzle: int = 128  # bytes (`SWIZZLES`)
    interleave: int = 0  # bytes (`INTERLEAVES`)
    element_strides: tuple[int, ...] | None = None  # None: 1 along every dim

    def __post_init__(self) -> None:
        if (problem := self.problem()) is not None:
            raise ValueError(f"tensor map: {problem}")

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def steps(self) -> tuple[int, ...]:
        return self.element_strides or (1,) * self.rank

    @property
    def box_bytes(self) -> int:
        """Bytes one copy of a whole box writes to shared memory (its `expect_tx`)."""
        count = ELEMENT_BYTES[self.element]
        for size, step in zip(self.box, self.steps, strict=True):
            count *= -(-size // step)
        return count

    def problem(self) -> str | None:
        """Why the driver would refuse these arguments (its documented limits), or None."""
        if self.element not in DATA_TYPES:
            return f"element type {self.element} (known: {', '.join(DATA_TYPES)})"
        if self.swizzle not in SWIZZLES or self.interleave not in INTERLEAVES:
            return (
                f"swizzle {self.swizzle} or interleave {self.interleave} bytes "
                "(0, 32, 64, 128; 0, 16, 32)"
            )
        if not 1 <= self.rank <= MAX_RANK or (self.interleave and self.rank < 3):
            return f"rank {self.rank} (1 to 5; 3 or more when interleaved)"
        if len(self.strides) != self.rank - 1 or len(self.box) != self.rank:
            return f"{len(self.strides)} strides and {len(self.box)} box sizes for rank {self.rank}"
        if len(self.steps) != self.rank:
            return f"{len(self.steps)} element strides for rank {self.rank}"
        if any(not 0 < d <= DIM_LIMIT for d in self.dims):
            return f"dims {self.dims} (each 1 to 2^32)"
        alignment = 32 if self.interleave == 32 else GLOBAL_ALIGNMENT
        if any(s % alignment or not 0 < s < STRIDE_LIMIT for s in self.strides):
            return f"strides {self.strides} bytes (multiples of {alignment} below 2^40)"
        return self._box_problem()

    def _box_problem(self) -> str | None:
        if any(not 0 < b <= MAX_BOX for b in self.box):
            return f"box {self.box} (each 1 to {MAX_BOX})"
        if any(not 0 < s <= MAX_ELEMENT_STRIDE for s in self.steps):
            return f"element strides {self.steps} (each 1 to {MAX_ELEMENT_STRIDE})"
        inner = self.box[0] * ELEMENT_BYTES[self.element]
        if not self.interleave and inner % GLOBAL_ALIGNMENT:
            return f"a box row of {inner} bytes (a multiple of 16)"
        if not self.interleave and self.swizzle and inner > self.swizzle:
            return f"a box row of {inner} bytes wider than the {self.swizzle}-byte swizzle"
        return None

    def arguments(self) -> tuple[int, int, int, int, int, int]:
        """The enum arguments: data type, rank, interleave, swizzle, L2 promotion, OOB fill."""
        return (
            DATA_TYPES[self.element],
            self.rank,
            INTERLEAVES[self.interleave],
            SWIZZLES[self.swizzle],
            L2_PROMOTION_128B,
            OOB_FILL_ZEROS,
        )


def matrix(element: str, rows: int, cols: int, box_rows: int, box_cols: int) -> TiledMap:
    """The map of a row-major `rows x cols` matrix copied `box_rows x box_cols` at a
    time with the 128-byte swizzle (the wgmma operands' shared layout)."""
    row_bytes = cols * ELEMENT_BYTES.get(element, 0)
    return TiledMap(element, (cols, rows), (row_bytes,), (box_cols, box_rows))
