"""
VJP rules of the window ops: convolutions (1-D to 3-D, with strides, pads, dilations and
groups) and max and average pooling, written with existing `ml` ops.

For `y = conv(x, w) + b` (stride s, dilation d, pads p along each spatial dim):

- `db`: the cotangent summed over the batch and the spatial dims.
- `dx`: a transposed convolution, written as a convolution: the cotangent with `s - 1`
  zeros between its elements (`spread`), padded (or cropped) by `d (k - 1) - p_begin`
  before and what makes the result `x`'s size after, convolved at stride 1 and dilation
  `d` with the weights flipped along each spatial dim and their in and out channels
  swapped within each group.
- `dw`: a convolution too, with the batch as the channels it sums over:
  `dw[o, i, k] = sum over n, l of x[n, i, l*s + k*d] ct[n, o, l]` is `x` with its batch
  and channel dims swapped (`I, G*N, spatial`) convolved with `ct` as the weights
  (`O, N, out...`), in `G` groups, at stride `d` and dilation `s` (swapped), with `x`'s
  pads; its `I, O, K'` result (`K' >= K`, cropped) is swapped back. One convolution,
  which the targets' convolution kernels run, where slicing out each kernel position's
  patches would be a copy each. With a dynamic batch (a dynamic channel count then) it
  is a matmul over the batch instead: for each kernel position, the strided slice of
  the padded `x` it read, stacked into patches `(G, N*L, I*K)`; then
  `dw = ct(G, O/G, N*L) @ patches`, `L` the output positions, `K` the kernel positions.

Pooling: each kernel position reads a strided slice of `x`; its cotangent is put back
where it read (`_place`: spread, then padded or cropped into place) and the positions'
contributions add up; where the windows tile `x` (stride = kernel, no dilation or
padding: the common 2x2 pooling) the positions' parts are interleaved into `x`'s layout
instead (`_interleave`: a reshape each, a concat per spatial dim, one reshape), which
is a few ops where placing each part is a dozen. Average pooling divides by the number
of elements each window covers (padding not counted, as the op does). Max pooling routes
each window's cotangent to one element: the first (in row-major order over the window)
equal to the maximum, as torch's max_pool2d does (its index is the first maximum);
elements that tie elsewhere in the window get nothing. Where the windows tile `x` that
element is the window's `ml.argmax` (`_tiled_max_pool`): `x` viewed as windows
(`N, C, out..., kernel...`, one transpose), one argmax over each window, and the
cotangent selected where a window position equals it, in `x`'s layout: two kernels
where a mask per kernel position and their interleaving are a dozen.

The rules need static channel, spatial and kernel dims (they build zero blocks and
constant counts); the batch dim may be dynamic (`?`): zero blocks then take it from the
value they extend, at run time, and the reshapes leave it to be inferred.
"""

import itertools
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IntegerAttr, TensorType, i64
from xdsl.ir import Operation, SSAValue

from mlc import shapes
from mlc.autodiff.emitter import Emitter, element_type, shape_of
from mlc.autodiff.rule_table import Cotangents, vjp_rule
from mlc.dialects import ml

END = 2**63 - 1  # a slice end past any dim


def static(shape: Sequence[int], what: str) -> tuple[int, ...]:
    """`shape`, whose dims but the batch dim (the first) must be static."""
    if not all(shapes.is_static(d) for d in shape[1:]):
        raise shapes.ShapeError(
            f"{what} needs static dims but the batch dim, got ({shapes.format_shape(shape)})"
        )
    return tuple(shape)


def times(n: int, count: int) -> int:
    """`n * count`, dynamic where the batch dim `n` is."""
    return n * count if shapes.is_static(n) else shapes.DYNAMIC


# ---------------------------------------------------------------------------
# Helpers: putting values back where a window read them
# ---------------------------------------------------------------------------


def _zeros(em: Emitter, like: SSAValue, dim: int, size: int, fill: float = 0.0) -> SSAValue:
    """`fill` shaped as `like` with `size` along `dim` (a dynamic batch dim read from `like`)."""
    shape = list(shape_of(like))
    shape[dim] = size
    type_ = TensorType(element_type(like), shape)
    if all(shapes.is_static(d) for d in shape):
        return em.full(fill, type_)
    dims = [
        em(arith.ConstantOp(IntegerAttr(n, i64))) if shapes.is_static(n) else em.dim(like, d)
        for d, n in enumerate(shape)
    ]
    extent = em(tensor.FromElementsOp(*dims, result_type=TensorType(i64, [len(dims)])))
    return em(ml.BroadcastToOp(em.scalar(fill, like), type_, extent))


def _slice(em: Emitter, v: SSAValue, dim: int, start: int, end: int, step: int = 1) -> SSAValue:
    rank = len(shape_of(v))
    starts, ends, steps = [0] * rank, [END] * rank, [1] * rank
    starts[dim], ends[dim], steps[dim] = start, end, step
    if (start, step) == (0, 1) and end >= shape_of(v)[dim]:
        return v
    return em(ml.SliceOp(v, starts, ends, steps))


def adjust(
    em: Emitter, v: SSAValue, dim: int, before: int, after: int, fill: float = 0.0
) -> SSAValue:
    """`v` along `dim` with `before` / `after` elements of `fill` added (or, negative, cut)."""
    size = shape_of(v)[dim]
    assert size + min(before, 0) + min(after, 0) > 0, "adjust() cuts away everything"
    if before < 0 or after < 0:
        v = _slice(em, v, dim, max(-before, 0), size - max(-after, 0))
        before, after = max(before, 0), max(after, 0)
    pieces = []
    if before:
        pieces.append(_zeros(em, v, dim, before, fill))
    pieces.append(v)
    if after:
        pieces.append(_zeros(em, v, dim, after, fill))
    return em(ml.ConcatOp(pieces, dim)) if len(pieces) > 1 else v


def spread(em: Emitter, v: SSAValue, dim: int, step: int) -> SSAValue:
    """`v` with `step - 1` zeros between its elements along `dim`."""
    shape = list(shape_of(v))
    if step == 1 or shape[dim] <= 1:
        return v
    split = [*shape[: dim + 1], 1, *shape[dim + 1 :]]
    column = em.reshape(v, split)
    gap = _zeros(em, column, dim + 1, step - 1)
    rows = em(ml.ConcatOp([column, gap], dim + 1))
    flat = em.reshape(rows, [*shape[:dim], shape[dim] * step, *shape[dim + 1 :]])
    return _slice(em, flat, dim, 0, (shape[dim] - 1) * step + 1)


def place(em: Emitter, v: SSAValue, dim: int, offset: int, step: int, size: int) -> SSAValue | None:
    """
    Zeros of `size` along `dim` with `v[i]` at `offset + i * step`, those outside
    `[0, size)` dropped; None if every one is.
    """
    v = spread(em, v, dim, step)
    low, high = max(offset, 0), min(offset + shape_of(v)[dim], size)
    if low >= high:
        return None
    return adjust(em, v, dim, offset, size - offset - shape_of(v)[dim])


def window_view(
    em: Emitter, x: SSAValue, offsets: Sequence[int], steps: Sequence[int], counts: Sequence[int]
) -> SSAValue:
    """`x` sliced: along spatial dim i, `counts[i]` elements from `offsets[i]` by `steps[i]`."""
    ends = [o + (c - 1) * s + 1 for o, s, c in zip(offsets, steps, counts, strict=True)]
    return em(ml.SliceOp(x, [0, 0, *offsets], [END, END, *ends], [1, 1, *steps]))


def _attrs(op: ml.ConvOp | ml.PoolOp) -> tuple[list[int], list[int], list[int], list[int]]:
    n = op.SPATIAL
    pads = list(op.pads.get_values())
    return list(op.strides.get_values()), list(op.dilations.get_values()), pads[:n], pads[n:]


# ---------------------------------------------------------------------------
# Convolutions
# ---------------------------------------------------------------------------


@vjp_rule(ml.Conv1dOp, ml.Conv2dOp, ml.Conv3dOp)
def conv(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.ConvOp)
    what = "the gradient of a convolution"
    x_shape = static(shape_of(op.x), what)
    w_shape = static(shape_of(op.w), what)
    out = static(shape_of(ct), what)
    spatial = list(range(2, 2 + op.SPATIAL))
    gx = _conv_input(em, op, ct, x_shape, w_shape, out) if needs[0] else None
    gw = _conv_weight(em, op, ct, x_shape, w_shape, out) if needs[1] else None
    grads: list[SSAValue | None] = [gx, gw]
    if op.bias is not None:
        grads.append(em.sum(ct, [0, *spatial], keepdims=False) if needs[2] else None)
    return grads


def _conv_input(em, op, ct, x_shape, w_shape, out) -> SSAValue:
    strides, dilations, begins, _ = _attrs(op)
    groups = op.groups.value.data
    v = ct
    for i, d in enumerate(range(2, 2 + op.SPATIAL)):
        v = spread(em, v, d, strides[i])
        reach = dilations[i] * (w_shape[d] - 1)
        after = x_shape[d] + begins[i] - 1 - (out[d] - 1) * strides[i]
        before = reach - begins[i]
        if shape_of(v)[d] + min(before, 0) + min(after, 0) <= 0:
            return em.zeros_like(op.x)  # every output read padding only
        v = adjust(em, v, d, before, after)
    o, i_, kernel = w_shape[0], w_shape[1], list(w_shape[2:])
    w = em.reshape(op.w, [groups, o // groups, i_, *kernel])
    w = em.transpose(w, [0, 2, 1, *range(3, 3 + op.SPATIAL)])
    w = em.reshape(w, [groups * i_, o // groups, *kernel])
    if any(k > 1 for k in kernel):  # flip every spatial dim
        starts = [0, 0, *(k - 1 for k in kernel)]
        stops = [END, END, *(-k - 1 for k in kernel)]
        w = em(ml.SliceOp(w, starts, stops, [1, 1, *[-1] * len(kernel)]))
    conv_type = type(op)
    return em(conv_type(v, w, None, dilations=dilations, groups=groups))


def _conv_weight(em, op, ct, x_shape, w_shape, out) -> SSAValue:
    """The weights' cotangent: a convolution over the batch (a matmul if it is dynamic)."""
    if not shapes.is_static(x_shape[0]):
        return _conv_weight_patches(em, op, ct, x_shape, w_shape, out)
    strides, dilations, begins, ends = _attrs(op)
    groups = op.groups.value.data
    n = x_shape[0]
    i_, kernel = w_shape[1], list(w_shape[2:])
    rank = op.SPATIAL
    rest = list(range(3, 3 + rank))
    images = em.reshape(op.x, [n, groups, i_, *x_shape[2:]])
    images = em.transpose(images, [2, 1, 0, *rest])  # (I, G, N, spatial)
    images = em.reshape(images, [i_, groups * n, *x_shape[2:]])
    weights = em.transpose(ct, [1, 0, *range(2, 2 + rank)])  # (O, N, out...)
    conv_type = type(op)
    product = em(
        conv_type(
            images,
            weights,
            None,
            strides=dilations,
            dilations=strides,
            pads=[*begins, *ends],
            groups=groups,
        )
    )  # (I, O, K'...)
    if list(shape_of(product)[2:]) != kernel:
        product = em(ml.SliceOp(product, [0] * (2 + rank), [END, END, *kernel], [1] * (2 + rank)))
    return em.transpose(product, [1, 0, *range(2, 2 + rank)])


def _conv_weight_patches(em, op, ct, x_shape, w_shape, out) -> SSAValue:
    strides, dilations, begins, ends = _attrs(op)
    groups = op.groups.value.data
    n, c = x_shape[0], x_shape[1]
    o, i_, kernel = w_shape[0], w_shape[1], list(w_shape[2:])
    spatial = list(range(2, 2 + op.SPATIAL))
    outs = [out[d] for d in spatial]
    positions = int(np.prod(outs))
    x = op.x
    for i, d in enumerate(spatial):
        x = adjust(em, x, d, begins[i], ends[i])
    patches = []
    for where in itertools.product(*(range(k) for k in kernel)):
        offsets = [w * d for w, d in zip(where, dilations, strict=True)]
        p = window_view(em, x, offsets, strides, outs)
        patches.append(em.reshape(p, [n, c, 1, positions]))
    stacked = em(ml.ConcatOp(patches, 2)) if len(patches) > 1 else patches[0]
    count = len(patches)
    stacked = em.reshape(stacked, [n, groups, i_, count, positions])
    stacked = em.transpose(stacked, [1, 0, 4, 2, 3])  # (G, N, L, I, K)
    stacked = em.reshape(stacked, [groups, times(n, positions), i_ * count])
    g = em.reshape(ct, [n, groups, o // groups, positions])
    g = em.transpose(g, [1, 2, 0, 3])  # (G, O/G, N, L)
    g = em.reshape(g, [groups, o // groups, times(n, positions)])
    product = em(ml.MatmulOp(g, stacked))  # (G, O/G, I*K)
    return em.reshape(product, list(w_shape))


# ---------------------------------------------------------------------------
# Pooling
# ---------------------------------------------------------------------------


def _pool_setup(op: ml.PoolOp, ct: SSAValue, what: str):
    x_shape = static(shape_of(op.x), what)
    out = static(shape_of(ct), what)
    kernel = list(op.kernel.get_values())
    return x_shape, out, kernel, list(range(2, 2 + op.SPATIAL))


def _scatter_back(em, g, where, op, x_shape) -> SSAValue | None:
    """`g` (output-shaped) put back where kernel position `where` read `x` (None: all padding)."""
    strides, dilations, begins, _ = _attrs(op)
    for i, d in enumerate(range(2, 2 + op.SPATIAL)):
        placed = place(em, g, d, where[i] * dilations[i] - begins[i], strides[i], x_shape[d])
        if placed is None:
            return None
        g = placed
    return g


def _tiles(op: ml.PoolOp, kernel: Sequence[int]) -> bool:
    """Whether the windows tile the input: stride = kernel, no dilation, no padding."""
    strides, dilations, begins, ends = _attrs(op)
    return (
        list(strides) == list(kernel)
        and all(d == 1 for d in dilations)
        and not any(begins)
        and not any(ends)
    )


def _interleave(
    em: Emitter, parts: list[SSAValue], kernel: Sequence[int], x_shape: Sequence[int]
) -> SSAValue:
    """
    The output-shaped `parts` (one per kernel position, in row-major order) put back
    into `x`'s layout when the windows tile it: `x[.., o*k + w, ..] = parts[w][.., o, ..]`
    (an input row or column past the last whole window gets zeros).
    """
    out = shape_of(parts[0])
    spatial = len(kernel)
    unit = [*out[:2], *(n for o in out[2:] for n in (o, 1))]
    pieces = [em.reshape(p, unit) for p in parts]
    for i in reversed(range(spatial)):  # the last kernel dim varies fastest in `parts`
        k = kernel[i]
        pieces = [
            em(ml.ConcatOp(pieces[j : j + k], 3 + 2 * i)) if k > 1 else pieces[j]
            for j in range(0, len(pieces), k)
        ]
    (stacked,) = pieces
    g = em.reshape(stacked, [*out[:2], *(o * k for o, k in zip(out[2:], kernel, strict=True))])
    for i in range(spatial):
        d = 2 + i
        if (rest := x_shape[d] - out[d] * kernel[i]) > 0:
            g = adjust(em, g, d, 0, rest)
    return g


def _total(em: Emitter, parts: list[SSAValue | None], x: SSAValue) -> SSAValue:
    total = None
    for part in parts:
        if part is not None:
            total = part if total is None else em.add(total, part)
    return em.zeros_like(x) if total is None else total


@vjp_rule(ml.AvgPool1dOp, ml.AvgPool2dOp, ml.AvgPool3dOp)
def avg_pool(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.AvgPoolOp)
    if not needs[0]:
        return [None]
    x_shape, out, kernel, spatial = _pool_setup(op, ct, "the gradient of an average pooling")
    strides, dilations, begins, _ = _attrs(op)
    counts = np.ones((), np.float64)
    for i, d in enumerate(spatial):
        starts = np.arange(out[d])[:, None] * strides[i] - begins[i]
        taps = starts + np.arange(kernel[i])[None, :] * dilations[i]
        inside = ((taps >= 0) & (taps < x_shape[d])).sum(axis=1)
        counts = np.multiply.outer(counts, inside)
    count_type = TensorType(element_type(ct), [1, 1, *counts.shape])
    g = em.div(ct, em.array(counts.ravel().tolist(), count_type))
    if _tiles(op, kernel):  # every element of a window gets the same share
        return [_interleave(em, [g] * int(np.prod(kernel)), kernel, x_shape)]
    parts = [
        _scatter_back(em, g, where, op, x_shape)
        for where in itertools.product(*(range(k) for k in kernel))
    ]
    return [_total(em, parts, op.x)]


@vjp_rule(ml.MaxPool1dOp, ml.MaxPool2dOp, ml.MaxPool3dOp)
def max_pool(em: Emitter, op: Operation, ct: SSAValue, needs: tuple[bool, ...]) -> Cotangents:
    assert isinstance(op, ml.MaxPoolOp)
    if not needs[0]:
        return [None]
    x_shape, out, kernel, spatial = _pool_setup(op, ct, "the gradient of a max pooling")
    if _tiles(op, kernel):
        return [_tiled_max_pool(em, op.x, ct, kernel, x_shape)]
    strides, dilations, begins, ends = _attrs(op)
    x = op.x
    for i, d in enumerate(spatial):
        x = adjust(em, x, d, begins[i], ends[i], fill=-np.inf)
    y = op.results[0]
    one = em.scalar(1.0, ct)
    left = None  # 1 where no earlier kernel position holds the maximum yet
    routed: list[SSAValue] = []
    for where in itertools.product(*(range(k) for k in kernel)):
        offsets = [w * d for w, d in zip(where, dilations, strict=True)]
        seen = window_view(em, x, offsets, strides, out[2:])
        hit = em.as_float(em.cmp("eq", seen, y), ct)
        first = hit if left is None else em.mul(hit, left)
        left = em.sub(one, hit) if left is None else em.sub(left, first)
        routed.append(em.mul(ct, first))
    positions = itertools.product(*(range(k) for k in kernel))
    parts = [_scatter_back(em, g, where, op, x_shape) for g, where in zip(routed, positions)]
    return [_total(em, parts, op.x)]


def _tiled_max_pool(
    em: Emitter, x: SSAValue, ct: SSAValue, kernel: Sequence[int], x_shape: Sequence[int]
) -> SSAValue:
    """
    The cotangent of a max pooling whose windows tile `x`: each window's cotangent at
    its first maximum (`ml.argmax` over the window, row-major), zero elsewhere and in
    the rows and columns past the last whole window.
    """
    out = shape_of(ct)
    rank = len(kernel)
    covered = [o * k for o, k in zip(out[2:], kernel, strict=True)]
    for i, size in enumerate(covered):
        if x_shape[2 + i] > size:
            x = _slice(em, x, 2 + i, 0, size)
    # (N, C, o0, k0, o1, k1, ...): each window's elements on the `k` dims
    unit = [*out[:2], *(n for o, k in zip(out[2:], kernel, strict=True) for n in (o, k))]
    windows = em.reshape(x, unit)
    windows = em.transpose(windows, [0, 1, *range(2, 2 + 2 * rank, 2), *range(3, 3 + 2 * rank, 2)])
    windows = em.reshape(windows, [*out, int(np.prod(kernel))])
    first = em(ml.ArgMaxOp(windows, len(out), keepdims=False))  # (N, C, out...)
    spread_out = [*out[:2], *(n for o in out[2:] for n in (o, 1))]
    first = em.reshape(first, spread_out)
    positions_shape = [1, 1, *(n for k in kernel for n in (1, k))]
    positions = em.array(list(range(int(np.prod(kernel)))), TensorType(i64, positions_shape))
    hit = em.cmp("eq", first, positions)
    g = em.select(hit, em.reshape(ct, spread_out), em.scalar(0.0, ct))
    g = em.reshape(g, [*out[:2], *covered])
    for i, size in enumerate(covered):
        if (rest := x_shape[2 + i] - size) > 0:
            g = adjust(em, g, 2 + i, 0, rest)
    return g
