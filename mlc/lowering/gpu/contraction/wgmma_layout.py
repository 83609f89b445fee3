"""
Where the wgmma kernel (`wgmma_kernel`) puts a 16-bit operand's K slice in shared
memory, and the matrix descriptor that tells `wgmma.mma_async` (sm_90a) how to read it.

Both operands use the 128-byte swizzle mode of PTX's "Shared Memory Matrix Layout":
the slice is made of 1024-byte atoms of 8 rows of 128 bytes (64 16-bit values), and
the hardware reads 16-byte unit `u` of row `r` of an atom from unit `u ^ (r % 8)`, i.e.
byte address `a` from `swizzle(a) = a ^ (((a >> 7) % 8) << 4)` (CUTLASS's
`Swizzle<3,4,3>`). The tile's base must be 1024-byte aligned, so that the bits the
swizzle reads are those of the offset into the tile. A slice is `DEPTH = 64` deep:

- K-major (the operand contiguous along K: A[m, k], a transposed B[n, k]): row `x` of
  the extent (M or N) is one 128-byte row of its 64 K values, so element (x, k) is at
  `swizzle(128 x + 2 k)`. The canonical layout is `((8, m), (8, 2)) : ((64, SBO), (1, 8))`
  in elements: 8-row atoms `SBO = 1024` bytes apart; the leading offset is not used
  (the 16 K values of one instruction lie in one row). Step `kk` of the slice starts
  `2 kk` bytes in.
- tf32 (32-bit values, `TF32_BYTES`): K-major alone (PTX has no transpose for tf32
  wgmmas), 32 values a 128-byte row, so a slice is 32 deep (`depth(4)`) and element
  (x, k) is at `swizzle(128 x + 4 k)`: the 16-bit K-major layout in bytes. One
  `m64nNk8` reads 32 bytes of each row, as one `m64nNk16` does, with the same
  descriptor; step `kk` starts `4 kk` bytes in.
- MN-major (contiguous along the extent: a row-major B[k, n], a transposed A[k, m]):
  the extent is cut into panels of 64; row `k` of a panel is 128 bytes of its 64
  extent values, panels `LBO = 128 DEPTH` bytes apart, so element (x, k) is at
  `swizzle(128 DEPTH (x // 64) + 128 k + 2 (x % 64))`. The canonical layout is
  `((64, m), (8, k)) : ((1, LBO), (64, SBO))`: panels `LBO` apart along the extent,
  8-row groups of K `SBO = 1024` bytes apart. Step `kk` starts `128 kk` bytes in.

The descriptor (PTX's "Matrix Descriptor Format") is 64 bits: the start address >> 4
in bits 0-13, the leading byte offset >> 4 in 16-29, the stride byte offset >> 4 in
32-45, the base offset (0: atoms 1024-byte aligned) in 49-51, the swizzle mode in 62-63
(1: 128 bytes). Only the start address changes at run time (`DESCRIPTOR_ADDRESS_MASK`).
"""

DEPTH = 64  # K values of a slice: one 128-byte row of 16-bit values
ELEMENT_BYTES = 2
TF32_BYTES = 4  # tf32 operands are f32 in memory: 32 values a row, slices 32 deep
ROW_BYTES = 128  # the swizzle's row: 8 units of 16 bytes
ATOM_BYTES = 1024  # 8 rows: the swizzle's period, and the alignment a tile needs
UNIT_BYTES = 16  # what one cp.async copies: 8 16-bit values, 4 f32
INSTRUCTION_K = 16  # K of one wgmma.m64nNk16 on 16-bit values
INSTRUCTION_BYTES = 32  # bytes of K one instruction reads a row: k16 of 16 bits, k8 of tf32
SWIZZLE_128B = 1  # the descriptor's swizzle-mode field
DESCRIPTOR_ADDRESS_MASK = (1 << 14) - 1  # bits 0-13: the start address >> 4


def swizzle(offset: int) -> int:
    """The byte the 128-byte swizzle reads for address (or 1024-aligned offset) `offset`."""
    return offset ^ (((offset >> 7) & 7) << 4)


def depth(element_bytes: int = ELEMENT_BYTES) -> int:
    """K values of a slice: one 128-byte row (64 of 16 bits, 32 of tf32)."""
    return ROW_BYTES // element_bytes


def instruction_k(element_bytes: int = ELEMENT_BYTES) -> int:
    """K of one wgmma: 16 (f16, bf16: m64nNk16), 8 (tf32: m64nNk8)."""
    return INSTRUCTION_BYTES // element_bytes


def panel_bytes(depth: int = DEPTH) -> int:
    """Bytes of one 64-wide panel of an MN-major slice (its leading byte offset)."""
    return ROW_BYTES * depth


def offset(k_major: bool, x: int, k: int, depth: int = DEPTH, element_bytes: int = 2) -> int:
    """Byte offset of element (extent `x`, K `k`) in its slice, before the swizzle
    (`element_bytes` 4: tf32, K-major alone)."""
    if k_major:
        return ROW_BYTES * x + element_bytes * k
    per_row = ROW_BYTES // ELEMENT_BYTES
    return panel_bytes(depth) * (x // per_row) + ROW_BYTES * k + ELEMENT_BYTES * (x % per_row)


def placed(k_major: bool, x: int, k: int, depth: int = DEPTH, element_bytes: int = 2) -> int:
    """Where the kernel stores element (x, k) of a slice: `swizzle(offset(...))`."""
    return swizzle(offset(k_major, x, k, depth, element_bytes))


def step_offset(
    k_major: bool, kk: int, first: int = 0, depth: int = DEPTH, element_bytes: int = 2
) -> int:
    """
    Bytes from the slice's start to where the instruction at K step `kk` starts, for
    extent rows from `first` (a multiple of 64: a warpgroup's rows of A).
    """
    return offset(k_major, first, kk, depth, element_bytes)


def strides(k_major: bool, depth: int = DEPTH) -> tuple[int, int]:
    """The (leading, stride) byte offsets of a slice's descriptor (module docstring)."""
    if k_major:
        return UNIT_BYTES, ATOM_BYTES  # the leading offset is unused; CUTLASS puts 1 unit
    return panel_bytes(depth), ATOM_BYTES


def descriptor(address: int, leading: int, stride: int, swizzle_mode: int = SWIZZLE_128B) -> int:
    """The 64-bit matrix descriptor of a shared operand at `address` (bytes, 16-aligned)."""
    for name, value in (("address", address), ("leading", leading), ("stride", stride)):
        if value % UNIT_BYTES or not 0 <= value >> 4 <= DESCRIPTOR_ADDRESS_MASK:
            raise ValueError(f"descriptor {name} {value}: a multiple of 16 below 256 KiB")
    return (
        (address >> 4)
        | (leading >> 4) << 16
        | (stride >> 4) << 32
        | swizzle_mode << 62
    )  # fmt: skip


def descriptor_base(k_major: bool, depth: int = DEPTH) -> int:
    """A slice's descriptor without its start address (the kernel ORs that in)."""
    return descriptor(0, *strides(k_major, depth))
