"""
`ml.matmul` to a zero fill and one `linalg.generic`.

For `a: (batch_a..., m, k)` and `b: (batch_b..., k, n)` the generic runs the loops
`(batch..., i, k, j)` with iterators `parallel..., parallel, reduction, parallel`:

    a: (batch..., i, k, j) -> (batch_a..., i, k)
    b: (batch..., i, k, j) -> (batch_b..., k, j)
    c: (batch..., i, k, j) -> (batch..., i, j)

so the innermost loop `j` walks a row of `b` and of `c` contiguously, and `a[i, k]`
stays fixed across it. Batch dims broadcast as in numpy: the maps of `a` and `b`
drop missing leading batch dims and read index 0 of a static size-1 batch dim; an
operand whose dynamic batch dim may be 1 at run time is first copied to the full batch
sizes (`broadcast`). Inner dims not provably equal are checked by a `cf.assert`, and
`b` is then copied with its rows read at a run-time stride, so that a failed check
reads nothing past `b` (the reduction loop runs over `a`'s inner dim).
The body is `c + a * b` (`mulf`/`addf`, or `muli`/`addi` for integers).
"""

from collections.abc import Sequence

from xdsl.dialects import arith, cf
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlc.dialects import ml
from mlc.dialects.ml.base import is_float
from mlc.lowering.convert_ml_to_linalg.broadcast import (
    BroadcastRead,
    broadcast_operands,
    copy_generic_reading,
    size_key,
)
from mlc.lowering.convert_ml_to_linalg.common import (
    build_generic,
    empty_of,
    fill,
    iterator_types,
    size_of,
    tensor_type,
    type_dims,
)
from mlc.lowering.support.index_calc import Index, IndexCalc
from mlc.lowering.support.locations import keep_location


def operand_map(read: BroadcastRead, batch_rank: int, *inner: AffineExpr) -> AffineMap:
    """The map of `a` or `b` over `(batch..., i, k, j)`: its batch read, then `inner`."""
    loops = batch_rank + 3
    return AffineMap(loops, 0, (*read.indexing_map(loops).results, *inner))


def multiply_add(a: SSAValue, b: SSAValue, acc: SSAValue) -> SSAValue:
    if is_float(a.type):
        return arith.AddfOp(acc, arith.MulfOp(a, b)).result
    return arith.AddiOp(acc, arith.MuliOp(a, b)).result


def materialize(
    rewriter: PatternRewriter,
    read: BroadcastRead,
    batch: Sequence[Index],
    inner: tuple[Index, Index] = (1, 1),
    inner_sizes: tuple[Index, Index] | None = None,
) -> BroadcastRead:
    """
    Copy an operand whose batch or inner dims are read at run-time strides into a
    tensor of the full batch sizes (and `inner_sizes`), so that the matmul generic
    keeps plain maps, and `linalg-tile` its kernel.
    """
    if read.is_static and inner == (1, 1):
        return read
    x = read.value
    x_type = tensor_type(x)
    rank = x_type.get_num_dims()
    if inner_sizes is None:
        inner_sizes = (size_of(rewriter, x, rank - 2), size_of(rewriter, x, rank - 1))
    sizes = [*batch, *inner_sizes]
    full = TensorType(
        x_type.element_type, [s if isinstance(s, int) else DYNAMIC_INDEX for s in sizes]
    )
    whole = BroadcastRead(x, read.offset, [*read.strides, *inner])
    copy = copy_generic_reading(rewriter, whole, empty_of(rewriter, full, sizes))
    return BroadcastRead(copy, 0, [1] * len(batch))


def check_inner_dims(rewriter: PatternRewriter, op: ml.MatmulOp) -> SSAValue | None:
    """
    Unless the inner dims are provably equal, `cf.assert` that they are, and return
    the stride to read `b`'s rows at: 1 if they match, else 0, so that a failed check
    does not read past `b` (the loop runs over `a`'s inner dim).
    """
    ka, kb = tensor_type(op.a).get_num_dims() - 1, tensor_type(op.b).get_num_dims() - 2
    if size_key(op.a, ka) == size_key(op.b, kb):
        return None
    size_a, size_b = size_of(rewriter, op.a, ka), size_of(rewriter, op.b, kb)
    calc = IndexCalc(rewriter.insert)
    same = rewriter.insert(arith.CmpiOp(calc.value(size_a), calc.value(size_b), "eq")).result
    message = f"operand #0 dim {ka} must equal operand #1 dim {kb} (the inner dims)"
    rewriter.insert(cf.AssertOp(same, f"'{op.name}' op {message}"))
    return rewriter.insert(arith.SelectOp(same, calc.value(1), calc.value(0))).result


class LowerMatmul(RewritePattern):
    """`ml.matmul` to a zero fill and a `(batch..., i, k, j)` generic."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.MatmulOp, rewriter: PatternRewriter, /) -> None:
        result_type = op.result.type
        assert isinstance(result_type, TensorType)
        out_shape = result_type.get_shape()
        nb = len(out_shape) - 2
        i, k, j = (AffineExpr.dimension(nb + d) for d in range(3))
        with keep_location(rewriter, op):
            row_stride = check_inner_dims(rewriter, op)
            ranks = [tensor_type(v).get_num_dims() - 2 for v in (op.a, op.b)]
            batch, reads = broadcast_operands(rewriter, op, [op.a, op.b], out_shape[:-2], ranks)
            a = materialize(rewriter, reads[0], batch)
            depth, columns = (
                size_of(rewriter, op.a, ranks[0] + 1),
                size_of(rewriter, op.b, ranks[1] + 1),
            )
            if row_stride is None:
                b = materialize(rewriter, reads[1], batch)
            else:
                b = materialize(rewriter, reads[1], batch, (row_stride, 1), (depth, columns))
            rows = size_of(rewriter, op.a, ranks[0])
            dims = type_dims(rewriter, result_type, [*batch, rows, columns])
            init = fill(rewriter, result_type, dims, 0)
            c_map = AffineMap(nb + 3, 0, (*(AffineExpr.dimension(d) for d in range(nb)), i, j))
            (result,) = build_generic(
                rewriter,
                [a.value, b.value],
                [init],
                [operand_map(a, nb, i, k), operand_map(b, nb, k, j), c_map],
                iterator_types(nb + 3, reduced=[nb + 1]),
                lambda args: multiply_add(*args),
            )
        rewriter.replace(op, (), (result,))


PATTERNS: list[RewritePattern] = [LowerMatmul()]
