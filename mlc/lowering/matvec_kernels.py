"""
The loop nest `linalg-tile` puts in place of a matrix-vector product on memrefs.

`matvec_nest`, for `C[:, 0] += A @ X[:, 0]` (N = 1: matrix-vector products such as
PageRank's G @ p): a dot product over each contiguous row of A, in vector registers, R
rows at a time so each loaded piece of the vector serves R rows; the tail of K is
scalar. Tasks of R rows run in an `scf.parallel`, unless A has no more than R rows (one
task, run as is).

It is a pure IR builder: it returns the ops, and the pattern inserts them.
"""

from collections.abc import Sequence

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

from mlc.lowering.loop_builder import Ops, for_loop, if_then, parallel_loop
from mlc.lowering.loop_builder import less as _less
from mlc.lowering.loop_builder import zero as _zero

__all__ = ["matvec_nest"]

MATVEC_ROWS = 8


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
