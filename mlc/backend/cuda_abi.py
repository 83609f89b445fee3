"""
The names that host code of the GPU target and the CUDA runtime agree on.

`convert-gpu-host-to-llvm` emits globals and driver calls under these names, and
`mlc.backend.cuda` finds them in the loaded host code (kernel handles to fill, device
copies of constants to point, the status word to check) and binds the driver
functions. Here, so neither side imports the other.
"""

from xdsl.dialects import gpu, llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32, i64

STATUS = "__mlc_cuda_status"  # the first failing driver call's status (0: all is well)
KERNEL_HANDLE_PREFIX = "__mlc_kernel_"  # + kernel name: its `CUfunction`, set at load
DEVICE_GLOBAL_PREFIX = "__mlc_device_"  # + global name: its device copy, set at load
# A TMA launch site's tensor map (`mlc.lowering.gpu.tensor_map_host`): prefix + a number
# names its stub; + `TENSOR_MAP_BUFFER` its global holding the map's 128-byte device
# buffer, which the runtime allocates at load and frees with the program.
TENSOR_MAP_PREFIX = "__mlc_tensor_map_"
TENSOR_MAP_BUFFER = "_map"

_PTR = llvm.LLVMPointerType()

# The driver functions the host code calls, with their LLVM signatures.
DRIVER: dict[str, llvm.LLVMFunctionType] = {
    "cuLaunchKernel": llvm.LLVMFunctionType([_PTR, *[i32] * 7, _PTR, _PTR, _PTR], i32),
    "cuMemAllocAsync": llvm.LLVMFunctionType([_PTR, i64, _PTR], i32),
    "cuMemFreeAsync": llvm.LLVMFunctionType([_PTR, _PTR], i32),
    "cuMemcpyDtoH_v2": llvm.LLVMFunctionType([_PTR, _PTR, i64], i32),
    "cuMemcpyHtoDAsync_v2": llvm.LLVMFunctionType([_PTR, _PTR, i64, _PTR], i32),
    # a TMA kernel's tensor maps (`mlc.lowering.gpu.tensor_map_host`)
    "cuTensorMapEncodeTiled": llvm.LLVMFunctionType(
        [_PTR, i32, i32, _PTR, _PTR, _PTR, _PTR, _PTR, i32, i32, i32, i32], i32
    ),
}
# On a kernel's `llvm.func` (`convert-gpu-to-nvvm`): its dynamic shared memory in bytes,
# which the runtime allows the kernel at load time.
DYNAMIC_SHARED_BYTES_ATTR = "mlc.dynamic_shared_bytes"

# What a kernel may take without asking; more (up to 227 KiB on sm_90) it must be allowed.
STATIC_SHARED_LIMIT = 48 * 1024


def dynamic_shared_bytes(module: ModuleOp) -> dict[str, int]:
    """Per kernel, the bytes of dynamic shared memory it declares (`convert-gpu-to-nvvm`)."""
    sizes: dict[str, int] = {}
    for kernels in module.ops:
        if not isinstance(kernels, gpu.ModuleOp):
            continue
        for op in kernels.body.block.ops:
            size = op.attributes.get(DYNAMIC_SHARED_BYTES_ATTR)
            if isinstance(op, llvm.FuncOp) and isinstance(size, IntegerAttr):
                sizes[op.sym_name.data] = size.value.data
    return sizes
