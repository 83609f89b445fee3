"""
gpu-kernel-outlining: move each `gpu.launch` body into a `gpu.func` kernel.

xDSL has no outlining pass; this is MLIR's `gpu-kernel-outlining`. Kernels go into one
`gpu.module @kernels` at the end of the module (marked `gpu.container_module`), named
`<function>_kernel_<n>`. The values a body uses from outside become the kernel's
arguments in order of first use, except constants (`arith.constant`), which are
cloned into the kernel so that LLVM sees them; the launch becomes a
`gpu.launch_func` passing those values:

    gpu.launch blocks(%bx, %by, %bz) in (%g, %c1, %c1) threads(...) in (%c256, ...) {
      ... %buf, %n ... gpu.terminator
    }
==>
    gpu.launch_func @kernels::@f_kernel_0 blocks in (%g, %c1, %c1)
        threads in (%c256, %c1, %c1) args(%buf : memref<?xf32>, %n : index)
    gpu.module @kernels {
      gpu.func @f_kernel_0(%buf: memref<?xf32>, %n: index) kernel { ... gpu.return }
    }

Uses of the launch's block arguments become `gpu.block_id`, `gpu.thread_id`,
`gpu.grid_dim` and `gpu.block_dim` ops in the kernel. As in MLIR, a kernel whose
launch has constant block sizes is marked `gpu.known_block_size` (NVVM's `maxntid`
launch bound); `nvvm.*` attributes on the launch (e.g. `nvvm.minctasm`) go to the
kernel too.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu
from xdsl.dialects.builtin import (
    DenseArrayBase,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    i32,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

KERNEL_MODULE = "kernels"

# The launch body's 12 block arguments, in order: what each one reads in a kernel.
_LAUNCH_ARGS: list[tuple[type[Operation], gpu.DimensionEnum]] = [
    (kind, dim)
    for kind in (gpu.BlockIdOp, gpu.ThreadIdOp, gpu.GridDimOp, gpu.BlockDimOp)
    for dim in (gpu.DimensionEnum.X, gpu.DimensionEnum.Y, gpu.DimensionEnum.Z)
]


def _defined_inside(launch: gpu.LaunchOp, value: SSAValue) -> bool:
    owner = value.owner
    op = owner if isinstance(owner, Operation) else owner.parent_op()
    return op is not None and launch.is_ancestor(op)


def kernel_module(module: ModuleOp) -> gpu.ModuleOp:
    """The module's `gpu.module @kernels`, made (at the end) if it has none yet."""
    for op in module.ops:
        if isinstance(op, gpu.ModuleOp) and op.sym_name.data == KERNEL_MODULE:
            return op
    kernels = gpu.ModuleOp(StringAttr(KERNEL_MODULE), Region(Block()))  # pyright: ignore
    module.body.block.add_op(kernels)
    module.attributes["gpu.container_module"] = UnitAttr()
    return kernels


def outline(launch: gpu.LaunchOp, name: str, kernels: gpu.ModuleOp) -> gpu.LaunchFuncOp:
    """Move `launch`'s body into kernel `name` of `kernels`; the launch that replaces it."""
    uses: dict[SSAValue, None] = {}
    for inner in launch.body.walk():
        for operand in inner.operands:
            if not _defined_inside(launch, operand):
                uses.setdefault(operand)
    constants = [v for v in uses if isinstance(v.owner, arith.ConstantOp)]
    arguments = [v for v in uses if not isinstance(v.owner, arith.ConstantOp)]

    kernel_block = Block(arg_types=[v.type for v in arguments])
    kernel = gpu.FuncOp(name, ([v.type for v in arguments], []), Region(kernel_block), kernel=True)
    kernel.location = launch.location
    mapping: dict[SSAValue, SSAValue] = dict(zip(arguments, kernel_block.args, strict=True))
    for value in constants:
        clone = value.owner.clone()  # pyright: ignore[reportAttributeAccessIssue]
        kernel_block.add_op(clone)
        mapping[value] = clone.results[0]
    body = launch.body.block
    for arg, (kind, dim) in zip(body.args, _LAUNCH_ARGS, strict=True):
        if arg.uses:
            reader = kind(gpu.DimensionAttr(dim))  # pyright: ignore[reportCallIssue]
            reader.location = launch.location
            kernel_block.add_op(reader)
            mapping[arg] = reader.results[0]
    for inner in body.ops:
        if isinstance(inner, gpu.TerminatorOp):
            ret = gpu.ReturnOp([])
            ret.location = inner.location
            kernel_block.add_op(ret)
            continue
        kernel_block.add_op(inner.clone(value_mapper=mapping))
    _launch_bounds(launch, kernel)
    kernels.body.block.add_op(kernel)

    symbol = SymbolRefAttr(KERNEL_MODULE, [name])
    grid = [launch.gridSizeX, launch.gridSizeY, launch.gridSizeZ]
    block = [launch.blockSizeX, launch.blockSizeY, launch.blockSizeZ]
    launch_func = gpu.LaunchFuncOp(
        symbol,
        grid,
        block,
        kernelOperands=arguments,
        dynamicSharedMemorySize=launch.dynamicSharedMemorySize,
    )
    launch_func.location = launch.location
    return launch_func


def _launch_bounds(launch: gpu.LaunchOp, kernel: gpu.FuncOp) -> None:
    """The launch's constant block sizes and `nvvm.*` attributes, on its kernel."""
    sizes = [launch.blockSizeX, launch.blockSizeY, launch.blockSizeZ]
    constants = [v.owner.value for v in sizes if isinstance(v.owner, arith.ConstantOp)]
    if len(constants) == 3 and all(isinstance(c, IntegerAttr) for c in constants):
        values = [c.value.data for c in constants]  # pyright: ignore[reportAttributeAccessIssue]
        kernel.attributes["gpu.known_block_size"] = DenseArrayBase.from_list(i32, values)
    for name, value in launch.attributes.items():
        if name.startswith("nvvm."):
            kernel.attributes[name] = value


@dataclass(frozen=True)
class GPUKernelOutliningPass(ModulePass):
    """Outline every `gpu.launch` into a kernel of `gpu.module @kernels`."""

    name = "gpu-kernel-outlining"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in list(op.ops):
            if not isinstance(function, func.FuncOp):
                continue
            launches = [inner for inner in function.walk() if isinstance(inner, gpu.LaunchOp)]
            kernels = kernel_module(op) if launches else None
            taken = {k.sym_name.data for k in kernels.body.block.ops} if kernels else set()
            for launch in launches:
                assert kernels is not None
                name = _fresh_name(f"{function.sym_name.data}_kernel", taken)
                launch_func = outline(launch, name, kernels)
                Rewriter.insert_op(launch_func, InsertPoint.before(launch))
                Rewriter.erase_op(launch)


def _fresh_name(prefix: str, taken: set[str]) -> str:
    n = 0
    while f"{prefix}_{n}" in taken:
        n += 1
    taken.add(f"{prefix}_{n}")
    return f"{prefix}_{n}"
