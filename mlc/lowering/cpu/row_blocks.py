"""
Runs of generics over the same rows, fused into one loop over blocks of rows.

A softmax lowers to generics over the same rows: a max of each row, a pass storing
`exp(x - max)` with the row's sum, per-row reciprocals, and a pass scaling the stored
exps; a layer norm likewise. Split one by one (`mlc.lowering.cpu.parallel_generic`), each
generic streams the whole input through the cache, so a 64 MB input is read from memory
twice. Here a run of consecutive generics on memrefs whose row loops have the same
extent, and that pass data to each other only row by row, becomes one loop over blocks
of R rows, each block running every generic of the run in order on views of its rows:

    scf.parallel %i0 = 0 to M step R {            (`scf.for` with one thread)
      %rows = min(R, M - %i0)
      generic_1 on rows [%i0, %i0 + %rows) of its operands indexed by its row loop
      ...
      generic_n on the same rows
    }

so the later generics find the block's rows in L2 (R: the rows of the widest operand
that fill half of L2, `tiling_model.rows_per_block`). The run is fused only if some
buffer is used by two of its generics (otherwise there is nothing to find in cache)
and its rows, when their number is static, do not all fit in one block (then they are
in L2 anyway, and one parallel loop per generic, or none, costs less code).

The conditions, so that each block computes what the generics computed one by one:
- each generic has a loop that splits into blocks (`parallel_generic.splittable_loop`:
  parallel, indexing every output, plainly where it indexes an operand), of the same
  static extent as the others', or, for a dynamic one, indexing a buffer at the
  dimension where another generic of the run indexes it with its row loop;
- every buffer that a generic of the run writes is accessed, by every generic of the
  run that uses it, as the same SSA value and with the row loop at the same dimension
  (buffers are told apart by following views to their source);
- between the generics only allocations, views, `memref.dim` and `arith` ops (moved
  above the run: generics on memrefs have no results, so none of them depends on the
  run) and deallocations (moved below it) may appear.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, MemRefType, UnknownLoc
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Block, Operation, Region, SSAValue

from mlc.lowering.cpu.parallel_generic import (
    block_of,
    loop_extent,
    loop_extents,
    row_position,
    splittable_loop,
)
from mlc.lowering.support.buffer_views import VIEWS, viewed_buffer
from mlc.lowering.support.loop_builder import Ops, for_loop
from mlc.lowering.support.op_walk import walk_ops
from mlc.tiling_model import rows_per_block

HOISTABLE = (memref.AllocOp, memref.DimOp, *VIEWS)
Use = tuple[SSAValue, int | bool | None]  # an operand and the dimension the row loop indexes


def _plain(position: int | bool | None) -> bool:
    """Whether a `row_position` is a dimension (not None: absent, nor False: mixed)."""
    return position is not None and position is not False


def _one_way(uses: list[Use]) -> bool:
    """Whether every use is the same value with the row loop at the same dimension."""
    return len({(id(v), p) for v, p in uses}) == 1 and all(_plain(p) for _, p in uses)


@dataclass
class _Run:
    """The generics taken so far, each with its row loop, and what the conditions need."""

    members: list[tuple[GenericOp, int]] = field(default_factory=list[tuple[GenericOp, int]])
    extent: int = 0  # the rows' static extent, negative if dynamic
    uses: dict[SSAValue, list[Use]] = field(default_factory=dict[SSAValue, list[Use]])
    written: set[SSAValue] = field(default_factory=set[SSAValue])

    def admits(self, op: GenericOp, d: int) -> bool:
        """Take `op` (row loop `d`) into the run if the conditions hold (module docstring)."""
        extent = loop_extents(op).get(d, -1)
        uses = {buffer: list(seen) for buffer, seen in self.uses.items()}
        written = set(self.written)
        connected = False
        for k, value in enumerate(op.operands):
            position = row_position(op, k, d)
            buffer = viewed_buffer(value)
            if buffer in uses and _plain(position):
                connected |= any(p == position and v is value for v, p in uses[buffer])
            uses.setdefault(buffer, []).append((value, position))
            if k >= len(op.inputs):
                written.add(buffer)
        if not all(_one_way(uses[buffer]) for buffer in written):
            return False  # a written buffer seen two ways: rows may not line up
        if self.members and not self._same_rows(extent, connected):
            return False
        if not self.members:
            self.extent = extent
        self.uses, self.written = uses, written
        self.members.append((op, d))
        return True

    def _same_rows(self, extent: int, connected: bool) -> bool:
        """Whether a generic with row extent `extent` runs over the run's rows: equal
        static extents, or (dynamic) a buffer indexed at the same dimension."""
        if extent < 0 or self.extent < 0:
            return connected
        return extent == self.extent

    def worth_it(self) -> bool:
        """Two generics at least, a buffer that two of them use, and more rows than one
        block holds (rows that all fit in L2 are found there without blocks)."""
        if len(self.members) < 2 or not any(len(seen) > 1 for seen in self.uses.values()):
            return False
        return self.extent < 0 or rows_per_block(self.row_bytes(), 1, self.extent) < self.extent

    def row_bytes(self) -> int:
        """Bytes of one row of the widest operand (for the block size)."""
        widest = 1
        for op, d in self.members:
            for k, value in enumerate(op.operands):
                position = row_position(op, k, d)
                type_ = value.type
                if not _plain(position) or not isinstance(type_, MemRefType):
                    continue
                size = type_.element_type.bitwidth // 8  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
                for r, extent in enumerate(type_.get_shape()):
                    if r != position:
                        size *= extent if extent > 0 else 1024
                widest = max(widest, size)
        return widest


@dataclass
class _Found:
    run: _Run = field(default_factory=_Run)
    hoist: list[Operation] = field(default_factory=list[Operation])
    sink: list[Operation] = field(default_factory=list[Operation])


def _runs(block: Block) -> list[_Found]:
    """The runs worth fusing in `block`, each with the ops to move above and below it."""
    found: list[_Found] = []
    current = _Found()
    pending: list[Operation] = []  # ops since the last generic of the run
    for op in list(block.ops):
        d = splittable_loop(op) if isinstance(op, GenericOp) else None
        if isinstance(op, GenericOp) and d is not None:
            if current.run.admits(op, d):
                current.hoist += [o for o in pending if not isinstance(o, memref.DeallocOp)]
                current.sink += [o for o in pending if isinstance(o, memref.DeallocOp)]
            else:
                if current.run.worth_it():
                    found.append(current)
                current = _Found()
                current.run.admits(op, d)
            pending = []
        elif current.run.members and (_hoistable(op) or isinstance(op, memref.DeallocOp)):
            pending.append(op)
        else:
            if current.run.worth_it():
                found.append(current)
            current, pending = _Found(), []
    if current.run.worth_it():
        found.append(current)
    return found


def _hoistable(op: Operation) -> bool:
    if isinstance(op, HOISTABLE):
        return True
    return op.dialect_name() == "arith" and not op.regions


def _move(found: _Found) -> None:
    """The hoisted ops above the run's first generic, the sunk ones below its last."""
    first, _ = found.run.members[0]
    last, _ = found.run.members[-1]
    block = first.parent_block()
    assert block is not None
    for op in found.hoist:
        op.detach()
        block.insert_op_before(op, first)
    after = last.next_op
    for op in found.sink:
        op.detach()
        if after is None:
            block.add_op(op)
        else:
            block.insert_op_before(op, after)


def _fuse(found: _Found, threads: int) -> None:
    run = found.run
    _move(found)
    first, d0 = run.members[0]
    b = Ops()
    extent = loop_extent(b, first, d0)
    step = b.index(rows_per_block(run.row_bytes(), threads, run.extent))
    zero = b.index(0)

    def body(ib: Ops, start: SSAValue) -> Sequence[SSAValue]:
        size = ib.min(step, ib(arith.SubiOp(extent, start)))
        for op, d in run.members:
            ib.ops.append(block_of(ib, op, d, start, size))
        return []

    if threads > 1:
        loop_block = Block(arg_types=[IndexType()])
        inner = Ops()
        body(inner, loop_block.args[0])
        loop_block.add_ops([*inner.ops, scf.ReduceOp()])
        b.ops.append(scf.ParallelOp([zero], [extent], [step], Region(loop_block)))
    else:
        for_loop(b, zero, extent, step, lambda fb, iv, _: body(fb, iv))
    for new in b.ops:
        for inner_op in walk_ops(new):
            if isinstance(inner_op.location, UnknownLoc):  # str() of a location costs ~60 us
                inner_op.location = first.location
    block = first.parent_block()
    assert block is not None
    block.insert_ops_before(b.ops, first)
    for op, _ in run.members:
        op.detach()
        op.erase()


def fuse_row_blocks(top: Operation, threads: int) -> None:
    """Fuse every run worth fusing under `top` (module docstring)."""
    blocks = [block for op in walk_ops(top) for region in op.regions for block in region.blocks]
    for block in blocks:
        if isinstance(block.parent_op(), scf.ParallelOp):
            continue  # already a block of something split
        for found in _runs(block):
            _fuse(found, threads)
