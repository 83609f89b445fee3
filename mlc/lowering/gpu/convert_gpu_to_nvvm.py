"""
convert-gpu-to-nvvm: the kernels of each `gpu.module` to the `llvm` dialect for NVPTX.

xDSL has no NVVM dialect, so NVVM's operations are the LLVM intrinsics themselves,
called with `llvm.call_intrinsic`:

    gpu.thread_id x   ==>  %t = llvm.call_intrinsic "llvm.nvvm.read.ptx.sreg.tid.x"() : () -> i32
                           %i = arith.index_cast %t : i32 to index
    gpu.block_id y    ==>  ... "llvm.nvvm.read.ptx.sreg.ctaid.y" ...
    gpu.block_dim z   ==>  ... "llvm.nvvm.read.ptx.sreg.ntid.z" ...
    gpu.grid_dim x    ==>  ... "llvm.nvvm.read.ptx.sreg.nctaid.x" ...
    gpu.lane_id       ==>  ... "llvm.nvvm.read.ptx.sreg.laneid" ...
    gpu.barrier       ==>  llvm.call_intrinsic "llvm.nvvm.barrier.cta.sync.aligned.all"(%c0)

Everything else in a kernel (scalar `arith`/`math`, `scf`, `memref` accesses) is
lowered by `convert-to-llvm`'s own patterns, run on the kernels alone, so kernels and
host code share one lowering. A `gpu.func` becomes a `func.func` first; its memref
arguments are therefore expanded into descriptor fields (allocated pointer, aligned
pointer, offset, sizes, strides) exactly as for host functions, and the host passes
the same fields at launch (`convert-gpu-host-to-llvm`). LLVM drops the fields a
kernel does not read, and NVPTX turns the aligned pointer into a global-space pointer.

A kernel comes out as an `llvm.func` with the `nvvm.kernel` unit attribute (as MLIR
marks them); the PTX translation (`mlc.backend.ptx`) gives those functions LLVM's
`ptx_kernel` calling convention, which is how LLVM 20 and later mark entry points.
Launch bounds go along as MLIR's NVVM attributes: `gpu.known_block_size` becomes
`nvvm.maxntid`, and `nvvm.minctasm` (blocks per SM the kernel is built for, which caps
its registers) stays as it is; the PTX translation turns them into `.maxntid` and
`.minnctapersm`.
Shared memory: a `memref.alloca` in address space 3 (workgroup memory, as
`convert-contractions-to-gpu` allocates its tiles) becomes a module-level
`llvm.mlir.global internal` in address space 3 (`.shared` in PTX), one per alloca:

    %t = memref.alloca() : memref<2x8x128xf32, 3>
==>
    llvm.mlir.global internal @__mlc_shared_0() {addr_space = 3 : i32} : !llvm.array<2048 x f32>
    %p = llvm.mlir.addressof @__mlc_shared_0 : !llvm.ptr    // + the descriptor around it

The descriptor holds the generic address of the global (xDSL has no
`llvm.addrspacecast`; `mlc.backend.llvm` translates an `addressof` of a global in
another address space, typed `!llvm.ptr`, as that cast), and LLVM's NVPTX address
space inference turns the accesses back into `ld.shared`/`st.shared`.
An alloca marked `mlc.dynamic_shared` (at most one a kernel) is the kernel's dynamic
shared memory instead (`.extern .shared` in PTX, past the 48 KiB a static allocation
may take): its global is an external `!llvm.array<0 x i8>`, and the kernel's
`llvm.func` records its bytes as `mlc.dynamic_shared_bytes`, which the launch passes
(`gpu.launch`'s dynamic shared memory size) and the runtime allows
(`mlc.backend.cuda`).
Math functions that NVPTX cannot select (`llvm.exp`, `erf`, ...) are mapped to
libdevice there too.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, llvm, memref
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    UnitAttr,
    i8,
    i32,
)
from xdsl.ir import Attribute, Operation, Region
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import Rewriter

from mlc.backend.cuda_abi import DYNAMIC_SHARED_BYTES_ATTR
from mlc.diagnostics import op_error
from mlc.lowering.convert_to_llvm import ConvertToLLVMPass
from mlc.lowering.support.locations import keep_location

KERNEL_ATTR = "nvvm.kernel"
MAX_THREADS_ATTR = "nvvm.maxntid"  # launch bounds, as MLIR's NVVM dialect spells them
MIN_BLOCKS_ATTR = "nvvm.minctasm"
SHARED = 3  # NVVM's address space of workgroup (shared) memory
SHARED_PREFIX = "__mlc_shared_"
DYNAMIC_SHARED_ATTR = "mlc.dynamic_shared"  # on the one alloca a kernel's dynamic shared is
DYNAMIC_PREFIX = "__mlc_dynamic_shared_"

# The PTX special register each id/size op reads, by op and dimension.
SPECIAL_REGISTERS: dict[type[Operation], str] = {
    gpu.ThreadIdOp: "tid",
    gpu.BlockIdOp: "ctaid",
    gpu.BlockDimOp: "ntid",
    gpu.GridDimOp: "nctaid",
}

# gpu ops this pass lowers; any other gpu op inside a kernel is an error.
SUPPORTED: tuple[type[Operation], ...] = (
    *SPECIAL_REGISTERS,
    gpu.LaneIdOp,
    gpu.BarrierOp,
    gpu.FuncOp,
    gpu.ReturnOp,
)
# The gpu ops of a kernel that become intrinsic calls here (the others go with the function).
LOWERED_HERE: tuple[type[Operation], ...] = (*SPECIAL_REGISTERS, gpu.LaneIdOp, gpu.BarrierOp)


def special_register(op: Operation) -> str:
    """The NVVM intrinsic that reads what `op` (an id or size op) returns."""
    if isinstance(op, gpu.LaneIdOp):
        return "llvm.nvvm.read.ptx.sreg.laneid"
    dim = op.dimension.data.value.lower()  # pyright: ignore[reportAttributeAccessIssue]
    return f"llvm.nvvm.read.ptx.sreg.{SPECIAL_REGISTERS[type(op)]}.{dim}"


class LowerSpecialRegisters(RewritePattern):
    """`gpu.thread_id x` and friends to an NVVM special-register read, cast to index."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self,
        op: gpu.ThreadIdOp | gpu.BlockIdOp | gpu.BlockDimOp | gpu.GridDimOp | gpu.LaneIdOp,
        rewriter: PatternRewriter,
    ) -> None:
        read = llvm.CallIntrinsicOp(special_register(op), [], [i32])
        cast = arith.IndexCastOp(read.results[0], IndexType())
        with keep_location(rewriter, op):
            rewriter.replace(op, [read, cast])


class LowerBarrier(RewritePattern):
    """`gpu.barrier` to `bar.sync 0` for the whole block."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: gpu.BarrierOp, rewriter: PatternRewriter) -> None:
        zero = llvm.ConstantOp(IntegerAttr(0, i32), i32)
        barrier = llvm.CallIntrinsicOp("llvm.nvvm.barrier.cta.sync.aligned.all", [zero], [])
        with keep_location(rewriter, op):
            rewriter.replace(op, [zero, barrier], [])


def _to_func(kernel: gpu.FuncOp) -> func.FuncOp:
    """A `gpu.func` as a private `func.func` with its body (`gpu.return` too), moved:
    the `gpu.func` is dropped (a tiled kernel has thousands of ops to copy)."""
    body = Region()
    kernel.body.move_blocks(body)
    for block in body.blocks:
        last = block.last_op
        if isinstance(last, gpu.ReturnOp):
            ret = func.ReturnOp(*last.args)
            ret.location = last.location
            block.insert_op_before(ret, last)
            block.erase_op(last)
    function = func.FuncOp(
        kernel.sym_name.data, kernel.function_type, body, visibility=StringAttr("private")
    )
    function.location = kernel.location
    return function


def _is_shared(op: Operation) -> bool:
    if not isinstance(op, memref.AllocaOp):
        return False
    space = op.memref.type.memory_space
    return isinstance(space, IntegerAttr) and space.value.data == SHARED


def _bytes(type_: MemRefType) -> int:
    element = type_.element_type
    width = element.bitwidth if hasattr(element, "bitwidth") else 64  # index
    count = 1
    for size in type_.get_shape():
        count *= size
    return count * width // 8


def _shared_to_globals(
    scratch: ModuleOp, allocas: list[memref.AllocaOp]
) -> tuple[set[str], dict[str, tuple[str, int]]]:
    """
    Each shared-memory alloca of `allocas` (in `scratch`'s kernels, in walk order) to a
    `memref.get_global` of a new global in `scratch`: the static globals' names, and per
    dynamic one its kernel's name and bytes (module docstring).
    """
    names: set[str] = set()
    dynamic: dict[str, tuple[str, int]] = {}
    for op in allocas:
        if op.dynamic_sizes:
            op_error(op, "shared memory (address space 3) must have a static shape")
        if DYNAMIC_SHARED_ATTR in op.attributes:
            function = op.parent_op()
            while function is not None and not isinstance(function, func.FuncOp):
                function = function.parent_op()
            assert function is not None
            kernel = function.sym_name.data
            if any(owner == kernel for owner, _ in dynamic.values()):
                op_error(op, "a kernel has at most one dynamic shared-memory alloca")
            name = f"{DYNAMIC_PREFIX}{len(dynamic)}"
            dynamic[name] = (kernel, _bytes(op.memref.type))
        else:
            name = f"{SHARED_PREFIX}{len(names)}"
            names.add(name)
        plain = MemRefType(op.memref.type.element_type, op.memref.type.get_shape())
        declared = memref.GlobalOp.get(StringAttr(name), plain, UnitAttr(), StringAttr("public"))
        scratch.body.block.add_op(declared)
        read = memref.GetGlobalOp(name, plain)
        read.location = op.location
        declared.location = op.location
        Rewriter.replace_op(op, read)
    return names, dynamic


def launch_bounds(kernel: gpu.FuncOp) -> dict[str, Attribute]:
    """The kernel's NVVM launch bounds: `maxntid` from its known block size, `nvvm.*` as is."""
    bounds = {name: v for name, v in kernel.attributes.items() if name.startswith("nvvm.")}
    if kernel.known_block_size is not None:
        bounds[MAX_THREADS_ATTR] = kernel.known_block_size
    return bounds


def _lowered_here(kernels: gpu.ModuleOp) -> tuple[list[Operation], list[memref.AllocaOp]]:
    """
    The ops of `kernels` that this pass rewrites itself, in walk order: register reads
    and barriers, and shared allocas (a few hundred of ResNet-50's ~50k kernel ops,
    found in one walk, rewritten where they are rather than by a pattern walker's
    sweeps over every op). An unsupported gpu op is an error.
    """
    registers: list[Operation] = []
    allocas: list[memref.AllocaOp] = []
    for inner in kernels.walk():
        if inner.dialect_name() == "gpu" and inner is not kernels:
            if not isinstance(inner, SUPPORTED):
                message = f"'{inner.name}' is not supported in kernels by convert-gpu-to-nvvm"
                op_error(inner, message)
            if isinstance(inner, LOWERED_HERE):
                registers.append(inner)
        elif _is_shared(inner):
            allocas.append(inner)  # pyright: ignore[reportArgumentType]
    return registers, allocas


def _lower_registers(registers: list[Operation]) -> None:
    """Each register read and barrier to its intrinsic call."""
    lowerings = (LowerSpecialRegisters(), LowerBarrier())
    for inner in registers:
        rewriter = PatternRewriter(inner)
        for pattern in lowerings:
            pattern.match_and_rewrite(inner, rewriter)
            if rewriter.has_done_action:
                break


def lower_kernel_module(ctx: Context, kernels: gpu.ModuleOp) -> None:
    """Lower one `gpu.module`'s contents to the llvm dialect, in place."""
    registers, allocas = _lowered_here(kernels)
    names = {
        op.sym_name.data: launch_bounds(op)
        for op in kernels.body.block.ops
        if isinstance(op, gpu.FuncOp) and op.kernel
    }
    scratch = ModuleOp([])
    for op in list(kernels.body.block.ops):
        op.detach()
        scratch.body.block.add_op(_to_func(op) if isinstance(op, gpu.FuncOp) else op)
    _lower_registers(registers)
    shared, dynamic = _shared_to_globals(scratch, allocas)
    for kernel, size in dynamic.values():
        if kernel in names:
            names[kernel][DYNAMIC_SHARED_BYTES_ATTR] = IntegerAttr(size, i32)
    ConvertToLLVMPass(libdevice=True).apply(ctx, scratch)
    for op in list(scratch.body.block.ops):
        op.detach()
        if isinstance(op, llvm.GlobalOp) and op.sym_name.data in shared:
            op.linkage = llvm.LinkageAttr("internal")
            op.addr_space = IntegerAttr(SHARED, 32)
        if isinstance(op, llvm.GlobalOp) and op.sym_name.data in dynamic:
            extern = llvm.GlobalOp(
                llvm.LLVMArrayType(0, i8),
                op.sym_name,
                "external",
                addr_space=SHARED,
                alignment=16,
            )
            extern.location = op.location
            op = extern
        if isinstance(op, llvm.FuncOp) and op.sym_name.data in names:
            op.linkage = llvm.LinkageAttr("external")
            op.attributes[KERNEL_ATTR] = UnitAttr()
            op.attributes.update(names[op.sym_name.data])
        kernels.body.block.add_op(op)


@dataclass(frozen=True)
class ConvertGPUToNVVMPass(ModulePass):
    """Lower every `gpu.module`'s kernels to the llvm dialect with NVVM intrinsics."""

    name = "convert-gpu-to-nvvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in list(op.walk()):
            if isinstance(inner, gpu.ModuleOp):
                lower_kernel_module(ctx, inner)
