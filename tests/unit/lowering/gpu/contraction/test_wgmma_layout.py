"""
The wgmma kernel's shared-memory placement against PTX's own reading of it, by
emulation: a slice is stored where `wgmma_layout.placed` says (as the kernel's copies
store it), then read back element by element the way the ISA's canonical 128-byte
swizzle layouts say `wgmma.mma_async` reads an operand through its matrix descriptor
(decoded from the 64 bits `wgmma_layout.descriptor` encodes), for every instruction of
a slice: each warpgroup's A rows, B of 128 and 256 columns, each 16-deep K step.
"""

import numpy as np
import pytest

from mlc.lowering.gpu.contraction import wgmma_layout as layout


def _decode(descriptor: int) -> tuple[int, int, int, int]:
    """(start, leading, stride, swizzle mode) of a descriptor, as the hardware reads it."""
    field = layout.DESCRIPTOR_ADDRESS_MASK
    start = (descriptor & field) << 4
    leading = ((descriptor >> 16) & field) << 4
    stride = ((descriptor >> 32) & field) << 4
    return start, leading, stride, descriptor >> 62


def _hardware_address(descriptor: int, k_major: bool, x, k):
    """
    Byte address of element (x, k) (x along M or N, k < 16) of one instruction's
    operand, per the ISA's canonical layouts with 128-byte swizzling: K-major
    `((8, m), (8, 2)) : ((64, SBO), (1, 8))`, MN-major `((64, m), (8, 2)) : ((1, LBO),
    (64, SBO))` (in 16-bit elements), then the swizzle on the address bits.
    """
    start, leading, stride, mode = _decode(descriptor)
    assert mode == 1  # 128-byte swizzle
    if k_major:
        linear = start + (x // 8) * stride + (x % 8) * 128 + k * 2
    else:
        linear = start + (x // 64) * leading + (x % 64) * 2 + (k // 8) * stride + (k % 8) * 128
    return linear ^ (((linear >> 7) & 7) << 4)


def _stored(k_major: bool, extent: int, base: int, values) -> np.ndarray:
    """Shared memory with slice `values[x, k]` stored at `base + placed(x, k)`."""
    memory = np.zeros(base + extent * layout.DEPTH * 2 + 4096, np.uint16)
    x, k = np.meshgrid(np.arange(extent), np.arange(layout.DEPTH), indexing="ij")
    at = base + layout.placed(k_major, x, k)
    assert len(np.unique(at)) == at.size  # no two elements share a place
    assert at.max() - base < extent * layout.DEPTH * 2  # dense: the slice's own bytes
    memory[at // 2] = values
    return memory


@pytest.mark.parametrize("k_major", [True, False])
@pytest.mark.parametrize("extent, rows", [(128, 64), (256, 256), (128, 128), (192, 64)])
def test_instructions_read_what_was_placed(k_major, extent, rows):
    """Each instruction (`rows` extent rows from a multiple of them, 16 K values)
    reads the slice's elements where the copies put them."""
    rng = np.random.default_rng()
    base = layout.ATOM_BYTES * int(rng.integers(1, 40))  # a stage's tile: 1024-aligned
    values = rng.integers(0, 2**16, (extent, layout.DEPTH), dtype=np.uint16)
    memory = _stored(k_major, extent, base, values)
    x, k = np.meshgrid(np.arange(rows), np.arange(layout.INSTRUCTION_K), indexing="ij")
    for first in range(0, extent, rows):
        for kk in range(0, layout.DEPTH, layout.INSTRUCTION_K):
            start = base + layout.step_offset(k_major, kk, first)
            descriptor = layout.descriptor_base(k_major) | (start >> 4)
            read = memory[_hardware_address(descriptor, k_major, x, k) // 2]
            np.testing.assert_array_equal(read, values[first : first + rows, kk : kk + 16])


def test_placement_moves_whole_16_byte_units():
    """8 consecutive values (one cp.async) stay together and in order: the copies can
    place 16 bytes at a time."""
    for k_major in (True, False):
        for x, k in ((0, 0), (5, 8), (72, 56), (200, 24), (8, 3)):
            if k_major:  # a unit: 8 values along K from a multiple of 8
                units = [(x, k - k % 8 + j) for j in range(8)]
            else:  # 8 values along the extent from a multiple of 8
                units = [(x - x % 8 + j, k) for j in range(8)]
            at = [layout.placed(k_major, *unit) for unit in units]
            assert at[0] % 16 == 0 and at == list(range(at[0], at[0] + 16, 2))


def test_descriptor_fields():
    # start 0x4400 >> 4 = 0x440; leading 8192 >> 4 = 0x200; stride 1024 >> 4 = 0x40
    value = layout.descriptor(0x4400, 8192, 1024)
    assert value == 0x440 | 0x200 << 16 | 0x40 << 32 | 1 << 62
    assert _decode(value) == (0x4400, 8192, 1024, 1)
    assert layout.strides(True) == (16, 1024) and layout.strides(False) == (8192, 1024)


@pytest.mark.parametrize("address, leading", [(8, 16), (1 << 18, 16), (0, 24)])
def test_descriptor_rejects_what_it_cannot_encode(address, leading):
    with pytest.raises(ValueError, match="a multiple of 16 below 256 KiB"):
        layout.descriptor(address, leading, 1024)


def _tf32_hardware_address(descriptor: int, x, k):
    """Byte address of tf32 element (x, k) (k < 8) of one m64nNk8 operand: the K-major
    canonical layout `((8, m), (4, 2)) : ((32, SBO), (1, 4))` in 32-bit elements, then
    the 128-byte swizzle."""
    start, _, stride, mode = _decode(descriptor)
    assert mode == 1
    linear = start + (x // 8) * stride + (x % 8) * 128 + k * 4
    return linear ^ (((linear >> 7) & 7) << 4)


@pytest.mark.parametrize("extent, rows", [(128, 64), (256, 256), (192, 64)])
def test_tf32_instructions_read_what_was_placed(extent, rows):
    """tf32: 32-deep K-major slices of 32-bit values, each m64nNk8 step reads 8 of K."""
    rng = np.random.default_rng()
    size, depth = layout.TF32_BYTES, layout.depth(layout.TF32_BYTES)
    base = layout.ATOM_BYTES * int(rng.integers(1, 40))
    values = rng.integers(0, 2**32, (extent, depth), dtype=np.uint32)
    memory = np.zeros(base // 4 + extent * depth + 1024, np.uint32)
    x, k = np.meshgrid(np.arange(extent), np.arange(depth), indexing="ij")
    at = base + layout.placed(True, x, k, element_bytes=size)
    assert len(np.unique(at)) == at.size and at.max() - base < extent * depth * size
    memory[at // 4] = values
    step = layout.instruction_k(size)
    x, k = np.meshgrid(np.arange(rows), np.arange(step), indexing="ij")
    for first in range(0, extent, rows):
        for kk in range(0, depth, step):
            start = base + layout.step_offset(True, kk, first, element_bytes=size)
            descriptor = layout.descriptor_base(True) | (start >> 4)
            read = memory[_tf32_hardware_address(descriptor, x, k) // 4]
            np.testing.assert_array_equal(read, values[first : first + rows, kk : kk + step])
