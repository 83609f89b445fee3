"""
`ml.matmul` to a zero fill and one `linalg.generic`.

For `a: (batch_a..., m, k)` and `b: (batch_b..., k, n)` the generic runs the loops
`(batch..., i, k, j)` with iterators `parallel..., parallel, reduction, parallel`:

    a: (batch..., i, k, j) -> (batch_a..., i, k)
    b: (batch..., i, k, j) -> (batch_b..., k, j)
    c: (batch..., i, k, j) -> (batch..., i, j)

so the innermost loop `j` walks a row of `b` and of `c` contiguously, and `a[i, k]`
stays fixed across it. Batch dims broadcast as in numpy: the maps of `a` and `b`
drop missing leading batch dims and read index 0 of a static size-1 batch dim. The
body is `c + a * b` (`mulf`/`addf`, or `muli`/`addi` for integers).
"""

from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from mlc import shapes
from mlc.dialects import ml
from mlc.dialects.ml.base import is_float
from mlc.lowering.convert_ml_to_linalg.common import (
    broadcast_dim,
    broadcast_map,
    build_generic,
    check_signless,
    fill,
    iterator_types,
    keep_location,
    tensor_type,
)


def matmul_maps(a_shape: tuple[int, ...], b_shape: tuple[int, ...], batch: tuple[int, ...]):
    """The indexing maps of a, b and c over the loops `(batch..., i, k, j)`."""
    nb = len(batch)
    loops = nb + 3
    i, k, j = (AffineExpr.dimension(nb + d) for d in range(3))

    def operand_map(shape: tuple[int, ...], *inner: AffineExpr) -> AffineMap:
        batch_exprs = broadcast_map(shape[:-2], batch, loops).results
        return AffineMap(loops, 0, (*batch_exprs, *inner))

    c_batch = tuple(AffineExpr.dimension(d) for d in range(nb))
    return (
        operand_map(a_shape, i, k),
        operand_map(b_shape, k, j),
        AffineMap(loops, 0, (*c_batch, i, j)),
    )


def multiply_add(a: SSAValue, b: SSAValue, acc: SSAValue) -> SSAValue:
    if is_float(a.type):
        return arith.AddfOp(acc, arith.MulfOp(a, b)).result
    return arith.AddiOp(acc, arith.MuliOp(a, b)).result


def result_dims(
    rewriter: PatternRewriter, op: ml.MatmulOp, out_shape: tuple[int, ...]
) -> list[SSAValue | None]:
    """Sizes of the dynamic result dims: broadcast batch dims, then `m` of a and `n` of b."""
    nb = len(out_shape) - 2
    sources = [
        [
            (v, axis)
            for v in (op.a, op.b)
            if (axis := d - nb + tensor_type(v).get_num_dims() - 2) >= 0
        ]
        for d in range(nb)
    ]
    sources += [[(op.a, tensor_type(op.a).get_num_dims() - 2)]]
    sources += [[(op.b, tensor_type(op.b).get_num_dims() - 1)]]
    return [
        None if shapes.is_static(size) else broadcast_dim(rewriter, candidates)
        for size, candidates in zip(out_shape, sources, strict=True)
    ]


class LowerMatmul(RewritePattern):
    """`ml.matmul` to a zero fill and a `(batch..., i, k, j)` generic."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.MatmulOp, rewriter: PatternRewriter, /) -> None:
        result_type = op.result.type
        assert isinstance(result_type, TensorType)
        check_signless(op, result_type.element_type)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        a_shape, b_shape = tensor_type(op.a).get_shape(), tensor_type(op.b).get_shape()
        out_shape = result_type.get_shape()
        nb = len(out_shape) - 2
        with keep_location(rewriter, op):
            dims = result_dims(rewriter, op, out_shape)
            init = fill(rewriter, result_type, dims, 0)
            (result,) = build_generic(
                rewriter,
                [op.a, op.b],
                [init],
                matmul_maps(a_shape, b_shape, out_shape[:-2]),
                iterator_types(nb + 3, reduced=[nb + 1]),
                lambda args: multiply_add(*args),
            )
        rewriter.replace(op, (), (result,))


PATTERNS: list[RewritePattern] = [LowerMatmul()]
