"""
Run programs compiled for the `gpu` target (`mlc.compile(src, target="cuda")`).

Division of labour, as in MLIR's GPU runtime but without its wrapper library:
- pycuda owns the device and its context (the device's primary context, as the CUDA
  runtime and torch use it, so buffers can be shared with them) and `GPUArray`s; a
  call from any thread makes that context current there first (once a thread);
- the host code is compiled for the CPU by llvmlite's JIT and calls the CUDA driver
  itself (`convert-gpu-host-to-llvm`): launches and stream-ordered allocations go
  straight from compiled code to libcuda, with no Python between kernels;
- a kernel with more than 48 KiB of dynamic shared memory is allowed it at load time
  (`cuFuncSetAttribute(CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)`);
- this module loads the kernels' PTX (`mlc.backend.ptx`; cached per program and
  architecture), binds the driver functions into the JIT, fills the kernel handles, the
  device copies of constants and TMA's map buffers, and moves arguments and results;
  a dropped program frees them and unloads its kernels (`cuModuleUnload`).

Buffers stay on the device between kernels; only a call's numpy arguments are copied in
and its results copied out. Given pycuda `GPUArray`s instead (any array argument),
nothing is copied: results come back as `GPUArray`s owning their device memory, and the
call returns without waiting for the GPU, like a torch op. Work is ordered on the legacy
default stream, which pycuda uses too.

With no pycuda or no GPU, `CudaUnavailableError` says so in one line.
"""

import ctypes
import hashlib
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

import numpy as np
from xdsl.dialects import gpu, llvm
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FunctionType, IntegerType, ModuleOp

from mlc import resources
from mlc.backend import launch_timers, tensor_map
from mlc.backend.assertions import raise_failure
from mlc.backend.cuda_abi import (
    DEVICE_GLOBAL_PREFIX,
    KERNEL_HANDLE_PREFIX,
    STATIC_SHARED_LIMIT,
    STATUS,
    dynamic_shared_bytes,
)
from mlc.backend.cuda_device import (  # noqa: F401  (this module's API, defined there)
    CudaError,
    CudaUnavailableError,
    Device,
    architecture,
    device,
    error_name,
)
from mlc.backend.jit import JITModule
from mlc.backend.ptx import kernel_names, to_ptx
from mlc.backend.runtime import INVOKE_PREFIX, ArgSpec, descriptor_struct, signature

# ---------------------------------------------------------------------------
# Loading a program
# ---------------------------------------------------------------------------

PTX_CACHED = 32  # programs whose PTX a process keeps (`cached_ptx`)
_ptx_cache: OrderedDict[tuple[str, str], str] = OrderedDict()


def cached_ptx(module: ModuleOp, sm: str) -> str:
    """The PTX of `module`'s kernels for `sm`, translated once per program and
    architecture; the least recently loaded dropped past `PTX_CACHED`, so a process
    that compiles many programs does not keep every one's text."""
    kernels = "\n".join(str(op) for op in module.ops if isinstance(op, gpu.ModuleOp))
    key = (hashlib.sha256(kernels.encode()).hexdigest(), sm)
    if key in _ptx_cache:
        _ptx_cache.move_to_end(key)
    else:
        _ptx_cache[key] = to_ptx(module, sm)
        if len(_ptx_cache) > PTX_CACHED:
            _ptx_cache.popitem(last=False)
    return _ptx_cache[key]


def host_module(module: ModuleOp) -> ModuleOp:
    """A copy of `module` without its `gpu.module`s (not copied: kernels are most of
    it): what runs on the CPU."""
    host_ops = [op.clone() for op in module.ops if not isinstance(op, gpu.ModuleOp)]
    return ModuleOp(host_ops, dict(module.attributes), module.sym_name)


class Program:
    """A program lowered through the `gpu` pipeline, loaded on the device."""

    def __init__(self, module: ModuleOp):
        self.device = device()
        lib = self.device.libcuda
        self.ptx = ""
        self.cu_module = ctypes.c_void_p()
        if kernel_names(module):  # a program of scalars alone runs on the host only
            self.ptx = cached_ptx(module, self.device.sm)
            self.device.check(
                lib.cuModuleLoadData(ctypes.byref(self.cu_module), self.ptx.encode() + b"\0"),
                "loading the kernels (cuModuleLoadData)",
            )
        host = host_module(module)
        if any(isinstance(op, llvm.FuncOp) and op.sym_name.data == launch_timers.BEGIN
               for op in host.ops):  # fmt: skip
            launch_timers.install(lib)  # compiled for profiling: its launches are timed
        self.jit = JITModule(host)
        engine = self.jit.engine
        dynamic_shared = dynamic_shared_bytes(module)
        for name in kernel_names(module):
            function = ctypes.c_void_p()
            status = lib.cuModuleGetFunction(ctypes.byref(function), self.cu_module, name.encode())
            self.device.check(status, f"finding kernel {name}")
            if (size := dynamic_shared.get(name, 0)) > STATIC_SHARED_LIMIT:
                status = lib.cuFuncSetAttribute(function, 8, size)  # MAX_DYNAMIC_SHARED_SIZE_BYTES
                self.device.check(status, f"allowing kernel {name} {size} bytes of shared memory")
            slot = engine.get_global_value_address(KERNEL_HANDLE_PREFIX + name)
            ctypes.c_void_p.from_address(slot).value = function.value
        self.constants: list[int] = []
        for op in host.ops:
            if isinstance(op, llvm.GlobalOp) and op.sym_name.data.startswith(DEVICE_GLOBAL_PREFIX):
                self._upload(op.sym_name.data, _constant_data(host, op.sym_name.data))
        self.status = ctypes.c_int32.from_address(engine.get_global_value_address(STATUS))
        self.maps = tensor_map.SiteMaps(host, self.device.malloc, engine.get_global_value_address)

    def _upload(self, slot_name: str, data: bytes) -> None:
        """Copy a constant to the device and point its slot at the copy."""
        pointer = self.device.malloc(len(data))
        self.constants.append(pointer)
        if data:
            status = self.device.libcuda.cuMemcpyHtoD_v2(
                ctypes.c_void_p(pointer), ctypes.c_char_p(data), len(data)
            )
            self.device.check(status, f"copying constant {slot_name} to the device")
        slot = self.jit.engine.get_global_value_address(slot_name)
        ctypes.c_void_p.from_address(slot).value = pointer

    def check_status(self, what: str) -> None:
        if self.status.value:
            status, self.status.value = self.status.value, 0
            self.device.check(status, what)

    def __del__(self) -> None:
        # At exit the context and this module's globals may be gone: nothing to free then.
        try:
            self.device.make_current()  # the collector may run this in any thread
        except Exception:
            return
        for pointer in [*getattr(self, "constants", []), *getattr(self, "maps", ())]:
            try:
                self.device.free(pointer)
            except Exception:
                pass
        module = getattr(self, "cu_module", None)
        if module is not None and module.value:
            try:  # the kernels' code and static data back to the device, once none runs
                self.device.libcuda.cuCtxSynchronize()
                self.device.libcuda.cuModuleUnload(module)
            except Exception:
                pass


# ---------------------------------------------------------------------------
# Calling a function
# ---------------------------------------------------------------------------


class DeviceBuffer:
    """Device memory from the stream-ordered allocator, freed when the last user dies."""

    def __init__(self, device: Device, pointer: int):
        self.device = device
        self.pointer = pointer

    def __int__(self) -> int:
        return self.pointer

    __index__ = __int__

    def __del__(self) -> None:
        if self.pointer:
            try:
                self.device.free(self.pointer)
            except Exception:
                pass
            self.pointer = 0


def is_device_array(value: Any) -> bool:
    """Whether `value` is a pycuda `GPUArray` (checked without importing pycuda)."""
    return type(value).__name__ == "GPUArray" and hasattr(value, "gpudata")


def upload(array: Any) -> Any:
    """A `GPUArray` holding a copy of host `array` (in the primary context)."""
    device()  # the primary context, made current, before pycuda allocates in it
    from pycuda import gpuarray  # pyright: ignore[reportMissingImports]

    return gpuarray.to_gpu(np.require(array, requirements="C"))  # rank 0 kept


def _device_key(values: Sequence[Any]) -> tuple[Any, ...] | None:
    """Each argument's pointer, shape and strides when there are arguments and all are
    `GPUArray`s, else None (a call with none takes and gives numpy arrays)."""
    if not values:
        return None
    key = []
    for value in values:
        if not is_device_array(value):
            return None
        key.append((int(value.gpudata), value.shape, value.strides))
    return tuple(key)


PACKED_CALLS = 16  # argument packings a function keeps (`CudaFunction._packed`)


class CudaFunction:
    """A compiled function, called on numpy arrays or `GPUArray`s and Python scalars."""

    def __init__(self, program: Program, name: str, function_type: FunctionType):
        self.program = program
        self.name = name
        self.args, self.results = signature(function_type)
        prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        self._invoke = prototype(program.jit.address(INVOKE_PREFIX + name))
        self._slots = ctypes.c_void_p * (len(self.args) + len(self.results))
        # The argument slots of calls on `GPUArray`s, by each array's pointer, shape and
        # strides (all a descriptor depends on): a call on arrays seen before (weights,
        # buffers in a loop) copies its slots at once. Bounded: cleared when full.
        self._packed: dict[tuple[Any, ...], tuple[Any, list[Any]]] = {}  # slots, descriptors

    def __call__(self, *values: Any) -> Any:
        device = self.program.device
        device.make_current()
        key = _device_key(values) if len(values) == len(self.args) else None
        packed = self._packed.get(key) if key is not None else None
        if packed is None:
            pointers, keep, storages = self._pack(device, values)
            if key is not None:  # the descriptors, not the arrays: they stay the caller's
                if len(self._packed) >= PACKED_CALLS:
                    self._packed.clear()
                self._packed[key] = (self._slots.from_buffer_copy(pointers), storages)
            on_device = key is not None or any(is_device_array(v) for v in values)
        else:
            pointers, keep = self._slots.from_buffer_copy(packed[0]), []
            on_device = True
        outputs: list[Any] = []
        for j, spec in enumerate(self.results):
            out = np.zeros(1, spec.dtype) if spec.rank is None else descriptor_struct(spec.rank)()
            address = out.ctypes.data if spec.rank is None else ctypes.addressof(out)
            pointers[len(self.args) + j] = address
            outputs.append(out)
        with self.program.maps.serial:  # calls one at a time with tensor maps (`SiteMaps`)
            self._invoke(pointers)
            self.program.check_status(f"running @{self.name}")
        results = self._results(device, outputs, on_device)
        del keep
        raise_failure()  # a failed run-time check, once the results are owned
        if not results:
            return None
        return results[0] if len(results) == 1 else tuple(results)

    def _pack(self, device: Device, values: Sequence[Any]) -> tuple[Any, list[Any], list[Any]]:
        """
        The call's slots with the arguments filled in, what must outlive the call (the
        device buffers too), and the descriptors and scalars the slots point into.
        """
        keep: list[Any] = []  # alive until the call has returned
        storages: list[Any] = []
        pointers = self._slots()
        for i, (spec, value) in enumerate(zip(self.args, values, strict=True)):
            if spec.rank is None:
                storage = np.array([value], spec.dtype)
                pointers[i] = storage.ctypes.data
            else:
                buffer = self._device_argument(device, value)
                storage = _descriptor(spec, int(buffer), value.shape)
                keep.append(buffer)
                pointers[i] = ctypes.addressof(storage)
            keep.append(storage)
            storages.append(storage)
        return pointers, keep, storages

    @staticmethod
    def _device_argument(device: Device, value: Any) -> Any:
        if is_device_array(value):
            if not value.flags.c_contiguous:
                raise ValueError("GPUArray arguments must be C-contiguous")
            return value.gpudata
        array = np.require(value, requirements="C")
        buffer = DeviceBuffer(device, device.malloc(array.nbytes))
        device.to_device(buffer.pointer, array)
        return buffer

    def _results(self, device: Device, outputs: Sequence[Any], on_device: bool) -> list[Any]:
        owners: dict[int, DeviceBuffer] = {}
        results: list[Any] = []
        for spec, out in zip(self.results, outputs, strict=True):
            if spec.rank is None:
                results.append(out[0])
                continue
            shape = tuple(out.sizes) if spec.rank else ()
            address = (out.aligned or 0) + out.offset * spec.dtype.itemsize
            allocated = out.allocated or 0
            owner = owners.setdefault(allocated, DeviceBuffer(device, allocated))
            if on_device:
                results.append(_gpu_array(device, shape, spec, address, owner))
            else:
                array = np.empty(shape, spec.dtype)
                device.to_host(array, address)
                results.append(array)
        return results


def _constant_data(host: ModuleOp, slot_name: str) -> bytes:
    """The bytes of the constant whose device copy `slot_name` holds, as numpy lays them out."""
    name = slot_name[len(DEVICE_GLOBAL_PREFIX) :]
    if name.startswith(resources.PREFIX):  # a `dense_resource` weight: this process holds it
        array = resources.lookup(name[len(resources.PREFIX) :])
        if array is not None:
            return np.ascontiguousarray(array).tobytes()
    for op in host.ops:
        if isinstance(op, llvm.GlobalOp) and op.sym_name.data == name:
            value = op.value
            if isinstance(value, DenseIntOrFPElementsAttr):
                element = value.get_element_type()
                if isinstance(element, IntegerType) and element.width.data == 1:
                    data = np.array(value.get_values(), np.bool_).tobytes()
                else:
                    data = bytes(value.data.data)
                count = op.global_type.size.data  # pyright: ignore[reportAttributeAccessIssue]
                size = len(data) // max(1, len(value.get_values()))
                return data * (count if len(data) == size and count > 1 else 1)
    raise CudaError(f"no data for constant @{name} in the program")


def _descriptor(spec: ArgSpec, pointer: int, shape: Sequence[int]) -> Any:
    if not spec.rank:
        return descriptor_struct(0)(pointer, pointer, 0)
    return descriptor_struct(spec.rank)(pointer, pointer, 0, *_layout(tuple(shape)))


@lru_cache(maxsize=256)
def _layout(shape: tuple[int, ...]) -> tuple[Any, Any]:
    """The sizes and row-major strides of `shape` as ctypes arrays (made once a shape)."""
    strides, running = [], 1
    for size in reversed(shape):
        strides.append(running)
        running *= size
    array = ctypes.c_int64 * len(shape)
    return array(*shape), array(*strides[::-1])


def _gpu_array(
    device: Device, shape: tuple[int, ...], spec: ArgSpec, address: int, owner: DeviceBuffer
) -> Any:
    """A `GPUArray` over a result's device memory, keeping its `DeviceBuffer` alive."""
    view_type, gpu_array_type = _pycuda_types()
    return gpu_array_type(shape, spec.dtype, gpudata=view_type(address, owner))


@cache
def _pycuda_types() -> tuple[type, type]:
    """pycuda's `GPUArray` and a pointer holder over result memory, made once (not per call)."""
    import pycuda.driver as driver  # pyright: ignore[reportMissingImports]
    from pycuda.gpuarray import GPUArray  # pyright: ignore[reportMissingImports]

    class View(driver.PointerHolderBase):  # pycuda's driver calls take these as pointers
        def __init__(self, address: int, owner: DeviceBuffer) -> None:
            super().__init__()
            self.address = address
            self.owner = owner

        def get_pointer(self) -> int:
            return self.address

        def __int__(self) -> int:
            return self.address

        __index__ = __int__

    return View, GPUArray


def load(module: ModuleOp, functions: dict[str, FunctionType]) -> dict[str, CudaFunction]:
    """Load a module lowered by the `gpu` pipeline; its functions by name."""
    program = Program(module)
    return {name: CudaFunction(program, name, type_) for name, type_ in functions.items()}
