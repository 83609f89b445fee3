"""
Loops over a scatter's updates (`scf.for` marked `mlc.atomic_updates`,
`convert_ml_to_linalg/scatter_atomic.py`) to parallel loops, one iteration a thread, whose
read-combine-write of a destination is one atomic:

    %r = scf.for %t = %lb to %ub step %s iter_args(%acc = %buf) -> (memref<6x4xf32>) {
      ... %old = memref.load %acc[%p, %c] ; %new = arith.addf %old, %u
      memref.store %new, %acc[%p, %c] ; scf.yield %acc } {mlc.atomic_updates}
==>
    scf.parallel (%t) = (%lb) to (%ub) step (%s) {
      ... %a = <generic address of %buf[%p, %c]>
      llvm.inline_asm has_side_effects "red.add.f32 [$0], $1;", "l,f,~{memory}" %a, %u
      scf.reduce }

The combines and their PTX (generic addressing, relaxed, device scope):

- `addi`, `addf`: `red.add.u32` / `.u64`, `red.add.f32` / `.f64`;
- `maxsi`, `minsi`, `maxui`, `minui` (i32, i64): `red.max.s32` ... `red.min.u64`;
- `maximumf`, `minimumf` (f32, f64) on the bits: `red.max.s32` where `x` is not
  negative, else `red.min.u32` (mirrored for min), exact for every non-NaN value; a
  NaN update with its sign bit set is dropped;
- `select %c, %x, %old`: a store of `%x` under `scf.if %c` (reduction `none`'s
  winners write alone).

The stored buffer must be carried in place (yielded unchanged) with an identity layout,
and read in the loop only by the matched load. A loop that does not fit (another
combine, `mul`, an f16 sum, a strided buffer) is marked `mlc.sequential` instead and
runs as written on one thread (`sequential_loops`): correct, slower.
"""

from xdsl.dialects import arith, llvm, memref, scf
from xdsl.dialects.builtin import (
    Float32Type,
    Float64Type,
    IndexType,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    UnitAttr,
    i32,
    i64,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.lowering.gpu.sequential_loops import SEQUENTIAL
from mlc.lowering.support.locations import located_builder
from mlc.lowering.support.op_walk import inside

ATOMIC = "mlc.atomic_updates"  # the mark `convert_ml_to_linalg.scatter_atomic` sets

_INTEGER = {
    arith.AddiOp: "add.u",
    arith.MaxSIOp: "max.s",
    arith.MinSIOp: "min.s",
    arith.MaxUIOp: "max.u",
    arith.MinUIOp: "min.u",
}
_FLOAT = (arith.AddfOp, arith.MaximumfOp, arith.MinimumfOp)


class _Update:
    """One matched read-combine-write: `load`, the combining `op`, `store`."""

    def __init__(self, load: memref.LoadOp, op: Operation, store: memref.StoreOp):
        self.load, self.op, self.store = load, op, store

    @property
    def operand(self) -> SSAValue:
        """The value combined with (or, for `select`, written over) the old one."""
        if isinstance(self.op, arith.SelectOp):
            return self.op.lhs
        lhs, rhs = self.op.operands
        return rhs if lhs is self.load.res else lhs


def _element_ok(op: Operation, element) -> bool:
    if isinstance(op, arith.SelectOp):
        return True
    if type(op) in _INTEGER:
        return isinstance(element, IntegerType) and element.width.data in (32, 64)
    return isinstance(op, _FLOAT) and isinstance(element, Float32Type | Float64Type)


def _match_store(store: memref.StoreOp) -> _Update | None:
    op = store.value.owner
    if not isinstance(op, Operation) or op.parent is not store.parent:
        return None
    if isinstance(op, arith.SelectOp):
        load = op.rhs.owner
    elif type(op) in _INTEGER or isinstance(op, _FLOAT):
        load = next(
            (
                v.owner
                for v in op.operands
                if isinstance(v.owner, memref.LoadOp) and v.owner.memref is store.memref
            ),
            None,
        )
    else:
        return None
    if not isinstance(load, memref.LoadOp) or load.memref is not store.memref:
        return None
    if list(load.indices) != list(store.indices) or load.res.uses.get_length() != 1:
        return None
    if op.results[0].uses.get_length() != 1 or not _element_ok(op, store.value.type):
        return None
    update = _Update(load, op, store)
    if isinstance(op, arith.SelectOp) and update.operand is load.res:
        return None
    if not isinstance(op, arith.SelectOp) and update.operand is load.res:
        return None  # old combined with itself
    return update


def _plan(loop: scf.ForOp) -> list[_Update] | None:
    """The loop's read-combine-writes when the whole loop fits (module docstring)."""
    if loop.parent_op() is None or inside(loop, scf.ParallelOp):
        return None
    body = loop.body.block
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    carried: set[SSAValue] = set()
    for i, init in enumerate(loop.iter_args):
        arg = body.args[i + 1]
        if not isinstance(init.type, MemRefType) or yielded.operands[i] is not arg:
            return None
        if not isinstance(init.type.layout, NoneAttr):
            return None
        carried.add(arg)
    updates: list[_Update] = []
    matched_loads: set[Operation] = set()
    for op in loop.body.walk():
        if isinstance(op, memref.StoreOp) and op.memref in carried:
            if op.parent is not body or (update := _match_store(op)) is None:
                return None
            updates.append(update)
            matched_loads.add(update.load)
    for op in loop.body.walk():
        reads = [v for v in op.operands if v in carried]
        if reads and not isinstance(op, memref.StoreOp | scf.YieldOp) and op not in matched_loads:
            return None
    return updates


def _address(build, buffer: SSAValue, indices) -> SSAValue:
    """The generic address (i64) of `buffer[indices]`, a row-major memref, no offset."""
    type_ = buffer.type
    assert isinstance(type_, MemRefType)

    def index(value: int) -> SSAValue:
        return build.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result

    linear = indices[0] if indices else index(0)
    for dim, at in enumerate(indices[1:], start=1):
        size = type_.get_shape()[dim]
        extent = index(size) if size >= 0 else build.insert(memref.DimOp(buffer, index(dim))).result
        linear = build.insert(arith.AddiOp(build.insert(arith.MuliOp(linear, extent)).result, at))
        linear = linear.result
    width = type_.element_type.bitwidth // 8  # pyright: ignore[reportAttributeAccessIssue]
    offset = build.insert(arith.MuliOp(linear, index(width))).result
    base = build.insert(memref.ExtractAlignedPointerAsIndexOp.get(buffer)).results[0]
    address = build.insert(arith.AddiOp(base, offset)).result
    return build.insert(arith.IndexCastOp(address, i64)).result


def atomic_text(op: Operation, bits: int) -> tuple[str, str]:
    """The PTX of the atomic for combine `op` on `bits`-wide values, and its constraints."""
    reg = "l" if bits == 64 else "r"
    if type(op) in _INTEGER:
        return f"red.{_INTEGER[type(op)]}{bits} [$0], $1;", f"l,{reg},~{{memory}}"
    if isinstance(op, arith.AddfOp):
        return f"red.add.f{bits} [$0], $1;", f"l,{'d' if bits == 64 else 'f'},~{{memory}}"
    first, second = ("max.s", "min.u") if isinstance(op, arith.MaximumfOp) else ("min.s", "max.u")
    text = (
        f"{{ .reg .pred p; setp.ge.s{bits} p, $1, 0; "
        f"@p red.{first}{bits} [$0], $1; @!p red.{second}{bits} [$0], $1; }}"
    )
    return text, f"l,{reg},~{{memory}}"


def _rewrite_update(update: _Update, buffer: SSAValue) -> None:
    store = update.store
    build = located_builder(InsertPoint.before(store), store.location)
    value = update.operand
    if isinstance(update.op, arith.SelectOp):
        then = Block()
        then.add_op(memref.StoreOp.get(value, buffer, list(store.indices)))
        then.add_op(scf.YieldOp())
        build.insert(scf.IfOp(update.op.cond, [], Region(then)))
    else:
        address = _address(build, buffer, list(store.indices))
        bits = value.type.bitwidth  # pyright: ignore[reportAttributeAccessIssue]
        if isinstance(update.op, arith.MaximumfOp | arith.MinimumfOp):
            value = build.insert(arith.BitcastOp(value, i64 if bits == 64 else i32)).result
        text, constraints = atomic_text(update.op, bits)
        build.insert(llvm.InlineAsmOp(text, constraints, [address, value], has_side_effects=True))
    Rewriter.erase_op(store)
    Rewriter.erase_op(update.op)
    Rewriter.erase_op(update.load)


def _parallelize(loop: scf.ForOp, updates: list[_Update]) -> None:
    body = loop.body.block
    inits = list(loop.iter_args)
    for i, init in enumerate(inits):
        body.args[i + 1].replace_all_uses_with(init)
        loop.results[i].replace_all_uses_with(init)
    for update in updates:
        _rewrite_update(update, update.store.memref)
    yielded = body.last_op
    assert yielded is not None
    Rewriter.erase_op(yielded)
    block = Block(arg_types=[IndexType()])
    body.args[0].replace_all_uses_with(block.args[0])
    for op in list(body.ops):
        op.detach()
        block.add_op(op)
    block.add_op(scf.ReduceOp())
    outside = located_builder(InsertPoint.before(loop), loop.location)
    outside.insert(scf.ParallelOp([loop.lb], [loop.ub], [loop.step], Region(block)))
    Rewriter.erase_op(loop)


def parallelize_atomic_loops(module: ModuleOp) -> None:
    """Every `mlc.atomic_updates` loop of `module` to a parallel loop of atomics, or,
    where one does not fit, marked to run on one thread (module docstring)."""
    loops = [op for op in module.walk() if isinstance(op, scf.ForOp) and ATOMIC in op.attributes]
    for loop in loops:
        updates = _plan(loop)
        if updates is None:
            loop.attributes[SEQUENTIAL] = UnitAttr()
        else:
            _parallelize(loop, updates)
