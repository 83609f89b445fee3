"""
`ml.scatter_elements` and `ml.scatter_nd` to linalg on tensors: one generic over the
*result* (a copy of `data`, its init) that, for each element, walks the updates that
could land there in their order and combines the ones that do, after the index checks
of `index_checks`.

The scatter is written from the side of the element written, as a gather, so that the
generic is parallel over the result on both targets with no race and no atomics, and
updates landing on one element apply in the row-major order of `updates` (onnxruntime's
order: with reduction `none` the last one stays; `add` and `mul` round as it does):

- `ml.scatter_elements` (axis `a`, `m` updates along it): the loops are the result's
  and an inner `reduction` loop `j` over `m`. Element `p` reads `indices` and `updates`
  at `p` with `p[a]` replaced by `j` (`tensor.extract`; rows of `p` past the indices'
  extent take none) and combines the update when the wrapped, clamped index is `p[a]`:

      %s = ml.scatter_elements %d, %i, %u {axis = 1, reduction = "add"} : (tensor<3x5xf32>, ...)
      ==>
      linalg.generic {iterator_types = ["parallel", "parallel", "reduction"]}
          ins(%bound : tensor<2xi8>) outs(%d : tensor<3x5xf32>) {
      ^bb0(%_: i8, %acc: f32):
        %k = ... %i[linalg.index 0, linalg.index 2] wrapped by 5, clamped into [0, 4] ...
        %v = tensor.extract %u[linalg.index 0, linalg.index 2]
        linalg.yield (select (%k == linalg.index 1), (%acc + %v), %acc)
      }

  `%bound` (a `tensor.empty` of `m` elements, 0 when `indices` is empty) only gives
  the loop `j` its size. Cost: `m` steps per result element, which suits the scatters
  models make (a mixture of experts writes k <= 8 routing weights per token into a row
  of E experts); a scatter of many updates along a long axis pays `n * m` per row.
- `ml.scatter_nd` (index tuples of length `q`): the loops are the result's and the
  `reduction` loops over the tuples (`indices.shape[:-1]`, which read `indices` at
  `[t..., 0]` and so give the loops their sizes). Element `p` combines `updates[t...,
  p[q:]]` when every entry of tuple `t` (wrapped, clamped) equals `p[:q]`. Cost: one
  pass over the tuples per result element.

Both are the lowering of small scatters only: when the destinations times the update
tuples exceed `scatter_grouped.GROUPED_MIN_PAIRS` (4096), or are not known when
compiling, the scatter is grouped by destination instead (`scatter_grouped.py`:
count, prefix sum, place, then a parallel generic that walks only each destination's
updates, in the same order), O(result + updates) where the walk above is O(result x
updates). Destinations are the rows `p[:q]` for `scatter_nd` and the result's elements
for `scatter_elements`; a `scatter_nd` of rows (`q < rank`) takes `scatter_rows.py`'s
loop over its tuples instead, which combines whole rows with vector code. Measured on
the CPU (2 cores, shared): a sparse MoE layer's
`ScatterND` adds (result 1024x512, ~256 rows an expert) took 97% of the layer, which
went from 1.7-3.9 s to 70-106 ms a call (`bench/results/moe-lstm.md`); an embedding
gradient (`ml.gather`'s VJP, vocab 30000 x 256, 1024 ids) went from 61.5 s a call (a
`scatter_elements` add of 262144 updates) to 56 ms grouped by element and 17 ms as a
`scatter_nd` of rows grouped by row (the VJP's form now).

The dims that must agree (`updates` and `indices`, the dims of `indices` not above
`data`'s; for scatter_nd `updates` against `indices[:-1] + data[q:]`) are checked by
`cf.assert` where not known when compiling.
"""

from collections.abc import Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IntegerType, TensorType, i8, i64
from xdsl.dialects.linalg.ops import IndexOp
from xdsl.ir import Attribute, BlockArgument, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlc import shapes
from mlc.dialects import ml
from mlc.dialects.ml.base import is_float
from mlc.lowering.convert_ml_to_linalg.common import (
    build_generic,
    element_type,
    empty_of,
    is_unsigned,
    iterator_types,
    size_of,
    tensor_type,
)
from mlc.lowering.convert_ml_to_linalg.index_checks import (
    check_index_tuples,
    check_indices,
    highest_index,
    safe_index,
)
from mlc.lowering.convert_ml_to_linalg.indexing import check_dims
from mlc.lowering.convert_ml_to_linalg.scatter_atomic import (
    atomic_reduction,
    elements_atomic,
    nd_atomic,
)
from mlc.lowering.convert_ml_to_linalg.scatter_compaction import (
    compaction_of,
    compaction_scatter,
)
from mlc.lowering.convert_ml_to_linalg.scatter_grouped import (
    GROUPED_MIN_PAIRS,
    Combine,
    grouped_pays,
    grouped_scatter,
)
from mlc.lowering.convert_ml_to_linalg.scatter_rows import row_scatter
from mlc.lowering.support.index_calc import Index, IndexCalc
from mlc.lowering.support.locations import keep_location

FLOAT_COMBINE = {
    "add": arith.AddfOp,
    "mul": arith.MulfOp,
    "max": arith.MaximumfOp,
    "min": arith.MinimumfOp,
}
SIGNED_COMBINE = {
    "add": arith.AddiOp,
    "mul": arith.MuliOp,
    "max": arith.MaxSIOp,
    "min": arith.MinSIOp,
}
UNSIGNED_COMBINE = {**SIGNED_COMBINE, "max": arith.MaxUIOp, "min": arith.MinUIOp}


def combined(reduction: str, element: Attribute, acc: SSAValue, update: SSAValue) -> SSAValue:
    """In a body: `update` combined with `acc` by `reduction` (`none`: `update`)."""
    if reduction == "none":
        return update
    if is_float(element):
        table = FLOAT_COMBINE
    else:
        table = UNSIGNED_COMBINE if is_unsigned(element) else SIGNED_COMBINE
    return table[reduction](acc, update).result


def combiner(reduction: str, element: Attribute) -> Combine | None:
    """`combined` as a function of (acc, update); None for `none`."""
    if reduction == "none":
        return None
    return lambda acc, update: combined(reduction, element, acc, update)


def all_of(conditions: Sequence[SSAValue]) -> SSAValue | None:
    """In a body: the conjunction of `conditions` (None if there are none)."""
    if not conditions:
        return None
    result = conditions[0]
    for condition in conditions[1:]:
        result = arith.AndIOp(result, condition).result
    return result


def count_of(rewriter: PatternRewriter, value: SSAValue) -> Index:
    calc = IndexCalc(rewriter.insert)
    count: Index = 1
    for d in range(tensor_type(value).get_num_dims()):
        count = calc.mul(count, size_of(rewriter, value, d))
    return count


def loop_bound(rewriter: PatternRewriter, indices: SSAValue, axis: int) -> SSAValue:
    """
    A `tensor.empty` of `indices.shape[axis]` i8 elements (none when `indices` is
    empty): an input that only gives a generic's loop over the axis its size.
    """
    calc = IndexCalc(rewriter.insert)
    m = size_of(rewriter, indices, axis)
    others = [n for d, n in enumerate(tensor_type(indices).get_shape()) if d != axis]
    if not all(shapes.is_static(n) and n > 0 for n in others):
        empty = rewriter.insert(
            arith.CmpiOp(calc.value(count_of(rewriter, indices)), calc.value(0), "eq")
        ).result
        m = rewriter.insert(arith.SelectOp(empty, calc.value(0), calc.value(m))).result
    static = m if isinstance(m, int) else shapes.DYNAMIC
    return empty_of(rewriter, TensorType(i8, [static]), [m])


def check_element_dims(
    rewriter: PatternRewriter,
    op: ml.ScatterElementsOp,
    axis: int,
    sizes: Sequence[Index] | None = None,
) -> tuple[list[Index], Index]:
    """Check the indices' dims (`sizes`, when known without reading the indices) against
    the data's and the updates'; return them and the size of the data's `axis` (the
    indices' bound)."""
    rank = tensor_type(op.data).get_num_dims()
    if sizes is None:
        sizes = [size_of(rewriter, op.indices, d) for d in range(rank)]
    sizes = list(sizes)
    data_sizes = [size_of(rewriter, op.data, d) for d in range(rank)]
    update_sizes = [size_of(rewriter, op.updates, d) for d in range(rank)]
    pairs = [(d, sizes[d], data_sizes[d]) for d in range(rank) if d != axis]
    check_dims(rewriter, op, pairs, "sle", "must not exceed the data's")
    same = [(d, update_sizes[d], sizes[d]) for d in range(rank)]
    check_dims(rewriter, op, same, "eq", "must equal the updates'")
    return sizes, data_sizes[axis]


class LowerCompaction(RewritePattern):
    """
    `ml.scatter_elements` compacting a mask's elements (NonZero's) as one loop of writes
    (`scatter_compaction`). Applied before the other lowerings, while the indices are
    still the `ml` ops that show them distinct and in range.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.ScatterElementsOp, rewriter: PatternRewriter, /) -> None:
        found = compaction_of(op)
        if found is None:
            return
        with keep_location(rewriter, op):
            rows = tensor_type(op.indices).get_shape()[0]
            sizes = [rows, size_of(rewriter, found.mask, 0)]
            _, bound = check_element_dims(rewriter, op, 1, sizes)
            result = compaction_scatter(rewriter, op, found, bound)
        rewriter.replace(op, (), (result,))


class LowerScatterElements(RewritePattern):
    """`ml.scatter_elements` to a generic over the result (see the module docstring)."""

    def __init__(self, min_pairs: int = GROUPED_MIN_PAIRS, atomic: bool = False):
        self.min_pairs, self.atomic = min_pairs, atomic

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.ScatterElementsOp, rewriter: PatternRewriter, /) -> None:
        rank = tensor_type(op.data).get_num_dims()
        axis = shapes.normalize_axis(op.axis.value.data, rank)
        element = element_type(op.data)
        index_element = element_type(op.indices)
        reduction = op.reduction.data
        index_shape = tensor_type(op.indices).get_shape()
        data_shape = tensor_type(op.data).get_shape()
        with keep_location(rewriter, op):
            sizes, bound = check_element_dims(rewriter, op, axis)
            check_indices(rewriter, op, op.indices, bound, f"data dim {axis}")
            highest = highest_index(rewriter, bound)
            if self.atomic and atomic_reduction(reduction, element):
                combine = combiner(reduction, element)
                result = elements_atomic(rewriter, op, axis, bound, highest, sizes, combine)
                rewriter.replace(op, (), (result,))
                return
            if grouped_pays([data_shape[axis]], [index_shape[axis]], self.min_pairs):
                data_sizes = [size_of(rewriter, op.data, d) for d in range(rank)]
                result = self.grouped(rewriter, op, axis, bound, highest, sizes, data_sizes)
                rewriter.replace(op, (), (result,))
                return
            # The dims where indices may stop short of the data: rows past them take none.
            short = [
                d
                for d in range(rank)
                if d != axis
                and not (shapes.is_static(index_shape[d]) and index_shape[d] == data_shape[d])
            ]
            last_row = {d: highest_index(rewriter, sizes[d]) for d in short}
            row_size = {d: IndexCalc(rewriter.insert).value(sizes[d]) for d in short}
            steps = loop_bound(rewriter, op.indices, axis)

            def body(args: Sequence[BlockArgument]) -> SSAValue:
                acc = args[1]
                loops = [IndexOp(d).result for d in range(rank + 1)]
                coords = [
                    loops[rank]
                    if d == axis
                    else (arith.MinUIOp(loops[d], last_row[d]).result if d in short else loops[d])
                    for d in range(rank)
                ]
                inside = [arith.CmpiOp(loops[d], row_size[d], "ult").result for d in short]
                index = tensor.ExtractOp(op.indices, coords, index_element).result
                update = tensor.ExtractOp(op.updates, coords, element).result
                target = safe_index(index, bound, highest)
                hit = all_of([arith.CmpiOp(target, loops[axis], "eq").result, *inside])
                assert hit is not None
                new = combined(reduction, element, acc, update)
                return arith.SelectOp(hit, new, acc).result

            maps = [
                AffineMap(rank + 1, 0, (AffineExpr.dimension(rank),)),
                AffineMap(rank + 1, 0, tuple(AffineExpr.dimension(d) for d in range(rank))),
            ]
            iterators = iterator_types(rank + 1, [rank])
            (result,) = build_generic(rewriter, [steps], [op.data], maps, iterators, body)
        rewriter.replace(op, (), (result,))

    @staticmethod
    def grouped(
        rewriter: PatternRewriter,
        op: ml.ScatterElementsOp,
        axis: int,
        bound: Index,
        highest: SSAValue,
        sizes: Sequence[Index],
        data_sizes: Sequence[Index],
    ) -> SSAValue:
        """The scatter grouped by destination element (`scatter_grouped`)."""
        rank = len(sizes)
        element = element_type(op.data)

        def linear(coords: Sequence[SSAValue]) -> SSAValue:
            calc = IndexCalc.in_body()
            at: Index = coords[0]
            for d in range(1, rank):
                at = calc.add(calc.mul(at, data_sizes[d]), coords[d])
            return calc.value(at)

        def dest_body(args: Sequence[BlockArgument]) -> SSAValue:
            loops = [IndexOp(d).result for d in range(rank)]
            target = safe_index(args[0], bound, highest)
            coords = [target if d == axis else loops[d] for d in range(rank)]
            return arith.IndexCastOp(linear(coords), i64).result

        identity = AffineMap.identity(rank)
        empty = empty_of(rewriter, TensorType(i64, tensor_type(op.indices).get_shape()), sizes)
        (dest,) = build_generic(
            rewriter, [op.indices], [empty], [identity, identity], iterator_types(rank), dest_body
        )
        count: Index = 1
        for n in data_sizes:
            count = IndexCalc(rewriter.insert).mul(count, n)

        def read(tuple_at: Sequence[SSAValue], loops: Sequence[SSAValue]) -> SSAValue:
            return tensor.ExtractOp(op.updates, tuple_at, element).result

        return grouped_scatter(
            rewriter,
            op.data,
            dest,
            sizes,
            count,
            linear,
            read,
            combiner(op.reduction.data, element),
        )


class LowerScatterNd(RewritePattern):
    """`ml.scatter_nd` to a generic over the result (see the module docstring)."""

    def __init__(self, min_pairs: int = GROUPED_MIN_PAIRS, atomic: bool = False):
        self.min_pairs, self.atomic = min_pairs, atomic

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.ScatterNdOp, rewriter: PatternRewriter, /) -> None:
        rank = tensor_type(op.data).get_num_dims()
        index_shape = tensor_type(op.indices).get_shape()
        outer, q = len(index_shape) - 1, index_shape[-1]
        element = element_type(op.data)
        index_element = element_type(op.indices)
        assert isinstance(index_element, IntegerType)
        reduction = op.reduction.data
        loops_count = rank + outer
        with keep_location(rewriter, op):
            index_sizes = [size_of(rewriter, op.indices, d) for d in range(outer)]
            data_sizes = [size_of(rewriter, op.data, d) for d in range(rank)]
            update_sizes = [
                size_of(rewriter, op.updates, d)
                for d in range(tensor_type(op.updates).get_num_dims())
            ]
            expected = [*index_sizes, *data_sizes[q:]]
            pairs = [(d, u, e) for d, (u, e) in enumerate(zip(update_sizes, expected, strict=True))]
            check_dims(rewriter, op, pairs, "eq", "of updates must equal indices' or data's")
            bounds = data_sizes[:q]
            check_index_tuples(rewriter, op, op.indices, bounds, 0)
            highest = [highest_index(rewriter, b) for b in bounds]
            rows = tensor_type(op.data).get_shape()[:q]
            if self.atomic and atomic_reduction(reduction, element):
                combine = combiner(reduction, element)
                result = nd_atomic(rewriter, op, bounds, highest, index_sizes, data_sizes, combine)
                rewriter.replace(op, (), (result,))
                return
            if outer and grouped_pays(rows, index_shape[:-1], self.min_pairs):
                if q < rank:
                    combine = combiner(reduction, element)
                    result = row_scatter(
                        rewriter, op, bounds, highest, index_sizes, data_sizes, combine
                    )
                    rewriter.replace(op, (), (result,))
                    return
                result = self.grouped(rewriter, op, bounds, highest, index_sizes)
                rewriter.replace(op, (), (result,))
                return

            def body(args: Sequence[BlockArgument]) -> SSAValue:
                calc = IndexCalc.in_body()
                first, acc = args
                loops = [IndexOp(d).result for d in range(loops_count)]
                tuple_at = loops[rank:]
                matches = []
                for j in range(q):
                    entry = first
                    if j:
                        position = [*tuple_at, calc.value(j)]
                        entry = tensor.ExtractOp(op.indices, position, index_element).result
                    target = safe_index(entry, bounds[j], highest[j])
                    matches.append(arith.CmpiOp(target, loops[j], "eq").result)
                hit = all_of(matches)
                assert hit is not None
                coords = [*tuple_at, *loops[q:rank]]
                update = tensor.ExtractOp(op.updates, coords, element).result
                new = combined(reduction, element, acc, update)
                return arith.SelectOp(hit, new, acc).result

            dims = [AffineExpr.dimension(d) for d in range(loops_count)]
            maps = [
                AffineMap(loops_count, 0, (*dims[rank:], AffineExpr.constant(0))),
                AffineMap(loops_count, 0, tuple(dims[:rank])),
            ]
            iterators = iterator_types(loops_count, list(range(rank, loops_count)))
            (result,) = build_generic(rewriter, [op.indices], [op.data], maps, iterators, body)
        rewriter.replace(op, (), (result,))

    @staticmethod
    def grouped(
        rewriter: PatternRewriter,
        op: ml.ScatterNdOp,
        bounds: Sequence[Index],
        highest: Sequence[SSAValue],
        index_sizes: Sequence[Index],
    ) -> SSAValue:
        """The scatter grouped by destination row `p[:q]` (`scatter_grouped`)."""
        outer = len(index_sizes)
        q = len(bounds)
        index_element = element_type(op.indices)
        element = element_type(op.data)

        def destination(loops: Sequence[SSAValue], entry: SSAValue | None) -> SSAValue:
            """In a body: the row-major number of row `p[:q]` (or of tuple `loops`)."""
            calc = IndexCalc.in_body()
            linear: Index = 0
            for j in range(q):
                if entry is None:
                    target = loops[j]
                else:
                    if j:
                        at = [*loops[:outer], calc.value(j)]
                        entry = tensor.ExtractOp(op.indices, at, index_element).result
                    target = safe_index(entry, bounds[j], highest[j])
                linear = calc.add(calc.mul(linear, bounds[j]), target) if j else target
            return calc.value(linear)

        def dest_body(args: Sequence[BlockArgument]) -> SSAValue:
            loops = [IndexOp(d).result for d in range(outer)]
            return arith.IndexCastOp(destination(loops, args[0]), i64).result

        dims = [AffineExpr.dimension(d) for d in range(outer)]
        maps = [
            AffineMap(outer, 0, (*dims, AffineExpr.constant(0))),
            AffineMap.identity(outer),
        ]
        empty = empty_of(
            rewriter, TensorType(i64, tensor_type(op.indices).get_shape()[:-1]), index_sizes
        )
        (dest,) = build_generic(
            rewriter, [op.indices], [empty], maps, iterator_types(outer), dest_body
        )
        count: Index = 1
        for b in bounds:
            count = IndexCalc(rewriter.insert).mul(count, b)
        rank = tensor_type(op.data).get_num_dims()

        def read(tuple_at: Sequence[SSAValue], loops: Sequence[SSAValue]) -> SSAValue:
            coords = [*tuple_at, *loops[q:rank]]
            return tensor.ExtractOp(op.updates, coords, element).result

        return grouped_scatter(
            rewriter,
            op.data,
            dest,
            index_sizes,
            count,
            lambda loops: destination(loops, None),
            read,
            combiner(op.reduction.data, element),
        )


def patterns(min_pairs: int = GROUPED_MIN_PAIRS, atomic: bool = False) -> list[RewritePattern]:
    """The scatters' lowerings, grouped above `min_pairs` destination x tuple pairs, or,
    with `atomic`, as loops over the updates where the reduction allows
    (`scatter_atomic`)."""
    return [LowerScatterElements(min_pairs, atomic), LowerScatterNd(min_pairs, atomic)]


PATTERNS: list[RewritePattern] = patterns()
