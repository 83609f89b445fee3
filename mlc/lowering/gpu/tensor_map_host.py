"""
The host side of a TMA kernel's tensor maps (`mlc.tensor_maps`): where a map is
made, and how the kernel finds it.

A map is passed in global memory, by its device address: the kernel takes it as one
64-bit parameter and gives it to `cp.async.bulk.tensor` as a generic address (the
instruction reads maps in the .param, .const or .global space). The launch stub
(`convert-gpu-host-to-llvm`) passes each kernel parameter as a scalar slot; a 128-byte
`.param .align 64` map would need a byval, grid-constant parameter that the kernels'
`llvm.func`s cannot declare, and would be copied to local memory without it (where TMA
cannot read it). Upstream MLIR's `mgpuTensorMapEncodeTiledMemref` keeps maps in global
memory too.

A map holds the operand's address, which for a program's intermediate buffers is only
known when the host code runs, so the host code makes it, once per (buffer, launch
site): each site keeps the tensor address it last encoded (a host global) and a 128-byte
device buffer (its address in another), which the runtime allocates when it loads the
program and frees with it (`mlc.backend.cuda_abi.TENSOR_MAP_BUFFER`). A call with the
same address returns that buffer at once; with another, the map is encoded on the host
stack (`cuTensorMapEncodeTiled`, host work alone) and copied over the old one with
`cuMemcpyHtoDAsync_v2`, ordered on the default stream after the launches that read the
old map. The shapes in a map are static (the site's), so the address is all that can
change. Between the check and the launch that reads the map, another call of the same
program must not encode: the runtime runs the calls of a program with tensor maps one
at a time.

The contraction pass emits `%map = func.call @__mlc_tensor_map(tensor, fields...)`
(`@__mlc_tensor_map3d` for a 3-D map, and so on to 5) with the fields of a checked `TiledMap` (so a
bad one fails at compile time, in one line); `convert-gpu-host-to-llvm` gives each call
site a stub of its own (`SITE_PREFIX`) and its body (`define`).
"""

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, func, llvm, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i32, i64
from xdsl.ir import Block, SSAValue

from mlc.backend.cuda_abi import TENSOR_MAP_BUFFER, TENSOR_MAP_PREFIX
from mlc.lowering.convert_to_llvm import llvm_ops
from mlc.lowering.convert_to_llvm.common import PTR, Builder
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.tensor_maps import MAP_ALIGNMENT, MAP_BYTES, TiledMap

STUB = "__mlc_tensor_map"  # what the contraction pass calls for a 2-D map
SITE_PREFIX = TENSOR_MAP_PREFIX  # + a number: one call site's stub and its globals
RANKS = (2, 3, 4, 5)  # a matrix, with up to 3 batch dims outside it
_ENUMS = 5  # i32 data type, interleave, swizzle, L2 promotion, OOB fill


def stub(rank: int) -> str:
    """The function the contraction pass calls for a map of `rank` dims."""
    return STUB if rank == 2 else f"{STUB}{rank}d"


def _inputs(rank: int) -> list:
    """The tensor's address, the enums, per dim an i64 size, per outer dim an i64 stride
    in bytes, per dim an i32 box size (innermost first, as `TiledMap`)."""
    return [IndexType(), *[i32] * _ENUMS, *[i64] * (2 * rank - 1), *[i32] * rank]


def rank_of(inputs: Sequence) -> int:
    """The rank of a map whose stub takes `inputs` (`_inputs`)."""
    return (len(inputs) - _ENUMS) // 3  # 1 + _ENUMS + 3 rank - 1


def made(host: Emitter, tensor: SSAValue, spec: TiledMap) -> SSAValue:
    """The device address (index) of `spec`'s map of `tensor` (a memref)."""
    assert spec.rank in RANKS
    _declare(host, spec.rank)
    tensor_at = host(memref.ExtractAlignedPointerAsIndexOp.get(tensor))
    data_type, _, interleave, swizzle, promotion, fill = spec.arguments()
    fields = [
        *(_constant(host, v, i32) for v in (data_type, interleave, swizzle, promotion, fill)),
        *(_constant(host, v, i64) for v in (*spec.dims, *spec.strides)),
        *(_constant(host, v, i32) for v in spec.box),
    ]
    return host(func.CallOp(stub(spec.rank), [tensor_at, *fields], [IndexType()]))


def _constant(host: Emitter, value: int, type_) -> SSAValue:
    return host(arith.ConstantOp.from_int_and_width(value, type_))


def _declare(host: Emitter, rank: int) -> None:
    module = host.op.get_toplevel_object()
    assert isinstance(module, ModuleOp)
    name = stub(rank)
    if not any(isinstance(op, func.FuncOp) and op.sym_name.data == name for op in module.ops):
        module.body.block.add_op(func.FuncOp.external(name, _inputs(rank), [IndexType()]))


def globals_of(site: str) -> tuple[str, str]:
    """A site's globals: the tensor address its map was made for, the map's buffer (the
    runtime's, set at load)."""
    return site + "_tensor", site + TENSOR_MAP_BUFFER


def define(declaration: llvm.FuncOp, record: Callable[[Builder, SSAValue], None]) -> None:
    """A site stub's body (llvm dialect; `record` keeps a driver call's status): the
    buffer at once when the tensor is the one last encoded, else a new map in it."""
    inputs = declaration.function_type.inputs.data
    entry, write, done = Block(arg_types=inputs), Block(), Block()
    tensor_slot, map_slot = globals_of(declaration.sym_name.data)
    tensor_at = entry.args[0]

    b = Builder()
    buffer = b.emit(llvm.LoadOp(b.emit(llvm.AddressOfOp(map_slot, PTR)), i64))
    last = b.emit(llvm.LoadOp(b.emit(llvm.AddressOfOp(tensor_slot, PTR)), i64))
    same = b.emit(llvm.ICmpOp(last, tensor_at, IntegerAttr(0, i64)))  # eq
    b.ops.append(llvm_ops.cond_branch(same, done, [], write, []))
    entry.add_ops(b.ops)

    b = Builder()
    encoded = _encode(b, buffer, entry.args, record)
    made_for = b.emit(llvm.SelectOp(encoded, tensor_at, b.value(0)))  # a refused map: no hit
    b.ops.append(llvm.StoreOp(made_for, b.emit(llvm.AddressOfOp(tensor_slot, PTR))))
    b.ops.append(llvm_ops.branch(done, []))
    write.add_ops(b.ops)

    done.add_op(llvm.ReturnOp(buffer))
    for block in (entry, write, done):
        for op in block.ops:
            op.location = declaration.location
        declaration.body.add_block(block)
    declaration.linkage = llvm.LinkageAttr("internal")


def _encode(b: Builder, buffer: SSAValue, args: Sequence[SSAValue], record) -> SSAValue:
    """Encode the map on the host stack, copy it to the device `buffer` (i64); whether
    the driver encoded it (i1)."""
    rank = rank_of(args)
    tensor_at, data_type, interleave, swizzle, promotion, fill = args[: 1 + _ENUMS]
    dims = args[1 + _ENUMS : 1 + _ENUMS + rank]
    strides = args[1 + _ENUMS + rank : 2 * rank + _ENUMS]
    box = args[2 * rank + _ENUMS :]
    host = b.emit(llvm.AllocaOp(b.value(MAP_BYTES // 8), i64, alignment=MAP_ALIGNMENT))
    one = b.emit(llvm.ConstantOp(IntegerAttr(1, i32), i32))
    rank_value = b.emit(llvm.ConstantOp(IntegerAttr(rank, i32), i32))
    arrays = [
        _array(b, dims, i64),
        _array(b, strides, i64),
        _array(b, box, i32),
        _array(b, [one] * rank, i32),  # element strides
    ]
    tensor = b.emit(llvm.IntToPtrOp(tensor_at))
    rc = _call(
        b, "cuTensorMapEncodeTiled",
        [host, data_type, rank_value, tensor, *arrays, interleave, swizzle, promotion, fill],
    )  # fmt: skip
    record(b, rc)
    device = b.emit(llvm.IntToPtrOp(buffer))
    stream = b.emit(llvm.ZeroOp.build(result_types=[PTR]))
    record(b, _call(b, "cuMemcpyHtoDAsync_v2", [device, host, b.value(MAP_BYTES), stream]))
    success = b.emit(llvm.ConstantOp(IntegerAttr(0, i32), i32))
    return b.emit(llvm.ICmpOp(rc, success, IntegerAttr(0, i64)))  # eq


def _call(b: Builder, name: str, args: Sequence[SSAValue]) -> SSAValue:
    rc = b.call(name, args, i32)
    assert rc is not None
    return rc


def _array(b: Builder, values: Sequence[SSAValue], type_) -> SSAValue:
    """A host stack array of `values` (all of `type_`)."""
    array = b.emit(llvm.AllocaOp(b.value(len(values)), type_))
    for i, value in enumerate(values):
        b.ops.append(llvm.StoreOp(value, b.emit(llvm.GEPOp(array, [i], type_))))
    return array
