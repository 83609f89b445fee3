"""
The GPU programs run on: the first device, its primary context (current in every
thread that calls, once a thread), the CUDA driver library with the signatures mlc
calls, and the architecture mlc compiles for. `mlc.backend.cuda` loads and calls
programs on it.
"""

import atexit
import ctypes
import threading
from dataclasses import dataclass
from functools import cache
from typing import Any

import llvmlite.binding as llvm_binding
import numpy as np

from mlc.backend.cuda_abi import DRIVER
from mlc.extras import MissingDependencyError, require
from mlc.gpu_architectures import PTX_FEATURES, compute_capability


class CudaUnavailableError(RuntimeError):
    """No pycuda, no driver or no GPU: the `cuda` target cannot run here."""


class CudaError(RuntimeError):
    """A CUDA driver call failed."""


@dataclass
class Device:
    """The GPU programs run on: pycuda's context, the driver library, the architecture."""

    pycuda: Any
    context: Any
    libcuda: ctypes.CDLL
    name: str
    sm: str
    handle: int = 0  # the primary context's `CUcontext`

    def make_current(self) -> None:
        """Make the context current in the calling thread, once per thread: CUDA
        contexts are current per thread, and a thread other than the first finds none.
        Set through the driver, not pushed on pycuda's per-thread stack, whose clean-up
        when the thread ends would pop a context it did not push."""
        if self.handle and not getattr(_thread, "current", False):
            self.check(
                self.libcuda.cuCtxSetCurrent(ctypes.c_void_p(self.handle)), "cuCtxSetCurrent"
            )
            _thread.current = True

    def check(self, status: int, what: str) -> None:
        if status:
            raise CudaError(f"{what} failed: {error_name(self.libcuda, status)}")

    def malloc(self, nbytes: int) -> int:
        pointer = ctypes.c_void_p()
        self.check(
            self.libcuda.cuMemAllocAsync(ctypes.byref(pointer), max(nbytes, 1), None),
            "cuMemAllocAsync",
        )
        return pointer.value or 0

    def free(self, pointer: int) -> None:
        self.check(self.libcuda.cuMemFreeAsync(ctypes.c_void_p(pointer), None), "cuMemFreeAsync")

    def to_device(self, pointer: int, array: np.ndarray) -> None:
        if array.nbytes:
            status = self.libcuda.cuMemcpyHtoD_v2(
                ctypes.c_void_p(pointer), ctypes.c_void_p(array.ctypes.data), array.nbytes
            )
            self.check(status, "cuMemcpyHtoD")

    def to_host(self, array: np.ndarray, pointer: int) -> None:
        if array.nbytes:
            status = self.libcuda.cuMemcpyDtoH_v2(
                ctypes.c_void_p(array.ctypes.data), ctypes.c_void_p(pointer), array.nbytes
            )
            self.check(status, "cuMemcpyDtoH")


def error_name(libcuda: ctypes.CDLL, status: int) -> str:
    name = ctypes.c_char_p()
    if libcuda.cuGetErrorName(status, ctypes.byref(name)) == 0 and name.value:
        return f"{name.value.decode()} ({status})"
    return f"CUDA error {status}"


def architecture(capability: tuple[int, int]) -> str:
    """The newest architecture mlc targets that a device of `capability` runs."""
    wanted = capability[0] * 10 + capability[1]
    known = sorted((compute_capability(sm), sm) for sm in PTX_FEATURES if not sm.endswith("a"))
    usable = [sm for number, sm in known if number <= wanted]
    if not usable:
        raise CudaUnavailableError(
            f"GPU of compute capability {capability[0]}.{capability[1]} is older than "
            f"mlc's oldest target {known[0][1]}"
        )
    # A device of exactly an architecture-specific target's capability (9.0: sm_90a)
    # gets that target, whose PTX only it runs: the wgmma kernels need it.
    specific = [sm for sm in PTX_FEATURES if sm.endswith("a") and compute_capability(sm) == wanted]
    return specific[0] if specific else usable[-1]


_thread = threading.local()  # `current`: whether this thread made the context current


def device() -> Device:
    """The first GPU, its primary context current in the calling thread."""
    found = _first_device()
    found.make_current()
    return found


@cache
def _first_device() -> Device:
    """The first GPU and its primary context, made current in this thread (once per process)."""
    try:
        driver: Any = require("pycuda.driver", "target 'cuda'")
    except MissingDependencyError as error:
        raise CudaUnavailableError(str(error)) from None
    try:
        driver.init()
        if driver.Device.count() == 0:
            raise CudaUnavailableError("target 'cuda' needs an NVIDIA GPU: none found")
        handle = driver.Device(0)
        context = handle.retain_primary_context()
        context.push()
        _thread.current = True
        atexit.register(_pop, context)
        libcuda = ctypes.CDLL("libcuda.so.1")
    except (driver.Error, OSError) as error:  # pyright: ignore[reportAttributeAccessIssue]
        raise CudaUnavailableError(f"target 'cuda' cannot use the GPU: {error}") from None
    _declare_driver(libcuda)
    _keep_pool_memory(libcuda)
    for name in [n for n in DRIVER if hasattr(libcuda, n)]:  # host code calls these;
        address = ctypes.cast(getattr(libcuda, name), ctypes.c_void_p).value
        llvm_binding.add_symbol(name, address)  # no tensor maps (TMA) before CUDA 12
    sm = architecture(handle.compute_capability())
    current = ctypes.c_void_p()
    status = libcuda.cuCtxGetCurrent(ctypes.byref(current))
    device = Device(driver, context, libcuda, handle.name(), sm, current.value or 0)
    device.check(status, "cuCtxGetCurrent")
    return device


def _pop(context: Any) -> None:
    try:
        context.pop()
    except Exception:
        pass


def _declare_driver(libcuda: ctypes.CDLL) -> None:
    void_p, size = ctypes.c_void_p, ctypes.c_size_t
    signatures: dict[str, list[Any]] = {
        "cuMemAllocAsync": [ctypes.POINTER(void_p), size, void_p],
        "cuMemFreeAsync": [void_p, void_p],
        "cuMemcpyHtoD_v2": [void_p, void_p, size],
        "cuMemcpyDtoH_v2": [void_p, void_p, size],
        "cuModuleLoadData": [ctypes.POINTER(void_p), ctypes.c_char_p],
        "cuModuleUnload": [void_p],
        "cuCtxGetCurrent": [ctypes.POINTER(void_p)],
        "cuCtxSetCurrent": [void_p],
        "cuModuleGetFunction": [ctypes.POINTER(void_p), void_p, ctypes.c_char_p],
        "cuGetErrorName": [ctypes.c_int, ctypes.POINTER(ctypes.c_char_p)],
        "cuCtxSynchronize": [],
        "cuFuncSetAttribute": [void_p, ctypes.c_int, ctypes.c_int],
    }
    for name, argtypes in signatures.items():
        function = getattr(libcuda, name)
        function.argtypes = argtypes
        function.restype = ctypes.c_int


def _keep_pool_memory(libcuda: ctypes.CDLL) -> None:
    """Let the default memory pool keep freed memory, so allocations stay cheap."""
    pool = ctypes.c_void_p()
    if libcuda.cuDeviceGetDefaultMemPool(ctypes.byref(pool), 0) == 0:
        threshold = ctypes.c_uint64(2**64 - 1)
        release_threshold = 4  # CU_MEMPOOL_ATTR_RELEASE_THRESHOLD
        libcuda.cuMemPoolSetAttribute(pool, release_threshold, ctypes.byref(threshold))
