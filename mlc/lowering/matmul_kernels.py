"""
The loop nests `linalg-tile` puts in place of a matmul generic on memrefs.

Two kernels for `C += A @ B` (A: M x K, B: K x N, C: M x N, floats, row-major):

`matmul_nest`, the BLIS/GotoBLAS blocking with packed B and a register-blocked
micro-kernel (MR x NR accumulators live in vector registers across the k loop;
each step broadcasts one A value per row, loads NR/VL vectors of packed B and does
MR * NR/VL FMAs):

    Bp = alloc(P, K, NR)                          P = ceil(N / NR), zero-padded
    scf.parallel p in [0, P): Bp[p, k, :] = B[k, p*NR : p*NR+NR]
    scf.parallel i0 in [0, M) step MCb:           rows per task (the model's MC)
      for k0 in [0, K) step KC:                   Bp[p, k0:k0+KC] stays in L1
        for p in [0, P):
          for i in [i0, min(i0+MCb, M)) step MR:
            acc = micro_kernel(A[i:i+MR, k0:k0+KC], Bp[p, k0:k0+KC])
            C[i:i+MR, p*NR : p*NR+NR] += acc      (rows < M, columns < N)

A rows past M are read as row M-1 (the results are dropped), so no A packing or
padding is needed; a column tile past N goes through a small stack buffer.

`matvec_nest`, for N = 1 (matrix-vector products such as PageRank's G @ p): a dot
product over each contiguous row of A, in vector registers, R rows at a time so each
loaded piece of the vector serves R rows; the tail of K is scalar. Tasks of R rows
run in an `scf.parallel`, unless A has no more than R rows (one task, run as is).

Both are pure IR builders: they return the ops, and the pattern inserts them.
"""

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, memref, scf, vector
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AnyFloat,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    VectorType,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from mlc.tiling_model import MatmulTiles

MATVEC_ROWS = 8
ALIGNMENT = 64


class Ops:
    """Collects new ops in order; calling it appends an op and returns its result."""

    def __init__(self) -> None:
        self.ops: list[Operation] = []

    def __call__(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def index(self, value: int) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def dim(self, value: SSAValue, d: int) -> SSAValue:
        type_ = value.type
        assert isinstance(type_, MemRefType)
        size = type_.get_shape()[d]
        return self.index(size) if size >= 0 else self(memref.DimOp(value, self.index(d)))

    def min(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.MinSIOp(a, b))

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.AddiOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.MuliOp(a, b))

    def ceildiv(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.CeilDivSIOp(a, b))


Body = Callable[[Ops, SSAValue, Sequence[SSAValue]], Sequence[SSAValue]]


def for_loop(
    b: Ops, lb: SSAValue, ub: SSAValue, step: SSAValue, body: Body, init: Sequence[SSAValue] = ()
) -> Sequence[SSAValue]:
    """`scf.for` whose body `body(ops, iv, carried)` builds and returns the yielded values."""
    block = Block(arg_types=[IndexType(), *(v.type for v in init)])
    inner = Ops()
    yielded = body(inner, block.args[0], block.args[1:])
    block.add_ops([*inner.ops, scf.YieldOp(*yielded)])
    loop = scf.ForOp(lb, ub, step, list(init), block)
    b.ops.append(loop)
    return loop.results


def parallel_loop(
    b: Ops, lb: SSAValue, ub: SSAValue, step: SSAValue, body: Callable[[Ops, SSAValue], None]
) -> None:
    """A one-dimensional `scf.parallel` without reductions."""
    block = Block(arg_types=[IndexType()])
    inner = Ops()
    body(inner, block.args[0])
    block.add_ops([*inner.ops, scf.ReduceOp()])
    b.ops.append(scf.ParallelOp([lb], [ub], [step], Region(block)))


def if_then(
    b: Ops,
    condition: SSAValue,
    then: Callable[[Ops], None],
    otherwise: Callable[[Ops], None] | None = None,
) -> None:
    """`scf.if` without results."""
    regions: list[list[Operation]] = []
    for build in (then, otherwise):
        if build is None:
            regions.append([])
            continue
        inner = Ops()
        build(inner)
        regions.append([*inner.ops, scf.YieldOp()])
    b.ops.append(scf.IfOp(condition, [], regions[0], regions[1] or None))


def _zero(b: Ops, type_: Attribute) -> SSAValue:
    if isinstance(type_, VectorType):
        element = type_.element_type
        assert isinstance(element, AnyFloat)
        return b(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(type_, [0.0])))
    assert isinstance(type_, AnyFloat)
    return b(arith.ConstantOp(FloatAttr(0.0, type_)))


def _less(b: Ops, x: SSAValue, y: SSAValue) -> SSAValue:
    return b(arith.CmpiOp(x, y, "slt"))


def pack_b(b: Ops, source: SSAValue, k: SSAValue, n: SSAValue, tiles: MatmulTiles) -> SSAValue:
    """
    `Bp[p, k, jj] = B[k, p*NR + jj]` (0 past N), one panel per parallel iteration: full
    panels are copied a vector at a time, the last, partial one element by element.
    """
    source_type = source.type
    assert isinstance(source_type, MemRefType)
    element = source_type.element_type
    nr = tiles.nr
    vector_type = VectorType(element, [tiles.vector])
    zero_i, one, nr_v = b.index(0), b.index(1), b.index(nr)
    panels = b.ceildiv(n, nr_v)
    packed_type = MemRefType(element, [DYNAMIC_INDEX, DYNAMIC_INDEX, nr])
    packed = b(memref.AllocOp([panels, k], [], packed_type, IntegerAttr(ALIGNMENT, i64)))
    last = b(arith.SubiOp(n, one))

    def panel(pb: Ops, p: SSAValue) -> None:
        j0 = pb.mul(p, nr_v)

        def full(fb: Ops) -> None:
            def row(rb: Ops, kk: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                for offset in range(0, nr, tiles.vector):
                    o = rb.index(offset)
                    piece = rb(vector.LoadOp(source, [kk, rb.add(j0, o)], vector_type))
                    rb.ops.append(vector.StoreOp(piece, packed, [p, kk, o]))
                return []

            for_loop(fb, zero_i, k, one, row)

        def partial(qb: Ops) -> None:
            def row(rb: Ops, kk: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                def lane(lb: Ops, jj: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                    j = lb.add(j0, jj)
                    value = lb(memref.LoadOp.get(source, [kk, lb.min(j, last)]))
                    value = lb(arith.SelectOp(_less(lb, j, n), value, _zero(lb, element)))
                    lb.ops.append(memref.StoreOp.get(value, packed, [p, kk, jj]))
                    return []

                for_loop(rb, zero_i, nr_v, one, lane)
                return []

            for_loop(qb, zero_i, k, one, row)

        if_then(pb, pb(arith.CmpiOp(pb.add(j0, nr_v), n, "sle")), full, partial)

    parallel_loop(b, zero_i, panels, one, panel)
    return packed


def _micro_kernel(
    b: Ops,
    a: SSAValue,
    packed: SSAValue,
    rows: Sequence[SSAValue],
    p: SSAValue,
    k_range: tuple[SSAValue, SSAValue],
    tiles: MatmulTiles,
    vector_type: VectorType,
) -> Sequence[SSAValue]:
    """MR x NR/VL vector accumulators over `k` in `k_range`: the FMA loop."""
    lanes = tiles.nr // tiles.vector
    zero = _zero(b, vector_type)
    offsets = [b.index(v * tiles.vector) for v in range(lanes)]

    def step(kb: Ops, k: SSAValue, acc: Sequence[SSAValue]) -> Sequence[SSAValue]:
        panel = [kb(vector.LoadOp(packed, [p, k, o], vector_type)) for o in offsets]
        out: list[SSAValue] = []
        for r, row in enumerate(rows):
            value = kb(vector.BroadcastOp(kb(memref.LoadOp.get(a, [row, k])), vector_type))
            out += [kb(vector.FMAOp(value, panel[v], acc[r * lanes + v])) for v in range(lanes)]
        return out

    return for_loop(b, *k_range, b.index(1), step, [zero] * (tiles.mr * lanes))


def _write_back(
    b: Ops,
    c: SSAValue,
    acc: Sequence[SSAValue],
    i: SSAValue,
    j0: SSAValue,
    sizes: tuple[SSAValue, SSAValue],
    tiles: MatmulTiles,
    vector_type: VectorType,
) -> None:
    """`C[i + r, j0 + jj] += acc` for the rows below M and the columns below N."""
    m, n = sizes
    lanes = tiles.nr // tiles.vector
    offsets = [b.index(v * tiles.vector) for v in range(lanes)]
    row_ids = [b.add(i, b.index(r)) for r in range(tiles.mr)]
    full = b(arith.CmpiOp(b.add(j0, b.index(tiles.nr)), n, "sle"))

    def vectors(vb: Ops) -> None:
        for r, row in enumerate(row_ids):

            def update(ub: Ops, r: int = r, row: SSAValue = row) -> None:
                for v in range(lanes):
                    column = ub.add(j0, offsets[v])
                    old = ub(vector.LoadOp(c, [row, column], vector_type))
                    ub.ops.append(
                        vector.StoreOp(ub(arith.AddfOp(old, acc[r * lanes + v])), c, [row, column])
                    )

            if_then(vb, _less(vb, row, m), update)

    def scalars(sb: Ops) -> None:
        element = vector_type.element_type
        buffer = sb(memref.AllocaOp.get(element, shape=[tiles.mr, tiles.nr]))
        for r in range(tiles.mr):
            for v in range(lanes):
                sb.ops.append(vector.StoreOp(acc[r * lanes + v], buffer, [sb.index(r), offsets[v]]))
        width = sb(arith.SubiOp(n, j0))
        rows = sb.min(sb(arith.SubiOp(m, i)), sb.index(tiles.mr))

        def row(rb: Ops, r: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            def column(cb: Ops, jj: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                target = [cb.add(i, r), cb.add(j0, jj)]
                total = cb(
                    arith.AddfOp(
                        cb(memref.LoadOp.get(c, target)), cb(memref.LoadOp.get(buffer, [r, jj]))
                    )
                )
                cb.ops.append(memref.StoreOp.get(total, c, target))
                return []

            for_loop(rb, rb.index(0), width, rb.index(1), column)
            return []

        for_loop(sb, sb.index(0), rows, sb.index(1), row)

    if_then(b, full, vectors, scalars)


def matmul_nest(
    a: SSAValue, bm: SSAValue, c: SSAValue, tiles: MatmulTiles, rows_per_task: int
) -> list[Operation]:
    """The packed, register-blocked `C += A @ B` (see the module docstring)."""
    b = Ops()
    c_type = c.type
    assert isinstance(c_type, MemRefType)
    element = c_type.element_type
    assert isinstance(element, AnyFloat)
    vector_type = VectorType(element, [tiles.vector])
    m, k, n = b.dim(a, 0), b.dim(a, 1), b.dim(bm, 1)
    packed = pack_b(b, bm, k, n, tiles)
    zero, one = b.index(0), b.index(1)
    panels = b.ceildiv(n, b.index(tiles.nr))
    last_row = b(arith.SubiOp(m, one))

    def task(tb: Ops, i0: SSAValue) -> None:
        i_end = tb.min(tb.add(i0, tb.index(rows_per_task)), m)

        def depth(db: Ops, k0: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            k_end = db.min(db.add(k0, db.index(tiles.kc)), k)

            def panel(pb: Ops, p: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                j0 = pb.mul(p, pb.index(tiles.nr))

                def block(bb: Ops, i: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
                    rows = [bb.min(bb.add(i, bb.index(r)), last_row) for r in range(tiles.mr)]
                    acc = _micro_kernel(bb, a, packed, rows, p, (k0, k_end), tiles, vector_type)
                    _write_back(bb, c, acc, i, j0, (m, n), tiles, vector_type)
                    return []

                for_loop(pb, i0, i_end, pb.index(tiles.mr), block)
                return []

            for_loop(db, zero, panels, one, panel)
            return []

        for_loop(tb, zero, k, tb.index(tiles.kc), depth)

    parallel_loop(b, zero, m, b.index(rows_per_task), task)
    b.ops.append(memref.DeallocOp.get(packed))
    return b.ops


def _collapse_column(b: Ops, column: SSAValue) -> SSAValue:
    """A K x 1 identity-layout memref as a K-vector memref (the same data)."""
    type_ = column.type
    assert isinstance(type_, MemRefType)
    reassociation = ArrayAttr([ArrayAttr([IntegerAttr(0, i64), IntegerAttr(1, i64)])])
    flat = MemRefType(type_.element_type, [type_.get_shape()[0]])
    return b(
        memref.CollapseShapeOp.build(
            operands=[column], result_types=[flat], properties={"reassociation": reassociation}
        )
    )


def matvec_nest(a: SSAValue, x: SSAValue, c: SSAValue, lanes: int) -> list[Operation]:
    """`C[:, 0] += A @ X[:, 0]` as vectorised dot products over rows (module docstring)."""
    b = Ops()
    c_type = c.type
    assert isinstance(c_type, MemRefType)
    element = c_type.element_type
    assert isinstance(element, AnyFloat)
    vector_type = VectorType(element, [lanes])
    m, k = b.dim(a, 0), b.dim(a, 1)
    flat = _collapse_column(b, x)
    zero, one, width = b.index(0), b.index(1), b.index(lanes)
    k_vector = b(arith.SubiOp(k, b(arith.RemSIOp(k, width))))
    last_row = b(arith.SubiOp(m, one))

    def task(tb: Ops, i0: SSAValue) -> None:
        rows = [tb.min(tb.add(i0, tb.index(r)), last_row) for r in range(MATVEC_ROWS)]

        def vectors(vb: Ops, kk: SSAValue, acc: Sequence[SSAValue]) -> Sequence[SSAValue]:
            piece = vb(vector.LoadOp(flat, [kk], vector_type))
            return [
                vb(vector.FMAOp(vb(vector.LoadOp(a, [row, kk], vector_type)), piece, acc[r]))
                for r, row in enumerate(rows)
            ]

        def scalars(sb: Ops, kk: SSAValue, acc: Sequence[SSAValue]) -> Sequence[SSAValue]:
            value = sb(memref.LoadOp.get(flat, [kk]))
            products = [
                sb(arith.MulfOp(sb(memref.LoadOp.get(a, [row, kk])), value)) for row in rows
            ]
            return [sb(arith.AddfOp(acc[r], products[r])) for r in range(len(rows))]

        partial = for_loop(tb, zero, k_vector, width, vectors, [_zero(tb, vector_type)] * len(rows))
        tails = for_loop(tb, k_vector, k, one, scalars, [_zero(tb, element)] * len(rows))
        for r in range(MATVEC_ROWS):
            target = tb.add(i0, tb.index(r))

            def store(ub: Ops, r: int = r, target: SSAValue = target) -> None:
                kind = vector.CombiningKindAttr(vector.CombiningKindFlag.ADD)
                # built by hand: xDSL's constructor gives the result the vector's type
                dot = ub(
                    vector.ReductionOp.build(
                        operands=[partial[r], tails[r]],
                        result_types=[element],
                        properties={"kind": kind},
                    )
                )
                old = ub(memref.LoadOp.get(c, [target, zero]))
                ub.ops.append(memref.StoreOp.get(ub(arith.AddfOp(old, dot)), c, [target, zero]))

            if_then(tb, _less(tb, target, m), store)

    a_type = a.type
    assert isinstance(a_type, MemRefType)
    if 1 <= a_type.get_shape()[0] <= MATVEC_ROWS:
        task(b, zero)  # one task (`u @ p`): no parallel loop to dispatch
    else:
        parallel_loop(b, zero, m, b.index(MATVEC_ROWS), task)
    return b.ops
