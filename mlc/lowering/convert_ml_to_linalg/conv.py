"""
`ml.conv2d`, `ml.max_pool2d` and `ml.avg_pool2d` to linalg on tensors.

Padding is materialised: a fill generic of the padded shape (0 for conv and average
pooling, the lowest value for max pooling) and a `tensor.insert_slice` of the input,
so the window generics read in bounds everywhere and need no conditionals.

Loop order, kept by `convert-linalg-to-loops`: the reduction loops sit between the
output row and the output column, e.g. conv2d without groups is

    (n, f, oh, c, kh, kw, ow)   x[n, c, oh*sh + kh*dh, ow*sw + kw*dw] * w[f, c, kh, kw]
                                 accumulates into y[n, f, oh, ow]

so the innermost loop walks one contiguous output row and one (strided) input row,
with the weight fixed: it vectorises, and the output row stays in cache while every
`(c, kh, kw)` adds into it. The window loops of pooling get their bounds from a
`tensor.empty` of the kernel size that the body never reads, as MLIR's named pooling
ops do. Groups add a loop `g` after `n`: the weights are expanded to
`(G, O/G, I, KH, KW)` and the output computed as `(N, G, O/G, OH, OW)`, then
collapsed, so every loop is a plain dim of some operand; the input channel is
`g * I + c`, which needs static channel counts.

Average pooling (count_include_pad = 0) sums the zero-padded input, then a final
generic divides each sum in place by the number of input elements its window covers,
`window_count` of the output row times that of the column, from `linalg.index`.
"""

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import DYNAMIC_INDEX, IntegerType, TensorType, i64
from xdsl.dialects.linalg.ops import IndexOp
from xdsl.ir import Attribute, BlockArgument, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlc import shapes
from mlc.diagnostics import op_error
from mlc.dialects import ml
from mlc.dialects.ml.base import is_float
from mlc.lowering.convert_ml_to_linalg.common import (
    Index,
    IndexCalc,
    build_generic,
    check_signless,
    element_type,
    fill,
    int_min,
    iterator_types,
    keep_location,
    scalar_constant,
    tensor_type,
)
from mlc.lowering.convert_ml_to_linalg.movement import (
    empty_of,
    insert_slice,
    reassociation,
    size_of,
    type_dims,
)

# ---------------------------------------------------------------------------
# Pure index arithmetic (unit-tested against numpy on ints)
# ---------------------------------------------------------------------------


def window_output_size(
    calc: IndexCalc,
    size: Index,
    kernel: Index,
    stride: int,
    dilation: int,
    pads: tuple[int, int],
) -> Index:
    """`floor((size + pads - dilation * (kernel - 1) - 1) / stride) + 1`, as `shapes`."""
    extent = calc.add(calc.mul(calc.sub(kernel, 1), dilation), 1)
    room = calc.sub(calc.add(size, pads[0] + pads[1]), extent)
    return calc.add(calc.floordiv(room, stride), 1)


def window_count(
    calc: IndexCalc, out: Index, size: Index, kernel: int, stride: int, pad: int
) -> Index:
    """
    How many input positions the window of output position `out` covers.

    The window spans `[out * stride - pad, out * stride - pad + kernel)`; only its
    overlap with `[0, size)` counts (count_include_pad = 0).
    """
    start = calc.sub(calc.mul(out, stride), pad)
    return calc.sub(calc.min(calc.add(start, kernel), size), calc.max(start, 0))


# ---------------------------------------------------------------------------
# IR helpers
# ---------------------------------------------------------------------------


def pad_hw(rewriter: PatternRewriter, x: SSAValue, pads: Sequence[int], value: float) -> SSAValue:
    """`x` (NCHW) padded by `pads` (top, left, bottom, right) of `value`, or `x` itself."""
    if not any(pads):
        return x
    top, left, bottom, right = pads
    calc = IndexCalc(rewriter.insert)
    sizes = [size_of(rewriter, x, d) for d in range(4)]
    padded = [*sizes[:2], calc.add(sizes[2], top + bottom), calc.add(sizes[3], left + right)]
    padded_type = TensorType(
        element_type(x), [s if isinstance(s, int) else DYNAMIC_INDEX for s in padded]
    )
    filled = fill(rewriter, padded_type, type_dims(rewriter, padded_type, padded), value)
    return insert_slice(rewriter, x, filled, [0, 0, top, left], sizes)


def output_sizes(
    rewriter: PatternRewriter,
    x: SSAValue,
    channels: Index,
    result: SSAValue,
    kernel: tuple[Index, Index],
    windows: Sequence[tuple[int, int, tuple[int, int]]],
) -> list[Index]:
    """
    `(N, channels, OH, OW)`: static dims from the result type, the rest computed.

    `windows` holds (stride, dilation, (pad before, pad after)) for H and W.
    """
    calc = IndexCalc(rewriter.insert)
    declared = tensor_type(result).get_shape()
    sizes: list[Index] = [size_of(rewriter, x, 0), channels]
    for axis, (stride, dilation, pads) in zip((2, 3), windows, strict=True):
        if shapes.is_static(declared[axis]):
            sizes.append(declared[axis])
        else:
            size = size_of(rewriter, x, axis)
            sizes.append(window_output_size(calc, size, kernel[axis - 2], stride, dilation, pads))
    return [d if shapes.is_static(d) else s for d, s in zip(declared, sizes, strict=True)]


CONV_LOOPS = ("n", "f", "oh", "c", "kh", "kw", "ow")
GROUPED_CONV_LOOPS = ("n", "g", "f", "oh", "c", "kh", "kw", "ow")
WINDOW_LOOPS = ("c", "kh", "kw")  # the reduction loops


def conv_maps(
    strides: Sequence[int], dilations: Sequence[int], group_channels: int | None
) -> list[AffineMap]:
    """The maps of (input, weights, output); `group_channels` (I) is None without groups."""
    names = CONV_LOOPS if group_channels is None else GROUPED_CONV_LOOPS
    d = {name: AffineExpr.dimension(i) for i, name in enumerate(names)}
    channel = d["c"] if group_channels is None else d["g"] * group_channels + d["c"]
    row = d["oh"] * strides[0] + d["kh"] * dilations[0]
    column = d["ow"] * strides[1] + d["kw"] * dilations[1]
    x = (d["n"], channel, row, column)
    if group_channels is None:
        w, y = (d["f"], d["c"], d["kh"], d["kw"]), (d["n"], d["f"], d["oh"], d["ow"])
    else:
        w = (d["g"], d["f"], d["c"], d["kh"], d["kw"])
        y = (d["n"], d["g"], d["f"], d["oh"], d["ow"])
    return [AffineMap(len(names), 0, results) for results in (x, w, y)]


def conv_iterators(grouped: bool) -> list[Attribute]:
    names = GROUPED_CONV_LOOPS if grouped else CONV_LOOPS
    return iterator_types(len(names), [i for i, n in enumerate(names) if n in WINDOW_LOOPS])


def multiply_add(args: Sequence[BlockArgument]) -> SSAValue:
    product = arith.MulfOp(args[0], args[1]).result
    return arith.AddfOp(args[2], product).result


# ---------------------------------------------------------------------------
# conv2d
# ---------------------------------------------------------------------------


class LowerConv2d(RewritePattern):
    """`ml.conv2d` to padding, a bias or zero fill and one generic (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.Conv2dOp, rewriter: PatternRewriter, /) -> None:
        groups = op.groups.value.data
        out_channels, in_channels, _, _ = tensor_type(op.w).get_shape()
        grouped = groups > 1
        if grouped and not (shapes.is_static(out_channels) and shapes.is_static(in_channels)):
            op_error(
                op,
                "convert-ml-to-linalg: a grouped convolution needs static channel counts "
                f"in its weights, got {tensor_type(op.w)}",
            )
        strides, dilations = op.strides.get_values(), op.dilations.get_values()
        top, left, bottom, right = pads = op.pads.get_values()
        with keep_location(rewriter, op):
            x = pad_hw(rewriter, op.x, pads, 0.0)
            kernel = (size_of(rewriter, op.w, 2), size_of(rewriter, op.w, 3))
            windows = [
                (strides[0], dilations[0], (top, bottom)),
                (strides[1], dilations[1], (left, right)),
            ]
            channels = size_of(rewriter, op.w, 0)
            sizes = output_sizes(rewriter, op.x, channels, op.result, kernel, windows)
            if grouped:
                result = self.grouped(rewriter, op, x, sizes, groups)
            else:
                init = self.init(rewriter, op, op.result.type, sizes, AffineExpr.dimension(1))
                maps = conv_maps(strides, dilations, None)
                (result,) = build_generic(
                    rewriter, [x, op.w], [init], maps, conv_iterators(grouped=False), multiply_add
                )
        rewriter.replace(op, (), (result,))

    @staticmethod
    def init(
        rewriter: PatternRewriter,
        op: ml.Conv2dOp,
        init_type: Attribute,
        sizes: Sequence[Index],
        channel: AffineExpr,
    ) -> SSAValue:
        """The output before accumulation: the bias (read at `channel`) or zeros."""
        rank = len(sizes)
        if op.bias is None:
            return fill(rewriter, init_type, type_dims(rewriter, init_type, sizes), 0.0)
        empty = empty_of(rewriter, init_type, sizes)
        maps = [AffineMap(rank, 0, (channel,)), AffineMap.identity(rank)]
        (filled,) = build_generic(
            rewriter, [op.bias], [empty], maps, iterator_types(rank), lambda a: a[0]
        )
        return filled

    @staticmethod
    def grouped(
        rewriter: PatternRewriter, op: ml.Conv2dOp, x: SSAValue, sizes: Sequence[Index], groups: int
    ) -> SSAValue:
        """The conv with a group loop, over weights and an output split as (G, O/G)."""
        w_type = tensor_type(op.w)
        out_channels, in_channels, kh, kw = w_type.get_shape()
        per_group = out_channels // groups
        expanded_shape = [groups, per_group, in_channels, kh, kw]
        dynamic = [
            s
            for s in (size_of(rewriter, op.w, 2), size_of(rewriter, op.w, 3))
            if isinstance(s, SSAValue)
        ]
        expand = tensor.ExpandShapeOp(
            op.w,
            dynamic,
            reassociation([[0, 1], [2], [3], [4]]),
            expanded_shape,
            TensorType(w_type.element_type, expanded_shape),
        )
        w = rewriter.insert(expand).result
        result_type = tensor_type(op.result)
        n, _, oh, ow = result_type.get_shape()
        init_type = TensorType(result_type.element_type, [n, groups, per_group, oh, ow])
        init_sizes = [sizes[0], groups, per_group, sizes[2], sizes[3]]
        channel = AffineExpr.dimension(1) * per_group + AffineExpr.dimension(2)
        init = LowerConv2d.init(rewriter, op, init_type, init_sizes, channel)
        maps = conv_maps(op.strides.get_values(), op.dilations.get_values(), in_channels)
        (split,) = build_generic(
            rewriter, [x, w], [init], maps, conv_iterators(grouped=True), multiply_add
        )
        collapse = tensor.CollapseShapeOp.build(
            operands=[split],
            result_types=[result_type],
            properties={"reassociation": reassociation([[0], [1, 2], [3], [4]])},
        )
        return rewriter.insert(collapse).result


# ---------------------------------------------------------------------------
# max_pool2d, avg_pool2d
# ---------------------------------------------------------------------------

# Loops of a pooling window generic, and the maps of (input, window, output).
POOL_LOOPS = ("n", "c", "oh", "kh", "kw", "ow")


def pool_maps(strides: Sequence[int]) -> list[AffineMap]:
    d = {name: AffineExpr.dimension(i) for i, name in enumerate(POOL_LOOPS)}
    x = (d["n"], d["c"], d["oh"] * strides[0] + d["kh"], d["ow"] * strides[1] + d["kw"])
    window, y = (d["kh"], d["kw"]), (d["n"], d["c"], d["oh"], d["ow"])
    return [AffineMap(len(POOL_LOOPS), 0, results) for results in (x, window, y)]


def pool_window(
    rewriter: PatternRewriter,
    op: ml.Pool2dOp,
    padding: float,
    combine: Callable[[SSAValue, SSAValue], SSAValue],
) -> tuple[SSAValue, list[Index]]:
    """
    Reduce every window of the input padded with `padding` by `combine`, from `padding`.

    Returns the reduced tensor and the result's dims.
    """
    kernel = op.kernel.get_values()
    strides = op.strides.get_values()
    top, left, bottom, right = pads = op.pads.get_values()
    x = pad_hw(rewriter, op.x, pads, padding)
    windows = [(strides[0], 1, (top, bottom)), (strides[1], 1, (left, right))]
    channels = size_of(rewriter, op.x, 1)
    sizes = output_sizes(rewriter, op.x, channels, op.result, (kernel[0], kernel[1]), windows)
    init = fill(rewriter, op.result.type, type_dims(rewriter, op.result.type, sizes), padding)
    # Only the shape of the window matters: it gives the kh and kw loops their bounds.
    window_type = TensorType(element_type(op.x), kernel)
    window = rewriter.insert(tensor.EmptyOp([], window_type)).tensor
    iterators = iterator_types(len(POOL_LOOPS), [POOL_LOOPS.index("kh"), POOL_LOOPS.index("kw")])
    (reduced,) = build_generic(
        rewriter,
        [x, window],
        [init],
        pool_maps(strides),
        iterators,
        lambda args: combine(args[2], args[0]),
    )
    return reduced, sizes


def maximum(a: SSAValue, b: SSAValue) -> SSAValue:
    """Signed max for integers; `maximumf` for floats, which propagates NaN as numpy.max."""
    if isinstance(a.type, IntegerType):
        return arith.MaxSIOp(a, b).result
    return arith.MaximumfOp(a, b).result


class LowerMaxPool2d(RewritePattern):
    """`ml.max_pool2d` to a window-max generic over the input padded with the lowest value."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.MaxPool2dOp, rewriter: PatternRewriter, /) -> None:
        element = element_type(op.x)
        check_signless(op, element)
        lowest = int_min(element) if isinstance(element, IntegerType) else float("-inf")
        with keep_location(rewriter, op):
            result, _ = pool_window(rewriter, op, lowest, maximum)
        rewriter.replace(op, (), (result,))


class LowerAvgPool2d(RewritePattern):
    """`ml.avg_pool2d` to a window sum and an in-place division by the window counts."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.AvgPool2dOp, rewriter: PatternRewriter, /) -> None:
        element = element_type(op.x)
        assert is_float(element), "the ml verifier admits float avg_pool2d only"
        kernel, strides = op.kernel.get_values(), op.strides.get_values()
        top, left, _, _ = pads = op.pads.get_values()
        with keep_location(rewriter, op):
            total, _ = pool_window(rewriter, op, 0.0, lambda a, b: arith.AddfOp(a, b).result)
            height, width = size_of(rewriter, op.x, 2), size_of(rewriter, op.x, 3)

            def body(args: Sequence[BlockArgument]) -> SSAValue:
                if not any(pads):  # every window lies inside the input
                    count = scalar_constant(kernel[0] * kernel[1], element)
                    return arith.DivfOp(args[0], count).result
                calc = IndexCalc.in_body()
                rows = window_count(calc, IndexOp(2).result, height, kernel[0], strides[0], top)
                columns = window_count(calc, IndexOp(3).result, width, kernel[1], strides[1], left)
                count = arith.IndexCastOp(calc.value(calc.mul(rows, columns)), i64).result
                return arith.DivfOp(args[0], arith.SIToFPOp(count, element).result).result

            (result,) = build_generic(
                rewriter, [], [total], [AffineMap.identity(4)], iterator_types(4), body
            )
        rewriter.replace(op, (), (result,))


PATTERNS: list[RewritePattern] = [LowerConv2d(), LowerMaxPool2d(), LowerAvgPool2d()]
