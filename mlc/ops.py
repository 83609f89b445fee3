"""
`from mlc import ops`: the functions traced programs are written with.

Each records `ml` ops on traced arrays (numpy arrays and Python numbers mixed in
become constants) and behaves as its numpy namesake where numpy has one: type
promotion, `axis=None` reducing everything, `keepdims`, numpy's result dtypes
(`sum` of int32 is int64, `exp` of an int array is float64). The structured
control flow (`cond`, `while_loop`, `fori_loop`) records `scf` ops. Called outside
`mlc.trace` / `mlc.jit`, they raise: they build programs, they do not compute.
"""

import builtins
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mlc import shapes
from mlc.dialects import ml
from mlc.frontends.trace.control_flow import cond, fori_loop, while_loop
from mlc.frontends.trace.proxy import (
    TracedArray,
    active_tracer,
    cast,
    lift,
    promote,
    reshape_to,
    result_dtype,
)
from mlc.frontends.trace.tracer import trace_error

__all__ = [
    "abs",
    "add",
    "avg_pool2d",
    "cast",
    "concatenate",
    "cond",
    "conv2d",
    "divide",
    "equal",
    "erf",
    "exp",
    "fori_loop",
    "gelu",
    "greater",
    "greater_equal",
    "layer_norm",
    "less",
    "less_equal",
    "log",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "matmul",
    "max",
    "max_pool2d",
    "maximum",
    "mean",
    "min",
    "minimum",
    "multiply",
    "negative",
    "not_equal",
    "power",
    "relu",
    "reshape",
    "sigmoid",
    "softmax",
    "sqrt",
    "subtract",
    "sum",
    "take",
    "tanh",
    "transpose",
    "where",
    "while_loop",
]

Axis = int | Sequence[int] | None


def _one(x: Any) -> TracedArray:
    (a,) = promote(x)
    return a


# ---------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------


def _unary(name: str, op: type[ml.UnaryOp], x: Any, floating: bool = False) -> TracedArray:
    a = _one(x)
    if floating and a.dtype.kind in "biu":
        a = cast(a, np.float64)  # numpy computes exp, log... of integers in float64
    if a.dtype == np.bool_:
        trace_error(f"{name} of a bool array: cast with .astype first")
    return a.tracer.build(name, lambda: op(a.value), (a,))


def negative(x: Any) -> TracedArray:
    return _unary("negative", ml.NegOp, x)


def abs(x: Any) -> TracedArray:
    a = _one(x)
    return a if a.dtype.kind in "bu" else _unary("abs", ml.AbsOp, a)


def relu(x: Any) -> TracedArray:
    """max(x, 0)."""
    return _unary("relu", ml.ReluOp, x)


def exp(x: Any) -> TracedArray:
    return _unary("exp", ml.ExpOp, x, floating=True)


def log(x: Any) -> TracedArray:
    return _unary("log", ml.LogOp, x, floating=True)


def sqrt(x: Any) -> TracedArray:
    return _unary("sqrt", ml.SqrtOp, x, floating=True)


def tanh(x: Any) -> TracedArray:
    return _unary("tanh", ml.TanhOp, x, floating=True)


def sigmoid(x: Any) -> TracedArray:
    """1 / (1 + exp(-x))."""
    return _unary("sigmoid", ml.SigmoidOp, x, floating=True)


def erf(x: Any) -> TracedArray:
    return _unary("erf", ml.ErfOp, x, floating=True)


def gelu(x: Any, approximate: str = "none") -> TracedArray:
    """GELU, exact (`approximate="none"`) or tanh-approximated (`"tanh"`)."""
    if approximate not in ("none", "tanh"):
        trace_error(f'gelu: approximate must be "none" or "tanh", got "{approximate}"')
    a = _one(x)
    if a.dtype.kind in "biu":
        a = cast(a, np.float64)
    return a.tracer.build("gelu", lambda: ml.GeluOp(a.value, approximate), (a,))


def _binary(name: str, op: type[ml.BinaryOp], lhs: Any, rhs: Any) -> TracedArray:
    a, b = promote(lhs, rhs)
    if a.dtype == np.bool_:
        trace_error(f"{name} of bool arrays: cast with .astype first")
    return a.tracer.build(name, lambda: op(a.value, b.value), (a, b))


def add(a: Any, b: Any) -> TracedArray:
    return _binary("add", ml.AddOp, a, b)


def subtract(a: Any, b: Any) -> TracedArray:
    return _binary("subtract", ml.SubOp, a, b)


def multiply(a: Any, b: Any) -> TracedArray:
    return _binary("multiply", ml.MulOp, a, b)


def divide(a: Any, b: Any) -> TracedArray:
    """True division: integer operands divide as float64, as in numpy."""
    if result_dtype(a, b).kind in "biu":
        a, b = promote(a, b, dtype=np.dtype(np.float64))
    return _binary("divide", ml.DivOp, a, b)


def power(a: Any, b: Any) -> TracedArray:
    return _binary("power", ml.PowOp, a, b)


def maximum(a: Any, b: Any) -> TracedArray:
    """Elementwise maximum (numpy.maximum)."""
    return _binary("maximum", ml.MaxOp, a, b)


def minimum(a: Any, b: Any) -> TracedArray:
    """Elementwise minimum (numpy.minimum)."""
    return _binary("minimum", ml.MinOp, a, b)


def _compare(predicate: str, lhs: Any, rhs: Any) -> TracedArray:
    a, b = promote(lhs, rhs)
    return a.tracer.build(
        f"comparison '{predicate}'", lambda: ml.CmpOp(predicate, a.value, b.value), (a, b)
    )


def equal(a: Any, b: Any) -> TracedArray:
    return _compare("eq", a, b)


def not_equal(a: Any, b: Any) -> TracedArray:
    return _compare("ne", a, b)


def less(a: Any, b: Any) -> TracedArray:
    return _compare("lt", a, b)


def less_equal(a: Any, b: Any) -> TracedArray:
    return _compare("le", a, b)


def greater(a: Any, b: Any) -> TracedArray:
    return _compare("gt", a, b)


def greater_equal(a: Any, b: Any) -> TracedArray:
    return _compare("ge", a, b)


def _as_bool(x: Any) -> TracedArray:
    a = _one(x)
    return a if a.dtype == np.bool_ else not_equal(a, 0)


def where(condition: Any, a: Any, b: Any) -> TracedArray:
    """`a` where `condition` holds, else `b` (numpy.where with three arguments)."""
    tracer = active_tracer(condition, a, b)
    c = _as_bool(lift(tracer, condition))
    x, y = promote(a, b)
    return tracer.build("where", lambda: ml.SelectOp(c.value, x.value, y.value), (c, x, y))


def logical_and(a: Any, b: Any) -> TracedArray:
    return where(_as_bool(a), _as_bool(b), False)


def logical_or(a: Any, b: Any) -> TracedArray:
    return where(_as_bool(a), True, _as_bool(b))


def logical_xor(a: Any, b: Any) -> TracedArray:
    return not_equal(_as_bool(a), _as_bool(b))


def logical_not(a: Any) -> TracedArray:
    return equal(_as_bool(a), False)


# ---------------------------------------------------------------------------
# Movement
# ---------------------------------------------------------------------------


def transpose(x: Any, axes: Sequence[int] | None = None) -> TracedArray:
    """numpy.transpose: reverse the dims, or permute them as `axes` says."""
    a = _one(x)
    perm = tuple(range(a.ndim))[::-1] if axes is None else tuple(int(i) for i in axes)
    try:
        perm = tuple(shapes.normalize_axis(p, a.ndim) for p in perm)
    except shapes.ShapeError as error:
        trace_error(f"transpose: {error}")
    if perm == tuple(range(a.ndim)):
        return a
    return a.tracer.build("transpose", lambda: ml.TransposeOp(a.value, perm), (a,))


def reshape(x: Any, newshape: int | Sequence[int]) -> TracedArray:
    """numpy.reshape; one dim may be -1."""
    a = _one(x)
    target = (int(newshape),) if np.ndim(newshape) == 0 else tuple(int(d) for d in newshape)
    if -1 in target and not builtins.all(shapes.is_static(d) for d in a.raw_shape):
        if builtins.sum(1 for d in target if d == -1) > 1:
            trace_error(f"reshape: target shape {list(target)} has more than one -1")
        return reshape_to(a, [shapes.DYNAMIC if d == -1 else d for d in target])
    if target == a.raw_shape:
        return a
    return a.tracer.build("reshape", lambda: ml.ReshapeOp(a.value, target), (a,))


def concatenate(arrays: Sequence[Any], axis: int = 0) -> TracedArray:
    """numpy.concatenate (operands are promoted to one dtype)."""
    if not arrays:
        trace_error("concatenate needs at least one array")
    parts = promote(*arrays)
    tracer = parts[0].tracer
    values = [p.value for p in parts]
    return tracer.build("concatenate", lambda: ml.ConcatOp(values, axis), parts)


def take(x: Any, indices: Any, axis: int = 0) -> TracedArray:
    """numpy.take with an integer index array (negative indices count from the end)."""
    tracer = active_tracer(x, indices)
    a, i = lift(tracer, x), lift(tracer, indices)
    if i.dtype.kind not in "iu":
        trace_error(f"take: indices must be integers, got dtype {i.dtype}")
    i = cast(i, np.int64)
    return tracer.build("take", lambda: ml.GatherOp(a.value, i.value, axis), (a, i))


# ---------------------------------------------------------------------------
# Reductions
# ---------------------------------------------------------------------------


def _axes(a: TracedArray, axis: Axis) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(a.ndim))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    try:
        return shapes.normalize_axes(axes, a.ndim)
    except shapes.ShapeError as error:
        trace_error(f"reduction: {error}")


def _widened(x: Any, dtype: type[np.generic]) -> TracedArray:
    """Integers and bools promoted to `dtype`, as numpy accumulates them."""
    a = _one(x)
    return cast(a, dtype) if a.dtype.kind in "biu" else a


def _reduce(name: str, op: type[ml.ReduceOp], a: TracedArray, axis: Axis, keepdims: bool) -> Any:
    axes = _axes(a, axis)
    if not axes:
        return a
    return a.tracer.build(name, lambda: op(a.value, axes, keepdims), (a,))


def sum(x: Any, axis: Axis = None, keepdims: bool = False) -> TracedArray:
    """numpy.sum: unsigned integers sum as uint64, other integers and bools as int64."""
    a = _one(x)
    wide = np.uint64 if a.dtype.kind == "u" else np.int64
    return _reduce("sum", ml.ReduceSumOp, _widened(a, wide), axis, keepdims)


def mean(x: Any, axis: Axis = None, keepdims: bool = False) -> TracedArray:
    """numpy.mean: integers and bools average in float64."""
    return _reduce("mean", ml.ReduceMeanOp, _widened(x, np.float64), axis, keepdims)


def _extremum(name: str, op: type[ml.ReduceOp], x: Any, axis: Axis, keepdims: bool) -> Any:
    a = _one(x)
    if a.dtype != np.bool_:
        return _reduce(name, op, a, axis, keepdims)
    return cast(_reduce(name, op, cast(a, np.int8), axis, keepdims), np.bool_)


def max(x: Any, axis: Axis = None, keepdims: bool = False) -> TracedArray:
    """numpy.max (a reduction; `maximum` is the elementwise one)."""
    return _extremum("max", ml.ReduceMaxOp, x, axis, keepdims)


def min(x: Any, axis: Axis = None, keepdims: bool = False) -> TracedArray:
    """numpy.min (a reduction; `minimum` is the elementwise one)."""
    return _extremum("min", ml.ReduceMinOp, x, axis, keepdims)


# ---------------------------------------------------------------------------
# Neural-network ops
# ---------------------------------------------------------------------------


def softmax(x: Any, axis: int = -1) -> TracedArray:
    a = _widened(x, np.float64)
    return a.tracer.build("softmax", lambda: ml.SoftmaxOp(a.value, axis), (a,))


def layer_norm(
    x: Any, scale: Any = None, bias: Any = None, axis: int = -1, epsilon: float = 1e-5
) -> TracedArray:
    """Normalise over dims `axis..rank-1`, then `* scale + bias` (both broadcast)."""
    a = _widened(x, np.float64)
    g = lift(a.tracer, 1.0 if scale is None else scale, a.dtype)
    b = lift(a.tracer, 0.0 if bias is None else bias, a.dtype)
    return a.tracer.build(
        "layer_norm", lambda: ml.LayerNormOp(a.value, g.value, b.value, axis, epsilon), (a, g, b)
    )


def matmul(a: Any, b: Any) -> TracedArray:
    """numpy.matmul, 1-D operands included."""
    x, y = promote(a, b)
    if not x.ndim or not y.ndim:
        trace_error("matmul: operands must not be scalars (use '*')")
    if x.dtype == np.bool_:
        trace_error("matmul of bool arrays: cast with .astype first")
    lhs = reshape_to(x, (1, *x.raw_shape)) if x.ndim == 1 else x
    rhs = reshape_to(y, (*y.raw_shape, 1)) if y.ndim == 1 else y
    out = x.tracer.build("matmul", lambda: ml.MatmulOp(lhs.value, rhs.value), (x, y))
    dims = list(out.raw_shape)
    if y.ndim == 1:
        del dims[-1]
    if x.ndim == 1:
        del dims[-1 if y.ndim == 1 else -2]
    return out if len(dims) == out.ndim else reshape_to(out, dims)


def _pair(value: int | Sequence[int], what: str) -> tuple[int, int]:
    if np.ndim(value) == 0:
        return int(value), int(value)  # pyright: ignore[reportArgumentType]
    if len(value) != 2:
        trace_error(f"{what} must be an int or a pair, got {value}")
    return int(value[0]), int(value[1])


def _pads(padding: int | Sequence[int]) -> tuple[int, int, int, int]:
    """An int, a pair (h, w) padded on both sides, or (top, left, bottom, right)."""
    if np.ndim(padding) == 1 and len(padding) == 4:  # pyright: ignore[reportArgumentType]
        top, left, bottom, right = (int(p) for p in padding)
        return top, left, bottom, right
    h, w = _pair(padding, "padding")
    return h, w, h, w


def conv2d(
    x: Any,
    w: Any,
    bias: Any = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
) -> TracedArray:
    """2-D convolution, NCHW input and OIHW weights (onnx Conv)."""
    tracer = active_tracer(x, w, bias)
    a, k = promote(x, w)
    operands = [a, k]
    if bias is not None:
        operands.append(lift(tracer, bias, a.dtype))
    bias_value = operands[2].value if bias is not None else None

    def make() -> ml.Conv2dOp:
        return ml.Conv2dOp(
            a.value,
            k.value,
            bias_value,
            strides=_pair(stride, "stride"),
            dilations=_pair(dilation, "dilation"),
            pads=_pads(padding),
            groups=groups,
        )

    return tracer.build("conv2d", make, operands)


def _pool(
    name: str,
    op: type[ml.PoolOp],
    x: Any,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None,
    padding: int | Sequence[int],
) -> TracedArray:
    a = _widened(x, np.float64)
    kernel = _pair(kernel_size, "kernel_size")
    strides = kernel if stride is None else _pair(stride, "stride")
    pads = _pads(padding)
    return a.tracer.build(name, lambda: op(a.value, kernel, strides=strides, pads=pads), (a,))


def max_pool2d(
    x: Any,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
) -> TracedArray:
    """Max pooling over H and W of an NCHW array; the stride defaults to the kernel."""
    return _pool("max_pool2d", ml.MaxPool2dOp, x, kernel_size, stride, padding)


def avg_pool2d(
    x: Any,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
) -> TracedArray:
    """Average pooling (padding not counted) over H and W; the stride defaults to the kernel."""
    return _pool("avg_pool2d", ml.AvgPool2dOp, x, kernel_size, stride, padding)


# numpy functions applied to traced arrays dispatch here (by numpy's name).
UFUNCS: dict[str, Callable[..., Any]] = {
    "add": add,
    "subtract": subtract,
    "multiply": multiply,
    "divide": divide,
    "true_divide": divide,
    "power": power,
    "negative": negative,
    "absolute": abs,
    "exp": exp,
    "log": log,
    "sqrt": sqrt,
    "tanh": tanh,
    "maximum": maximum,
    "minimum": minimum,
    "equal": equal,
    "not_equal": not_equal,
    "less": less,
    "less_equal": less_equal,
    "greater": greater,
    "greater_equal": greater_equal,
    "logical_and": logical_and,
    "logical_or": logical_or,
    "logical_xor": logical_xor,
    "logical_not": logical_not,
    "matmul": matmul,
}

ARRAY_FUNCTIONS: dict[str, Callable[..., Any]] = {
    "sum": sum,
    "mean": mean,
    "max": max,
    "amax": max,
    "min": min,
    "amin": min,
    "transpose": transpose,
    "reshape": reshape,
    "concatenate": concatenate,
    "where": where,
    "matmul": matmul,
    "take": take,
    "maximum": maximum,
    "minimum": minimum,
}
