"""
The value of an `ml` op on numpy arrays, with the semantics of its lowering.

Constant folding (`mlc.lowering.graph.patterns.fold`) evaluates ops here, so a folded
program computes what the compiled one would have, bit for bit where the lowering's
arithmetic is exact:

- every step rounds to the element type, as the scalar body of the lowered
  `linalg.generic` does (f16 arithmetic is single-rounded, as LLVM's promotion
  through f32 is); reductions accumulate sequentially in row-major order of the
  reduced dims, starting from the fill value, as the lowered loop does;
- integers are signed and wrap; division truncates toward zero; i1 compares as
  unsigned; float `max`/`min`/`relu` are `arith.maximumf`/`minimumf` (NaN wins,
  -0.0 < +0.0); float-to-int casts truncate;
- transcendentals (exp, log, tanh, erf, pow, and the sigmoid and gelu built on them)
  are computed in f64 and rounded once, so they are correctly rounded where the run
  time's libm or inline approximation may differ in the last place.

An input whose lowering has undefined behaviour (an integer division by zero or of
the minimum value by -1, a negative integer exponent, an out-of-range gather index
or float-to-int cast) raises `NotFoldable` with the reason, as does an element type
numpy cannot hold exactly (unsigned integers). bf16 is `ml_dtypes.bfloat16`, whose
arithmetic rounds each f32 result once, as the lowering's; its sums and means
accumulate in f32, as the lowered reduction does.
"""

import math
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute, Operation

from mlc import shapes
from mlc.dialects import ml
from mlc.dtypes import DTYPES, is_floating

Array = np.ndarray[tuple[int, ...], np.dtype[np.generic]]


class NotFoldable(Exception):
    """The op cannot be evaluated at compile time; the message says why."""


def numpy_dtype(element: Attribute) -> np.dtype[np.generic] | None:
    """The numpy dtype holding `element` exactly, or None (unsigned, index)."""
    match element:
        case BFloat16Type():
            return DTYPES["bf16"]
        case Float16Type():
            return np.dtype(np.float16)
        case Float32Type():
            return np.dtype(np.float32)
        case Float64Type():
            return np.dtype(np.float64)
        case IntegerType() if element.signedness.data == Signedness.SIGNLESS:
            width = element.width.data
            return np.dtype(np.bool_) if width == 1 else np.dtype(f"int{width}")
        case _:
            return None


def result_dtype(op: Operation) -> np.dtype[np.generic]:
    result = op.results[0].type
    assert isinstance(result, TensorType)
    dtype = numpy_dtype(result.element_type)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    if dtype is None:
        raise NotFoldable(f"element type {result.element_type} is not folded")  # pyright: ignore[reportUnknownMemberType]
    return dtype


def _floating(x: Array) -> bool:
    return is_floating(x.dtype)


# ---------------------------------------------------------------------------
# Scalar semantics, elementwise on arrays
# ---------------------------------------------------------------------------


def maximumf(a: Array, b: Array, take_max: bool = True) -> Array:
    """`arith.maximumf` (or `minimumf`): NaN propagates and -0.0 orders below +0.0."""
    chosen = np.maximum(a, b) if take_max else np.minimum(a, b)
    both_zero = (a == 0) & (b == 0)
    negative = np.signbit(a) & np.signbit(b) if take_max else np.signbit(a) | np.signbit(b)
    zero = np.where(negative, -0.0, 0.0).astype(chosen.dtype)
    return np.where(both_zero, zero, chosen)


def max_or_min(a: Array, b: Array, take_max: bool) -> Array:
    if _floating(a):
        return maximumf(a, b, take_max)
    return np.maximum(a, b) if take_max else np.minimum(a, b)


def divide(a: Array, b: Array) -> Array:
    """`arith.divf`, or `arith.divsi` (truncating; UB on zero and on MIN / -1)."""
    if _floating(a):
        return a / b
    a, b = np.broadcast_arrays(a, b)
    if np.any(b == 0):
        raise NotFoldable("integer division by zero")
    if np.any((a == np.iinfo(a.dtype).min) & (b == -1)):
        raise NotFoldable("integer division overflows")
    floor = np.floor_divide(a, b)
    inexact = (a - floor * b != 0) & ((a < 0) != (b < 0))
    return np.where(inexact, floor + 1, floor).astype(a.dtype)


def power(a: Array, b: Array) -> Array:
    if _floating(a):
        return correctly_rounded(np.power, a.astype(np.float64), b.astype(np.float64), a.dtype)
    if np.any(b < 0):
        raise NotFoldable("negative integer exponent")
    return np.power(a, b)


def correctly_rounded(fn: Callable[..., Array], *args: Array | np.dtype[np.generic]) -> Array:
    """`fn` of the f64 `args`, rounded once to the dtype given last."""
    *values, dtype = args
    assert isinstance(dtype, np.dtype)
    return np.asarray(fn(*values)).astype(dtype)


def transcendental(fn: Callable[[Array], Array]) -> Callable[[Array], Array]:
    return lambda x: correctly_rounded(fn, x.astype(np.float64), x.dtype)


def erf(x: Array) -> Array:
    return np.vectorize(math.erf, otypes=[np.float64])(x)


def sigmoid(x: Array) -> Array:
    one = x.dtype.type(1)
    return one / (one + transcendental(np.exp)(-x))


def gelu(x: Array, approximate: str) -> Array:
    """The lowering's body, step by step in the element type."""
    t = x.dtype.type
    if approximate == "tanh":
        inner = x + t(0.044715) * (x * x * x)
        shape = transcendental(np.tanh)(t(math.sqrt(2 / math.pi)) * inner)
    else:
        shape = transcendental(erf)(x * t(math.sqrt(0.5)))
    return t(0.5) * x * (t(1) + shape)


def relu(x: Array) -> Array:
    return max_or_min(x, np.zeros_like(x), take_max=True)


UNARY: dict[type[Operation], Callable[[Array], Array]] = {
    ml.NegOp: np.negative,
    ml.AbsOp: np.abs,
    ml.ReluOp: relu,
    ml.ExpOp: transcendental(np.exp),
    ml.LogOp: transcendental(np.log),
    ml.TanhOp: transcendental(np.tanh),
    ml.ErfOp: transcendental(erf),
    ml.SqrtOp: np.sqrt,
    ml.RsqrtOp: lambda x: x.dtype.type(1) / np.sqrt(x),
    ml.SigmoidOp: sigmoid,
}

BINARY: dict[type[Operation], Callable[[Array, Array], Array]] = {
    ml.AddOp: np.add,
    ml.SubOp: np.subtract,
    ml.MulOp: np.multiply,
    ml.DivOp: divide,
    ml.PowOp: power,
    ml.MaxOp: lambda a, b: max_or_min(a, b, take_max=True),
    ml.MinOp: lambda a, b: max_or_min(a, b, take_max=False),
}

COMPARE: dict[str, Callable[[Array, Array], Array]] = {
    "eq": np.equal,
    "ne": np.not_equal,  # true for NaN, as `arith.cmpf une`
    "lt": np.less,
    "le": np.less_equal,
    "gt": np.greater,
    "ge": np.greater_equal,
}


def cast(x: Array, target: np.dtype[np.generic]) -> Array:
    """`ml.cast`: to i1 is `x != 0`; float to int truncates (UB out of range)."""
    if target == np.bool_:
        return x != 0
    if _floating(x) and np.issubdtype(target, np.integer):
        info = np.iinfo(target)
        truncated = np.trunc(x.astype(np.float64))
        if np.any(~np.isfinite(truncated) | (truncated < info.min) | (truncated > info.max)):
            raise NotFoldable(f"a value is out of range of i{info.bits}")
        return truncated.astype(target)
    return x.astype(target)


# ---------------------------------------------------------------------------
# Reductions: sequential, as the lowered loop
# ---------------------------------------------------------------------------


def reduce_identity(op: ml.ReduceOp, dtype: np.dtype[np.generic]) -> Array:
    if not isinstance(op, ml.ReduceMaxOp | ml.ReduceMinOp):
        return np.zeros((), dtype)
    is_max = isinstance(op, ml.ReduceMaxOp)
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)
        return np.array(info.min if is_max else info.max, dtype)
    return np.array(-np.inf if is_max else np.inf, dtype)


def reduce(op: ml.ReduceOp, x: Array) -> Array:
    dtype = x.dtype
    if dtype == DTYPES["bf16"] and not isinstance(op, ml.ReduceMaxOp | ml.ReduceMinOp):
        x = x.astype(np.float32)  # bf16 sums accumulate in f32
    axes = shapes.normalize_axes(op.axes.get_values(), x.ndim)
    kept = [a for a in range(x.ndim) if a not in axes]
    count = math.prod(x.shape[a] for a in axes)
    rows = np.transpose(x, [*kept, *axes]).reshape(*(x.shape[a] for a in kept), count)
    acc = np.broadcast_to(reduce_identity(op, x.dtype), rows.shape[:-1]).copy()
    for i in range(rows.shape[-1]):
        step = rows[..., i]
        if isinstance(op, ml.ReduceMaxOp | ml.ReduceMinOp):
            acc = max_or_min(acc, step, isinstance(op, ml.ReduceMaxOp))
        else:
            acc = acc + step
    if isinstance(op, ml.ReduceMeanOp):
        acc = divide(acc, np.asarray(count).astype(x.dtype))
    if op.keepdims.value.data:
        acc = np.expand_dims(acc, axes)
    return np.asarray(acc, dtype)


# ---------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------


def static_result_shape(op: Operation) -> tuple[int, ...]:
    result = op.results[0].type
    assert isinstance(result, TensorType)
    shape = result.get_shape()
    if not all(shapes.is_static(d) for d in shape):
        raise NotFoldable("the result shape is dynamic")
    return shape


def gather(op: ml.GatherOp, data: Array, indices: Array) -> Array:
    axis = shapes.normalize_axis(op.axis.value.data, data.ndim)
    size = data.shape[axis]
    if np.any((indices < -size) | (indices >= size)):
        raise NotFoldable("a gather index is out of range")
    return np.take(data, np.where(indices < 0, indices + size, indices), axis=axis)


def movement(op: Operation, args: Sequence[Array]) -> Array:
    match op:
        case ml.TransposeOp():
            return np.transpose(args[0], op.perm.get_values())
        case ml.ReshapeOp():
            return args[0].reshape(static_result_shape(op))
        case ml.BroadcastToOp():
            return np.broadcast_to(args[0], static_result_shape(op))
        case ml.ConcatOp():
            return np.concatenate(args, axis=op.axis.value.data)
        case ml.SliceOp():
            bounds = zip(op.starts.get_values(), op.ends.get_values(), op.steps.get_values())
            return args[0][tuple(slice(*b) for b in bounds)]
        case ml.GatherOp():
            return gather(op, *args)
        case _:
            raise NotFoldable(f"'{op.name}' is not folded")


# ---------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------


def evaluate(op: Operation, args: Sequence[Array]) -> Array:
    """
    The value of `op` on the values of its data operands, in the result's dtype.

    `args` are the operands in order (a reshape's or broadcast's shape operand left
    out). Raises `NotFoldable` where folding would not be faithful.
    """
    dtype = result_dtype(op)
    with np.errstate(all="ignore"):
        return np.asarray(_evaluate(op, args), dtype)


def _evaluate(op: Operation, args: Sequence[Array]) -> Array:
    match op:
        case ml.CmpOp():
            return COMPARE[op.predicate.data](*args)
        case ml.SelectOp():
            return np.where(*args)
        case ml.CastOp():
            return cast(args[0], result_dtype(op))
        case ml.GeluOp():
            return gelu(args[0], op.approximate.data)
        case ml.ReduceOp():
            return reduce(op, args[0])
        case _ if (unary := UNARY.get(type(op))) is not None:
            return unary(args[0])
        case _ if (binary := BINARY.get(type(op))) is not None:
            return binary(*args)
        case _:
            return movement(op, args)
