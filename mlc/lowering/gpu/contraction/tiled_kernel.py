"""
The body of the GPU's shared-memory tiled contraction kernel, for one `TileShape`.

A block computes a `rows x cols` tile of the output (block x, y, z: columns, rows,
batch) with `TileShape.threads` threads, each holding `thread_rows x thread_cols`
accumulators in registers:

- the K loop walks slices of `depth`: the threads copy the A and B slices into shared
  memory (`mlc.lowering.gpu.contraction.tile_staging`: tiles laid out as the operands are, runs of
  coalesced, where possible 16-byte, global loads), two buffers alternating so one
  `gpu.barrier` per slice suffices, and the next slice's global loads are issued before
  the current slice's arithmetic, hiding their latency; with `TileShape.stages` and
  operands that allow 16-byte copies, `stages` buffers instead, filled by `cp.async`
  (`mlc.lowering.gpu.contraction.async_copy`) `stages - 1` slices ahead of the arithmetic;
- a thread's rows and columns are 4-wide groups (`4 ty + i` plus multiples of
  `4 rows / thread_rows`; columns likewise with `tx`) of a tile stored along its
  extent, each group one 16-byte shared load of one K step; of a tile stored along K
  they are interleaved with the other threads' (`ty + i rows / thread_rows`), each
  16-byte shared load 4 K steps of one row; products accumulate with `math.fma`;
- out-of-range rows and columns are clamped for loads and skipped at the store;
  K's tail is zero-filled, which leaves `acc + a * b` unchanged;
- a fused epilogue runs on each finished accumulator before its store, its other
  inputs read at the output element; a fill's constant is the accumulators' start;
  on the tensor cores, with N static and even, a lane's two adjacent columns are
  rounded together and stored as one word (`epilogue.store_pair`).
"""

from dataclasses import dataclass

from xdsl.dialects import arith, gpu, math, memref, scf, vector
from xdsl.dialects.builtin import IndexType, IntegerAttr, VectorType, f32, i64
from xdsl.ir import Block, Region, SSAValue

from mlc.gpu_architectures import WARP
from mlc.lowering.gpu.contraction import async_copy
from mlc.lowering.gpu.contraction.block_order import grouped
from mlc.lowering.gpu.contraction.conv_half_staging import conv_half_stagings as conv_half
from mlc.lowering.gpu.contraction.conv_staging import conv_staging
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.epilogue import (
    column_inputs,
    initial_values,
    pairs_stored,
    shared_inputs,
    store_output,
    store_pair,
)
from mlc.lowering.gpu.contraction.half_staging import CHUNK, half_stagings
from mlc.lowering.gpu.contraction.match import Contraction
from mlc.lowering.gpu.contraction.mma import Lanes, lane_rows_cols, mma_step
from mlc.lowering.gpu.contraction.mma_half import half_mma_step, lane_matrices
from mlc.lowering.gpu.contraction.tile_shape import HALF_MMA_DEPTH, MMA_DEPTH, TileShape
from mlc.lowering.gpu.contraction.tile_staging import QUAD, WORKGROUP, Staging

WARP_PATCH_COLS = 8  # a warp's threads: 4 rows of 8 (`_Kernel._place`)


@dataclass
class _Kernel:
    """Builds the launch body for one contraction (the steps of the module docstring)."""

    c: Contraction
    emit: Emitter
    bounds: list[SSAValue]
    batch_ivs: list[SSAValue]
    shape: TileShape

    def ivs(
        self, row: SSAValue, col: SSAValue, k: SSAValue, e: Emitter | None = None
    ) -> list[SSAValue]:
        """The generic's loop indices at (row, col, k); a convolution's are decoded at `e`."""
        if self.c.conv is not None:
            merged = (self.c.cols, self.c.k)
            return self.c.conv.loop_indices(e or self.emit, self.bounds, row, col, k, merged)
        values: list[SSAValue] = [k] * len(self.bounds)
        for dim, iv in zip(self.c.batch, self.batch_ivs, strict=True):
            values[dim] = iv
        values[self.c.rows], values[self.c.cols], values[self.c.k] = row, col, k
        return values

    def build(self, bx: SSAValue, by: SSAValue, tid: SSAValue) -> None:
        emit, c, shape = self.emit, self.c, self.shape
        m, n = self.bounds[c.rows], self.bounds[c.cols]
        a, b = self._stagings()
        a.allocate(emit)
        b.allocate(emit)
        row0, col0 = emit.mul(by, shape.rows), emit.mul(bx, shape.cols)
        group_threads = emit.index(shape.group_threads)
        group, local = emit.div(tid, group_threads), emit.rem(tid, group_threads)
        tx, ty = self._place(local)
        lanes = matrices = None
        if shape.tensor_cores:
            rows, cols, lanes = lane_rows_cols(emit, shape, row0, col0, tid)
            if shape.half:
                matrices = lane_matrices(emit, (a, b), emit.rem(tid, WARP))  # pyright: ignore[reportArgumentType]
        else:
            rows = [emit.add(row0, r) for r in self._mine(emit, a, ty, shape.thread_rows)]
            cols = [emit.add(col0, x) for x in self._mine(emit, b, tx, shape.thread_cols)]
        zero_index = emit.index(0)
        last_row, last_col = emit.sub(m, 1), emit.sub(n, 1)
        clamped_rows = [emit(arith.MinUIOp(r, last_row)) for r in rows]
        clamped_cols = [emit(arith.MinUIOp(x, last_col)) for x in cols]
        # the accumulators' start (`epilogue.initial_values`) at each row and column
        places = [self.ivs(r, x, zero_index) for r in clamped_rows for x in clamped_cols]
        init = initial_values(emit, self.c, places)
        k_base = None
        if shape.groups > 1:  # the other groups' sums start at zero
            first_group = emit(arith.CmpiOp(group, zero_index, "eq"))
            zero = emit.zero()
            init = [emit(arith.SelectOp(first_group, v, zero)) for v in init]
            k_base = emit.mul(group, shape.depth // shape.groups)
        loop = _KLoop(
            self,
            (a, b),
            [(row0, m), (col0, n)],
            [a.assign(emit, tid), b.assign(emit, tid)],
            lanes,
            (tx, ty),
            k_base,
            matrices,
        )
        flags = [flag for s in (a, b) if (flag := s.vectorisable(emit)) is not None]
        if not flags:
            accs = loop.build(emit, init, vectors=False)
        else:
            flag = flags[0] if len(flags) == 1 else emit(arith.AndIOp(*flags))
            versions = (Block(), Block())
            branch = scf.IfOp(flag, [f32] * len(init), [versions[0]], [versions[1]])
            accs = list(emit(branch).owner.results)
            pipelined = shape.stages > 0 and a.width == b.width == (CHUNK if shape.half else QUAD)
            for block, vectors in zip(versions, (True, False), strict=True):
                inner = emit.region(block)
                if vectors and pipelined:
                    inner(scf.YieldOp(*loop.build_pipelined(inner, init)))
                else:
                    inner(scf.YieldOp(*loop.build(inner, init, vectors)))
        if shape.groups == 1:
            self._stores(accs, rows, cols, clamped_cols)
            return
        sums, first = self._leave(accs, group, local)
        stores = Block()
        emit(scf.IfOp(first, [], [stores]))
        self.emit = emit.region(stores)
        totals = []
        for slot, value in enumerate(accs):
            for other in range(shape.groups - 1):
                indices = [self.emit.index(other), self.emit.index(slot), local]
                value = self.emit(arith.AddfOp(value, self.emit(memref.LoadOp.get(sums, indices))))
            totals.append(value)
        self._stores(totals, rows, cols, clamped_cols)
        self.emit(scf.YieldOp())
        self.emit = emit

    def _stagings(self) -> tuple[Staging, Staging]:
        """How A and B reach shared memory (`tile_staging`, `conv_staging`, `half_staging`)."""
        c, shape = self.c, self.shape
        if shape.half:  # 16-bit operands: their own tiles; a convolution's image gathered
            sizes = (shape.rows, shape.cols, shape.depth, shape.threads, shape.buffers)
            return half_stagings(c, *sizes) if c.conv is None else conv_half(self.bounds, c, *sizes)
        if c.conv is None:
            keep = shape.tf32 or shape.stages > 0  # cp.async copies runs as they are
            a = Staging.of(c, c.a, shape.rows, shape.depth, shape.threads, keep, shape.buffers)
            b = Staging.of(c, c.b, shape.cols, shape.depth, shape.threads, keep, shape.buffers)
            return a, b
        sizes = (shape.depth, shape.threads, shape.tf32)  # the gathered image: two buffers
        a = conv_staging(self.bounds, c, c.a, shape.rows, *sizes)
        return a, conv_staging(self.bounds, c, c.b, shape.cols, *sizes)

    def _leave(
        self, accs: list[SSAValue], group: SSAValue, local: SSAValue
    ) -> tuple[SSAValue, SSAValue]:
        """
        Each group but the first leaves its accumulators in shared memory (`[group - 1,
        output, thread]`: a warp's stores are consecutive words), then one barrier; the
        first group adds them to its own and stores the outputs. Returns the shared
        sums and whether this thread is of the first group.
        """
        emit, shape = self.emit, self.shape
        sums_shape = [shape.groups - 1, shape.outputs, shape.group_threads]
        sums = emit(memref.AllocaOp.get(f32, shape=sums_shape, memory_space=WORKGROUP))
        zero = emit.index(0)
        leave = Block()
        emit(scf.IfOp(emit.less(zero, group), [], [leave]))
        inner = emit.region(leave)
        other = inner.sub(group, 1)
        for slot, value in enumerate(accs):
            inner(memref.StoreOp.get(value, sums, [other, inner.index(slot), local]))
        inner(scf.YieldOp())
        emit(gpu.BarrierOp())
        return sums, emit(arith.CmpiOp(group, zero, "eq"))

    def _place(self, tid: SSAValue) -> tuple[SSAValue, SSAValue]:
        """
        Thread `tid`'s column and row among the block's threads. A warp takes a 4 x 8
        patch of them where it can (32 x 1 would read 8 + 128 floats of the tiles a K
        step at 4x4 a thread, 4 x 8 reads 16 + 32: fewer shared-memory wavefronts).
        """
        emit, shape = self.emit, self.shape
        across = shape.cols // shape.thread_cols  # threads along a row of the tile
        down = shape.rows // shape.thread_rows
        cols = min(across, WARP_PATCH_COLS)
        rows = WARP // cols
        if shape.threads % WARP or across % cols or down % rows:
            return emit.rem(tid, across), emit.div(tid, across)
        warp, lane = emit.div(tid, WARP), emit.rem(tid, WARP)
        warps_across = across // cols
        tx = emit.add(emit.mul(emit.rem(warp, warps_across), cols), emit.rem(lane, cols))
        ty = emit.add(emit.mul(emit.div(warp, warps_across), rows), emit.div(lane, cols))
        return tx, ty

    def _fmas(
        self,
        e: Emitter,
        stagings: tuple[Staging, Staging],
        buffer: SSAValue,
        lane: tuple[SSAValue, SSAValue],
        accs: list[SSAValue],
        k_base: SSAValue | None,
    ) -> None:
        """
        A slice's products (the group's share of its steps, from `k_base`): 16-byte
        shared loads feeding `math.fma`s into `accs`.
        """
        shape, width = self.shape, self.shape.thread_cols
        a, b = stagings
        a_offsets = self._mine(e, a, lane[1], shape.thread_rows)
        b_offsets = self._mine(e, b, lane[0], shape.thread_cols)
        for kq in range(0, shape.depth // shape.groups, QUAD):
            a_steps = self._steps(e, a, buffer, kq, a_offsets, k_base)
            b_steps = self._steps(e, b, buffer, kq, b_offsets, k_base)
            for a_values, b_values in zip(a_steps, b_steps, strict=True):
                for i, a_value in enumerate(a_values):
                    for j, b_value in enumerate(b_values):
                        slot = width * i + j
                        accs[slot] = e(math.FmaOp(a_value, b_value, accs[slot]))

    @staticmethod
    def _steps(
        e: Emitter,
        staging: Staging,
        buffer: SSAValue,
        kq: int,
        offsets: list[SSAValue],
        k_base: SSAValue | None,
    ) -> list[list[SSAValue]]:
        """A thread's values at steps kq .. kq + 3 of the slice, 16-byte shared loads each."""
        assert staging.tile is not None
        quad = VectorType(f32, [QUAD])

        def quad_at(indices: list[SSAValue]) -> list[SSAValue]:
            load = vector.LoadOp(staging.tile, indices, quad)
            load.attributes["alignment"] = IntegerAttr(16, i64)
            loaded = e(load)
            return [e(vector.ExtractOp(loaded, [j], f32)) for j in range(QUAD)]

        def k_at(step: int) -> SSAValue:
            return e.index(step) if k_base is None else e.add(k_base, step)

        if staging.tile_along_k:  # one load: 4 steps of one row
            rows = [quad_at(staging.at(buffer, k_at(kq), r)) for r in offsets]
            return [[row[step] for row in rows] for step in range(QUAD)]
        steps = []
        for step in range(kq, kq + QUAD):  # one load: 4 rows of one step
            k = k_at(step)
            steps.append([v for r in offsets[::QUAD] for v in quad_at(staging.at(buffer, k, r))])
        return steps

    def _stores(
        self,
        results: list[SSAValue],
        rows: list[SSAValue],
        cols: list[SSAValue],
        inside_n: list[SSAValue],
    ) -> None:
        """Each finished accumulator through the epilogue to the output, inside the bounds;
        the epilogue inputs every element reads alike loaded first, then a bias once a
        column (`epilogue.column_inputs`, at `inside_n`: the columns clamped inside N)."""
        emit, c = self.emit, self.c
        m, n = self.bounds[c.rows], self.bounds[c.cols]
        zero_index = emit.index(0)
        first = self.ivs(rows[0], cols[0], zero_index, emit)
        given = shared_inputs(emit, c, first)  # before any element's check
        columns = [given] * len(cols)
        if c.conv is None:  # (a convolution's columns are pixels: `column_inputs`)
            for j, col in enumerate(inside_n):
                at = self.ivs(rows[0], col, zero_index)
                columns[j] = {**given, **column_inputs(emit, c, at, given)}
        step = 2 if self._pairs() else 1
        for i, row in enumerate(rows):
            for j in range(0, len(cols), step):
                inside = emit(arith.AndIOp(emit.less(row, m), emit.less(cols[j], n)))
                places = [self.ivs(row, col, zero_index, emit) for col in cols[j : j + step]]
                store = Block()
                emit(scf.IfOp(inside, [], [store]))
                s = emit.region(store)
                values = results[len(cols) * i + j : len(cols) * i + j + step]
                if step == 2:  # column 2 t + 8 n, + 1: both inside (N even)
                    store_pair(s, c, values, places, columns[j : j + 2])
                else:
                    store_output(s, c, values[0], places[0], columns[j])
                s(scf.YieldOp())

    def _pairs(self) -> bool:
        """Whether a lane's columns 2 t + 8 n, + 1 (the tensor cores' fragment) are stored
        together (`epilogue.pairs_stored`): N static and even, so a pair inside N is
        whole and its first column's address 4-byte (f32: 8-byte) aligned."""
        c = self.c
        if not self.shape.tensor_cores or c.conv is not None:  # a convolution's: pixels
            return False
        n = [size for _, _, size in c.op.get_loop_bound_sources()][c.cols]
        return n > 0 and n % 2 == 0 and pairs_stored(c)

    def _mine(
        self, e: Emitter, staging: Staging, lane: SSAValue, per_thread: int
    ) -> list[SSAValue]:
        """
        A thread's rows (or columns) of the tile. Of an along-K tile, interleaved with
        the other threads' (lane + i x extent / per_thread: a warp reads consecutive
        rows); otherwise 4 lane + [0, 4) and the groups after it (one 16-byte read).
        """
        if staging.tile_along_k:
            spacing = staging.extent // per_thread
            return [e.add(lane, i * spacing) for i in range(per_thread)]
        first = e.mul(lane, QUAD)
        groups = per_thread // QUAD
        spacing = staging.extent // groups
        return [e.add(first, g * spacing + j) for g in range(groups) for j in range(QUAD)]


@dataclass
class _KLoop:
    """
    The K loop of one kernel: slices staged through shared memory, multiplied. Built
    once with vector global loads and once without (the buffers' alignment picks one
    at run time), so that each version's loop body has no branch.
    """

    kernel: _Kernel
    stagings: tuple[Staging, Staging]
    origins: list[tuple[SSAValue, SSAValue]]  # each tile's first row (column), its size
    runs: list[tuple[SSAValue, SSAValue]]  # each thread's run (`Staging.assign`)
    lanes: Lanes | None  # the tensor-core path's fragment places
    lane: tuple[SSAValue, SSAValue]  # tx, ty
    k_base: SSAValue | None  # the first K step of this thread's group in a slice
    matrices: list[tuple[SSAValue, SSAValue]] | None = None  # 16-bit: `lane_matrices`

    def loads(self, e: Emitter, first: SSAValue, vectors: bool) -> list[SSAValue]:
        kernel, values = self.kernel, []
        zero = e.index(0)
        k = kernel.bounds[kernel.c.k]
        places = (
            lambda r, kk: kernel.ivs(r, zero, kk, e),
            lambda x, kk: kernel.ivs(zero, x, kk, e),
        )
        for staging, (base, size), run, ivs in zip(
            self.stagings, self.origins, self.runs, places, strict=True
        ):
            values += staging.load(e, run, first, base, (k, size), ivs, vectors)
        return values

    def build(self, emit: Emitter, init: list[SSAValue], vectors: bool) -> list[SSAValue]:
        """The loop at `emit`, from accumulators `init`; the finished accumulators."""
        kernel, (a, b) = self.kernel, self.stagings
        shape, k = kernel.shape, kernel.bounds[kernel.c.k]
        zero_index = emit.index(0)
        slices = emit.ceil_div(k, shape.depth)
        staged_types = a.value_types(vectors) + b.value_types(vectors)
        then, otherwise = Block(), Block()
        first = emit(
            scf.IfOp(emit.less(zero_index, slices), staged_types, [then], [otherwise])
        ).owner
        inner = emit.region(then)
        inner(scf.YieldOp(*self.loads(inner, zero_index, vectors)))
        inner = emit.region(otherwise)
        inner(scf.YieldOp(*a.zeros(inner, vectors), *b.zeros(inner, vectors)))

        outputs = len(init)
        body = Block(arg_types=[IndexType(), *[f32] * outputs, *staged_types])
        loop = scf.ForOp(zero_index, slices, emit.index(1), [*init, *first.results], Region(body))
        emit(loop)
        e = emit.region(body)
        t, accs = body.args[0], list(body.args[1 : 1 + outputs])
        staged = list(body.args[1 + outputs :])
        buffer = e.rem(t, 2)
        start = e.mul(t, shape.depth)
        split = len(a.value_types(vectors))
        a.store(e, buffer, self.runs[0], staged[:split], start, k)
        b.store(e, buffer, self.runs[1], staged[split:], start, k)
        e(gpu.BarrierOp())
        following = self.loads(e, e.add(start, shape.depth), vectors)
        self.multiply(e, buffer, accs)
        e(scf.YieldOp(*accs, *following))
        return list(loop.results)[:outputs]

    def multiply(self, e: Emitter, buffer: SSAValue, accs: list[SSAValue]) -> None:
        """The products of the slice in tile `buffer`, into `accs`."""
        kernel, stagings = self.kernel, self.stagings
        if self.matrices is not None:
            assert self.lanes is not None
            for kk in range(0, kernel.shape.depth, HALF_MMA_DEPTH):
                half_mma_step(e, stagings, buffer, kk, accs, self.lanes, self.matrices)  # pyright: ignore[reportArgumentType]
        elif self.lanes is not None:
            for kk in range(0, kernel.shape.depth, MMA_DEPTH):
                mma_step(e, stagings, buffer, kk, accs, self.lanes)
        else:
            kernel._fmas(e, stagings, buffer, self.lane, accs, self.k_base)

    def copy_async(self, e: Emitter, t: SSAValue, slices: SSAValue) -> None:
        """Slice `t`'s copies into its buffer (when there is such a slice), then a commit."""
        kernel, shape = self.kernel, self.kernel.shape
        zero, k = e.index(0), kernel.bounds[kernel.c.k]
        places = (
            lambda r, kk: kernel.ivs(r, zero, kk),
            lambda x, kk: kernel.ivs(zero, x, kk),
        )
        issue = Block()
        e(scf.IfOp(e.less(t, slices), [], [issue]))
        inner = e.region(issue)
        buffer, first = inner.rem(t, shape.stages), inner.mul(t, shape.depth)
        for staging, (base, size), run, ivs in zip(
            self.stagings, self.origins, self.runs, places, strict=True
        ):
            staging.copy_async(inner, buffer, run, first, base, (k, size), ivs)
        inner(scf.YieldOp())
        async_copy.commit_group(e)  # every thread commits, an empty group too

    def build_pipelined(self, emit: Emitter, init: list[SSAValue]) -> list[SSAValue]:
        """
        The loop with `stages` shared buffers filled by `cp.async`: slices 0 .. stages - 2
        are issued first; at slice t each thread waits for its own copies of t, a barrier
        publishes everyone's (and says every thread is done with slice t - 1, whose
        buffer slice t + stages - 1 then fills), and slice t is multiplied while the
        copies of the next stages - 1 slices are in flight.
        """
        shape, k = self.kernel.shape, self.kernel.bounds[self.kernel.c.k]
        slices = emit.ceil_div(k, shape.depth)
        for t in range(shape.stages - 1):
            self.copy_async(emit, emit.index(t), slices)
        body = Block(arg_types=[IndexType(), *[f32] * len(init)])
        zero, one = emit.index(0), emit.index(1)
        loop = scf.ForOp(zero, slices, one, init, Region(body))
        emit(loop)
        e = emit.region(body)
        t, accs = body.args[0], list(body.args[1:])
        async_copy.wait_group(e, shape.stages - 2)
        e(gpu.BarrierOp())
        self.copy_async(e, e.add(t, shape.stages - 1), slices)
        self.multiply(e, e.rem(t, shape.stages), accs)
        e(scf.YieldOp(*accs))
        async_copy.wait_group(emit, 0)  # nothing in flight once the block moves on
        return list(loop.results)


def grid(
    host: Emitter, c: Contraction, bounds: list[SSAValue], batch: SSAValue, rows: int, cols: int
) -> list[SSAValue]:
    """Blocks in x (columns), y (rows) and z (batch) for `rows x cols` output tiles."""
    one = host.index(1)
    return [
        host(arith.MaxUIOp(host.ceil_div(bounds[c.cols], cols), one)),
        host(arith.MaxUIOp(host.ceil_div(bounds[c.rows], rows), one)),
        host(arith.MaxUIOp(batch, one)),
    ]


def batch_position(
    e: Emitter, c: Contraction, bounds: list[SSAValue], block_z: SSAValue
) -> list[SSAValue]:
    """The batch indices of the block `block_z` (its batch dims, row-major)."""
    position: list[SSAValue] = []
    rest = block_z
    for dim in reversed(c.batch):
        position.append(e.rem(rest, bounds[dim]))
        rest = e.div(rest, bounds[dim])
    position.reverse()
    return position


def kernel_body(
    kernel: Emitter, c: Contraction, bounds: list[SSAValue], batch: SSAValue, shape: TileShape
) -> None:
    """The launch body: ids, the guard, the tiled kernel. A block whose tile starts past
    the output leaves: a grid launched at a bound (`bound-device-sizes`) has such blocks."""
    x, y, z = (gpu.DimensionAttr(d) for d in gpu.DimensionEnum)
    bx, by, bz = (kernel(gpu.BlockIdOp(d)) for d in (x, y, z))
    tid = kernel(gpu.ThreadIdOp(x))
    if shape.block_group > 1:
        bx, by = grouped(kernel, bx, by, shape.block_group)
    rows = kernel.less(kernel.mul(by, shape.rows), bounds[c.rows])
    cols = kernel.less(kernel.mul(bx, shape.cols), bounds[c.cols])
    work = kernel(arith.AndIOp(kernel(arith.AndIOp(rows, cols)), kernel.less(bz, batch)))
    then = Block()
    kernel(scf.IfOp(work, [], [then]))
    kernel(gpu.TerminatorOp())
    inner = kernel.region(then)
    batch_ivs = batch_position(inner, c, bounds, bz)
    _Kernel(c, inner, bounds, batch_ivs, shape).build(bx, by, tid)
    inner(scf.YieldOp())
