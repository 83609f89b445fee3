"""
`ml.scatter_nd` of whole rows (index tuples shorter than the data's rank) as one loop over
the update tuples, each combining its row of updates into its destination row with a
generic over the row's elements:

    %r = scf.for %t = 0 to T iter_args(%acc = %data) {
      %row = tensor.extract_slice %acc[<tuple t's row>, 0...] [1..., <row sizes>] [1...]
      %upd = tensor.extract_slice %updates[<t's coordinates>, 0...] [1..., <row sizes>] [1...]
      %new = linalg.generic ins(%upd) outs(%row) { combine }   // parallel over the row
      scf.yield (tensor.insert_slice %new into %acc[...])
    }

The grouped form of `scatter_grouped.py` walks a result element's updates inside the
loop over the row's elements: a scalar loop per element that LLVM cannot vectorise.
Here the loop over the updates is outside and the row's contiguous elements are the
generic's innermost loop, so LLVM vectorises the combine, and the updates still combine
into each element in their row-major order (with `none` the last stays): the results
are bit for bit those of the other forms. Cost O(updates x row) + the copy of `data`,
as the grouped form, without its three counting passes. Measured on the CPU (one
thread): a sparse MoE layer's ScatterND adds (1024x512 result, ~256 rows an expert),
see `bench/results/moe-lstm.md`.

`scatter.py` picks it where it would pick the grouped form and the scatter has rows
(`q < rank`); a scatter of single elements (`q == rank`, and `ml.scatter_elements`)
keeps the grouped form, whose destinations have no contiguous row to vectorise.
"""

from collections.abc import Sequence

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, IntegerAttr, TensorType
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter

from mlc import shapes
from mlc.dialects import ml
from mlc.lowering.convert_ml_to_linalg.common import (
    build_generic,
    element_type,
    iterator_types,
)
from mlc.lowering.convert_ml_to_linalg.index_checks import safe_index
from mlc.lowering.convert_ml_to_linalg.scatter_grouped import Combine, delinearize
from mlc.lowering.support.index_calc import Index, IndexCalc


class _InBlock:
    """The `insert` of `build_generic` where an `ImplicitBuilder` has inserted the op."""

    @staticmethod
    def insert(op: Operation) -> Operation:
        return op


def _static(sizes: Sequence[Index]) -> list[int]:
    return [s if isinstance(s, int) else shapes.DYNAMIC for s in sizes]


def _extract(source: SSAValue, offsets: Sequence[SSAValue | int], sizes: Sequence[Index]):
    """In a body: the unit-stride slice of `source` at `offsets` of `sizes`."""
    type_ = TensorType(element_type(source), _static(sizes))
    return tensor.ExtractSliceOp(source, offsets, sizes, [1] * len(sizes), type_).result


def row_scatter(
    rewriter: PatternRewriter,
    op: ml.ScatterNdOp,
    bounds: Sequence[Index],
    highest: Sequence[SSAValue],
    index_sizes: Sequence[Index],
    data_sizes: Sequence[Index],
    combine: Combine | None,
) -> SSAValue:
    """
    `op`'s result (the module docstring's loop): `bounds` are the data's first `q`
    sizes, `highest` their last indices, `index_sizes` the indices' sizes but the last,
    `data_sizes` the data's; `combine(acc, update)` the reduction (None: `none`).
    """
    q, outer = len(bounds), len(index_sizes)
    rank = len(data_sizes)
    calc = IndexCalc(rewriter.insert)
    total: Index = 1
    for n in index_sizes:
        total = calc.mul(total, n)
    row = list(data_sizes[q:])
    index_element = element_type(op.indices)
    block = Block(arg_types=[IndexType(), op.data.type])
    t, acc = block.args
    with ImplicitBuilder(block):
        in_body = IndexCalc.in_body()
        tuple_at = delinearize(t, index_sizes) if outer else []
        targets = []
        for j in range(q):
            at = [*tuple_at, in_body.value(j)]
            entry = tensor.ExtractOp(op.indices, at, index_element).result
            targets.append(safe_index(entry, bounds[j], highest[j]))
        sizes: list[Index] = [*([1] * q), *row]
        destination = _extract(acc, [*targets, *([0] * len(row))], sizes)
        updates = _extract(op.updates, [*tuple_at, *([0] * len(row))], [*([1] * outer), *sizes[q:]])
        dims = [AffineExpr.dimension(d) for d in range(rank)]
        unit = [AffineExpr.constant(0)] * outer
        maps = [AffineMap(rank, 0, (*unit, *dims[q:])), AffineMap.identity(rank)]

        def body(args: Sequence[BlockArgument]) -> SSAValue:
            return args[0] if combine is None else combine(args[1], args[0])

        (new,) = build_generic(
            _InBlock(), [updates], [destination], maps, iterator_types(rank), body
        )
        static_offsets = [*([DYNAMIC_INDEX] * q), *([0] * len(row))]
        dynamic_sizes = [s for s in sizes if isinstance(s, SSAValue)]
        inserted = tensor.InsertSliceOp.get(
            new, acc, _static(sizes), static_offsets, offsets=targets, sizes=dynamic_sizes
        )
        scf.YieldOp(inserted.result)
    zero = rewriter.insert(arith.ConstantOp(IntegerAttr(0, IndexType()))).result
    one = rewriter.insert(arith.ConstantOp(IntegerAttr(1, IndexType()))).result
    loop = rewriter.insert(scf.ForOp(zero, calc.value(total), one, [op.data], block))
    return loop.results[0]
