"""
The loop nest `linalg-tile` puts in place of a matmul generic on memrefs: the
BLIS/GotoBLAS blocking of `C += A @ B` (A: M x K, B: K x N, C: M x N, floats,
row-major) into tasks, K blocks, panels and register tiles.

`matmul_nest`: the blocking with packed B and a register-blocked
micro-kernel (MR x NR accumulators live in vector registers across the k loop;
each step broadcasts one A value per row, loads NR/VL vectors of packed B and does
MR * NR/VL FMAs), for every batch of a batched matmul (`mlc.lowering.linalg.contraction`):

    Bp = alloc(T, P, K, NR)                       P = ceil(N / NR), zero-padded;
    scf.parallel (t, q) in [0, T) x [0, P) step Q: T = batches of B (1 if B is shared)
      for k, p in [0, K) x [q, q+Q):              Q <= 8 panels: 512 bytes of a row of B
        Bp[t, p, k, :] = B[t, k, p*NR : p*NR+NR]
    scf.parallel (t, i0, g) in [0, batches) x [0, M) step MCb x [0, G):  one flat loop
      Ap = alloc(MCb/MR, KC, MR)                  (when A is packed)
      for k0 in [0, K) step KC:                   Bp[t, p, k0:k0+KC] stays in L1
        Ap[q, kk, r] = A[t, i0 + q*MR + r, k0 + kk]     the task's A block, in L2
        for p in [g*P/G, (g+1)*P/G):              the task's group of panels
          for i in [i0, min(i0+MCb, M)) step MR:
            acc = micro_kernel(Ap[(i-i0)/MR], Bp[t, p, k0:k0+KC])
            C[t, i:i+MR, p*NR : p*NR+NR] += acc   (rows < M, columns < N; `=` on the
                                                   first K block when C held zeros)
            if k0 + KC >= K: C[t, tile] = epilogue(C[t, tile])   (if the generic has one)

A read along its rows (row-major, contiguous along k) is read in place: the
micro-kernel broadcasts from MR sequential row streams, which cache and prefetchers
serve as fast as a packed copy (`tiling_model.packs_a`). A read across its rows (a
transposed A, `A[k, i]`) or a convolution's weight has its block packed into MR-row
micro-panels, contiguous along k, when B has enough panels and A long enough rows to
repay the copy; otherwise it too is read in place. A rows past M are read as row M-1
(the results are dropped), so A needs no padding; in a column tile past N only the
lanes below N are loaded and stored (masked vector loads and stores, `vmaskmovps` on
AVX2). The tasks
are blocks of MCb rows (`tiling_model.matmul_split`), and, where M fits one block but
its row tiles split unevenly among the threads, groups of G adjacent panels instead;
for a dynamic M both are chosen when the kernel runs (`_tasks`). A and B are read through their
maps, so a transposed A (`A[k, i]`) needs nothing more, and a transposed B (`B[j, k]`)
is packed a column at a time along k.
Narrow floats (f16) are summed in f32 (`Matmul.accumulator`), as numpy sums an f16
matmul: B is packed widened to f32 (`vcvtph2ps` with F16C), each A value is widened as
it is broadcast, and C is widened to add to and rounded once as it is stored. So that
the sums are rounded only once, the K loop makes one block of all of K (the f32 panel,
K x NR, then lives in L2 rather than L1), and A is read in place, not packed.
A small-M matmul whose B is a new argument on every call (a training step's weights)
reads B in place instead (`tiling_model.reads_b_in_place`): a panel's k rows are rows
of B, N apart, which the shared micro-kernel prefetches a few rows ahead; its tasks
take all rows and a group of panels each, so each thread reads its columns of B once.
When B is a constant weight, `Bp` is a global packed at compile time
(`mlc.lowering.cpu.constant_panels`); when B does not change in the `scf.for` around the
kernel, `Bp` is packed once, before the loop (`mlc.lowering.cpu.hoisted_panels`). The
epilogue runs on each MR x NR tile right after its last K block, while it is in L1.

The packing of A and B is `mlc.lowering.cpu.matmul_packing` (B from a convolution's
image: `mlc.lowering.cpu.conv_packing`, in the task that reads the panels where M fits
one block: `mlc.lowering.cpu.conv_tasks`), the register tile and its write-back
`mlc.lowering.cpu.matmul_micro_kernel`, which every kernel of a program calls as one
function per kind (`mlc.lowering.cpu.shared_micro_kernel`) where its operands allow.
It is a pure IR builder: it returns the ops (the shared functions go into the module as
first needed), and the pattern inserts them.
"""

from collections.abc import Callable, Sequence
from functools import partial

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType, VectorType
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr

from mlc.lowering.cpu.constant_panels import get_panels
from mlc.lowering.cpu.conv_packing import pack_image, pack_task_image
from mlc.lowering.cpu.conv_tasks import packs_per_task, task_split
from mlc.lowering.cpu.matmul_micro_kernel import (
    CAt,
    a_reader,
    finish_tile,
    micro_kernel,
    write_back,
)
from mlc.lowering.cpu.matmul_packing import (
    a_block_buffer,
    batch_indices,
    ends_inside_panel,
    pack_a_block,
    pack_b,
)
from mlc.lowering.cpu.shared_micro_kernel import SharedKernels, TileCalls
from mlc.lowering.cpu.shared_packing import PanelCalls
from mlc.lowering.cpu.slice_consumers import SliceConsumer
from mlc.lowering.linalg.contraction import Matmul, indices
from mlc.lowering.support import quick_ops
from mlc.lowering.support.loop_builder import (
    Ops,
    collapse_trailing,
    for_loop,
    if_then,
    less,
    parallel_loop,
)
from mlc.tiling_model import TASK_FLOPS, MatmulTiles, TaskSplit


def b_is_batched(mm: Matmul) -> bool:
    """Whether B differs between the batches (a batch loop reads it, or it is an image)."""
    if mm.image is not None:
        return True  # every batch convolves its own image
    return any(isinstance(e, AffineDimExpr) and e.position < mm.batch for e in mm.maps[1].results)


def matmul_nest(
    mm: Matmul,
    tiles: MatmulTiles,
    split: TaskSplit,
    overwrite: bool = False,
    panels: memref.GlobalOp | SSAValue | None = None,
    pack_a: bool = False,
    one_task: bool = False,
    kernels: SharedKernels | None = None,
    b_in_place: bool = False,
    consumer: SliceConsumer | None = None,
) -> list[Operation]:
    """
    The packed, register-blocked `C += A @ B` (see the module docstring), for each batch,
    then `mm`'s epilogue on each finished tile, in the tasks `split` says. With
    `overwrite`, the first K block stores into C instead of adding to it (C held zeros,
    which need not be written). `panels` is B already packed: at compile time
    (`mlc.lowering.cpu.constant_panels`, a global), or before a loop around the kernel
    (`mlc.lowering.cpu.hoisted_panels`, a buffer freed after that loop). With `pack_a`,
    each task packs its block of A for each K block (`pack_a_block`). With `one_task`
    (the kernel runs as a single task), B is packed on the calling thread. With
    `kernels`, each register tile is a call of the program's shared micro-kernel
    function of its kind (`mlc.lowering.cpu.shared_micro_kernel`) where the operands
    allow it. With `b_in_place`, B is not packed: the micro-kernel reads each panel
    from B itself, its k rows N apart (a row-major, unbatched B of whole panels,
    `tiling_model.reads_b_in_place`). With `consumer` (every task takes all rows, and
    each group is whole panels of a slice), a task's panels are the same run of every
    slice of C, and it ends with the consumer on those columns
    (`mlc.lowering.cpu.slice_consumers`).
    """
    b = Ops()
    a, c = _matrices(b, mm)
    ragged = ends_inside_panel(mm, tiles)
    epilogue = mm.epilogue.viewed(b) if mm.epilogue is not None else None
    vector_type = VectorType(mm.accumulator, [tiles.vector])
    rank_c = len(_shape(c))
    m, k = b.dim(a, mm.dim_of(0, "i")), b.dim(a, mm.dim_of(0, "k"))
    n = b.dim(c, rank_c - 1)
    extents = [b.dim(c, d) for d in range(mm.batch)]
    batches = _product(b, extents)
    packed_batches = (batches, extents) if b_is_batched(mm) else (b.index(1), [])
    blocking = (tiles, split.threads)
    packing = (panels, not one_task, kernels)
    local = packs_per_task(mm, tiles, panels)  # each task packs the panels it reads
    packed, free = _packed(b, mm, (k, n), packed_batches, blocking, packing, local, b_in_place)
    read_panel = _panel_reader(mm, tiles, b_in_place)
    zero_i, one = b.index(0), b.index(1)
    calls = _tile_calls(b, kernels, mm, tiles, (a, c, packed), b_in_place)
    # Narrow elements are summed over all of K in one block: rounded once (module docstring).
    depth = b(arith.MaxSIOp(k, one)) if mm.narrow else b.index(tiles.kc)
    panels = b.ceildiv(n, b.index(tiles.nr))
    last_row = b(arith.SubiOp(m, one))
    rows_per_task, groups = _task_blocks(b, local, (m, panels, batches), split, tiles)
    group_panels = _group_panels(b, (panels, groups), consumer, tiles.nr, split.column_groups)
    blocks = b.ceildiv(m, rows_per_task)
    per_batch = b.mul(blocks, groups)

    def task(tb: Ops, t: SSAValue) -> None:
        flat, rest = tb(arith.DivSIOp(t, per_batch)), tb(arith.RemSIOp(t, per_batch))
        batch_ivs = batch_indices(tb, flat, extents)
        i0 = tb.mul(tb(arith.DivSIOp(rest, groups)), rows_per_task)
        i_end = tb.min(tb.add(i0, rows_per_task), m)
        p0 = tb.mul(tb(arith.RemSIOp(rest, groups)), group_panels)
        p_end = tb.min(tb.add(p0, group_panels), panels)
        task_at = (flat, p0, p_end)
        (bp, packed_t, first), shared, free_b = _task_panels(
            tb, mm, tiles, (packed, calls, kernels), (a, c, k, n, extents), task_at
        )

        def a_at(ab: Ops, row: SSAValue, kk: SSAValue) -> list[SSAValue]:
            return indices(ab, mm.maps[0], [*batch_ivs, row, kk, zero_i])

        def c_at(cb: Ops, row: SSAValue, column: SSAValue) -> list[SSAValue]:
            return indices(cb, mm.maps[2], [*batch_ivs, row, zero_i, column])

        def block_of_k(db: Ops, k0: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            k_end = db.min(db.add(k0, depth), k)
            a_block = pack_a_block(db, (a, a_at), (a_buffer, i0, i_end), (k0, k_end), tiles)

            def panel(pb: Ops, p: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                j0 = pb.mul(p, pb.index(tiles.nr))
                q = pb.sub(p, first)  # the panel's number in `bp`

                def inline_tile(bb: Ops, i: SSAValue) -> None:
                    reader = a_reader(bb, (a, a_at), a_block, (i, k0), (i0, last_row), tiles)
                    panel_at = (bp, lambda kb, kk, o: read_panel(kb, (packed_t, q), kk, o))
                    acc = micro_kernel(bb, reader, panel_at, (k0, k_end), tiles, vector_type)

                    tile = ((i, j0), (m, n), k0)
                    _write_tile(bb, (c, c_at), acc, tile, tiles, (overwrite, ragged))

                def block(bb: Ops, i: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                    if shared is None:
                        inline_tile(bb, i)
                    else:
                        a_read = (a_at, a_block)
                        tile = (i, j0, i0)
                        panel_at = (packed_t, q)
                        shared.call(
                            bb, a_read, tile, (k0, k_end), c_at, panel_at, (m, n), overwrite
                        )
                    if epilogue is not None:
                        finish = partial(finish_tile, epilogue, c=(c, c_at), batch_ivs=batch_ivs)
                        last = bb(quick_ops.cmpi(k_end, k, "eq"))
                        if_then(
                            bb, last, lambda fb: finish(fb, tile=(i, j0), sizes=(m, n), tiles=tiles)
                        )
                    return []

                for_loop(pb, i0, i_end, pb.index(tiles.mr), block)
                return []

            _panel_runs(db, consumer, (p0, p_end, group_panels), tiles.nr, panel)
            return []

        rows = mm.sizes[0] if local else split.rows  # all of M (`conv_tasks`)
        rows = tiles.mc if rows is None else rows
        a_buffer, free_a = a_block_buffer(tb, mm.accumulator, rows, tiles, pack_a and not mm.narrow)
        for_loop(tb, zero_i, k, depth, block_of_k)
        tb.ops += [*free_a, *free_b]
        _consumer_tail(tb, consumer, p0, tiles.nr, split.column_groups)

    parallel_loop(b, zero_i, b.mul(batches, per_batch), one, task)
    b.ops += free
    return b.ops


def _group_panels(
    b: Ops,
    counts: tuple[SSAValue, SSAValue],
    consumer: SliceConsumer | None,
    nr: int,
    column_groups: int,
) -> SSAValue:
    """The panels in a task's group (of `counts`, all panels and the groups), or, with
    a consumer, in its run of each slice."""
    if consumer is None:
        return b.ceildiv(*counts)
    return b.index(consumer.width // nr // column_groups)


def _panel_runs(
    b: Ops,
    consumer: SliceConsumer | None,
    group: tuple[SSAValue, SSAValue, SSAValue],
    nr: int,
    panel: Callable[[Ops, SSAValue, Sequence[SSAValue]], Sequence[SSAValue]],
) -> None:
    """`panel` on each panel of the task's group `[p0, p_end)`, or, with a consumer,
    on the run `[p0, p0 + length)` of every slice of C."""
    (p0, p_end, length), one = group, b.index(1)
    if consumer is None:
        for_loop(b, p0, p_end, one, panel)
        return
    per_slice = b.index(consumer.width // nr)

    def one_slice(sb: Ops, s: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        start = sb.add(sb.mul(s, per_slice), p0)
        for_loop(sb, start, sb.add(start, length), one, panel)
        return []

    for_loop(b, b.index(0), b.index(consumer.slices), one, one_slice)


def _consumer_tail(
    b: Ops, consumer: SliceConsumer | None, p0: SSAValue, nr: int, column_groups: int
) -> None:
    """The consumer, if any, on the task's units of every slice (from panel `p0`)."""
    if consumer is not None:
        consumer.tail(b, b.mul(p0, b.index(nr)), consumer.width // column_groups)


def _write_tile(
    b: Ops,
    c: tuple[SSAValue, CAt],
    acc: Sequence[SSAValue],
    tile: tuple[tuple[SSAValue, SSAValue], tuple[SSAValue, SSAValue], SSAValue],
    tiles: MatmulTiles,
    modes: tuple[bool, bool],
) -> None:
    """The accumulators added to the tile of C at `tile` (its row and column, M and N,
    the K block's start); stored on the first K block if `overwrite` (C held no zeros),
    the columns past N masked if `ragged`."""
    (at, sizes, k0), (overwrite, ragged) = tile, modes

    def write(accumulate: bool) -> Callable[[Ops], None]:
        return lambda wb: write_back(wb, c, acc, at, sizes, tiles, accumulate, ragged)

    if overwrite:  # C holds no zeros: the first K block stores
        if_then(b, b(quick_ops.cmpi(k0, b.index(0), "eq")), write(False), write(True))
    else:
        write(True)(b)


def _task_blocks(
    b: Ops,
    per_task: bool,
    sizes: tuple[SSAValue, SSAValue, SSAValue],
    split: TaskSplit,
    tiles: MatmulTiles,
) -> tuple[SSAValue, SSAValue]:
    """The rows of a task and the column groups of a row block (`sizes`: M, the panels
    and the batches): `conv_tasks.task_split`'s where the tasks pack their own panels."""
    if per_task:
        return task_split(b, sizes, split, tiles)
    return _tasks(b, sizes[:2], split, tiles)


def _tasks(
    b: Ops, sizes: tuple[SSAValue, SSAValue], split: TaskSplit, tiles: MatmulTiles
) -> tuple[SSAValue, SSAValue]:
    """
    The rows of a task and the column groups of a row block: `split`'s, or for a
    dynamic M what `tiling_model.matmul_split` would choose, computed at run time: blocks
    of `_rows_per_task` rows, unless `tiling_model.columns_balance_better` says that
    all rows in a group of panels per thread leave the busiest thread fewer register
    tiles (M at most MC, as many panels as threads, each share worth `TASK_FLOPS`).
    """
    m, panels = sizes
    rows = _rows_per_task(b, m, split, tiles)
    if split.rows is not None or split.threads < 2:
        return rows, b.index(split.column_groups)
    threads, mr = b.index(split.threads), b.index(tiles.mr)
    tasks = b.ceildiv(m, rows)
    by_rows = b.mul(b.mul(b.ceildiv(tasks, threads), b.ceildiv(rows, mr)), panels)
    row_tiles = b.ceildiv(m, mr)
    by_columns = b.mul(row_tiles, b.ceildiv(panels, threads))
    fits = b(
        arith.AndIOp(b(quick_ops.cmpi(m, b.index(tiles.mc), "sle")), less(b, by_columns, by_rows))
    )
    columns = b(arith.AndIOp(fits, b(quick_ops.cmpi(panels, threads, "sge"))))
    if split.row_flops:
        worth = b(arith.DivSIOp(b.mul(m, b.index(split.row_flops)), b.index(TASK_FLOPS)))
        columns = b(arith.AndIOp(columns, b(quick_ops.cmpi(worth, threads, "sge"))))
    all_rows = b.mul(row_tiles, mr)
    one = b.index(1)
    return b(arith.SelectOp(columns, all_rows, rows)), b(arith.SelectOp(columns, threads, one))


def _rows_per_task(b: Ops, m: SSAValue, split: TaskSplit, tiles: MatmulTiles) -> SSAValue:
    """
    `split.rows`, or for a dynamic M the rows `tiling_model.balanced_rows` would give,
    computed at run time: tasks of at most MC rows, as many as a multiple of the
    threads, fewer where a task would be worth less than `TASK_FLOPS`.
    """
    if split.rows is not None:
        return b.index(split.rows)
    one, threads, mr = b.index(1), b.index(split.threads), b.index(tiles.mr)
    tasks = b.mul(b.ceildiv(b.ceildiv(m, b.index(tiles.mc)), threads), threads)
    if split.row_flops:
        worth = b(arith.DivSIOp(b.mul(m, b.index(split.row_flops)), b.index(TASK_FLOPS)))
        rounded = b.mul(b(arith.DivSIOp(worth, threads)), threads)
        capped = b(arith.SelectOp(less(b, worth, threads), worth, rounded))
        tasks = b(arith.SelectOp(less(b, worth, tasks), capped, tasks))
    tasks = b(arith.MaxSIOp(tasks, one))
    rows = b.mul(b.ceildiv(b.ceildiv(m, tasks), mr), mr)
    return b(arith.MaxSIOp(b.min(rows, b.index(tiles.mc)), mr))


def _task_panels(
    tb: Ops,
    mm: Matmul,
    tiles: MatmulTiles,
    kernel: tuple[SSAValue | None, TileCalls | None, SharedKernels | None],
    operands: tuple[SSAValue, SSAValue, SSAValue, SSAValue, Sequence[SSAValue]],
    task: tuple[SSAValue, SSAValue, SSAValue],
) -> tuple[tuple[SSAValue, SSAValue, SSAValue], TileCalls | None, list[Operation]]:
    """
    The panels a task reads as (buffer, batch in it, number of its first panel), the
    tile calls that read them, and the frees: the kernel's `packed` B, or where there is
    none the task's own panels of its image (`mlc.lowering.cpu.conv_tasks`).
    """
    (packed, calls, kernels), (a, c, k, n, extents) = kernel, operands
    flat, p0, _ = task
    zero_i = tb.index(0)
    if packed is not None:
        return (packed, flat if b_is_batched(mm) else zero_i, zero_i), calls, []
    own = pack_task_image(tb, mm, (k, n), extents, tiles, task)
    shared = TileCalls.of(tb, kernels, mm, tiles, (a, c, own)) if kernels else None
    return (own, zero_i, p0), shared, [memref.DeallocOp.get(own)]


def _packed(
    b: Ops,
    mm: Matmul,
    sizes: tuple[SSAValue, SSAValue],
    batch: tuple[SSAValue, Sequence[SSAValue]],
    blocking: tuple[MatmulTiles, int],
    packing: tuple[memref.GlobalOp | SSAValue | None, bool, SharedKernels | None],
    per_task: bool,
    in_place: bool = False,
) -> tuple[SSAValue | None, list[Operation]]:
    """
    B's panels: B itself where it is read `in_place`, else read from the global packed
    at compile time, else packed now into a buffer (in parallel or not, by the shared
    packing functions where `kernels` are given and B allows); and the ops that free
    it once the kernel is done. None where the tasks pack their own (`per_task`).
    """
    if in_place:
        return mm.b, []
    panels, parallel, kernels = packing
    if per_task:
        return None, []
    if isinstance(panels, SSAValue):
        return panels, []
    if panels is not None:
        return b(get_panels(panels)), []
    tiles, threads = blocking
    if mm.image is None:
        calls = PanelCalls.of(b, kernels, mm, tiles) if kernels else None
        shared = calls.call if calls is not None else None
        packed = pack_b(b, mm, sizes, batch, tiles, threads, parallel, shared)
    else:
        packed = pack_image(b, mm, sizes, batch, tiles, parallel)
    return packed, [memref.DeallocOp.get(packed)]


PanelRead = Callable[[Ops, tuple[SSAValue, SSAValue], SSAValue, SSAValue], list[SSAValue]]


def _tile_calls(
    b: Ops,
    kernels: SharedKernels | None,
    mm: Matmul,
    tiles: MatmulTiles,
    operands: tuple[SSAValue, SSAValue, SSAValue | None],
    in_place: bool,
) -> TileCalls | None:
    """The shared micro-kernel's calls on the kernel's own B, if there are shared kernels
    and B is not left to each task to pack (`_task_panels` makes those tasks' calls)."""
    a, c, packed = operands
    if kernels is None or packed is None:
        return None
    return TileCalls.of(b, kernels, mm, tiles, (a, c, packed), in_place)


def _panel_reader(mm: Matmul, tiles: MatmulTiles, in_place: bool) -> PanelRead:
    """The indices of the element at `k` and column offset `o` of panel (batch, number):
    in the packed panels, or in B at column number * NR + o where B is read in place
    (it then has no batch)."""
    if not in_place:
        return lambda b, panel, k, o: [*panel, k, o]

    def in_b(b: Ops, panel: tuple[SSAValue, SSAValue], k: SSAValue, o: SSAValue) -> list[SSAValue]:
        column = b.add(b.mul(panel[1], b.index(tiles.nr)), o)
        return indices(b, mm.maps[1], [b.index(0), k, column])

    return in_b


def _matrices(b: Ops, mm: Matmul) -> tuple[SSAValue, SSAValue]:
    """A and C; for a convolution, the weight and the output as (batches of) matrices."""
    if mm.image is None:
        return mm.a, mm.c
    a = collapse_trailing(b, mm.a, len(_shape(mm.a)) - len(mm.image.reductions))
    return a, collapse_trailing(b, mm.c, len(_shape(mm.c)) - len(mm.image.spatial))


def _product(b: Ops, values: Sequence[SSAValue]) -> SSAValue:
    result = b.index(1)
    for value in values:
        result = b.mul(result, value)
    return result


def _shape(value: SSAValue) -> tuple[int, ...]:
    type_ = value.type
    assert isinstance(type_, MemRefType)
    return type_.get_shape()
