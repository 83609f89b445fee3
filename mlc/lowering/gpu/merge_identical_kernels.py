"""
merge-identical-kernels: one kernel for each kind among a `gpu.module`'s kernels.

A network's layers are the same few kernels again and again (ResNet-50's 53
convolutions have about 20 shapes; a transformer's N blocks launch one block's kernels
N times), and `gpu-kernel-outlining` gives every launch a `gpu.func` of its own, which
would then be lowered to NVVM, optimised and compiled to PTX again. This pass keeps the
first kernel of each kind, points every `gpu.launch_func` (any reference
`@<gpu.module>::@<kernel>`) at it and erases the copies:

    gpu.launch_func @kernels::@f_kernel_0 ... args(%a : memref<64xf32>)
    gpu.launch_func @kernels::@f_kernel_1 ... args(%b : memref<64xf32>)
    gpu.module @kernels {
      gpu.func @f_kernel_0(%x: memref<64xf32>) kernel { ...body... }
      gpu.func @f_kernel_1(%x: memref<64xf32>) kernel { ...the same body... }
    }
==>
    gpu.launch_func @kernels::@f_kernel_0 ... args(%a : memref<64xf32>)
    gpu.launch_func @kernels::@f_kernel_0 ... args(%b : memref<64xf32>)
    gpu.module @kernels {
      gpu.func @f_kernel_0(%x: memref<64xf32>) kernel { ...body... }
    }

Kernels are of one kind when equal up to their names
(`mlc.lowering.support.function_merging`): same type and attributes (launch bounds
included), structurally equivalent bodies. Kernels differing in a constant, an
attribute or a type stay apart. Runs after `gpu-kernel-outlining`, `canonicalize` and
`cse`, so that copies are spelled alike.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import gpu
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from mlc.lowering.support import function_merging


def _is_kernel(op: Operation) -> bool:
    return isinstance(op, gpu.FuncOp)


def merge_identical_kernels(module: ModuleOp) -> dict[str, str]:
    """Merge the kernels of each `gpu.module` of `module`; each erased kernel's path
    (`kernels::f_kernel_1`) mapped to the kept one's."""
    merged: dict[str, str] = {}
    for op in list(module.ops):
        if isinstance(op, gpu.ModuleOp):
            prefix = op.sym_name.data
            found = function_merging.merge(module, op, _is_kernel, (prefix,))
            merged.update({f"{prefix}::{old}": f"{prefix}::{new}" for old, new in found.items()})
    return merged


@dataclass(frozen=True)
class MergeIdenticalKernelsPass(ModulePass):
    """Keep one kernel of each kind (see the module docstring)."""

    name = "merge-identical-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        merge_identical_kernels(op)
