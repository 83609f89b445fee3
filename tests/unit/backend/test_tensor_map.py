"""mlc.tensor_maps and mlc.backend.tensor_map: a map's fields, the driver's limits as
one-line errors, and the ctypes call's arguments (a recording stand-in for libcuda; the
driver itself in tests/gpu/test_wgmma_tma.py)."""

import ctypes

import pytest

from mlc.backend.tensor_map import encode
from mlc.tensor_maps import MAP_BYTES, TiledMap, matrix


def test_matrix_fields():
    """A row-major 8192 x 4096 bf16 matrix in 64 x 128 boxes: innermost (cols) first,
    the row stride in bytes, the 128-byte swizzle, 16 KiB a box."""
    spec = matrix("bf16", 8192, 4096, 128, 64)
    assert spec.dims == (4096, 8192)
    assert spec.strides == (8192,)
    assert spec.box == (64, 128)
    assert spec.box_bytes == 128 * 64 * 2
    assert spec.arguments() == (9, 2, 0, 3, 2, 0)  # bf16, rank 2, no interleave, 128B
    assert matrix("f16", 64, 64, 64, 64).arguments()[0] == 6


def test_box_bytes_with_element_strides():
    spec = TiledMap("f32", (64, 64), (256,), (32, 8), swizzle=128, element_strides=(2, 1))
    assert spec.box_bytes == 16 * 8 * 4


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: matrix("f64", 64, 64, 64, 64), "element type f64"),
        (lambda: matrix("bf16", 64, 100, 64, 64), r"strides \(200,\) bytes"),
        (lambda: matrix("bf16", 64, 4096, 64, 128), "a box row of 256 bytes wider than"),
        (lambda: matrix("bf16", 64, 4096, 300, 64), r"box \(64, 300\)"),
        (lambda: matrix("bf16", 64, 4096, 64, 4), "a box row of 8 bytes"),
        (lambda: TiledMap("bf16", (64, 64), (128,), (64, 64), swizzle=96), "swizzle 96"),
        (lambda: TiledMap("bf16", (64, 64), (128,), (64,)), "1 strides and 1 box sizes"),
        (lambda: TiledMap("bf16", (64, 64), (128,), (64, 64), interleave=16), "rank 2"),
        (lambda: TiledMap("bf16", (0, 64), (128,), (64, 64)), r"dims \(0, 64\)"),
        (lambda: TiledMap("bf16", (8,) * 6, (16,) * 5, (8,) * 6), "rank 6"),
        (
            lambda: TiledMap("bf16", (64, 64), (128,), (64, 64), element_strides=(9, 1)),
            r"element strides \(9, 1\)",
        ),
    ],
)
def test_refused_with_one_line(make, message):
    with pytest.raises(ValueError, match=message) as raised:
        make()
    assert "\n" not in str(raised.value)


def test_unswizzled_box_may_be_wide():
    assert TiledMap("bf16", (4096, 64), (8192,), (256, 64), swizzle=0).box_bytes == 256 * 64 * 2


class _Driver:
    """Records `cuTensorMapEncodeTiled`'s arguments and writes a recognisable map."""

    def __init__(self, status: int = 0):
        self.status, self.calls = status, []

    def cuTensorMapEncodeTiled(self, out, *args):
        self.calls.append((out.value, args))
        ctypes.memmove(out.value, bytes(range(MAP_BYTES)), MAP_BYTES)
        return self.status


def test_encode_passes_the_fields():
    driver = _Driver()
    spec = matrix("f16", 200, 264, 128, 64)
    got = encode(driver, spec, 0x7F0000001000)
    assert got == bytes(range(MAP_BYTES))
    out, args = driver.calls[0]
    assert out % 64 == 0  # CUtensorMap is alignas(64)
    data_type, rank, address, dims, strides, box, steps, *enums = args
    assert (data_type.value, rank.value, address.value) == (6, 2, 0x7F0000001000)
    fields = [list(dims), list(strides), list(box), list(steps)]
    assert fields == [[264, 200], [528], [64, 128], [1, 1]]
    assert [e.value for e in enums] == [0, 3, 2, 0]


def test_encode_errors_are_one_line():
    spec = matrix("bf16", 64, 64, 64, 64)
    with pytest.raises(ValueError, match="not 16-byte aligned"):
        encode(_Driver(), spec, 0x1008)
    with pytest.raises(ValueError, match=r"refused .* \(CUDA error 1\)$"):
        encode(_Driver(status=1), spec, 0x1000)
