"""
The body of the GPU's shared-memory tiled contraction kernel, for one `TileShape`.

A block computes a `rows x cols` tile of the output (block x, y, z: columns, rows,
batch) with `TileShape.threads` threads, each holding `thread_rows x thread_cols`
accumulators in registers:

- the K loop walks slices of `depth`: the threads copy the A slice (transposed, rows
  padded by `PAD` floats so the copies do not conflict on banks) and the B slice into
  shared memory (`memref.alloca` in address space 3), two buffers alternating so one
  `gpu.barrier` per slice suffices, and the next slice's global loads are issued before
  the current slice's arithmetic, hiding their latency;
- a thread's rows are `4 ty + i` plus multiples of `4 rows / thread_rows` (columns
  likewise with `tx`): each 4-wide group is one 16-byte shared load, and a warp's
  stores cover contiguous runs of the output; products accumulate with `math.fma`;
- out-of-range rows and columns are clamped for loads and skipped at the store;
  K's tail is zero-filled, which leaves `acc + a * b` unchanged;
- a fused epilogue runs on each finished accumulator before its store, its other
  inputs read at the output element; a fill's constant is the accumulators' start.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, gpu, math, memref, scf, vector
from xdsl.dialects.builtin import FloatAttr, IndexType, IntegerAttr, VectorType, f32, i64
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.transforms.loop_nest_lowering_utils import indices_for_map

from mlc.lowering.fills import filled_with
from mlc.lowering.gpu_contraction_match import Contraction
from mlc.lowering.gpu_mma import MMA_DEPTH, WARP_COLS, WARP_ROWS, lane_rows_cols, mma_step

QUAD = 4  # floats per 16-byte shared load; thread tiles are made of 4-wide groups
PAD = 4  # floats padding each row of the transposed A slice (bank-conflict-free copies)
WORKGROUP = IntegerAttr(3, i64)  # NVVM's shared address space


@dataclass(frozen=True)
class TileShape:
    """A block's output tile, each thread's part of it, and the K slice depth."""

    rows: int
    cols: int
    thread_rows: int
    thread_cols: int
    depth: int = 8
    tf32: bool = False  # tensor cores (`mlc.lowering.gpu_mma`) instead of `math.fma`

    @property
    def threads(self) -> int:
        return (self.rows // self.thread_rows) * (self.cols // self.thread_cols)

    @property
    def a_copies(self) -> int:
        """Elements of each A slice one thread copies (a run along K)."""
        return self.rows * self.depth // self.threads

    @property
    def b_copies(self) -> int:
        """Elements of each B slice one thread copies (a run along the columns)."""
        return self.cols * self.depth // self.threads

    def problem(self) -> str | None:
        """Why this shape cannot be built, or None."""
        if self.thread_rows % QUAD or self.thread_cols % QUAD:
            return "thread tiles must be multiples of 4 in both dims"
        if self.rows % self.thread_rows or self.cols % self.thread_cols:
            return "the block tile must be a multiple of the thread tile"
        if (self.rows // self.thread_rows) % QUAD or (self.cols // self.thread_cols) % QUAD:
            return "a block needs a multiple of 4 threads along rows and columns"
        if not 32 <= self.threads <= 1024:
            return f"{self.threads} threads a block (32 to 1024 allowed)"
        if self.tf32 and (
            (self.thread_rows, self.thread_cols) != (8, 8)
            or self.rows % WARP_ROWS
            or self.cols % WARP_COLS
            or self.depth % MMA_DEPTH
        ):
            return "tf32 tiles are 64x32 warp tiles of 8x8 a thread, 8-deep steps"
        a, b = self.a_copies, self.b_copies
        if a == 0 or b == 0 or self.depth % a or self.cols % b:
            return "the threads cannot share the slice copies evenly"
        return None

    def __str__(self) -> str:
        return f"{self.rows}x{self.cols}/{self.thread_rows}x{self.thread_cols}/{self.depth}"


class Emitter:
    """Appends ops at a moving point, each with the location of the generic."""

    def __init__(self, rewriter: PatternRewriter, point: InsertPoint, location: object):
        self.rewriter = rewriter
        self.point = point
        self.location = location

    def __call__(self, new: Operation) -> SSAValue:
        new.location = self.location  # pyright: ignore[reportAttributeAccessIssue]
        self.rewriter.insert(new, self.point)
        return new.results[0] if new.results else None  # pyright: ignore[reportReturnType]

    def index(self, value: int) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr.from_index_int_value(value)))

    def add(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.AddiOp(a, self.index(b) if isinstance(b, int) else b))

    def mul(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.MuliOp(a, self.index(b) if isinstance(b, int) else b))

    def div(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.DivUIOp(a, self.index(b) if isinstance(b, int) else b))

    def rem(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.RemUIOp(a, self.index(b) if isinstance(b, int) else b))

    def ceil_div(self, a: SSAValue, b: int) -> SSAValue:
        return self.div(self.add(a, b - 1), b)

    def less(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.CmpiOp(a, b, "ult"))

    def zero(self) -> SSAValue:
        return self(arith.ConstantOp(FloatAttr(0.0, f32)))

    def load(self, op: GenericOp, index: int, ivs: Sequence[SSAValue]) -> SSAValue:
        """Operand `index` of `op` at loop indices `ivs` (through its indexing map)."""
        affine_map = op.get_indexing_maps().data[index].data
        indices = indices_for_map(self.rewriter, self.point, affine_map, ivs)
        for value in indices:
            if isinstance(value.owner, Operation):
                value.owner.location = self.location  # pyright: ignore[reportAttributeAccessIssue]
        return self(memref.LoadOp.get(op.operands[index], indices))

    def region(self, body: Block) -> "Emitter":
        return Emitter(self.rewriter, InsertPoint.at_end(body), self.location)


@dataclass
class _Kernel:
    """Builds the launch body for one contraction (the steps of the module docstring)."""

    c: Contraction
    emit: Emitter
    bounds: list[SSAValue]
    batch_ivs: list[SSAValue]
    shape: TileShape

    def ivs(self, row: SSAValue, col: SSAValue, k: SSAValue) -> list[SSAValue]:
        values: list[SSAValue] = [k] * len(self.bounds)
        for dim, iv in zip(self.c.batch, self.batch_ivs, strict=True):
            values[dim] = iv
        values[self.c.rows], values[self.c.cols], values[self.c.k] = row, col, k
        return values

    def build(self, bx: SSAValue, by: SSAValue, tid: SSAValue) -> None:
        emit, c, shape = self.emit, self.c, self.shape
        depth, a_copies, b_copies = shape.depth, shape.a_copies, shape.b_copies
        m, n, k = self.bounds[c.rows], self.bounds[c.cols], self.bounds[c.k]
        a_shape = [2, depth, shape.rows + PAD]
        a_tiles = emit(memref.AllocaOp.get(f32, shape=a_shape, memory_space=WORKGROUP))
        b_shape = [2, depth, shape.cols + (PAD if shape.tf32 else 0)]
        b_tiles = emit(memref.AllocaOp.get(f32, shape=b_shape, memory_space=WORKGROUP))
        last_row = emit(arith.SubiOp(m, emit.index(1)))
        last_col = emit(arith.SubiOp(n, emit.index(1)))
        row0, col0 = emit.mul(by, shape.rows), emit.mul(bx, shape.cols)
        across = shape.cols // shape.thread_cols  # threads along a row of the tile
        tx, ty = emit.rem(tid, across), emit.div(tid, across)
        lanes = None
        if shape.tf32:
            rows, cols, lanes = lane_rows_cols(emit, shape, row0, col0, tid)
        else:
            rows = self._mine(row0, ty, shape.rows, shape.thread_rows)
            cols = self._mine(col0, tx, shape.cols, shape.thread_cols)
        zero_index = emit.index(0)
        clamped_rows = [emit(arith.MinUIOp(r, last_row)) for r in rows]
        clamped_cols = [emit(arith.MinUIOp(x, last_col)) for x in cols]
        init = self._initial(clamped_rows, clamped_cols, zero_index)
        # Each thread copies a run of A along K (row tid / (depth / a_copies)) and a
        # run of B along the columns (k row tid / (cols / b_copies)).
        a_row = emit.div(tid, depth // a_copies)
        a_k = emit.mul(emit.rem(tid, depth // a_copies), a_copies)
        a_source = emit(arith.MinUIOp(emit.add(row0, a_row), last_row))
        b_k = emit.div(tid, shape.cols // b_copies)
        b_col = emit.mul(emit.rem(tid, shape.cols // b_copies), b_copies)
        b_sources = [
            emit(arith.MinUIOp(emit.add(col0, emit.add(b_col, j)), last_col))
            for j in range(b_copies)
        ]

        def slice_loads(e: Emitter, first: SSAValue) -> list[SSAValue]:
            last_k = e(arith.SubiOp(k, e.index(1)))
            values = []
            for kk, row_or_col in [(e.add(a_k, j), None) for j in range(a_copies)] + [
                (b_k, x) for x in b_sources
            ]:
                index = e.add(first, kk)
                clamped = e(arith.MinUIOp(index, last_k))
                if row_or_col is None:
                    value = e.load(c.op, c.a, self.ivs(a_source, zero_index, clamped))
                else:
                    value = e.load(c.op, c.b, self.ivs(zero_index, row_or_col, clamped))
                values.append(e(arith.SelectOp(e.less(index, k), value, e.zero())))
            return values

        slices = emit.ceil_div(k, depth)
        then, otherwise = Block(), Block()
        staged_types = [f32] * (a_copies + b_copies)
        first_loads = emit(
            scf.IfOp(emit.less(zero_index, slices), staged_types, [then], [otherwise])
        )
        first = first_loads.owner
        inner = emit.region(then)
        inner(scf.YieldOp(*slice_loads(inner, zero_index)))
        inner = emit.region(otherwise)
        zero = inner.zero()
        inner(scf.YieldOp(*[zero] * len(staged_types)))

        width = shape.thread_cols
        outputs = shape.thread_rows * width
        body = Block(arg_types=[IndexType(), *[f32] * outputs, *staged_types])
        loop = scf.ForOp(zero_index, slices, emit.index(1), [*init, *first.results], Region(body))
        emit(loop)
        e = emit.region(body)
        t, accs = body.args[0], list(body.args[1 : 1 + outputs])
        staged = list(body.args[1 + outputs :])
        buffer = e.rem(t, 2)
        for j in range(a_copies):
            e(memref.StoreOp.get(staged[j], a_tiles, [buffer, e.add(a_k, j), a_row]))
        for j in range(b_copies):
            e(memref.StoreOp.get(staged[a_copies + j], b_tiles, [buffer, b_k, e.add(b_col, j)]))
        e(gpu.BarrierOp())
        following = slice_loads(e, e.mul(e.add(t, 1), depth))
        if lanes is not None:
            for kk in range(0, depth, MMA_DEPTH):
                mma_step(e, (a_tiles, b_tiles), buffer, kk, accs, lanes)
        else:
            self._fmas(e, (a_tiles, b_tiles), buffer, (tx, ty), accs)
        e(scf.YieldOp(*accs, *following))
        self._stores(list(loop.results)[:outputs], rows, cols)

    def _fmas(
        self,
        e: Emitter,
        tiles: tuple[SSAValue, SSAValue],
        buffer: SSAValue,
        lane: tuple[SSAValue, SSAValue],
        accs: list[SSAValue],
    ) -> None:
        """A slice's products: 16-byte shared loads feeding `math.fma`s into `accs`."""
        shape, width = self.shape, self.shape.thread_cols
        a_offsets = self._mine(e.index(0), lane[1], shape.rows, shape.thread_rows, e)[::QUAD]
        b_offsets = self._mine(e.index(0), lane[0], shape.cols, shape.thread_cols, e)[::QUAD]
        for kk in range(shape.depth):
            step = e.index(kk)
            a_values = self._quads(e, tiles[0], [buffer, step], a_offsets)
            b_values = self._quads(e, tiles[1], [buffer, step], b_offsets)
            for i, a_value in enumerate(a_values):
                for j, b_value in enumerate(b_values):
                    accs[width * i + j] = e(math.FmaOp(a_value, b_value, accs[width * i + j]))

    def _stores(self, results: list[SSAValue], rows: list[SSAValue], cols: list[SSAValue]) -> None:
        """Each finished accumulator through the epilogue to the output, inside the bounds."""
        emit, c = self.emit, self.c
        m, n = self.bounds[c.rows], self.bounds[c.cols]
        zero_index = emit.index(0)
        for i, row in enumerate(rows):
            for j, col in enumerate(cols):
                inside = emit(arith.AndIOp(emit.less(row, m), emit.less(col, n)))
                store = Block()
                emit(scf.IfOp(inside, [], [store]))
                s = emit.region(store)
                self._store(s, results[len(cols) * i + j], self.ivs(row, col, zero_index))
                s(scf.YieldOp())

    def _initial(
        self, rows: list[SSAValue], cols: list[SSAValue], zero: SSAValue
    ) -> list[SSAValue]:
        """The accumulators' start: the fill's constant, or the output's elements."""
        c, emit = self.c, self.emit
        if c.fill is not None:
            constant = filled_with(c.fill)
            assert constant is not None and isinstance(constant.owner, Operation)
            return [emit(constant.owner.clone())] * (len(rows) * len(cols))
        out = len(c.op.inputs)
        return [emit.load(c.op, out, self.ivs(r, x, zero)) for r in rows for x in cols]

    def _mine(
        self, base: SSAValue, lane: SSAValue, tile: int, per_thread: int, e: Emitter | None = None
    ) -> list[SSAValue]:
        """A thread's rows (or columns): base + 4 lane + [0, 4), and the groups after it."""
        e = e or self.emit
        first = e.add(base, e.mul(lane, QUAD))
        groups = per_thread // QUAD
        spacing = tile // groups
        return [e.add(first, g * spacing + j) for g in range(groups) for j in range(QUAD)]

    @staticmethod
    def _quads(
        e: Emitter, tile: SSAValue, outer: list[SSAValue], starts: list[SSAValue]
    ) -> list[SSAValue]:
        """The 4 floats at each start of a shared tile's row, one 16-byte load each."""
        quad = VectorType(f32, [QUAD])
        values = []
        for start in starts:
            load = vector.LoadOp(tile, [*outer, start], quad)
            load.attributes["alignment"] = IntegerAttr(16, i64)
            loaded = e(load)
            values += [e(vector.ExtractOp(loaded, [j], f32)) for j in range(QUAD)]
        return values

    def _store(self, e: Emitter, value: SSAValue, ivs: list[SSAValue]) -> None:
        c = self.c
        if c.epilogue is not None:
            block = c.op.body.block
            accumulated = c.accumulate[-1].results[0]
            mapping: dict[SSAValue, SSAValue] = {accumulated: value}
            for i, arg in enumerate(block.args[: len(c.op.inputs)]):
                if i not in (c.a, c.b) and arg.uses:
                    mapping[arg] = e.load(c.op, i, ivs)
            for inner in c.epilogue.true_region.block.ops:
                if isinstance(inner, scf.YieldOp):
                    value = mapping.get(inner.operands[0], inner.operands[0])
                    break
                if isinstance(inner, IndexOp):
                    mapping[inner.result] = ivs[inner.dim.value.data]
                    continue
                clone = inner.clone(value_mapper=mapping)
                e.rewriter.insert(clone, e.point)
        out = len(c.op.inputs)
        affine_map = c.op.get_indexing_maps().data[out].data
        indices = indices_for_map(e.rewriter, e.point, affine_map, ivs)
        e(memref.StoreOp.get(value, c.op.outputs[0], indices))


def grid(
    host: Emitter, c: Contraction, bounds: list[SSAValue], batch: SSAValue, shape: TileShape
) -> list[SSAValue]:
    """Blocks in x (columns), y (rows) and z (batch) for tiles of `shape`."""
    one = host.index(1)
    return [
        host(arith.MaxUIOp(host.ceil_div(bounds[c.cols], shape.cols), one)),
        host(arith.MaxUIOp(host.ceil_div(bounds[c.rows], shape.rows), one)),
        host(arith.MaxUIOp(batch, one)),
    ]


def kernel_body(
    kernel: Emitter, c: Contraction, bounds: list[SSAValue], batch: SSAValue, shape: TileShape
) -> None:
    """The launch body: ids, the guard against empty outputs, then the tiled kernel."""
    x, y, z = (gpu.DimensionAttr(d) for d in gpu.DimensionEnum)
    bx, by, bz = (kernel(gpu.BlockIdOp(d)) for d in (x, y, z))
    tid = kernel(gpu.ThreadIdOp(x))
    zero = kernel.index(0)
    rows, cols = kernel.less(zero, bounds[c.rows]), kernel.less(zero, bounds[c.cols])
    work = kernel(arith.AndIOp(kernel(arith.AndIOp(rows, cols)), kernel.less(bz, batch)))
    then = Block()
    kernel(scf.IfOp(work, [], [then]))
    kernel(gpu.TerminatorOp())
    inner = kernel.region(then)
    batch_ivs: list[SSAValue] = []
    rest = bz
    for dim in reversed(c.batch):
        batch_ivs.append(inner.rem(rest, bounds[dim]))
        rest = inner.div(rest, bounds[dim])
    batch_ivs.reverse()
    _Kernel(c, inner, bounds, batch_ivs, shape).build(bx, by, tid)
    inner(scf.YieldOp())
