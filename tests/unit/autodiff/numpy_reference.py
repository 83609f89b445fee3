"""
numpy references for the `ml` ops constant folding does not evaluate (windows,
indexing, scans, batch_norm, the math ops), so the VJP tests interpret them in float64.
"""

from collections.abc import Sequence

import numpy as np
from xdsl.ir import Operation

from mlc.dialects import ml

MATH = {
    ml.SinOp: np.sin,
    ml.CosOp: np.cos,
    ml.TanOp: np.tan,
    ml.AsinOp: np.arcsin,
    ml.AcosOp: np.arccos,
    ml.AtanOp: np.arctan,
    ml.SinhOp: np.sinh,
    ml.CoshOp: np.cosh,
    ml.AsinhOp: np.arcsinh,
    ml.AcoshOp: np.arccosh,
    ml.AtanhOp: np.arctanh,
    ml.FloorOp: np.floor,
    ml.CeilOp: np.ceil,
    ml.RoundOp: np.round,
}


def _windows(x: np.ndarray, kernel, strides, dilations, pads, fill: float):
    """The padded input, the output sizes, and each kernel position's strided view."""
    n = len(kernel)
    padding = [(0, 0), (0, 0), *((pads[i], pads[n + i]) for i in range(n))]
    xp = np.pad(x, padding, constant_values=fill)
    out = [
        (xp.shape[2 + i] - dilations[i] * (kernel[i] - 1) - 1) // strides[i] + 1 for i in range(n)
    ]
    views = []
    for where in np.ndindex(*kernel):
        index = tuple(
            slice(w * d, w * d + (o - 1) * s + 1, s)
            for w, d, o, s in zip(where, dilations, out, strides, strict=True)
        )
        views.append((where, xp[(slice(None), slice(None), *index)]))
    return out, views


def conv(op: ml.ConvOp, x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    groups = op.groups.value.data
    kernel = w.shape[2:]
    out, views = _windows(
        x, kernel, op.strides.get_values(), op.dilations.get_values(), op.pads.get_values(), 0.0
    )
    n_, o, i = x.shape[0], w.shape[0], w.shape[1]
    y = np.zeros((n_, groups, o // groups, *out))
    for where, view in views:
        patch = view.reshape(n_, groups, i, *out)
        wk = w[(slice(None), slice(None), *where)].reshape(groups, o // groups, i)
        y += np.einsum("ngi...,goi->ngo...", patch, wk)
    y = y.reshape(n_, o, *out)
    if b is not None:
        y += b.reshape(o, *[1] * len(out))
    return y


def pool(op: ml.PoolOp, x: np.ndarray) -> np.ndarray:
    is_max = isinstance(op, ml.MaxPoolOp)
    attrs = (op.kernel.get_values(), op.strides.get_values(), op.dilations.get_values())
    pads = op.pads.get_values()
    _, views = _windows(x, *attrs, pads, -np.inf if is_max else 0.0)
    stacked = np.stack([v for _, v in views])
    if is_max:
        return stacked.max(axis=0)
    _, ones = _windows(np.ones_like(x), *attrs, pads, 0.0)
    return stacked.sum(axis=0) / np.stack([v for _, v in ones]).sum(axis=0)


def _along(index: tuple[int, ...], axis: int, value: int, size: int) -> tuple[int, ...]:
    moved = list(index)
    moved[axis] = value % size
    return tuple(moved)


COMBINE = {"none": lambda old, new: new, "add": np.add, "mul": np.multiply}
COMBINE |= {"max": np.maximum, "min": np.minimum}


def scatter_elements(op: ml.ScatterElementsOp, data, indices, updates) -> np.ndarray:
    axis = op.axis.value.data % data.ndim
    out = data.copy()
    for p in np.ndindex(indices.shape):
        q = _along(p, axis, int(indices[p]), data.shape[axis])
        out[q] = COMBINE[op.reduction.data](out[q], updates[p])
    return out


def gather_nd(data, indices) -> np.ndarray:
    return data[tuple(np.moveaxis(indices, -1, 0))]


def scatter_nd(op: ml.ScatterNdOp, data, indices, updates) -> np.ndarray:
    out = data.copy()
    for t in np.ndindex(indices.shape[:-1]):
        q = tuple(int(v) for v in indices[t])
        out[q] = COMBINE[op.reduction.data](out[q], updates[t])
    return out


def top_k(op: ml.TopKOp, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    axis, k = op.axis.value.data, op.k.value.data
    key = -x if op.largest.value.data else x
    order = np.take(np.argsort(key, axis=axis, kind="stable"), np.arange(k), axis=axis)
    return np.take_along_axis(x, order, axis), order


def cumsum(op: ml.CumSumOp, x: np.ndarray) -> np.ndarray:
    axis = op.axis.value.data
    if op.reverse.value.data:
        x = np.flip(x, axis)
    y = np.cumsum(x, axis)
    if op.exclusive.value.data:
        y = y - x
    return np.flip(y, axis) if op.reverse.value.data else y


def arg_reduce(op: ml.ArgReduceOp, x: np.ndarray) -> np.ndarray:
    axis = op.axis.value.data
    pick = np.argmax if isinstance(op, ml.ArgMaxOp) else np.argmin
    if op.select_last_index.value.data:
        index = x.shape[axis] - 1 - pick(np.flip(x, axis), axis=axis, keepdims=True)
    else:
        index = pick(x, axis=axis, keepdims=True)
    index = index.astype(np.int64)
    return index if op.keepdims.value.data else np.squeeze(index, axis)


def batch_norm(op: ml.BatchNormOp, x, scale, bias, mean, var) -> np.ndarray:
    shape = (-1, *[1] * (x.ndim - 2))
    r = 1.0 / np.sqrt(var + op.epsilon.value.data)
    return (x - mean.reshape(shape)) * (r * scale).reshape(shape) + bias.reshape(shape)


def reference(op: Operation, args: Sequence[np.ndarray]):  # noqa: C901 (one case per op)
    """`op`'s value (a tuple for several results), or None where constant folding has one."""
    match op:
        case ml.ConvOp():
            return conv(op, args[0], args[1], args[2] if len(args) > 2 else None)
        case ml.PoolOp():
            return pool(op, args[0])
        case ml.GatherElementsOp():
            axis = op.axis.value.data
            return np.take_along_axis(args[0], np.mod(args[1], args[0].shape[axis]), axis)
        case ml.ScatterElementsOp():
            return scatter_elements(op, *args)
        case ml.GatherNdOp():
            return gather_nd(*args)
        case ml.ScatterNdOp():
            return scatter_nd(op, *args)
        case ml.TopKOp():
            return top_k(op, args[0])
        case ml.CumSumOp():
            return cumsum(op, args[0])
        case ml.ArgReduceOp():
            return arg_reduce(op, args[0])
        case ml.BatchNormOp():
            return batch_norm(op, *args)
        case ml.RemOp():
            return np.fmod(*args)
        case _ if type(op) in MATH:
            return MATH[type(op)](args[0])
    return None
