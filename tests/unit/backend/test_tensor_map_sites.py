"""
The tensor-map buffers of a loaded program (`mlc.backend.tensor_map.SiteMaps`) without a
GPU: a bf16 matmul compiled with the TMA feed is loaded by `mlc.backend.cuda.Program`
on a recording stand-in for the CUDA driver (device memory is host memory; the host
code's driver calls are ctypes callbacks bound into the JIT), and called.

- each load allocates one 128-byte buffer per launch site and the host code none;
  dropping the program frees them with its constants and unloads its module: no live
  allocation or module is left after many load + drop cycles;
- a map is encoded again only for another tensor address;
- two threads calling one program on their own inputs: every launch reads maps of its
  own operands (the calls are serialised: `SiteMaps.serial`). The stand-in's encode
  sleeps, so that without the lock the other thread's call encodes its map in between
  (the test then fails).
"""

import ctypes
import gc
import threading
import time

import llvmlite.binding as llvm_binding
import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects import llvm
from xdsl.dialects.builtin import BFloat16Type, FunctionType, MemRefType

import mlc
from mlc.backend import cuda
from mlc.backend.cuda_abi import DRIVER
from mlc.lowering.gpu.convert_gpu_host_to_llvm import LAUNCH_PREFIX
from mlc.tensor_maps import MAP_BYTES

MATMUL = """
func.func @main(%a: tensor<200x72xbf16>, %b: tensor<72x264xbf16>) -> tensor<200x264xbf16> {
  %c = ml.matmul %a, %b : (tensor<200x72xbf16>, tensor<72x264xbf16>) -> tensor<200x264xbf16>
  func.return %c : tensor<200x264xbf16>
}
"""

_P = ctypes.c_void_p
_I = ctypes.c_int32
_U64 = ctypes.c_uint64
_SIGNATURES = {
    "cuLaunchKernel": [_P, *[ctypes.c_uint32] * 7, _P, _P, _P],
    "cuMemAllocAsync": [_P, _U64, _P],
    "cuMemFreeAsync": [_P, _P],
    "cuMemcpyDtoH_v2": [_P, _P, _U64],
    "cuMemcpyHtoDAsync_v2": [_P, _P, _U64, _P],
    "cuTensorMapEncodeTiled": [_P, _I, _I, _P, _P, _P, _P, _P, _I, _I, _I, _I],
}


class FakeDriver:
    """libcuda for `Program` (Python calls) and its host code (JIT symbols): memory
    from host buffers; a 'map' holds the tensor address it was encoded for."""

    def __init__(self, params: int) -> None:
        self.params = params  # the kernel's
        self.live: dict[int, ctypes.Array] = {}
        self.pool: dict[int, list[ctypes.Array]] = {}  # freed buffers by size, reused
        self.encodes: list[int] = []  # tensor addresses
        # per launch, the tensors its maps were made for and the arguments its thread
        # copied to the device since its last launch
        self.launches: list[tuple[list[int], list[int]]] = []
        self.uploaded: dict[int, list[int]] = {}  # by thread
        self.modules: set[int] = set()  # loaded, not unloaded
        self.lock = threading.Lock()
        self.callbacks = {
            name: ctypes.CFUNCTYPE(_I, *_SIGNATURES[name])(getattr(self, "_" + name))
            for name in DRIVER
        }

    def bind(self) -> None:
        for name, callback in self.callbacks.items():
            llvm_binding.add_symbol(name, ctypes.cast(callback, ctypes.c_void_p).value)

    def allocate(self, size: int) -> int:
        """Memory of `size` bytes: the last freed of that size, as a pool gives it."""
        with self.lock:
            kept = self.pool.get(size)
            buffer = kept.pop() if kept else (ctypes.c_uint8 * max(size, 1))()
            self.live[ctypes.addressof(buffer)] = buffer
        return ctypes.addressof(buffer)

    # Python's calls (`cuda.Device`, `cuda.Program`)
    def cuMemAllocAsync(self, pointer, size, stream):
        pointer._obj.value = self.allocate(size)
        return 0

    def cuMemFreeAsync(self, pointer, stream):
        with self.lock:
            buffer = self.live.pop(pointer.value)
            self.pool.setdefault(len(buffer), []).append(buffer)
        return 0

    def cuMemcpyHtoD_v2(self, dst, src, size):
        ctypes.memmove(dst, src, size)
        self.uploaded.setdefault(threading.get_ident(), []).append(dst.value)
        return 0

    def cuMemcpyDtoH_v2(self, dst, src, size):
        ctypes.memmove(dst, src, size)
        return 0

    def cuModuleLoadData(self, module, image):
        module._obj.value = self.allocate(1)
        self.modules.add(module._obj.value)
        return 0

    def cuModuleUnload(self, module):
        self.modules.remove(module.value)
        return self.cuMemFreeAsync(module, None)

    def cuCtxSynchronize(self):
        return 0

    def cuModuleGetFunction(self, function, module, name):
        function._obj.value = 1
        return 0

    def cuFuncSetAttribute(self, function, attribute, value):
        return 0

    # the host code's calls
    def _cuMemAllocAsync(self, pointer, size, stream):
        ctypes.c_uint64.from_address(pointer).value = self.allocate(size)
        return 0

    def _cuMemFreeAsync(self, pointer, stream):
        return self.cuMemFreeAsync(ctypes.c_void_p(pointer), stream)

    def _cuMemcpyDtoH_v2(self, dst, src, size):
        ctypes.memmove(dst, src, size)
        return 0

    def _cuMemcpyHtoDAsync_v2(self, dst, src, size, stream):
        ctypes.memmove(dst, src, size)
        return 0

    def _cuTensorMapEncodeTiled(self, map_, data_type, rank, tensor, *rest):
        ctypes.c_uint64.from_address(map_).value = tensor
        self.encodes.append(tensor)
        time.sleep(0.001)  # a slow encode: another thread's call runs meanwhile, if it may
        return 0

    def _cuLaunchKernel(self, function, *args):
        params = args[-2]
        slots = ctypes.cast(params, ctypes.POINTER(ctypes.c_void_p))
        values, maps = [], []
        for i in range(self.params):  # each read as 64 bits: the addresses whole
            values.append(ctypes.c_uint64.from_address(slots[i]).value)
        for value in values:
            if value in self.live and len(self.live[value]) == MAP_BYTES:
                maps.append(ctypes.c_uint64.from_address(value).value)
        self.launches.append((maps, self.uploaded.pop(threading.get_ident(), [])))
        return 0


@pytest.fixture(scope="module")
def lowered():
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MLC_WGMMA", "tma")
        return mlc.compile(MATMUL, target="cuda", emit="nvvm", sm="sm_90a")


_BOUND: dict[str, int] = {}  # the stand-in's symbols, once bound in this process


@pytest.fixture
def driver(lowered, monkeypatch):
    """The stand-in, bound into the JIT and behind `cuda.device()`: skipped where the
    real driver is bound (a GPU machine), which it would shadow."""
    address = llvm_binding.address_of_symbol("cuLaunchKernel")
    if address and address != _BOUND.get("cuLaunchKernel"):
        pytest.skip("the real CUDA driver is bound in this process")
    host = cuda.host_module(lowered)
    stubs = (op for op in host.ops if isinstance(op, llvm.FuncOp))
    launch = next(op for op in stubs if op.sym_name.data.startswith(LAUNCH_PREFIX))
    fake = FakeDriver(len(launch.function_type.inputs) - 7)  # grid, block, shared first
    fake.bind()
    _BOUND.update(
        (n, ctypes.cast(c, ctypes.c_void_p).value or 0) for n, c in fake.callbacks.items()
    )
    device = cuda.Device(None, None, fake, "stand-in", "sm_90a")  # pyright: ignore[reportArgumentType]
    monkeypatch.setattr(cuda, "device", lambda: device)
    yield fake
    gc.collect()


def _load(module) -> cuda.CudaFunction:
    bf16 = BFloat16Type()
    inputs = [MemRefType(bf16, [200, 72]), MemRefType(bf16, [72, 264])]
    type_ = FunctionType.from_lists(inputs, [MemRefType(bf16, [200, 264])])
    return cuda.load(module, {"main": type_})["main"]


def _inputs(rng) -> tuple[np.ndarray, np.ndarray]:
    return (
        rng.standard_normal((200, 72)).astype(ml_dtypes.bfloat16),
        rng.standard_normal((72, 264)).astype(ml_dtypes.bfloat16),
    )


def test_buffers_live_and_die_with_the_program(lowered, driver):
    before = len(driver.live)
    for _ in range(20):
        main = _load(lowered)
        maps = list(main.program.maps)
        assert len(maps) == 2 and all(len(driver.live[m]) == MAP_BYTES for m in maps)
        main(*_inputs(np.random.default_rng(0)))
        assert len(driver.modules) == 1
        del main, maps
        gc.collect()
        assert len(driver.live) == before and not driver.modules
    assert driver.launches


def test_encoded_again_only_for_another_tensor(lowered, driver):
    main = _load(lowered)
    a, b = _inputs(np.random.default_rng(1))
    main(a, b)
    main(a, b)  # the pool gives the inputs the same addresses: both maps are made
    assert len(driver.encodes) == 2
    made = driver.launches[0][0]
    assert driver.launches[1][0] == made == driver.encodes
    held = driver.allocate(a.nbytes)  # A's buffer of before: A now lies elsewhere
    main(a, b)
    assert len(driver.encodes) == 3 and driver.encodes[2] not in (held, *made)
    assert driver.launches[2][0] == [driver.encodes[2], made[1]]


def test_two_threads_launch_their_own_maps(lowered, driver):
    main = _load(lowered)
    rng = np.random.default_rng(2)
    work = [_inputs(rng) for _ in range(2)]
    errors: list[BaseException] = []

    def calls(a, b):
        try:
            for _ in range(25):
                main(a, b)
        except BaseException as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=calls, args=pair) for pair in work]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert len(driver.launches) == 50
    for maps, arguments in driver.launches:  # each launch's maps are of its own operands
        assert maps == arguments
