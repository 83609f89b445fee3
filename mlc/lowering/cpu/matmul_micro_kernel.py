"""
The register micro-kernel of the matmul kernel (`mlc.lowering.cpu.matmul_nest`): one
MR x NR tile of C, its MR * NR/VL accumulators held in vector registers across a K block.

    acc[r, v] = 0
    for k in [k0, k_end):
      bv = Bp[t, p, k, v*VL : (v+1)*VL]                NR/VL loads of the packed panel
      acc[r, v] += broadcast(A[i + r, k]) * bv          MR broadcasts, MR * NR/VL FMAs
    C[i + r, j0 + v*VL : +VL] (+)= acc[r, v]            rows below M, lanes below N

A is read from the task's packed block or in place (`a_reader`); narrow floats (f16)
are widened as they are loaded and rounded once as C is stored. After a tile's last K
block, the matmul's epilogue runs on it in place, while it is in L1 (`finish_tile`).
"""

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import VectorType, i1
from xdsl.ir import SSAValue

from mlc.lowering.cpu.matmul_packing import AAt, element_of
from mlc.lowering.linalg.contraction import Epilogue, indices
from mlc.lowering.support import quick_ops
from mlc.lowering.support.loop_builder import Ops, as_float, for_loop, if_then, less, zero
from mlc.tiling_model import MatmulTiles

RowAt = Callable[[Ops, int, SSAValue], list[SSAValue]]
PanelAt = Callable[[Ops, SSAValue, SSAValue], list[SSAValue]]
"""The indices of the packed panel's element at `k` and column offset `o` in its row."""


def micro_kernel(
    b: Ops,
    a: tuple[SSAValue, RowAt],
    panel: tuple[SSAValue, PanelAt],
    k_range: tuple[SSAValue, SSAValue],
    tiles: MatmulTiles,
    vector_type: VectorType,
    ahead: Callable[[Ops, SSAValue], None] | None = None,
) -> Sequence[SSAValue]:
    """MR x NR/VL vector accumulators over `k` in `k_range`: the FMA loop. `a` is A (or
    its packed block) and the indices of row `r` (0 <= r < MR) of the tile at `k`.
    `ahead` adds ops (a prefetch) to each step, given its `k`."""
    source, a_at = a
    packed, panel_at = panel
    lanes = tiles.nr // tiles.vector
    start = zero(b, vector_type)
    offsets = [b.index(v * tiles.vector) for v in range(lanes)]

    def step(kb: Ops, k: SSAValue, acc: Sequence[SSAValue]) -> Sequence[SSAValue]:
        if ahead is not None:
            ahead(kb, k)
        loaded = [
            kb(quick_ops.vector_load(packed, panel_at(kb, k, o), vector_type)) for o in offsets
        ]
        out: list[SSAValue] = []
        for r in range(tiles.mr):
            value = kb(quick_ops.load(source, a_at(kb, r, k)))
            value = as_float(kb, value, vector_type.element_type)
            value = kb(quick_ops.broadcast(value, vector_type))
            out += [kb(quick_ops.fma(value, loaded[v], acc[r * lanes + v])) for v in range(lanes)]
        return out

    return for_loop(b, *k_range, b.index(1), step, [start] * (tiles.mr * lanes))


def a_reader(
    b: Ops,
    a: tuple[SSAValue, AAt],
    a_block: SSAValue | None,
    tile: tuple[SSAValue, SSAValue],
    task: tuple[SSAValue, SSAValue],
    tiles: MatmulTiles,
) -> tuple[SSAValue, RowAt]:
    """
    Where the micro-kernel reads row `r` of the MR-row tile at row `i`, for `k` in the K
    block from `k0`: micro-panel `(i - i0) / MR` of the packed block, or A itself (rows
    past M read as the task's last row, `last_row`).
    """
    (source, a_at), (i, k0), (i0, last_row) = a, tile, task
    if a_block is not None:
        q = b(quick_ops.binary(arith.DivSIOp, b.sub(i, i0), b.index(tiles.mr)))
        return a_block, lambda rb, r, k: [q, rb.sub(k, k0), rb.index(r)]
    rows = [b.min(b.add(i, b.index(r)), last_row) for r in range(tiles.mr)]
    return source, lambda rb, r, k: a_at(rb, rows[r], k)


CAt = Callable[[Ops, SSAValue, SSAValue], list[SSAValue]]


def write_back(
    b: Ops,
    c: tuple[SSAValue, CAt],
    acc: Sequence[SSAValue],
    tile: tuple[SSAValue, SSAValue],
    sizes: tuple[SSAValue, SSAValue],
    tiles: MatmulTiles,
    accumulate: bool,
    ragged: bool = True,
) -> None:
    """
    `C[i + r, j0 + jj] (+)= acc` for the rows below M and the columns below N (all
    of the tile's columns unless `ragged`: N may end inside a panel).
    """
    i, j0 = tile
    m, n = sizes
    vector_type = acc[0].type
    assert isinstance(vector_type, VectorType)
    lanes = tiles.nr // tiles.vector
    offsets = [b.index(v * tiles.vector) for v in range(lanes)]
    row_ids = [b.add(i, b.index(r)) for r in range(tiles.mr)]
    full = b(quick_ops.cmpi(b.add(j0, b.index(tiles.nr)), n, "sle"))

    def vectors(vb: Ops) -> None:
        for r, row in enumerate(row_ids):
            columns = [(acc[r * lanes + v], offsets[v]) for v in range(lanes)]
            store = _store_row(c, row, j0, columns, accumulate)
            if_then(vb, less(vb, row, m), store)

    def masked(mb: Ops) -> None:
        # The last panel, past N: each vector stores the lanes below N (a masked store);
        # a vector wholly past N is skipped, so no address beyond the row is formed.
        starts = [mb.add(j0, offset) for offset in offsets]
        masks = [mb(vector.CreateMaskOp([mb.sub(n, s)], mask_type)) for s in starts]
        for r, row in enumerate(row_ids):

            def store(ub: Ops, r: int = r, row: SSAValue = row) -> None:
                for v in range(lanes):
                    put = _masked_store(c, row, starts[v], masks[v], acc[r * lanes + v], accumulate)
                    if v == 0:
                        put(ub)
                    else:
                        if_then(ub, less(ub, starts[v], n), put)

            if_then(mb, less(mb, row, m), store)

    mask_type = VectorType(i1, [tiles.vector])
    if ragged:
        if_then(b, full, vectors, masked)
    else:
        vectors(b)


def _store_row(
    c: tuple[SSAValue, CAt],
    row: SSAValue,
    j0: SSAValue,
    columns: Sequence[tuple[SSAValue, SSAValue]],
    accumulate: bool,
) -> Callable[[Ops], None]:
    """A builder of `C[row, j0 + offset : +VL] (+)= value` for each (value, offset)."""
    target, c_at = c

    def build(ub: Ops) -> None:
        for value, offset in columns:
            at = c_at(ub, row, ub.add(j0, offset))
            stored = _c_vector(target, value)
            if accumulate:
                old = ub(quick_ops.vector_load(target, at, stored))
                value = ub(quick_ops.binary(arith.AddfOp, as_float(ub, old, value.type), value))
            ub.ops.append(quick_ops.store(as_float(ub, value, stored), target, at))

    return build


def _masked_store(
    c: tuple[SSAValue, CAt],
    row: SSAValue,
    column: SSAValue,
    mask: SSAValue,
    value: SSAValue,
    accumulate: bool,
) -> Callable[[Ops], None]:
    """A builder of `C[row, column : +VL] (+)= value` in the lanes `mask` sets."""
    target, c_at = c

    def build(ub: Ops) -> None:
        at = c_at(ub, row, column)
        stored = _c_vector(target, value)
        result = value
        if accumulate:
            old = ub(vector.MaskedLoadOp(target, at, mask, zero(ub, stored)))
            result = ub(quick_ops.binary(arith.AddfOp, as_float(ub, old, value.type), value))
        ub.ops.append(quick_ops.masked_store(target, at, mask, as_float(ub, result, stored)))

    return build


def _c_vector(target: SSAValue, acc: SSAValue) -> VectorType:
    """The vector of C's elements as wide as the accumulator vector `acc`."""
    type_ = acc.type
    assert isinstance(type_, VectorType)
    return VectorType(element_of(target), type_.get_shape())


def _over_tile(
    b: Ops,
    tile: tuple[SSAValue, SSAValue],
    sizes: tuple[SSAValue, SSAValue],
    tiles: MatmulTiles,
    body: Callable[[Ops, SSAValue, SSAValue], None],
) -> None:
    """`body(r, jj)` over the part of the MR x NR tile at `tile` that lies inside M x N."""
    (i, j0), (m, n) = tile, sizes
    rows = b.min(b.sub(m, i), b.index(tiles.mr))
    width = b.min(b.sub(n, j0), b.index(tiles.nr))

    def row(rb: Ops, r: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
        def column(cb: Ops, jj: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            body(cb, r, jj)
            return []

        for_loop(rb, rb.index(0), width, rb.index(1), column)
        return []

    for_loop(b, b.index(0), rows, b.index(1), row)


def finish_tile(
    epilogue: Epilogue,
    b: Ops,
    c: tuple[SSAValue, CAt],
    batch_ivs: Sequence[SSAValue],
    tile: tuple[SSAValue, SSAValue],
    sizes: tuple[SSAValue, SSAValue],
    tiles: MatmulTiles,
) -> None:
    """Apply the epilogue to the finished tile of C, in place, while it is in L1. The
    inputs read at the same place for the whole tile (a Clip's bounds) are loaded once,
    before its loops: loaded next to the stores into C, LLVM could not show they are not
    written, and left the loops scalar."""
    target, c_at = c
    i, j0 = tile
    outer = [*batch_ivs, b.index(0), b.index(0), b.index(0)]
    loaded = {
        arg: b(memref.LoadOp.get(source, indices(b, map_, outer)))
        for arg, (source, map_) in epilogue.inputs.items()
        if map_.used_dims() <= set(range(len(batch_ivs)))
    }

    def element_at(eb: Ops, r: SSAValue, jj: SSAValue) -> None:
        row, column = eb.add(i, r), eb.add(j0, jj)
        at = c_at(eb, row, column)
        value = eb(quick_ops.load(target, at))
        loops = [*batch_ivs, row, eb.index(0), column]
        eb.ops.append(quick_ops.store(epilogue.apply(eb, loops, value, loaded), target, at))

    _over_tile(b, tile, sizes, tiles, element_at)
