"""
A tf32 wgmma operand made K-major before the kernel (`wgmma_kernel`).

tf32 wgmmas read both operands K-major from shared memory (PTX has no transpose flag
for them), so a row-major B[k, n] or a transposed A[k, m] (contiguous along its extent)
cannot be staged by 16-byte copies as it lies. It is transposed once, into
`[..., extent, k]`, and the contraction's generic is pointed at that copy with the
last two results of its indexing map swapped: the kernel then stages it as any K-major
operand.

- A compile-time constant (a `memref.get_global` of a weight: a resource this process
  holds, or a dense initial value) is transposed here, in numpy, into a global of its
  own (`<handle>.kmajor`): no kernel at all.
- Otherwise a transpose kernel runs first, into a device temporary (`memref.alloc`,
  freed by a `memref.dealloc` after the matmul's launch, as every temporary of a GPU
  program: `cuMemAllocAsync`/`cuMemFreeAsync` on the stream). Blocks of 32 x 8 threads
  move 32 x 32 tiles (each thread 4 values) through a shared tile padded to 33 columns,
  so that the column reads hit 32 banks; reads and writes are both coalesced (a warp
  reads 32 consecutive values of a row of the operand and writes 32 consecutive values
  of a row of the copy). A batched operand's leading dims are the grid's z.

The cost: the operand is read and written once more. At 8192, B is 256 MiB: 512 MiB of
traffic, about 0.1 ms on an H200 (4.8 TB/s) against about 2.6 ms for cuBLAS's tf32
matmul; the kernel's copies are then 16 bytes each, a quarter of the instructions of
one 4-byte copy an element.

Only an operand whose K is the second-to-last result of its map is transposed (the
matmuls the frontends make); `transposable` says why another is not.
"""

import numpy as np
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    IndexType,
    MemRefType,
    ModuleOp,
    StringAttr,
    TensorType,
    UnitAttr,
    f32,
)
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable

from mlc import resources
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.tile_staging import WORKGROUP

TILE = 32  # a block's tile of the operand: 32 x 32 values
ROWS_A_PASS = 8  # threads of a block: 32 x 8, each moving TILE // ROWS_A_PASS values
ALIGNMENT = 64  # bytes, as the other globals of constants


def transposable(op: GenericOp, operand: int, k: int) -> str | None:
    """Why operand `operand` (contiguous along its extent) cannot be made K-major, or None."""
    results = op.get_indexing_maps().data[operand].data.results
    second = results[-2] if len(results) >= 2 else None
    if not isinstance(second, AffineDimExpr) or second.position != k:
        return "an operand whose K is not next to its contiguous dim"
    return None


def make_k_major(host: Emitter, op: GenericOp, operand: int) -> list[Operation]:
    """Point `op`'s operand `operand` at a K-major copy, built at `host` (module
    docstring); the ops that free the copy once the kernel is done (to be placed after
    its launch)."""
    source = op.operands[operand]
    type_ = source.type
    assert isinstance(type_, MemRefType)
    shape = list(type_.get_shape())
    swapped = [*shape[:-2], shape[-1], shape[-2]]
    new_type = MemRefType(type_.element_type, swapped)
    frees: list[Operation] = []
    if (data := _constant(source)) is not None:
        copy = _constant_copy(host, source, np.swapaxes(data, -1, -2), new_type)
    else:
        copy = host(memref.AllocOp.get(type_.element_type, shape=swapped))
        _transpose_launch(host, source, copy, shape)
        frees.append(memref.DeallocOp.get(copy))
    maps = list(op.get_indexing_maps().data)
    old = maps[operand].data
    results = (*old.results[:-2], old.results[-1], old.results[-2])
    maps[operand] = AffineMapAttr(AffineMap(old.num_dims, old.num_symbols, results))
    op.properties["indexing_maps"] = ArrayAttr(maps)
    op.operands[operand] = copy
    return frees


def constant_global(source: SSAValue) -> memref.GlobalOp | None:
    """The constant `memref.global` whose `memref.get_global` `source` is, or None."""
    getter = source.owner
    if not isinstance(getter, memref.GetGlobalOp):
        return None
    module = getter.get_toplevel_object()
    if not isinstance(module, ModuleOp):
        return None
    found = SymbolTable.lookup_symbol(module, getter.name_)
    return found if isinstance(found, memref.GlobalOp) and found.constant is not None else None


def _constant(source: SSAValue) -> np.ndarray | None:
    """The data of a constant operand known here (a held resource, a dense f32 value)."""
    if (found := constant_global(source)) is None:
        return None
    type_ = source.type
    assert isinstance(type_, MemRefType)
    shape = tuple(type_.get_shape())
    value = found.initial_value
    if isinstance(value, DenseIntOrFPElementsAttr):
        values = np.asarray(value.get_values(), dtype=np.float32)
        return np.broadcast_to(values, shape) if values.size == 1 else values.reshape(shape)
    name = found.sym_name.data
    if not name.startswith(resources.PREFIX):
        return None
    data = resources.lookup(name.removeprefix(resources.PREFIX))
    return None if data is None or data.shape != shape else data


def _constant_copy(
    host: Emitter, source: SSAValue, data: np.ndarray, type_: MemRefType
) -> SSAValue:
    """A `memref.get_global` of a new global holding `data`, defined before the function."""
    found = constant_global(source)
    assert found is not None
    data = np.ascontiguousarray(data, dtype=np.float32)
    stem = found.sym_name.data.removeprefix(resources.PREFIX)
    if isinstance(found.initial_value, DenseIntOrFPElementsAttr):
        name = f"{stem}_kmajor"
        tensor = TensorType(f32, data.shape)
        initial = DenseIntOrFPElementsAttr.from_list(tensor, data.ravel().tolist())
        visibility = "private"
    else:
        name = resources.symbol_name(resources.register(data, f"{stem}.kmajor"))
        initial, visibility = UnitAttr(), "public"
    module = found.get_toplevel_object()
    assert isinstance(module, ModuleOp)
    if SymbolTable.lookup_symbol(module, name) is None:
        new = memref.GlobalOp.get(
            StringAttr(name), type_, initial, StringAttr(visibility), UnitAttr(), ALIGNMENT
        )
        module.body.block.insert_op_before(new, found)
    return host(memref.GetGlobalOp(name, type_))


def _transpose_launch(host: Emitter, source: SSAValue, copy: SSAValue, shape: list[int]) -> None:
    """`copy[..., c, r] = source[..., r, c]`: one block a 32 x 32 tile (module docstring)."""
    rows, cols = shape[-2], shape[-1]
    batch = int(np.prod(shape[:-2], dtype=np.int64))
    blocks = [host.index(-(-cols // TILE)), host.index(-(-rows // TILE)), host.index(batch)]
    threads = [host.index(TILE), host.index(ROWS_A_PASS), host.index(1)]
    body = Block(arg_types=[IndexType()] * 12)
    host(gpu.LaunchOp(Region(body), blocks, threads))
    k = host.region(body)
    x, y, z = (gpu.DimensionAttr(d) for d in gpu.DimensionEnum)
    bx, by, bz = (k(gpu.BlockIdOp(d)) for d in (x, y, z))
    tx, ty = k(gpu.ThreadIdOp(x)), k(gpu.ThreadIdOp(y))
    tile = k(memref.AllocaOp.get(f32, shape=[TILE, TILE + 1], memory_space=WORKGROUP))
    leading, rest = [], bz
    for size in reversed(shape[:-2]):
        leading.insert(0, k.rem(rest, size))
        rest = k.div(rest, size)
    row0, col0 = k.mul(by, TILE), k.mul(bx, TILE)
    n_rows, n_cols = k.index(rows), k.index(cols)
    for pass_ in range(TILE // ROWS_A_PASS):
        local = k.add(ty, pass_ * ROWS_A_PASS)
        row, col = k.add(row0, local), k.add(col0, tx)
        _guarded(k, row, n_rows, col, n_cols, source, [*leading, row, col], tile, [local, tx])
    k(gpu.BarrierOp())
    for pass_ in range(TILE // ROWS_A_PASS):
        local = k.add(ty, pass_ * ROWS_A_PASS)
        out_row, out_col = k.add(col0, local), k.add(row0, tx)  # a column, a row of source
        _guarded(k, out_row, n_cols, out_col, n_rows, tile, [tx, local], copy,
                 [*leading, out_row, out_col])  # fmt: skip
    k(gpu.TerminatorOp())


def _guarded(
    e: Emitter,
    first: SSAValue,
    first_size: SSAValue,
    second: SSAValue,
    second_size: SSAValue,
    read: SSAValue,
    read_at: list[SSAValue],
    write: SSAValue,
    write_at: list[SSAValue],
) -> None:
    """`write[write_at] = read[read_at]` when `first` and `second` are inside their sizes."""
    inside = e(arith.AndIOp(e.less(first, first_size), e.less(second, second_size)))
    then = Block()
    e(scf.IfOp(inside, [], [then]))
    s = Emitter(e.rewriter, InsertPoint.at_end(then), e.op)
    s(memref.StoreOp.get(s(memref.LoadOp.get(read, read_at)), write, write_at))
    s(scf.YieldOp())
