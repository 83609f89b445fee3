"""
convert-gpu-host-to-llvm: host code of the GPU target to the `llvm` dialect, calling
the CUDA driver API directly (as MLIR's `mgpuLaunchKernel` runtime wrappers do, minus
the wrapper library).

Every buffer of the GPU target lives in device memory; host functions only allocate,
launch and pass descriptors around. The host code is lowered by `convert-to-llvm`
unchanged (the `gpu.module`s are set aside meanwhile), with these differences:

- `gpu.launch_func @kernels::@k blocks in (...) threads in (...) args(...)` becomes a
  call of `@__mlc_launch_k(gx, gy, gz, bx, by, bz, shared, args...)` (`shared` the
  launch's dynamic shared memory in bytes, 0 if it gives none); its arguments are
  expanded by `convert-to-llvm` like any call (memrefs into descriptor fields), so
  they match the kernel's parameters one to one. The stub stores each into a slot,
  and calls `cuLaunchKernel` with the array of slot pointers, on the default stream,
  with the kernel handle read from `@__mlc_kernel_k` (the runtime fills it when it
  loads the PTX);
- allocation: the `malloc`/`free` calls of `memref.alloc`/`memref.dealloc` become
  `@__mlc_cuda_malloc`/`@__mlc_cuda_free`, which call the stream-ordered
  `cuMemAllocAsync`/`cuMemFreeAsync` (no device-wide synchronisation, pooled memory);
- constants: `memref.global` data stays in the host module, and each use of its
  address reads `@__mlc_device_<name>` instead, the device copy the runtime makes
  at load time;
- tensor maps of TMA kernels: each call of `@__mlc_tensor_map` (`@__mlc_tensor_map3d`;
  `tensor_map_host`) calls a stub of its own, which keeps its map in a device buffer
  the runtime allocates at load and encodes it again (`cuTensorMapEncodeTiled`,
  `cuMemcpyHtoDAsync_v2`) only for another tensor address;
- element accesses on the host (a `memref.load` feeding a loop condition, ...) copy
  the element with `cuMemcpyDtoH_v2`/`cuMemcpyHtoDAsync_v2` through `@__mlc_read_<n>`
  and `@__mlc_write_<n>` stubs. A read waits for the kernels launched before it; a
  write, on the default stream from pageable memory, is staged at once and does not.

The first failing driver call's status is kept in `@__mlc_cuda_status` (0 while all
is well), which the runtime checks after each call of a compiled function.
"""

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, func, gpu, llvm, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, ModuleOp, SymbolRefAttr, i32, i64
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.backend.cuda_abi import DEVICE_GLOBAL_PREFIX, DRIVER, KERNEL_HANDLE_PREFIX, STATUS
from mlc.lowering.convert_to_llvm import ConvertToLLVMPass
from mlc.lowering.convert_to_llvm.assertions import MESSAGE_PREFIX
from mlc.lowering.convert_to_llvm.common import PTR, Builder, element_size, llvm_type
from mlc.lowering.gpu import tensor_map_host

LAUNCH_PREFIX = "__mlc_launch_"
READ_PREFIX = "__mlc_read_"
WRITE_PREFIX = "__mlc_write_"
MALLOC, FREE = "__mlc_cuda_malloc", "__mlc_cuda_free"

_TENSOR_MAP_STUBS = {tensor_map_host.stub(rank) for rank in tensor_map_host.RANKS}

BodyBuilder = Callable[[Builder, Sequence[SSAValue]], SSAValue | None]


class _Stubs:
    """The private `func.func` declarations host ops are rewritten into calls of."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.declared: dict[str, func.FuncOp] = {}
        self.accesses: dict[str, tuple[str, MemRefType]] = {}  # stub -> (read|write, type)
        self.tensor_maps: list[str] = []  # a stub per call site of `tensor_map_host.STUB`

    def declare(self, name: str, inputs: Sequence[Attribute], outputs: Sequence[Attribute]):
        if name not in self.declared:
            declaration = func.FuncOp.external(name, list(inputs), list(outputs))
            self.module.body.block.add_op(declaration)
            self.declared[name] = declaration
        return name


def _call(op: Operation, name: str, args: Sequence[SSAValue], results: Sequence[Attribute]):
    call = func.CallOp(name, list(args), list(results))
    call.location = op.location
    Rewriter.insert_op(call, InsertPoint.before(op))
    return call


def rewrite_host_ops(module: ModuleOp, stubs: _Stubs) -> None:
    """Launches and host element accesses to calls of stubs (module docstring)."""
    for op in list(_host_ops(module)):
        if isinstance(op, gpu.LaunchFuncOp):
            kernel = op.kernel.nested_references.data[-1].data
            sizes = [
                op.gridSizeX, op.gridSizeY, op.gridSizeZ,
                op.blockSizeX, op.blockSizeY, op.blockSizeZ,
            ]  # fmt: skip
            shared = op.dynamicSharedMemorySize  # bytes of dynamic shared memory, i32
            if shared is None:
                zero = arith.ConstantOp.from_int_and_width(0, i32)
                zero.location = op.location
                Rewriter.insert_op(zero, InsertPoint.before(op))
                shared = zero.result
            args = [*sizes, shared, *op.kernelOperands]
            name = stubs.declare(LAUNCH_PREFIX + kernel, [a.type for a in args], [])
            _call(op, name, args, [])
            Rewriter.erase_op(op)
        elif isinstance(op, func.CallOp) and op.callee.string_value() in _TENSOR_MAP_STUBS:
            name = f"{tensor_map_host.SITE_PREFIX}{len(stubs.tensor_maps)}"
            stubs.tensor_maps.append(name)
            stubs.declare(name, [a.type for a in op.arguments], [r.type for r in op.res])
            op.callee = SymbolRefAttr(name)
        elif isinstance(op, memref.LoadOp):
            type_ = op.memref.type
            assert isinstance(type_, MemRefType)
            name = f"{READ_PREFIX}{len(stubs.accesses)}"
            stubs.accesses[name] = ("read", type_)
            args = [op.memref, *op.indices]
            stubs.declare(name, [a.type for a in args], [op.res.type])
            call = _call(op, name, args, [op.res.type])
            op.res.replace_all_uses_with(call.results[0])
            Rewriter.erase_op(op)
        elif isinstance(op, memref.StoreOp):
            type_ = op.memref.type
            assert isinstance(type_, MemRefType)
            name = f"{WRITE_PREFIX}{len(stubs.accesses)}"
            stubs.accesses[name] = ("write", type_)
            args = [op.value, op.memref, *op.indices]
            stubs.declare(name, [a.type for a in args], [])
            _call(op, name, args, [])
            Rewriter.erase_op(op)


def _host_ops(module: ModuleOp) -> Iterator[Operation]:
    """The ops of `module` outside its `gpu.module`s (the kernels are not walked: a
    model's are most of its ops)."""
    for top in module.ops:
        if not isinstance(top, gpu.ModuleOp):
            yield from top.walk()


# ---------------------------------------------------------------------------
# Stub bodies, in the llvm dialect
# ---------------------------------------------------------------------------


def _record(b: Builder, rc: SSAValue) -> None:
    """Keep `rc` in the status global unless an earlier failure is kept already."""
    status = b.emit(llvm.AddressOfOp(STATUS, PTR))
    old = b.emit(llvm.LoadOp(status, i32))
    zero = b.emit(llvm.ConstantOp(IntegerAttr(0, i32), i32))
    fine = b.emit(llvm.ICmpOp(old, zero, IntegerAttr(0, i64)))  # eq
    b.ops.append(llvm.StoreOp(b.emit(llvm.SelectOp(fine, rc, old)), status))


def _null(b: Builder) -> SSAValue:
    return b.emit(llvm.ZeroOp.build(result_types=[PTR]))


def _define(declaration: llvm.FuncOp, build: BodyBuilder) -> None:
    """Give an external `llvm.func` declaration the body `build(builder, args)` makes."""
    block = Block(arg_types=declaration.function_type.inputs.data)
    b = Builder()
    result = build(b, block.args)
    b.ops.append(llvm.ReturnOp(*([] if result is None else [result])))
    block.add_ops(b.ops)
    for inner in block.ops:
        inner.location = declaration.location
    declaration.body.add_block(block)
    declaration.linkage = llvm.LinkageAttr("internal")


def _launch_body(kernel: str) -> BodyBuilder:
    def build(b: Builder, args: Sequence[SSAValue]) -> SSAValue | None:
        sizes, shared, params = args[:6], args[6], args[7:]
        array = b.emit(llvm.AllocaOp(b.value(len(params) or 1), PTR))
        for i, value in enumerate(params):
            slot = b.emit(llvm.AllocaOp(b.value(1), value.type))
            b.ops.append(llvm.StoreOp(value, slot))
            entry = b.emit(llvm.GEPOp(array, [i], PTR))
            b.ops.append(llvm.StoreOp(slot, entry))
        handle = b.emit(
            llvm.LoadOp(b.emit(llvm.AddressOfOp(KERNEL_HANDLE_PREFIX + kernel, PTR)), PTR)
        )
        dims = [b.emit(llvm.TruncOp(size, i32)) for size in sizes]
        rc = b.call("cuLaunchKernel", [handle, *dims, shared, _null(b), array, _null(b)], i32)
        assert rc is not None
        _record(b, rc)
        return None

    return build


def _element_address(b: Builder, type_: MemRefType, fields: Sequence[SSAValue]):
    """The address of an element from a descriptor's expanded fields and its indices."""
    rank = type_.get_num_dims()
    aligned, offset = fields[1], fields[2]
    strides = fields[3 + rank : 3 + 2 * rank]
    indices = fields[3 + 2 * rank :]
    linear: int | SSAValue = offset
    for index, stride in zip(indices, strides, strict=True):
        linear = b.add(linear, b.mul(index, stride))
    element = llvm_type(type_.element_type)
    return b.emit(
        llvm.GEPOp(aligned, [llvm.GEP_USE_SSA_VAL], element, ssa_indices=[b.value(linear)])
    )


def _access_body(kind: str, type_: MemRefType) -> BodyBuilder:
    size = element_size(type_.element_type)
    element = llvm_type(type_.element_type)

    def build(b: Builder, args: Sequence[SSAValue]) -> SSAValue | None:
        one = b.value(1)
        host = b.emit(llvm.AllocaOp(one, element))
        if kind == "read":
            device = _element_address(b, type_, args)
            rc = b.call("cuMemcpyDtoH_v2", [host, device, b.value(size)], i32)
            assert rc is not None
            _record(b, rc)
            return b.emit(llvm.LoadOp(host, element))
        else:
            b.ops.append(llvm.StoreOp(args[0], host))
            device = _element_address(b, type_, args[1:])
            # Async on the default stream: ordered with the launches, and from pageable
            # memory staged at once, so it does not wait for the kernels queued before.
            rc = b.call("cuMemcpyHtoDAsync_v2", [device, host, b.value(size), _null(b)], i32)
            assert rc is not None
            _record(b, rc)
            return None

    return build


def _malloc_body(b: Builder, args: Sequence[SSAValue]) -> SSAValue | None:
    slot = b.emit(llvm.AllocaOp(b.value(1), PTR))
    b.ops.append(llvm.StoreOp(_null(b), slot))
    rc = b.call("cuMemAllocAsync", [slot, args[0], _null(b)], i32)
    assert rc is not None
    _record(b, rc)
    return b.emit(llvm.LoadOp(slot, PTR))


def _free_body(b: Builder, args: Sequence[SSAValue]) -> SSAValue | None:
    rc = b.call("cuMemFreeAsync", [args[0], _null(b)], i32)
    assert rc is not None
    _record(b, rc)
    return None


def _stub_body(name: str, stubs: _Stubs) -> BodyBuilder | None:
    """The body of stub `name`, or None for a function that is no stub."""
    if name.startswith(LAUNCH_PREFIX):
        return _launch_body(name[len(LAUNCH_PREFIX) :])
    if name in stubs.accesses:
        return _access_body(*stubs.accesses[name])
    return None


def _define_tensor_maps(
    functions: dict[str, llvm.FuncOp], stubs: _Stubs, add_global: Callable[[str, Attribute], None]
) -> None:
    """Each tensor-map site's stub and globals; the declaration every call had before."""
    for name in stubs.tensor_maps:
        for slot in tensor_map_host.globals_of(name):
            add_global(slot, i64)
        tensor_map_host.define(functions[name], _record)
    for name in _TENSOR_MAP_STUBS & functions.keys():
        Rewriter.erase_op(functions[name])


def finish_host_module(module: ModuleOp, stubs: _Stubs) -> None:
    """Define the stubs and the runtime's globals; point allocation and constants at them."""
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, llvm.FuncOp)}
    addressed = {
        op.global_name.string_value() for op in module.walk() if isinstance(op, llvm.AddressOfOp)
    }
    data_globals = {
        op.sym_name.data
        for op in module.ops
        if isinstance(op, llvm.GlobalOp)
        and op.sym_name.data in addressed
        and not op.sym_name.data.startswith(MESSAGE_PREFIX)
    }  # the constants kernels read; failed checks' messages and what only Python reads
    # (a profiled program's kernel table) stay on the host
    body = module.body.block

    def add_global(name: str, type_: Attribute) -> None:
        body.add_op(llvm.GlobalOp(type_, name, "external", value=IntegerAttr(0, type_)))

    add_global(STATUS, i32)
    for name in sorted(data_globals):
        add_global(DEVICE_GLOBAL_PREFIX + name, i64)
    for name, declaration in functions.items():
        if name.startswith(LAUNCH_PREFIX):
            add_global(KERNEL_HANDLE_PREFIX + name[len(LAUNCH_PREFIX) :], i64)
        if (build := _stub_body(name, stubs)) is not None:
            _define(declaration, build)
    _define_tensor_maps(functions, stubs, add_global)
    for name, type_ in DRIVER.items():
        body.add_op(llvm.FuncOp(name, type_, linkage=llvm.LinkageAttr("external")))
    _redirect_memory(module, data_globals)
    for name in ("malloc", "free"):
        if name in functions:
            Rewriter.erase_op(functions[name])
    external = llvm.LinkageAttr("external")
    malloc = llvm.FuncOp(MALLOC, llvm.LLVMFunctionType([i64], PTR), linkage=external)
    free = llvm.FuncOp(FREE, llvm.LLVMFunctionType([PTR]), linkage=external)
    for declaration, build in ((malloc, _malloc_body), (free, _free_body)):
        body.add_op(declaration)
        _define(declaration, build)


def _redirect_memory(module: ModuleOp, data_globals: set[str]) -> None:
    """Allocation through the driver; constants through their device copies."""
    for op in list(module.walk()):
        if isinstance(op, llvm.CallOp) and op.callee is not None:
            callee = op.callee.string_value()
            if callee in ("malloc", "free"):
                op.callee = llvm.SymbolRefAttr(MALLOC if callee == "malloc" else FREE)
        elif isinstance(op, llvm.AddressOfOp) and op.global_name.string_value() in data_globals:
            slot = llvm.AddressOfOp(DEVICE_GLOBAL_PREFIX + op.global_name.string_value(), PTR)
            load = llvm.LoadOp(slot, PTR)
            for new in (slot, load):
                new.location = op.location
            Rewriter.replace_op(op, [slot, load])


@dataclass(frozen=True)
class ConvertGPUHostToLLVMPass(ModulePass):
    """Lower host code that launches kernels to the llvm dialect (module docstring)."""

    name = "convert-gpu-host-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        stubs = _Stubs(op)
        rewrite_host_ops(op, stubs)
        kernels = [inner for inner in op.ops if isinstance(inner, gpu.ModuleOp)]
        for kernel_module in kernels:
            kernel_module.detach()
        try:
            ConvertToLLVMPass().apply(ctx, op)
        finally:
            for kernel_module in kernels:
                op.body.block.add_op(kernel_module)
        finish_host_module(op, stubs)
