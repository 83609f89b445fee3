"""
The loop nest `linalg-tile` puts in place of a matrix-vector product on memrefs.

`matvec_nest`, for `C[:, 0] += A @ X[:, 0]` (N = 1: matrix-vector products such as
PageRank's G @ p): a dot product over each contiguous row of A, in vector registers, R
rows at a time so each loaded piece of the vector serves R rows:

    scf.parallel i0 in [0, M) step R:              (one task, no loop, if M <= R)
      acc[r] = 0 (vectors), r < R                  rows past M read row M-1
      for k in [0, K - K % VL) step VL:
        acc[r] = fma(A[i0+r, k : k+VL], X[k : k+VL], acc[r])
      for k in [K - K % VL, K):                    the scalar tail
      C[i0+r, 0] += reduce(acc[r]) + tail[r]       (rows < M)

A matrix-vector product streams A once, one FMA per element loaded: what counts is the
loads in flight, and R = 8 rows reads the 16 MB A of PageRank N = 2048 from L3 at about
0.9x OpenBLAS's sgemv; 12 rows ran at 0.7x, and two vectors per row and step changed
nothing measurable (bench/results/pagerank.md). With static sizes the loop bounds are
constants: a loop that runs no iteration is left out, a product with fewer rows than a
task has one row per row of A, and `convert-to-llvm` sees the real amount of work when
it decides whether the `scf.parallel` is worth the thread pool (PageRank's K = 1
product `e @ (u @ p)` is not).

It is a pure IR builder: it returns the ops, and the pattern inserts them.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    IntegerAttr,
    MemRefType,
    VectorType,
    i64,
)
from xdsl.ir import Operation, SSAValue

from mlc.lowering.support import quick_ops
from mlc.lowering.support.loop_builder import Ops, for_loop, if_then, parallel_loop
from mlc.lowering.support.loop_builder import less as _less
from mlc.lowering.support.loop_builder import zero as _zero

__all__ = ["matvec_nest"]

MATVEC_ROWS = 8  # rows per task: 8 independent FMA chains, 8 streams of A in flight


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


@dataclass(frozen=True)
class _MatVec:
    """The operands of `C[:, 0] += A @ X[:, 0]` and what the loops need of them."""

    a: SSAValue
    x: SSAValue  # X as a K-vector
    c: SSAValue
    element: AnyFloat
    lanes: int
    static_k: int  # K, or negative if dynamic

    @property
    def vector_type(self) -> VectorType[AnyFloat]:
        return VectorType(self.element, [self.lanes])

    def dots(self, b: Ops, rows: Sequence[SSAValue], k: SSAValue) -> list[SSAValue]:
        """Each row's dot product with X, as the loops of the module docstring build it."""
        lanes, vector_type = self.lanes, self.vector_type
        zero, one = b.index(0), b.index(1)
        k_vector = _split(b, k, self.static_k, lanes)

        def vectors(vb: Ops, kk: SSAValue, acc: Sequence[SSAValue]) -> Sequence[SSAValue]:
            piece = vb(quick_ops.vector_load(self.x, [kk], vector_type))
            return [
                vb(
                    quick_ops.fma(
                        vb(quick_ops.vector_load(self.a, [row, kk], vector_type)), piece, acc[r]
                    )
                )
                for r, row in enumerate(rows)
            ]

        def scalars(sb: Ops, kk: SSAValue, acc: Sequence[SSAValue]) -> Sequence[SSAValue]:
            value = sb(quick_ops.load(self.x, [kk]))
            loads = [sb(quick_ops.load(self.a, [row, kk])) for row in rows]
            products = [sb(arith.MulfOp(loaded, value)) for loaded in loads]
            return [sb(arith.AddfOp(acc[r], products[r])) for r in range(len(rows))]

        partial = [_zero(b, vector_type)] * len(rows)
        if self.static_k < 0 or self.static_k >= lanes:
            partial = for_loop(b, zero, k_vector, b.index(lanes), vectors, partial)
        tails = [_zero(b, self.element)] * len(rows)
        if self.static_k < 0 or self.static_k % lanes:
            tails = for_loop(b, k_vector, k, one, scalars, tails)
        kind = vector.CombiningKindAttr(vector.CombiningKindFlag.ADD)
        # built by hand: xDSL's constructor gives the result the vector's type
        return [
            b(
                vector.ReductionOp.build(
                    operands=[vec, tail], result_types=[self.element], properties={"kind": kind}
                )
            )
            for vec, tail in zip(partial, tails, strict=True)
        ]


def _split(b: Ops, k: SSAValue, static_k: int, step: int) -> SSAValue:
    """The end of the part of `[0, k)` that steps of `step` cover: `k - k % step`."""
    if static_k >= 0:
        return b.index(static_k - static_k % step)
    return b(arith.SubiOp(k, b(arith.RemSIOp(k, b.index(step)))))


def matvec_nest(a: SSAValue, x: SSAValue, c: SSAValue, lanes: int) -> list[Operation]:
    """`C[:, 0] += A @ X[:, 0]` as vectorised dot products over rows (module docstring)."""
    b = Ops()
    c_type, a_type = c.type, a.type
    assert isinstance(c_type, MemRefType) and isinstance(a_type, MemRefType)
    element = c_type.element_type
    assert isinstance(element, AnyFloat)
    static_m, static_k = a_type.get_shape()
    kernel = _MatVec(a, _collapse_column(b, x), c, element, lanes, static_k)
    row_count = MATVEC_ROWS if static_m < 0 else max(1, min(MATVEC_ROWS, static_m))
    whole_tasks = static_m >= 0 and static_m % row_count == 0
    m, k = b.dim(a, 0), b.dim(a, 1)
    zero = b.index(0)
    last_row = b(arith.SubiOp(m, b.index(1)))

    def task(tb: Ops, i0: SSAValue) -> None:
        targets = [tb.add(i0, tb.index(r)) for r in range(row_count)]
        rows = [tb.min(target, last_row) for target in targets]
        for target, dot in zip(targets, kernel.dots(tb, rows, k), strict=True):

            def store(ub: Ops, target: SSAValue = target, dot: SSAValue = dot) -> None:
                old = ub(quick_ops.load(c, [target, zero]))
                ub.ops.append(quick_ops.store(ub(arith.AddfOp(old, dot)), c, [target, zero]))

            if whole_tasks:
                store(tb)  # no task reaches past row M
            else:
                if_then(tb, _less(tb, target, m), store)

    if 1 <= static_m <= MATVEC_ROWS:
        task(b, zero)  # one task (`u @ p`): no parallel loop to dispatch
    else:
        parallel_loop(b, zero, m, b.index(row_count), task)
    return b.ops
