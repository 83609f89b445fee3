"""The names host code and the CUDA runtime agree on: the kernels' dynamic shared memory."""

from xdsl.dialects import gpu, llvm
from xdsl.dialects.builtin import IntegerAttr, ModuleOp, StringAttr, i32
from xdsl.ir import Block, Region

from mlc.backend.cuda_abi import (
    DYNAMIC_SHARED_BYTES_ATTR,
    STATIC_SHARED_LIMIT,
    dynamic_shared_bytes,
)


def _kernel(name: str, shared: int | None) -> llvm.FuncOp:
    function = llvm.FuncOp(name, llvm.LLVMFunctionType([]))
    if shared is not None:
        function.attributes[DYNAMIC_SHARED_BYTES_ATTR] = IntegerAttr(shared, i32)
    return function


def test_dynamic_shared_bytes_per_kernel():
    kernels = gpu.ModuleOp(StringAttr("kernels"), Region(Block()))  # pyright: ignore
    kernels.body.block.add_ops([_kernel("big", 69632), _kernel("plain", None)])
    sizes = dynamic_shared_bytes(ModuleOp([kernels, _kernel("host", 5)]))
    assert sizes == {"big": 69632}  # host functions and kernels without it are left out
    assert sizes["big"] > STATIC_SHARED_LIMIT == 48 * 1024
