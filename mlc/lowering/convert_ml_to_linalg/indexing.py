"""
`ml.gather_elements` and `ml.gather_nd` to linalg on tensors: one generic over the
result that reads `data` with `tensor.extract`, after the checks of `index_checks`.

- `ml.gather_elements`: the indices come in through the generic's input (identity
  map); the data is read at the loop indices with the axis's replaced by the index,
  wrapped and clamped:

      %g = ml.gather_elements %x, %i {axis = 1} : (tensor<3x5xf32>, tensor<3x2xi64>) -> ...
      ==>
      linalg.generic ins(%i) outs(%e) {             // maps: identity, identity
      ^bb0(%idx: i64, %o: f32):
        %k = ... %idx wrapped by 5, clamped into [0, 4] ...
        %v = tensor.extract %x[linalg.index 0, %k] : tensor<3x5xf32>

  The dims of `indices` other than the axis must not exceed those of `data`: where
  that is not known when compiling, a `cf.assert` checks it.
- `ml.gather_nd`: no input; the body reads the `k` entries of the index tuple with
  `tensor.extract` from `indices` and the data at the batch loops, the `k` indices
  (each checked against its own dim) and the trailing loops. The batch dims of `data`
  and `indices` must be equal: a `cf.assert` where not known.
"""

from collections.abc import Sequence

from xdsl.dialects import arith, cf, tensor
from xdsl.dialects.builtin import IntegerAttr, TensorType, i64
from xdsl.dialects.linalg.ops import IndexOp
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlc import shapes
from mlc.dialects import ml
from mlc.dialects.ml.base import is_float
from mlc.lowering.convert_ml_to_linalg.common import (
    build_generic,
    element_type,
    empty_of,
    fill,
    is_unsigned,
    iterator_types,
    signless,
    size_of,
    tensor_type,
    type_dims,
)
from mlc.lowering.convert_ml_to_linalg.index_checks import (
    check_index_tuples,
    check_indices,
    highest_index,
    safe_index,
)
from mlc.lowering.support.index_calc import Index, IndexCalc
from mlc.lowering.support.locations import keep_location


def check_dims(
    rewriter: PatternRewriter,
    op: Operation,
    pairs: Sequence[tuple[int, Index, Index]],
    predicate: str,
    what: str,
) -> None:
    """`cf.assert` `indices_dim <predicate> data_dim` for each `(dim, indices, data)`
    pair not decided at compile time (the verifier saw the static ones)."""
    calc = IndexCalc(rewriter.insert)
    for dim, index_size, data_size in pairs:
        if isinstance(index_size, int) and isinstance(data_size, int):
            continue
        ok = arith.CmpiOp(calc.value(index_size), calc.value(data_size), predicate)
        rewriter.insert(ok)
        rewriter.insert(cf.AssertOp(ok.result, f"'{op.name}' op indices dim {dim} {what}"))


class LowerGatherElements(RewritePattern):
    """`ml.gather_elements` to a generic over the result (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.GatherElementsOp, rewriter: PatternRewriter, /) -> None:
        rank = tensor_type(op.data).get_num_dims()
        axis = shapes.normalize_axis(op.axis.value.data, rank)
        with keep_location(rewriter, op):
            sizes = [size_of(rewriter, op.indices, d) for d in range(rank)]
            data_sizes = [size_of(rewriter, op.data, d) for d in range(rank)]
            pairs = [(d, sizes[d], data_sizes[d]) for d in range(rank) if d != axis]
            check_dims(rewriter, op, pairs, "sle", "must not exceed the data's")
            bound = data_sizes[axis]
            check_indices(rewriter, op, op.indices, bound, f"data dim {axis}")
            highest = highest_index(rewriter, bound)

            def body(args: Sequence[BlockArgument]) -> SSAValue:
                coords = [
                    safe_index(args[0], bound, highest) if d == axis else IndexOp(d).result
                    for d in range(rank)
                ]
                return tensor.ExtractOp(op.data, coords, element_type(op.data)).result

            init = empty_of(rewriter, op.result.type, sizes)
            maps = [AffineMap.identity(rank)] * 2
            (result,) = build_generic(
                rewriter, [op.indices], [init], maps, iterator_types(rank), body
            )
        rewriter.replace(op, (), (result,))


class LowerGatherNd(RewritePattern):
    """`ml.gather_nd` to a generic over the result (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.GatherNdOp, rewriter: PatternRewriter, /) -> None:
        data_rank = tensor_type(op.data).get_num_dims()
        index_shape = tensor_type(op.indices).get_shape()
        index_rank, k = len(index_shape), index_shape[-1]
        batch = op.batch_dims.value.data
        rank = tensor_type(op.result).get_num_dims()
        outer = index_rank - 1  # loops over the index tuples (the batch dims first)
        with keep_location(rewriter, op):
            index_sizes = [size_of(rewriter, op.indices, d) for d in range(outer)]
            data_sizes = [size_of(rewriter, op.data, d) for d in range(data_rank)]
            pairs = [(d, index_sizes[d], data_sizes[d]) for d in range(batch)]
            check_dims(rewriter, op, pairs, "eq", "must equal the data's (a batch dim)")
            bounds = data_sizes[batch : batch + k]
            check_index_tuples(rewriter, op, op.indices, bounds, batch)
            highest = [highest_index(rewriter, b) for b in bounds]
            element = tensor_type(op.indices).element_type

            def body(_: Sequence[BlockArgument]) -> SSAValue:
                calc = IndexCalc.in_body()
                loops = [IndexOp(d).result for d in range(rank)]
                tuple_at = loops[:outer]
                coords = list(loops[:batch])
                for j in range(k):
                    position = [*tuple_at, calc.value(j)]
                    entry = tensor.ExtractOp(op.indices, position, element).result
                    coords.append(safe_index(entry, bounds[j], highest[j]))
                coords += loops[outer:]
                return tensor.ExtractOp(op.data, coords, element_type(op.data)).result

            sizes = [*index_sizes, *data_sizes[batch + k :]]
            init = empty_of(rewriter, op.result.type, sizes)
            maps = [AffineMap.identity(rank)]
            (result,) = build_generic(rewriter, [], [init], maps, iterator_types(rank), body)
        rewriter.replace(op, (), (result,))


# ---------------------------------------------------------------------------
# top_k
# ---------------------------------------------------------------------------


def nan_aware(x: SSAValue, y: SSAValue, strict: str) -> SSAValue:
    """In a body: `x strict y` (`ogt`/`olt`) where NaN is above every number."""
    ordered = arith.CmpfOp(x, y, strict).result
    if strict == "ogt":  # x NaN and y not
        other = arith.AndIOp(isnan(x), arith.CmpfOp(y, y, "ord").result).result
    else:  # y NaN and x not
        other = arith.AndIOp(isnan(y), arith.CmpfOp(x, x, "ord").result).result
    return arith.OrIOp(ordered, other).result


def isnan(x: SSAValue) -> SSAValue:
    return arith.CmpfOp(x, x, "uno").result


def before(x: SSAValue, y: SSAValue, largest: bool, unsigned: bool) -> SSAValue:
    """In a body: whether value `x` comes strictly before `y` in top_k's order."""
    if is_float(x.type):
        return nan_aware(x, y, "ogt" if largest else "olt")
    predicate = ("ugt" if largest else "ult") if unsigned else ("sgt" if largest else "slt")
    return arith.CmpiOp(x, y, predicate).result


def same(x: SSAValue, y: SSAValue) -> SSAValue:
    """In a body: `x == y`, two NaNs equal."""
    if is_float(x.type):
        both = arith.AndIOp(isnan(x), isnan(y)).result
        return arith.OrIOp(arith.CmpfOp(x, y, "oeq").result, both).result
    return arith.CmpiOp(x, y, "eq").result


class LowerTopK(RewritePattern):
    """`ml.top_k` to one generic of k selection passes per row (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.TopKOp, rewriter: PatternRewriter, /) -> None:
        x_type = tensor_type(op.x)
        rank = x_type.get_num_dims()
        axis = shapes.normalize_axis(op.axis.value.data, rank)
        k = op.k.value.data
        largest = bool(op.largest.value.data)
        element = element_type(op.x)
        unsigned = is_unsigned(element)
        values_type, indices_type = op.values.type, op.indices.type
        with keep_location(rewriter, op):
            calc = IndexCalc(rewriter.insert)
            n = size_of(rewriter, op.x, axis)
            if not isinstance(n, int):
                fits = rewriter.insert(arith.CmpiOp(calc.value(k), n, "sle")).result
                message = f"'{op.name}' op k ({k}) exceeds the size of dim {axis}"
                rewriter.insert(cf.AssertOp(fits, message))
            sizes = [k if d == axis else size_of(rewriter, op.x, d) for d in range(rank)]
            last = calc.value(calc.sub(n, 1))
            kept = [1 if d == axis else s for d, s in enumerate(sizes)]
            kept_shape = [1 if d == axis else e for d, e in enumerate(x_type.get_shape())]
            kept_types = [TensorType(signless(element), kept_shape), TensorType(i64, kept_shape)]
            inits = [
                fill(rewriter, kept_types[0], type_dims(rewriter, kept_types[0], kept), 0),
                fill(rewriter, kept_types[1], type_dims(rewriter, kept_types[1], kept), -1),
                empty_of(rewriter, values_type, sizes),
                empty_of(rewriter, indices_type, sizes),
            ]

            def body(args: Sequence[BlockArgument]) -> list[SSAValue]:
                x, prev, prev_at, best, best_at = args
                calc = IndexCalc.in_body()
                position = IndexOp(rank).result
                here = arith.IndexCastOp(position, i64).result
                minus_one = arith.ConstantOp(IntegerAttr(-1, i64)).result
                first = arith.CmpiOp(position, calc.value(0), "eq").result
                # The element follows the previous slot's pick in the order (any does at
                # the first slot, whose `prev_at` is -1).
                none_before = arith.CmpiOp(prev_at, minus_one, "eq").result
                tie_after = arith.AndIOp(
                    same(x, prev), arith.CmpiOp(here, prev_at, "sgt").result
                ).result
                after = arith.OrIOp(before(prev, x, largest, unsigned), tie_after).result
                eligible = arith.OrIOp(none_before, after).result
                # The best so far in this slot: none yet at the row's first element.
                so_far = arith.SelectOp(first, minus_one, best_at).result
                empty = arith.CmpiOp(so_far, minus_one, "eq").result
                better = arith.OrIOp(empty, before(x, best, largest, unsigned)).result
                take = arith.AndIOp(eligible, better).result
                value = arith.SelectOp(take, x, best).result
                at = arith.SelectOp(take, here, so_far).result
                done = arith.CmpiOp(position, last, "eq").result
                return [
                    arith.SelectOp(done, value, prev).result,
                    arith.SelectOp(done, at, prev_at).result,
                    value,
                    at,
                ]

            loops = rank + 1
            dims = [AffineExpr.dimension(d) for d in range(loops)]
            x_map = AffineMap(
                loops, 0, tuple(dims[rank] if d == axis else dims[d] for d in range(rank))
            )
            kept_map = AffineMap(
                loops,
                0,
                tuple(AffineExpr.constant(0) if d == axis else dims[d] for d in range(rank)),
            )
            out_map = AffineMap(loops, 0, tuple(dims[:rank]))
            _, _, values, indices = build_generic(
                rewriter,
                [op.x],
                inits,
                [x_map, kept_map, kept_map, out_map, out_map],
                iterator_types(loops, [axis, rank]),
                body,
            )
        rewriter.replace(op, (), (values, indices))


PATTERNS: list[RewritePattern] = [LowerGatherElements(), LowerGatherNd(), LowerTopK()]
