"""
`ml.conv1d/2d/3d`, `ml.max_pool1d/2d/3d` and `ml.avg_pool1d/2d/3d` to linalg on tensors.

One lowering serves every spatial rank: the loops, the indexing maps and the padding
are built per spatial dim.

Padding is materialised: a fill generic of the padded shape (0 for conv and average
pooling, the lowest value for max pooling) and a `tensor.insert_slice` of the input,
so the window generics read in bounds everywhere and need no conditionals.

Loop order, kept by `convert-linalg-to-loops`: the reduction loops sit between the
outer output dims and the last (innermost) one, e.g. conv2d without groups is

    (n, f, oh, c, kh, kw, ow)   x[n, c, oh*sh + kh*dh, ow*sw + kw*dw] * w[f, c, kh, kw]
                                 accumulates into y[n, f, oh, ow]

so the innermost loop walks one contiguous output row and one (strided) input row,
with the weight fixed: it vectorises, and the output row stays in cache while every
`(c, kh, kw)` adds into it (conv3d: `(n, f, od, oh, c, kd, kh, kw, ow)`; conv1d:
`(n, f, c, kw, ow)`). The window loops of pooling get their bounds from a
`tensor.empty` of the kernel size that the body never reads, as MLIR's named pooling
ops do. Pooling moves its last kernel dim inside the last output dim, `(n, c, oh, kh,
ow, kw)`: the innermost loop is a short reduction into one output element (kept in a
register), and the `ow` loop around it reads a contiguous run of input (2 x 2 stride
2: two interleaved elements per output), which LLVM vectorises; with `kw` outside `ow`
each output element was loaded and stored once per window element and the stride-2
reads of `llvm.maximum` stayed scalar (batch 8 of 16 x 32 x 32: 5.4x slower). On the
CPU, `linalg-tile` gives float pooling the depthwise window kernel
(`mlc.lowering.cpu.depthwise_conv`), which reads these loops in y's order.

A depthwise convolution (one input and one output channel per group, O = G = C)
has no channel loop at all: the weights are collapsed to `(C, kernel...)` and

    (n, f, oh, kh, kw, ow)      x[n, f, oh*sh + kh*dh, ow*sw + kw*dw] * w[f, kh, kw]

so it is a plain window generic over the output, which elementwise consumers fuse into
and `linalg-tile` gives a kernel of its own (`mlc.lowering.cpu.depthwise_conv`).
Other groups add a loop `g` after `n`: the weights are expanded to
`(G, O/G, I, kernel...)` and the output computed as `(N, G, O/G, spatial...)`, then
collapsed, so every loop is a plain dim of some operand; the input channel is
`g * I + c`, which needs static channel counts.

Average pooling (count_include_pad = 0) sums the zero-padded input, then a final
generic divides each sum in place by the number of input elements its window covers:
the product over the spatial dims of `window_count`, from `linalg.index`.
"""

import math
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
    build_generic,
    element_type,
    fill,
    int_min,
    is_unsigned,
    iterator_types,
    scalar_constant,
    tensor_type,
)
from mlc.lowering.convert_ml_to_linalg.conv_bias import bias_added, bias_after
from mlc.lowering.convert_ml_to_linalg.movement import (
    empty_of,
    insert_slice,
    reassociation,
    size_of,
    type_dims,
)
from mlc.lowering.support.index_calc import Index, IndexCalc
from mlc.lowering.support.locations import keep_location

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
    calc: IndexCalc,
    out: Index,
    size: Index,
    kernel: int,
    stride: int,
    pad: int,
    dilation: int = 1,
) -> Index:
    """
    How many input positions the window of output position `out` covers.

    The window reads `start + j * dilation` for `j` in `[0, kernel)`, where
    `start = out * stride - pad`; only the positions in `[0, size)` count
    (count_include_pad = 0): `j` from `ceil(-start / dilation)` to
    `floor((size - 1 - start) / dilation)`, clamped to the kernel.
    """
    start = calc.sub(calc.mul(out, stride), pad)
    if dilation == 1:
        return calc.sub(calc.min(calc.add(start, kernel), size), calc.max(start, 0))
    first = calc.max(calc.sub(0, calc.floordiv(start, dilation)), 0)
    last = calc.min(calc.floordiv(calc.sub(calc.sub(size, 1), start), dilation), kernel - 1)
    return calc.max(calc.add(calc.sub(last, first), 1), 0)


# ---------------------------------------------------------------------------
# IR helpers
# ---------------------------------------------------------------------------


def pad_spatial(
    rewriter: PatternRewriter, x: SSAValue, pads: Sequence[int], value: float
) -> SSAValue:
    """`x` (N, C, spatial...) padded by `pads` (begins, then ends) of `value`, or `x` itself."""
    if not any(pads):
        return x
    spatial = len(pads) // 2
    calc = IndexCalc(rewriter.insert)
    sizes = [size_of(rewriter, x, d) for d in range(spatial + 2)]
    padded = sizes[:2] + [
        calc.add(sizes[2 + d], pads[d] + pads[d + spatial]) for d in range(spatial)
    ]
    padded_type = TensorType(
        element_type(x), [s if isinstance(s, int) else DYNAMIC_INDEX for s in padded]
    )
    filled = fill(rewriter, padded_type, type_dims(rewriter, padded_type, padded), value)
    return insert_slice(rewriter, x, filled, [0, 0, *pads[:spatial]], sizes)


def output_sizes(
    rewriter: PatternRewriter,
    x: SSAValue,
    channels: Index,
    result: SSAValue,
    kernel: Sequence[Index],
    windows: Sequence[tuple[int, int, tuple[int, int]]],
) -> list[Index]:
    """
    `(N, channels, spatial...)`: static dims from the result type, the rest computed.

    `windows` holds (stride, dilation, (pad before, pad after)) per spatial dim.
    """
    calc = IndexCalc(rewriter.insert)
    declared = tensor_type(result).get_shape()
    sizes: list[Index] = [size_of(rewriter, x, 0), channels]
    for d, (stride, dilation, pads) in enumerate(windows):
        if shapes.is_static(declared[d + 2]):
            sizes.append(declared[d + 2])
        else:
            size = size_of(rewriter, x, d + 2)
            sizes.append(window_output_size(calc, size, kernel[d], stride, dilation, pads))
    return [d if shapes.is_static(d) else s for d, s in zip(declared, sizes, strict=True)]


def windows_of(op: ml.ConvOp | ml.PoolOp) -> list[tuple[int, int, tuple[int, int]]]:
    """(stride, dilation, (pad before, pad after)) of each spatial dim of `op`."""
    strides, dilations, pads = (
        op.strides.get_values(),
        op.dilations.get_values(),
        op.pads.get_values(),
    )
    n = op.SPATIAL
    return [(strides[d], dilations[d], (pads[d], pads[d + n])) for d in range(n)]


def window_loops(spatial: int, outer: Sequence[str], reduced: Sequence[str]) -> list[str]:
    """
    Loop names: `outer`, the output dims but the last, `reduced`, the kernel dims, and
    the last output dim innermost (module docstring).
    """
    outputs = [f"o{d}" for d in range(spatial)]
    kernel = [f"k{d}" for d in range(spatial)]
    return [*outer, *outputs[:-1], *reduced, *kernel, outputs[-1]]


def window_reads(
    d: dict[str, AffineExpr], strides: Sequence[int], dilations: Sequence[int]
) -> list[AffineExpr]:
    """The input position each spatial dim reads: `o * stride + k * dilation`."""
    return [
        d[f"o{i}"] * stride + d[f"k{i}"] * dilation
        for i, (stride, dilation) in enumerate(zip(strides, dilations, strict=True))
    ]


def conv_loops(spatial: int, grouped: bool) -> list[str]:
    return window_loops(spatial, ("n", "g", "f") if grouped else ("n", "f"), ("c",))


def conv_maps(
    strides: Sequence[int], dilations: Sequence[int], group_channels: int | None
) -> list[AffineMap]:
    """The maps of (input, weights, output); `group_channels` (I) is None without groups."""
    spatial = len(strides)
    names = conv_loops(spatial, grouped=group_channels is not None)
    d = {name: AffineExpr.dimension(i) for i, name in enumerate(names)}
    channel = d["c"] if group_channels is None else d["g"] * group_channels + d["c"]
    kernel = [d[f"k{i}"] for i in range(spatial)]
    outputs = [d[f"o{i}"] for i in range(spatial)]
    x = (d["n"], channel, *window_reads(d, strides, dilations))
    if group_channels is None:
        w, y = (d["f"], d["c"], *kernel), (d["n"], d["f"], *outputs)
    else:
        w = (d["g"], d["f"], d["c"], *kernel)
        y = (d["n"], d["g"], d["f"], *outputs)
    return [AffineMap(len(names), 0, results) for results in (x, w, y)]


def is_depthwise(weight_shape: Sequence[int], groups: int) -> bool:
    """Whether a conv of these (O, I, kernel...) weights has one channel in and out per group."""
    return groups > 1 and weight_shape[0] == groups and weight_shape[1] == 1


def depthwise_loops(spatial: int) -> list[str]:
    return window_loops(spatial, ("n", "f"), ())


def depthwise_maps(strides: Sequence[int], dilations: Sequence[int]) -> list[AffineMap]:
    """The maps of (input, weights collapsed to (C, kernel...), output) of a depthwise conv."""
    names = depthwise_loops(len(strides))
    d = {name: AffineExpr.dimension(i) for i, name in enumerate(names)}
    kernel = [d[f"k{i}"] for i in range(len(strides))]
    outputs = [d[f"o{i}"] for i in range(len(strides))]
    x = (d["n"], d["f"], *window_reads(d, strides, dilations))
    results = (x, (d["f"], *kernel), (d["n"], d["f"], *outputs))
    return [AffineMap(len(names), 0, r) for r in results]


def conv_iterators(spatial: int, grouped: bool) -> list[Attribute]:
    names = conv_loops(spatial, grouped)
    return iterator_types(len(names), [i for i, n in enumerate(names) if n[0] in "ck"])


def multiply_add(args: Sequence[BlockArgument]) -> SSAValue:
    product = arith.MulfOp(args[0], args[1]).result
    return arith.AddfOp(args[2], product).result


# ---------------------------------------------------------------------------
# conv1d, conv2d, conv3d
# ---------------------------------------------------------------------------


class LowerConv(RewritePattern):
    """`ml.conv*d` to padding, a bias or zero fill and one generic (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.ConvOp, rewriter: PatternRewriter, /) -> None:
        groups = op.groups.value.data
        out_channels, in_channels = tensor_type(op.w).get_shape()[:2]
        grouped = groups > 1
        if grouped and not (shapes.is_static(out_channels) and shapes.is_static(in_channels)):
            op_error(
                op,
                "convert-ml-to-linalg: a grouped convolution needs static channel counts "
                f"in its weights, got {tensor_type(op.w)}",
            )
        spatial = op.SPATIAL
        strides, dilations = op.strides.get_values(), op.dilations.get_values()
        with keep_location(rewriter, op):
            x = pad_spatial(rewriter, op.x, op.pads.get_values(), 0.0)
            kernel = [size_of(rewriter, op.w, 2 + d) for d in range(spatial)]
            channels = size_of(rewriter, op.w, 0)
            sizes = output_sizes(rewriter, op.x, channels, op.result, kernel, windows_of(op))
            if grouped and is_depthwise(tensor_type(op.w).get_shape(), groups):
                result = self.depthwise(rewriter, op, x, sizes)
            elif grouped:
                result = self.grouped(rewriter, op, x, sizes, groups)
            else:
                channel = None if bias_after(op) else AffineExpr.dimension(1)  # `conv_bias`
                init = self.init(rewriter, op, op.result.type, sizes, channel)
                maps = conv_maps(strides, dilations, None)
                its = conv_iterators(spatial, grouped=False)
                (result,) = build_generic(rewriter, [x, op.w], [init], maps, its, multiply_add)
                result = result if channel is not None else bias_added(rewriter, op, result, sizes)
        rewriter.replace(op, (), (result,))

    @staticmethod
    def init(
        rewriter: PatternRewriter,
        op: ml.ConvOp,
        init_type: Attribute,
        sizes: Sequence[Index],
        channel: AffineExpr | None,
    ) -> SSAValue:
        """The output before accumulation: the bias (read at `channel`) or zeros."""
        rank = len(sizes)
        if op.bias is None or channel is None:
            return fill(rewriter, init_type, type_dims(rewriter, init_type, sizes), 0.0)
        empty = empty_of(rewriter, init_type, sizes)
        maps = [AffineMap(rank, 0, (channel,)), AffineMap.identity(rank)]
        (filled,) = build_generic(
            rewriter, [op.bias], [empty], maps, iterator_types(rank), lambda a: a[0]
        )
        return filled

    @staticmethod
    def depthwise(
        rewriter: PatternRewriter, op: ml.ConvOp, x: SSAValue, sizes: Sequence[Index]
    ) -> SSAValue:
        """The conv of one channel per group, over weights collapsed to (C, kernel...)."""
        spatial = op.SPATIAL
        w_type = tensor_type(op.w)
        channels, _, *kernel = w_type.get_shape()
        collapse = tensor.CollapseShapeOp.build(
            operands=[op.w],
            result_types=[TensorType(w_type.element_type, [channels, *kernel])],
            properties={
                "reassociation": reassociation([[0, 1], *([d] for d in range(2, spatial + 2))])
            },
        )
        w = rewriter.insert(collapse).result
        init = LowerConv.init(rewriter, op, op.result.type, sizes, AffineExpr.dimension(1))
        maps = depthwise_maps(op.strides.get_values(), op.dilations.get_values())
        names = depthwise_loops(spatial)
        iterators = iterator_types(len(names), [i for i, n in enumerate(names) if n[0] == "k"])
        (result,) = build_generic(rewriter, [x, w], [init], maps, iterators, multiply_add)
        return result

    @staticmethod
    def grouped(
        rewriter: PatternRewriter, op: ml.ConvOp, x: SSAValue, sizes: Sequence[Index], groups: int
    ) -> SSAValue:
        """The conv with a group loop, over weights and an output split as (G, O/G)."""
        spatial = op.SPATIAL
        w_type = tensor_type(op.w)
        out_channels, in_channels, *kernel = w_type.get_shape()
        per_group = out_channels // groups
        expanded_shape = [groups, per_group, in_channels, *kernel]
        dynamic = [
            s
            for s in (size_of(rewriter, op.w, 2 + d) for d in range(spatial))
            if isinstance(s, SSAValue)
        ]
        expand = tensor.ExpandShapeOp(
            op.w,
            dynamic,
            reassociation([[0, 1], *([d] for d in range(2, spatial + 3))]),
            expanded_shape,
            TensorType(w_type.element_type, expanded_shape),
        )
        w = rewriter.insert(expand).result
        result_type = tensor_type(op.result)
        n, _, *outputs = result_type.get_shape()
        init_type = TensorType(result_type.element_type, [n, groups, per_group, *outputs])
        init_sizes = [sizes[0], groups, per_group, *sizes[2:]]
        channel = AffineExpr.dimension(1) * per_group + AffineExpr.dimension(2)
        init = LowerConv.init(rewriter, op, init_type, init_sizes, channel)
        maps = conv_maps(op.strides.get_values(), op.dilations.get_values(), in_channels)
        (split,) = build_generic(
            rewriter, [x, w], [init], maps, conv_iterators(spatial, grouped=True), multiply_add
        )
        collapse = tensor.CollapseShapeOp.build(
            operands=[split],
            result_types=[result_type],
            properties={
                "reassociation": reassociation([[0], [1, 2], *([d] for d in range(3, spatial + 3))])
            },
        )
        return rewriter.insert(collapse).result


# ---------------------------------------------------------------------------
# max_pool*d, avg_pool*d
# ---------------------------------------------------------------------------


def pool_loops(spatial: int) -> list[str]:
    """
    `(n, c, oh, kh, ow, kw)` (and so on per rank): unlike a convolution, the last kernel
    dim sits inside the last output dim (module docstring).
    """
    *loops, kernel, last = window_loops(spatial, ("n", "c"), ())
    return [*loops, last, kernel]


def pool_maps(strides: Sequence[int], dilations: Sequence[int]) -> list[AffineMap]:
    """The maps of (input, window, output) of a pooling generic."""
    spatial = len(strides)
    names = pool_loops(spatial)
    d = {name: AffineExpr.dimension(i) for i, name in enumerate(names)}
    x = (d["n"], d["c"], *window_reads(d, strides, dilations))
    window = tuple(d[f"k{i}"] for i in range(spatial))
    y = (d["n"], d["c"], *(d[f"o{i}"] for i in range(spatial)))
    return [AffineMap(len(names), 0, results) for results in (x, window, y)]


def pool_window(
    rewriter: PatternRewriter,
    op: ml.PoolOp,
    padding: float,
    combine: Callable[[SSAValue, SSAValue], SSAValue],
) -> tuple[SSAValue, list[Index]]:
    """
    Reduce every window of the input padded with `padding` by `combine`, from `padding`.

    Returns the reduced tensor and the result's dims.
    """
    kernel = op.kernel.get_values()
    x = pad_spatial(rewriter, op.x, op.pads.get_values(), padding)
    channels = size_of(rewriter, op.x, 1)
    sizes = output_sizes(rewriter, op.x, channels, op.result, kernel, windows_of(op))
    init = fill(rewriter, op.result.type, type_dims(rewriter, op.result.type, sizes), padding)
    # Only the shape of the window matters: it gives the kernel loops their bounds.
    window_type = TensorType(element_type(op.x), kernel)
    window = rewriter.insert(tensor.EmptyOp([], window_type)).tensor
    names = pool_loops(op.SPATIAL)
    iterators = iterator_types(len(names), [i for i, n in enumerate(names) if n[0] == "k"])
    (reduced,) = build_generic(
        rewriter,
        [x, window],
        [init],
        pool_maps(op.strides.get_values(), op.dilations.get_values()),
        iterators,
        lambda args: combine(args[2], args[0]),
    )
    return reduced, sizes


def maximum(a: SSAValue, b: SSAValue, unsigned: bool = False) -> SSAValue:
    """
    Signed or (`unsigned`: bodies compute on signless integers) unsigned max for
    integers; `maximumf` for floats, which propagates NaN as numpy.max.
    """
    if unsigned:
        return arith.MaxUIOp(a, b).result
    if isinstance(a.type, IntegerType):
        return arith.MaxSIOp(a, b).result
    return arith.MaximumfOp(a, b).result


class LowerMaxPool(RewritePattern):
    """`ml.max_pool*d` to a window-max generic over the input padded with the lowest value."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.MaxPoolOp, rewriter: PatternRewriter, /) -> None:
        element = element_type(op.x)
        lowest = int_min(element) if isinstance(element, IntegerType) else float("-inf")
        with keep_location(rewriter, op):
            unsigned = is_unsigned(element)
            result, _ = pool_window(rewriter, op, lowest, lambda a, b: maximum(a, b, unsigned))
        rewriter.replace(op, (), (result,))


class LowerAvgPool(RewritePattern):
    """`ml.avg_pool*d` to a window sum and an in-place division by the window counts."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.AvgPoolOp, rewriter: PatternRewriter, /) -> None:
        element = element_type(op.x)
        assert is_float(element), "the ml verifier admits float average pooling only"
        kernel = op.kernel.get_values()
        windows = windows_of(op)
        spatial = op.SPATIAL
        with keep_location(rewriter, op):
            total, _ = pool_window(rewriter, op, 0.0, lambda a, b: arith.AddfOp(a, b).result)
            inputs = [size_of(rewriter, op.x, 2 + d) for d in range(spatial)]

            def body(args: Sequence[BlockArgument]) -> SSAValue:
                if not any(op.pads.get_values()):  # every window lies inside the input
                    count = scalar_constant(math.prod(kernel), element)
                    return arith.DivfOp(args[0], count).result
                calc = IndexCalc.in_body()
                count: Index = 1
                for d, (stride, dilation, (before, _)) in enumerate(windows):
                    out = IndexOp(2 + d).result
                    along = window_count(calc, out, inputs[d], kernel[d], stride, before, dilation)
                    count = calc.mul(count, along)
                count = arith.IndexCastOp(calc.value(count), i64).result
                return arith.DivfOp(args[0], arith.SIToFPOp(count, element).result).result

            rank = spatial + 2
            (result,) = build_generic(
                rewriter, [], [total], [AffineMap.identity(rank)], iterator_types(rank), body
            )
        rewriter.replace(op, (), (result,))


PATTERNS: list[RewritePattern] = [LowerConv(), LowerMaxPool(), LowerAvgPool()]
