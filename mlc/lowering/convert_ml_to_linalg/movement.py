"""
Data-movement `ml` ops to linalg on tensors: views where possible, else one generic.

- `ml.transpose` and `ml.broadcast_to`: one all-parallel generic that copies through
  a permuted (transpose) or broadcasting (broadcast_to) input map; a dynamic dim of
  `x` that may be 1 at run time is read at a run-time stride (see `broadcast`).
- `ml.reshape`: `tensor.collapse_shape` to 1-D, then `tensor.expand_shape` to the
  result (row-major data is contiguous, so this is free after bufferization). Dynamic
  result dims come from the `shape` operand (`tensor.extract` + `arith.index_cast`;
  a -1 entry is the element count over the other entries). The reshape ops require a
  collapsed dim to be dynamic exactly when its group has a dynamic dim, so where the
  source and the result disagree on being fully static, a 1-D copy generic changes
  the flat type (level 2 has no `tensor.cast`). Rank-0 sources or results are a copy
  generic with constant-0 maps.
- `ml.concat`: a `tensor.empty` of the result and one `tensor.insert_slice` per input
  at the running offset along the axis.
- `ml.slice`: with positive steps, one `tensor.extract_slice` whose offsets and sizes
  follow Python's clamping (`slice_bounds`), static where the dim is static; with a
  negative step, a generic over the result that reads `x` with `tensor.extract` at
  `first + i * step`.
- `ml.gather`: a generic over the result; the indices come in through the generic's
  input (the loops of the index dims), negative ones wrap by the axis size, and the
  data is read with `tensor.extract` at the index clamped into the axis, after a
  run-time check that every index is in range (`index_checks`):

      %g = ml.gather %d, %i {axis = 0} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
      ==>
      linalg.generic ins(%i) outs(%e) {            // maps (d0, d1) -> (d0), identity
      ^bb0(%idx: i64, %o: f32):
        %k = arith.index_cast %idx : i64 to index  // + 10 where negative, then <= 9
        %v = tensor.extract %d[%k, linalg.index 1] : tensor<10x4xf32>
        linalg.yield %v : f32
      }
"""

from collections.abc import Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    TensorType,
    i64,
)
from xdsl.dialects.linalg.ops import IndexOp
from xdsl.dialects.utils.dynamic_index_list import split_dynamic_index_list
from xdsl.ir import BlockArgument, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlc import shapes
from mlc.dialects import ml
from mlc.lowering.convert_ml_to_linalg.broadcast import broadcast_read, copy_generic_reading
from mlc.lowering.convert_ml_to_linalg.common import (
    build_generic,
    element_type,
    empty_of,
    index_constant,
    iterator_types,
    size_of,
    tensor_type,
)
from mlc.lowering.convert_ml_to_linalg.common import type_dims as type_dims  # conv reads it here
from mlc.lowering.convert_ml_to_linalg.index_checks import (
    check_indices,
    highest_index,
    safe_index,
)
from mlc.lowering.support.index_calc import Index, IndexCalc
from mlc.lowering.support.locations import keep_location

# ---------------------------------------------------------------------------
# Pure index arithmetic (unit-tested against numpy on ints)
# ---------------------------------------------------------------------------

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1  # "from the very start" / "to the very end"


def slice_bounds(
    calc: IndexCalc, dim: Index, start: int, end: int, step: int
) -> tuple[Index, Index]:
    """
    The first index and the length of `range(dim)[start:end:step]`.

    Python's (and numpy's) clamping: a negative start or end counts from the end, then
    both clamp to `[0, dim]` for a positive step and to `[-1, dim - 1]` for a negative
    one. Written once for `IndexCalc`, so a static dim folds to ints.
    """

    def clamp(i: int) -> Index:
        # The common "from the start" and "to the end" values need no arithmetic.
        lower = 0 if step > 0 else -1
        if i <= INT64_MIN or (i == 0 and step > 0):
            return lower
        if i >= INT64_MAX:
            return dim if step > 0 else calc.sub(dim, 1)
        if i < 0:
            return calc.max(calc.add(dim, i), lower)
        return calc.min(i, dim if step > 0 else calc.sub(dim, 1))

    first, last = clamp(start), clamp(end)
    span = calc.sub(last, first) if step > 0 else calc.sub(first, last)
    return first, calc.ceildiv(calc.max(span, 0), abs(step))


# ---------------------------------------------------------------------------
# IR helpers
# ---------------------------------------------------------------------------


def copy_generic(
    rewriter: PatternRewriter, source: SSAValue, init: SSAValue, source_map: AffineMap
) -> SSAValue:
    """An all-parallel generic over `init` that copies `source` read through `source_map`."""
    rank = tensor_type(init).get_num_dims()
    maps = [source_map, AffineMap.identity(rank)]
    (result,) = build_generic(
        rewriter, [source], [init], maps, iterator_types(rank), lambda a: a[0]
    )
    return result


def shape_entry(rewriter: PatternRewriter, shape: SSAValue, i: int) -> SSAValue:
    """
    Entry `i` of a `tensor<Nxi64>` shape operand, as an index. A shape built from
    scalars (`tensor.from_elements`) gives its scalar: read through the tensor, it
    would be a buffer written and read back by the host (on the GPU, a copy each way).
    """
    owner = shape.owner
    if isinstance(owner, tensor.FromElementsOp) and owner.elements[i].type == i64:
        return rewriter.insert(arith.IndexCastOp(owner.elements[i], IndexType())).result
    position = index_constant(rewriter, i)
    entry = rewriter.insert(tensor.ExtractOp(shape, [position], i64)).result
    return rewriter.insert(arith.IndexCastOp(entry, IndexType())).result


def reassociation(groups: Sequence[Sequence[int]]) -> ArrayAttr[ArrayAttr[IntegerAttr]]:
    return ArrayAttr([ArrayAttr([IntegerAttr(d, i64) for d in group]) for group in groups])


def static_or_dynamic(values: Sequence[Index]) -> tuple[DenseArrayBase, list[SSAValue]]:
    """Split offsets/sizes/strides into a static attribute and the dynamic operands."""
    static, dynamic = split_dynamic_index_list(values, DYNAMIC_INDEX)
    return DenseArrayBase.from_list(i64, static), dynamic


def insert_slice(
    rewriter: PatternRewriter,
    source: SSAValue,
    dest: SSAValue,
    offsets: Sequence[Index],
    sizes: Sequence[Index],
) -> SSAValue:
    """`tensor.insert_slice` of `source` into `dest` at `offsets`, unit strides."""
    static_offsets, dynamic_offsets = static_or_dynamic(offsets)
    static_sizes, dynamic_sizes = static_or_dynamic(sizes)
    static_strides, _ = static_or_dynamic([1] * len(sizes))
    op = tensor.InsertSliceOp.build(
        operands=[source, dest, dynamic_offsets, dynamic_sizes, []],
        result_types=[dest.type],
        properties={
            "static_offsets": static_offsets,
            "static_sizes": static_sizes,
            "static_strides": static_strides,
        },
    )
    return rewriter.insert(op).result


# ---------------------------------------------------------------------------
# transpose, broadcast_to
# ---------------------------------------------------------------------------


class LowerTranspose(RewritePattern):
    """`ml.transpose` to a copy generic whose input map is the inverse permutation."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.TransposeOp, rewriter: PatternRewriter, /) -> None:
        perm = op.perm.get_values()
        # Result dim i (loop d_i) is operand dim perm[i], so operand dim j reads d_{perm^-1(j)}.
        source_map = AffineMap(
            len(perm), 0, tuple(AffineExpr.dimension(perm.index(j)) for j in range(len(perm)))
        )
        with keep_location(rewriter, op):
            init = empty_of(rewriter, op.result.type, [size_of(rewriter, op.x, p) for p in perm])
            result = copy_generic(rewriter, op.x, init, source_map)
        rewriter.replace(op, (), (result,))


class LowerBroadcastTo(RewritePattern):
    """`ml.broadcast_to` to a copy generic reading `x` broadcast (`broadcast.broadcast_read`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.BroadcastToOp, rewriter: PatternRewriter, /) -> None:
        source_shape = tensor_type(op.x).get_shape()
        target_shape = tensor_type(op.result).get_shape()
        offset = len(target_shape) - len(source_shape)
        with keep_location(rewriter, op):
            sizes: list[Index] = []
            for i, size in enumerate(target_shape):
                if shapes.is_static(size):
                    sizes.append(size)
                elif op.shape is not None:
                    sizes.append(shape_entry(rewriter, op.shape, i))
                else:  # the verifier ties it to a dynamic operand dim
                    sizes.append(size_of(rewriter, op.x, i - offset))
            read = broadcast_read(rewriter, op, op.x, sizes, target_shape)
            init = empty_of(rewriter, op.result.type, sizes)
            result = copy_generic_reading(rewriter, read, init)
        rewriter.replace(op, (), (result,))


# ---------------------------------------------------------------------------
# reshape
# ---------------------------------------------------------------------------


def reshape_sizes(rewriter: PatternRewriter, op: ml.ReshapeOp) -> list[Index]:
    """
    The result's dims: static ones from its type, dynamic ones from the shape operand.

    One entry may be -1 (numpy's inferred dim). The product of all entries is then
    minus the product of the others, so that entry is `count / -product`; the
    divisor is kept >= 1 so that an entry of 0 elsewhere cannot divide by zero.
    """
    target = tensor_type(op.result).get_shape()
    if op.shape is None:
        return list(target)  # the verifier wants a shape operand for dynamic dims
    calc = IndexCalc(rewriter.insert)
    entries: list[Index] = [
        d if shapes.is_static(d) else shape_entry(rewriter, op.shape, i)
        for i, d in enumerate(target)
    ]
    if all(isinstance(e, int) for e in entries):
        return entries
    count: Index = 1
    for axis in range(tensor_type(op.x).get_num_dims()):
        count = calc.mul(count, size_of(rewriter, op.x, axis))
    product: Index = 1
    for entry in entries:
        product = calc.mul(product, entry)
    inferred = calc.value(calc.floordiv(count, calc.max(calc.sub(0, product), 1)))
    minus_one = calc.value(-1)
    for i, entry in enumerate(entries):
        if isinstance(entry, SSAValue):
            is_inferred = rewriter.insert(arith.CmpiOp(entry, minus_one, "eq")).result
            entries[i] = rewriter.insert(arith.SelectOp(is_inferred, inferred, entry)).result
    return entries


def collapse_to_1d(rewriter: PatternRewriter, x: SSAValue) -> SSAValue:
    """`x` as a 1-D tensor: static size exactly when `x` is fully static."""
    x_type = tensor_type(x)
    shape = x_type.get_shape()
    if len(shape) == 1:
        return x
    count = shapes.num_elements(shape)
    flat_type = TensorType(x_type.element_type, [DYNAMIC_INDEX if count is None else count])
    collapse = tensor.CollapseShapeOp.build(
        operands=[x],
        result_types=[flat_type],
        properties={"reassociation": reassociation([range(len(shape))])},
    )
    return rewriter.insert(collapse).result


class LowerReshape(RewritePattern):
    """`ml.reshape` to collapse_shape + expand_shape (see the module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.ReshapeOp, rewriter: PatternRewriter, /) -> None:
        source, result_type = tensor_type(op.x), tensor_type(op.result)
        if source == result_type:
            rewriter.replace(op, (), (op.x,))
            return
        target = result_type.get_shape()
        with keep_location(rewriter, op):
            if source.get_num_dims() == 0 or not target:
                # Every dim of the other side is 1: read or write at index 0.
                source_map = AffineMap(
                    len(target), 0, (AffineExpr.constant(0),) * source.get_num_dims()
                )
                init = empty_of(rewriter, result_type, reshape_sizes(rewriter, op))
                result = copy_generic(rewriter, op.x, init, source_map)
            else:
                result = self.through_1d(rewriter, op)
        rewriter.replace(op, (), (result,))

    @staticmethod
    def through_1d(rewriter: PatternRewriter, op: ml.ReshapeOp) -> SSAValue:
        result_type = tensor_type(op.result)
        target = result_type.get_shape()
        flat = collapse_to_1d(rewriter, op.x)
        count = shapes.num_elements(target)
        if shapes.is_static(tensor_type(flat).get_shape()[0]) != (count is not None):
            # expand_shape wants a static 1-D size exactly when the result is static.
            length = count if count is not None else size_of(rewriter, flat, 0)
            flat_type = TensorType(
                result_type.element_type, [DYNAMIC_INDEX if count is None else count]
            )
            init = empty_of(rewriter, flat_type, [length])
            flat = copy_generic(rewriter, flat, init, AffineMap.identity(1))
        if len(target) == 1:
            return flat
        calc = IndexCalc(rewriter.insert)
        sizes = reshape_sizes(rewriter, op)
        dynamic = [
            calc.value(s) for s, d in zip(sizes, target, strict=True) if not shapes.is_static(d)
        ]
        expand = tensor.ExpandShapeOp(
            flat, dynamic, reassociation([range(len(target))]), target, result_type
        )
        return rewriter.insert(expand).result


# ---------------------------------------------------------------------------
# concat, slice, gather
# ---------------------------------------------------------------------------


class LowerConcat(RewritePattern):
    """`ml.concat` to a `tensor.empty` and one `tensor.insert_slice` per input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.ConcatOp, rewriter: PatternRewriter, /) -> None:
        first = op.inputs[0]
        rank = tensor_type(first).get_num_dims()
        axis = shapes.normalize_axis(op.axis.value.data, rank)
        with keep_location(rewriter, op):
            calc = IndexCalc(rewriter.insert)
            input_sizes = [[size_of(rewriter, v, d) for d in range(rank)] for v in op.inputs]
            offsets: list[Index] = [0]  # offsets[k]: where input k starts; the last is the total
            for sizes in input_sizes:
                offsets.append(calc.add(offsets[-1], sizes[axis]))
            # Dims off the axis agree across inputs (a dynamic result dim is dynamic in all).
            result_sizes = [offsets[-1] if d == axis else input_sizes[0][d] for d in range(rank)]
            result = empty_of(rewriter, op.result.type, result_sizes)
            for value, sizes, offset in zip(op.inputs, input_sizes, offsets, strict=False):
                at = [offset if d == axis else 0 for d in range(rank)]
                result = insert_slice(rewriter, value, result, at, sizes)
        rewriter.replace(op, (), (result,))


class LowerSlice(RewritePattern):
    """`ml.slice` to `tensor.extract_slice`, or to a gathering generic for negative steps."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.SliceOp, rewriter: PatternRewriter, /) -> None:
        steps = op.steps.get_values()
        result_type = tensor_type(op.result)
        with keep_location(rewriter, op):
            calc = IndexCalc(rewriter.insert)
            firsts: list[Index] = []
            lengths: list[Index] = []
            for axis, (start, end, step) in enumerate(
                zip(op.starts.get_values(), op.ends.get_values(), steps, strict=True)
            ):
                declared = result_type.get_shape()[axis]
                first, length = slice_bounds(calc, size_of(rewriter, op.x, axis), start, end, step)
                firsts.append(first)
                # A static result dim is the verified length; keep the type and the sizes in step.
                lengths.append(declared if shapes.is_static(declared) else calc.value(length))
            if all(step > 0 for step in steps):
                extract = tensor.ExtractSliceOp(op.x, firsts, lengths, steps, result_type)
                result = rewriter.insert(extract).result
            else:
                result = self.reversed_read(rewriter, op, firsts, lengths)
        rewriter.replace(op, (), (result,))

    @staticmethod
    def reversed_read(
        rewriter: PatternRewriter, op: ml.SliceOp, firsts: Sequence[Index], lengths: Sequence[Index]
    ) -> SSAValue:
        """A generic over the result reading `x[first + i * step]` in each dim."""
        rank = len(firsts)
        steps = op.steps.get_values()

        def body(_: Sequence[BlockArgument]) -> SSAValue:
            calc = IndexCalc.in_body()
            coords = [
                calc.value(calc.add(calc.mul(IndexOp(d).result, steps[d]), firsts[d]))
                for d in range(rank)
            ]
            return tensor.ExtractOp(op.x, coords, element_type(op.x)).result

        init = empty_of(rewriter, op.result.type, lengths)
        maps = [AffineMap.identity(rank)]
        (result,) = build_generic(rewriter, [], [init], maps, iterator_types(rank), body)
        return result


class LowerGather(RewritePattern):
    """
    `ml.gather` to a generic over the result that reads `data` with `tensor.extract`,
    after a check of the indices (`index_checks`), at the index clamped into the axis.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.GatherOp, rewriter: PatternRewriter, /) -> None:
        data_rank = tensor_type(op.data).get_num_dims()
        axis = shapes.normalize_axis(op.axis.value.data, data_rank)
        index_rank = tensor_type(op.indices).get_num_dims()
        rank = data_rank - 1 + index_rank
        # Result dims: data[:axis], then the index dims, then data[axis + 1:].
        index_loops = range(axis, axis + index_rank)
        with keep_location(rewriter, op):
            sizes = [
                *(size_of(rewriter, op.data, d) for d in range(axis)),
                *(size_of(rewriter, op.indices, d) for d in range(index_rank)),
                *(size_of(rewriter, op.data, d) for d in range(axis + 1, data_rank)),
            ]
            axis_size = size_of(rewriter, op.data, axis)
            check_indices(rewriter, op, op.indices, axis_size, f"data dim {axis}")
            highest = highest_index(rewriter, axis_size)

            def body(args: Sequence[BlockArgument]) -> SSAValue:
                coords = [
                    *(IndexOp(d).result for d in range(axis)),
                    safe_index(args[0], axis_size, highest),
                    *(IndexOp(d).result for d in range(axis + index_rank, rank)),
                ]
                return tensor.ExtractOp(op.data, coords, element_type(op.data)).result

            init = empty_of(rewriter, op.result.type, sizes)
            index_map = AffineMap(rank, 0, tuple(AffineExpr.dimension(d) for d in index_loops))
            maps = [index_map, AffineMap.identity(rank)]
            (result,) = build_generic(
                rewriter, [op.indices], [init], maps, iterator_types(rank), body
            )
        rewriter.replace(op, (), (result,))


PATTERNS: list[RewritePattern] = [
    LowerTranspose(),
    LowerBroadcastTo(),
    LowerReshape(),
    LowerConcat(),
    LowerSlice(),
    LowerGather(),
]
