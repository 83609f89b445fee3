"""
The names that host code of the GPU target and the CUDA runtime agree on.

`convert-gpu-host-to-llvm` emits globals and driver calls under these names, and
`mlc.backend.cuda` finds them in the loaded host code (kernel handles to fill, device
copies of constants to point, the status word to check) and binds the driver
functions. Here, so neither side imports the other.
"""

from xdsl.dialects import llvm
from xdsl.dialects.builtin import i32, i64

STATUS = "__mlc_cuda_status"  # the first failing driver call's status (0: all is well)
KERNEL_HANDLE_PREFIX = "__mlc_kernel_"  # + kernel name: its `CUfunction`, set at load
DEVICE_GLOBAL_PREFIX = "__mlc_device_"  # + global name: its device copy, set at load

_PTR = llvm.LLVMPointerType()

# The driver functions the host code calls, with their LLVM signatures.
DRIVER: dict[str, llvm.LLVMFunctionType] = {
    "cuLaunchKernel": llvm.LLVMFunctionType([_PTR, *[i32] * 7, _PTR, _PTR, _PTR], i32),
    "cuMemAllocAsync": llvm.LLVMFunctionType([_PTR, i64, _PTR], i32),
    "cuMemFreeAsync": llvm.LLVMFunctionType([_PTR, _PTR], i32),
    "cuMemcpyDtoH_v2": llvm.LLVMFunctionType([_PTR, _PTR, i64], i32),
    "cuMemcpyHtoD_v2": llvm.LLVMFunctionType([_PTR, _PTR, i64], i32),
}
