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

Per launch, before it, the host code allocates 128 bytes of device memory, encodes the
map on the host (`cuTensorMapEncodeTiled`: host work alone, about a microsecond) and
copies it over with `cuMemcpyHtoDAsync_v2`; both are ordered before the launch on the
default stream, and the buffer is freed (stream-ordered) after it. The map holds the
operand's address, which for a program's intermediate buffers is only known when the
host code runs, so it is encoded there rather than once by the runtime.

The contraction pass emits `func.call @__mlc_tensor_map(map, tensor, fields...)` with
the fields of a checked `TiledMap` (so a bad one fails at compile time, in one line);
`convert-gpu-host-to-llvm` gives the declaration its body (`define`).
"""

from collections.abc import Sequence

from xdsl.dialects import arith, func, llvm, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, ModuleOp, i32, i64
from xdsl.ir import SSAValue

from mlc.lowering.convert_to_llvm.common import PTR, Builder
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.tensor_maps import MAP_ALIGNMENT, MAP_BYTES, TiledMap

STUB = "__mlc_tensor_map"
# (map, tensor) addresses, then i32 data type, interleave, swizzle, L2 promotion, OOB
# fill, then per dim (2) i64 size, then i64 outer stride, then per dim i32 box size
_INPUTS = [IndexType(), IndexType(), *[i32] * 5, i64, i64, i64, i32, i32]


def made(host: Emitter, tensor: SSAValue, spec: TiledMap) -> tuple[SSAValue, SSAValue]:
    """A device buffer holding `spec`'s map of `tensor` (a 2-D memref), and its address
    (index) for the kernel; the caller frees the buffer after the launch."""
    assert spec.rank == 2
    _declare(host)
    buffer = host(memref.AllocOp.get(i64, shape=[MAP_BYTES // 8], alignment=MAP_ALIGNMENT))
    at = host(memref.ExtractAlignedPointerAsIndexOp.get(buffer))
    tensor_at = host(memref.ExtractAlignedPointerAsIndexOp.get(tensor))
    data_type, _, interleave, swizzle, promotion, fill = spec.arguments()
    fields = [
        *(_constant(host, v, i32) for v in (data_type, interleave, swizzle, promotion, fill)),
        *(_constant(host, v, i64) for v in (*spec.dims, *spec.strides)),
        *(_constant(host, v, i32) for v in spec.box),
    ]
    host(func.CallOp(STUB, [at, tensor_at, *fields], []))
    return buffer, at


def _constant(host: Emitter, value: int, type_) -> SSAValue:
    return host(arith.ConstantOp.from_int_and_width(value, type_))


def _declare(host: Emitter) -> None:
    module = host.op.get_toplevel_object()
    assert isinstance(module, ModuleOp)
    if not any(isinstance(op, func.FuncOp) and op.sym_name.data == STUB for op in module.ops):
        module.body.block.add_op(func.FuncOp.external(STUB, _INPUTS, []))


def define(b: Builder, args: Sequence[SSAValue], record) -> None:
    """The stub's body (llvm dialect; `record` keeps a driver call's status): encode the
    map on the host stack, copy it to the device buffer."""
    map_at, tensor_at, data_type, interleave, swizzle, promotion, fill = args[:7]
    dims, stride, box = args[7:9], args[9], args[10:12]
    host = b.emit(llvm.AllocaOp(b.value(MAP_BYTES // 8), i64, alignment=MAP_ALIGNMENT))
    sizes = _array(b, dims, i64)
    strides = _array(b, [stride], i64)
    boxes = _array(b, box, i32)
    one = b.emit(llvm.ConstantOp(IntegerAttr(1, i32), i32))
    steps = _array(b, [one, one], i32)
    rank = b.emit(llvm.ConstantOp(IntegerAttr(2, i32), i32))
    tensor = b.emit(llvm.IntToPtrOp(tensor_at))
    rc = b.call(
        "cuTensorMapEncodeTiled",
        [host, data_type, rank, tensor, sizes, strides, boxes, steps, interleave, swizzle,
         promotion, fill],
        i32,
    )  # fmt: skip
    record(b, rc)
    device = b.emit(llvm.IntToPtrOp(map_at))
    stream = b.emit(llvm.ZeroOp.build(result_types=[PTR]))
    rc = b.call("cuMemcpyHtoDAsync_v2", [device, host, b.value(MAP_BYTES), stream], i32)
    record(b, rc)


def _array(b: Builder, values: Sequence[SSAValue], type_) -> SSAValue:
    """A host stack array of `values` (all of `type_`)."""
    array = b.emit(llvm.AllocaOp(b.value(len(values)), type_))
    for i, value in enumerate(values):
        b.ops.append(llvm.StoreOp(value, b.emit(llvm.GEPOp(array, [i], type_))))
    return array
