"""
`CudaFunction`'s packed arguments: a call on `GPUArray`s seen before reuses their
descriptors (keyed by pointer, shape and strides), every call still passes the
descriptors of its own arrays, the cache is bounded and keeps no array alive. Runs
without a GPU: the compiled function is a ctypes callback that reads the slots.
"""

import contextlib
import ctypes
import gc
import weakref
from types import SimpleNamespace

import numpy as np
import pytest
from xdsl.dialects.builtin import FunctionType, MemRefType, f32

from mlc.backend import cuda
from mlc.backend.runtime import descriptor_struct


class Pointer:
    """A device pointer as pycuda holds one (`int()` gives the address)."""

    def __init__(self, address: int):
        self.address = address

    def __int__(self) -> int:
        return self.address


class GPUArray:
    """What `CudaFunction` reads of a pycuda `GPUArray`."""

    def __init__(self, pointer: Pointer, shape: tuple[int, ...]):
        self.gpudata, self.shape = pointer, shape
        self.strides = tuple(4 * int(np.prod(shape[i + 1 :])) for i in range(len(shape)))
        self.flags = SimpleNamespace(c_contiguous=True)


@pytest.fixture
def function():
    """A CudaFunction of (memref<?x3xf32>, memref<3xf32>) whose body records its slots."""
    seen: list[list[tuple[int, tuple[int, ...], tuple[int, ...]]]] = []

    def body(slots: int) -> None:
        pointers = (ctypes.c_void_p * 2).from_address(slots)
        call = []
        for rank, address in zip((2, 1), pointers, strict=True):
            d = descriptor_struct(rank).from_address(address)
            call.append((d.aligned, tuple(d.sizes), tuple(d.strides)))
        seen.append(call)

    callback = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(body)
    address = ctypes.cast(callback, ctypes.c_void_p).value
    program = SimpleNamespace(
        device=SimpleNamespace(make_current=lambda: None),  # no context to make current
        jit=SimpleNamespace(address=lambda name: address),
        check_status=lambda what: None,
        maps=SimpleNamespace(serial=contextlib.nullcontext()),  # no tensor maps
    )
    types = [MemRefType(f32, [-1, 3]), MemRefType(f32, [3])]
    fn = cuda.CudaFunction(program, "f", FunctionType.from_lists(types, []))  # pyright: ignore
    fn.keep_alive = callback  # pyright: ignore[reportAttributeAccessIssue]
    return fn, seen


def test_a_repeated_call_reuses_its_packing(function):
    fn, seen = function
    x, y = GPUArray(Pointer(4096), (5, 3)), GPUArray(Pointer(8192), (3,))
    fn(x, y)
    fn(x, y)
    assert seen == [[(4096, (5, 3), (3, 1)), (8192, (3,), (1,))]] * 2
    assert len(fn._packed) == 1


def test_each_call_passes_its_own_arrays(function):
    fn, seen = function
    y = GPUArray(Pointer(8192), (3,))
    fn(GPUArray(Pointer(4096), (5, 3)), y)
    fn(GPUArray(Pointer(4096), (7, 3)), y)  # same pointer, another shape
    fn(GPUArray(Pointer(1024), (5, 3)), y)
    assert [call[0] for call in seen] == [
        (4096, (5, 3), (3, 1)),
        (4096, (7, 3), (3, 1)),
        (1024, (5, 3), (3, 1)),
    ]
    assert len(fn._packed) == 3


def test_the_cache_is_bounded_and_keeps_no_array(function):
    fn, seen = function
    y = GPUArray(Pointer(8192), (3,))
    for i in range(cuda.PACKED_CALLS + 3):
        fn(GPUArray(Pointer(4096 * (i + 1)), (2, 3)), y)
    assert [call[0][0] for call in seen] == [4096 * (i + 1) for i in range(cuda.PACKED_CALLS + 3)]
    assert len(fn._packed) <= cuda.PACKED_CALLS
    pointer = Pointer(64)
    held = weakref.ref(pointer)
    fn(GPUArray(pointer, (2, 3)), y)
    del pointer
    gc.collect()
    assert held() is None


def test_only_calls_on_device_arrays_are_keyed():
    """A call with no arguments passes no device array: its results come back as numpy."""
    x = GPUArray(Pointer(4096), (2, 3))
    assert cuda._device_key(()) is None
    assert cuda._device_key((x, np.zeros(3, np.float32))) is None
    assert cuda._device_key((x,)) == ((int(x.gpudata), x.shape, x.strides),)
