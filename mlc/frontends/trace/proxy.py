"""
`TracedArray`: the stand-in a traced function receives instead of a numpy array.

It behaves as a numpy array as far as tracing can: arithmetic and comparisons
(numpy's type promotion, Python numbers as weak scalars), indexing with ints,
slices (steps too), `...` and `None`, `.T`, `.reshape`, reductions, `.astype`; numpy
functions applied to it dispatch to `mlc.ops` (`__array_ufunc__`,
`__array_function__`). Each operation records one or a few `ml` ops; asking for a
concrete value (`bool()`, `float()`, `int()`, `np.asarray`) goes to the tracer.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue

from mlc import shapes
from mlc.frontends.trace import tracer as tracing
from mlc.frontends.trace.tracer import DTYPES, Tracer, trace_error

Scalar = bool | int | float
ArrayLike = (bool, int, float, np.ndarray, np.generic, list, tuple)
INT64_MAX = 2**63 - 1
INT64_MIN = -(2**63)


class TracedArray:
    """A traced value: an SSA value of tensor type in the function being recorded."""

    __array_priority__ = 1000  # numpy defers `ndarray <op> TracedArray` to us

    def __init__(self, tracer: Tracer, value: SSAValue, weak: bool = False):
        self.tracer = tracer
        self.value = value
        self.weak = weak  # promotes as a Python int would (a loop index)
        tracer.register(self)

    # -- what the value is ------------------------------------------------------

    @property
    def type(self) -> TensorType[Attribute]:
        assert isinstance(self.value.type, TensorType)
        return self.value.type  # pyright: ignore[reportUnknownVariableType]

    @property
    def raw_shape(self) -> shapes.Shape:
        """The shape with dynamic dims as `shapes.DYNAMIC` (reading it guards nothing)."""
        return self.type.get_shape()

    @property
    def shape(self) -> tuple[int, ...]:
        self.tracer.read_shape(self.value)
        if not all(shapes.is_static(d) for d in self.raw_shape):
            self.tracer.dynamic_shape_read(self)
        return self.raw_shape

    @property
    def dtype(self) -> np.dtype[Any]:
        return DTYPES[self.type.element_type]  # pyright: ignore[reportUnknownMemberType]

    @property
    def ndim(self) -> int:
        return len(self.raw_shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape))

    def __len__(self) -> int:
        if not self.raw_shape:
            trace_error("len() of a rank-0 array")
        return self.shape[0]

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def __repr__(self) -> str:
        dims = ", ".join(str(d) if shapes.is_static(d) else "?" for d in self.raw_shape)
        return f"TracedArray(shape=({dims}), dtype={self.dtype})"

    # -- concrete values: graph breaks under mlc.jit ------------------------------

    def __bool__(self) -> bool:
        return bool(self.tracer.concretize(self, "bool()"))

    def __float__(self) -> float:
        return float(self.tracer.concretize(self, "float()"))

    def __int__(self) -> int:
        return int(self.tracer.concretize(self, "int()"))

    def __index__(self) -> int:
        if self.dtype.kind not in "biu":
            trace_error(f"only integer arrays can be used as an index, got dtype {self.dtype}")
        return int(self.tracer.concretize(self, "using it as an index"))

    def item(self) -> Scalar:
        return self.tracer.concretize(self, ".item()").item()

    def tolist(self) -> Any:
        return self.tracer.concretize(self, ".tolist()").tolist()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = self.tracer.concretize(self, "a numpy function mlc cannot trace")
        return value if dtype is None else value.astype(dtype)

    def __setitem__(self, index: Any, value: Any) -> None:
        trace_error(
            "traced arrays cannot be assigned to in place: build a new one with "
            "ops.where or ops.concatenate"
        )

    __hash__ = None  # type: ignore[assignment]  # `==` is elementwise, as in numpy

    # -- arithmetic ---------------------------------------------------------------

    def __add__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.add(self, other)

    def __radd__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.add(other, self)

    def __sub__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.subtract(self, other)

    def __rsub__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.subtract(other, self)

    def __mul__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.multiply(self, other)

    def __rmul__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.multiply(other, self)

    def __truediv__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.divide(self, other)

    def __rtruediv__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.divide(other, self)

    def __pow__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.power(self, other)

    def __rpow__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.power(other, self)

    def __matmul__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.matmul(other, self)

    def __floordiv__(self, other: Any) -> "TracedArray":
        trace_error("'//' is not supported on traced arrays: use ops.where with '/' and casts")

    __rfloordiv__ = __mod__ = __rmod__ = __floordiv__

    def __neg__(self) -> "TracedArray":
        from mlc import ops

        return ops.negative(self)

    def __pos__(self) -> "TracedArray":
        return self

    def __abs__(self) -> "TracedArray":
        from mlc import ops

        return ops.abs(self)

    # -- comparisons and logic ----------------------------------------------------

    def __eq__(self, other: Any) -> "TracedArray":  # type: ignore[override]
        from mlc import ops

        return ops.equal(self, other)

    def __ne__(self, other: Any) -> "TracedArray":  # type: ignore[override]
        from mlc import ops

        return ops.not_equal(self, other)

    def __lt__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.less(self, other)

    def __le__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.less_equal(self, other)

    def __gt__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.greater(self, other)

    def __ge__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.greater_equal(self, other)

    def __and__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.logical_and(*_bools("&", self, other))

    __rand__ = __and__

    def __or__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.logical_or(*_bools("|", self, other))

    __ror__ = __or__

    def __xor__(self, other: Any) -> "TracedArray":
        from mlc import ops

        return ops.logical_xor(*_bools("^", self, other))

    __rxor__ = __xor__

    def __invert__(self) -> "TracedArray":
        from mlc import ops

        return ops.logical_not(*_bools("~", self))

    # -- shape and movement -------------------------------------------------------

    @property
    def T(self) -> "TracedArray":
        from mlc import ops

        return ops.transpose(self)

    def transpose(self, *axes: Any) -> "TracedArray":
        from mlc import ops

        return ops.transpose(self, _varargs(axes))

    def reshape(self, *new_shape: Any) -> "TracedArray":
        from mlc import ops

        return ops.reshape(self, _varargs(new_shape))

    def astype(self, dtype: Any) -> "TracedArray":
        from mlc import ops

        return ops.cast(self, dtype)

    def __getitem__(self, index: Any) -> "TracedArray":
        from mlc.frontends.trace.indexing import getitem

        return getitem(self, index)

    # -- reductions ---------------------------------------------------------------

    def sum(self, axis: Any = None, keepdims: bool = False) -> "TracedArray":
        from mlc import ops

        return ops.sum(self, axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> "TracedArray":
        from mlc import ops

        return ops.mean(self, axis, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> "TracedArray":
        from mlc import ops

        return ops.max(self, axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> "TracedArray":
        from mlc import ops

        return ops.min(self, axis, keepdims=keepdims)

    # -- numpy dispatch -----------------------------------------------------------

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        from mlc import ops

        target = ops.UFUNCS.get(ufunc.__name__) if method == "__call__" and not kwargs else None
        if target is None:
            return _eager(ufunc, method, inputs, kwargs)
        return target(*inputs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        from mlc import ops

        target = ops.ARRAY_FUNCTIONS.get(func.__name__)
        if target is None or not _accepts(target, args, kwargs):
            return _eager(func, None, args, kwargs)  # or options mlc.ops does not have
        return target(*args, **kwargs)


def _eager(function: Any, method: str | None, args: Any, kwargs: Any) -> Any:
    """A numpy function mlc does not trace: run it on concrete values (a graph break)."""
    name = getattr(function, "__name__", "function")
    concrete = [a.tracer.concretize(a, f"numpy.{name}") if is_traced(a) else a for a in args]
    if method is not None:
        return getattr(function, method)(*concrete, **kwargs)
    return function(*concrete, **kwargs)


def _accepts(function: Any, args: Any, kwargs: Any) -> bool:
    import inspect

    try:
        inspect.signature(function).bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def _bools(operator: str, *values: Any) -> tuple[Any, ...]:
    """`&`, `|`, `^` and `~` are logical on bool arrays; bitwise integer ops are not traced."""
    for value in values:
        if result_dtype(value) != np.bool_:
            trace_error(
                f"'{operator}' is only traced on bool arrays (got {result_dtype(value)}): "
                "use ops.logical_and / logical_or / logical_not on comparisons"
            )
    return values


def _varargs(values: tuple[Any, ...]) -> Any:
    """`x.reshape(2, 3)` and `x.reshape((2, 3))` mean the same, as in numpy."""
    if len(values) == 1 and (isinstance(values[0], Sequence) or values[0] is None):
        return values[0]
    return values


def is_traced(value: Any) -> bool:
    return isinstance(value, TracedArray)


# ---------------------------------------------------------------------------
# Lifting Python and numpy values, and numpy's type promotion
# ---------------------------------------------------------------------------


def active_tracer(*values: Any) -> Tracer:
    """The tracer of the traced values among `values`, else the innermost active one."""
    traced = [v for v in values if is_traced(v)]
    if any(v.tracer is not tracing.current() for v in traced):
        trace_error("a traced array was used outside the trace that made it")
    if traced:
        return traced[0].tracer
    if (tracer := tracing.current()) is None:
        trace_error(
            "mlc.ops functions record traced programs: call them inside a function "
            "given to mlc.trace or mlc.jit"
        )
    return tracer


def lift(tracer: Tracer, value: Any, dtype: np.dtype[Any] | None = None) -> TracedArray:
    """A traced array for `value`: itself (cast to `dtype`), or a constant."""
    if is_traced(value):
        return value if dtype is None or value.dtype == dtype else cast(value, dtype)
    _refuse_traced_lists(value)
    try:
        array = np.asarray(value, dtype=dtype)
    except (TypeError, ValueError, OverflowError) as error:
        trace_error(f"cannot use {type(value).__name__} as an array: {error}")
    if array.dtype == np.object_:
        trace_error(f"cannot use {type(value).__name__} as an array")
    if dtype is None and array.dtype.kind in "iu" and array.dtype != np.int64 and _is_scalar(value):
        array = array.astype(np.int64)
    return TracedArray(tracer, tracer.constant(array))


def _is_scalar(value: Any) -> bool:
    return isinstance(value, bool | int | float)


def _refuse_traced_lists(value: Any) -> None:
    if isinstance(value, list | tuple) and any(is_traced(v) for v in value):
        trace_error("a list of traced arrays is not an array: join them with ops.concatenate")


def result_dtype(*values: Any) -> np.dtype[Any]:
    """numpy's promotion: arrays by dtype, Python scalars weakly (NEP 50)."""
    for v in values:
        if not is_traced(v) and not isinstance(v, ArrayLike):
            trace_error(f"cannot use {type(v).__name__} as an array")
        _refuse_traced_lists(v)
    parts = [(0 if v.weak else v.dtype) if is_traced(v) else v for v in values]
    try:
        return np.result_type(*parts)
    except (TypeError, OverflowError) as error:
        trace_error(f"cannot combine these operands: {error}")


def promote(*values: Any, dtype: np.dtype[Any] | None = None) -> list[TracedArray]:
    """The operands lifted and cast to their common dtype (or to `dtype`)."""
    tracer = active_tracer(*values)
    target = dtype or result_dtype(*values)
    return [lift(tracer, v, target) for v in values]


def cast(x: TracedArray, dtype: Any) -> TracedArray:
    from mlc.dialects.ml import CastOp

    dtype = np.dtype(dtype)
    if dtype == x.dtype:
        return x
    result = TensorType(tracing.element_type(dtype), x.raw_shape)
    return x.tracer.build("astype", lambda: CastOp(x.value, result))


def reshape_to(x: TracedArray, dims: Sequence[int]) -> TracedArray:
    """Reshape to `dims`, which may hold one dynamic dim (given at run time by the rest)."""
    from mlc.dialects.ml import ReshapeOp

    dims = tuple(dims)
    dynamic = [i for i, d in enumerate(dims) if not shapes.is_static(d)]
    if not dynamic:
        return x.tracer.build("reshape", lambda: ReshapeOp(x.value, dims), (x,))
    if len(dynamic) > 1:
        trace_error(
            f"cannot reshape to ({shapes.format_shape(dims)}): more than one dim is only "
            "known at run time"
        )
    target = np.array([-1 if i == dynamic[0] else d for i, d in enumerate(dims)], np.int64)
    shape = x.tracer.constant(target)
    result = TensorType(x.type.element_type, dims)  # pyright: ignore[reportUnknownMemberType]
    return x.tracer.build(
        "reshape", lambda: ReshapeOp(x.value, shape=shape, result_type=result), (x,)
    )


def index_value(tracer: Tracer, value: Any) -> SSAValue:
    """An `index` for a loop bound: a Python int, or a traced rank-0 integer."""
    from xdsl.dialects import tensor
    from xdsl.dialects.builtin import IndexType, IntegerAttr, i64

    if not is_traced(value):
        try:
            number = int(value)
        except (TypeError, ValueError):
            trace_error(f"loop bounds must be integers, got {type(value).__name__}")
        return tracer.emit(arith.ConstantOp(IntegerAttr(number, IndexType()))).results[0]
    if value.raw_shape or value.dtype.kind not in "iu":
        trace_error(f"a traced loop bound must be a rank-0 integer array, got {value!r}")
    scalar = cast(value, np.int64)
    element = tracer.emit(tensor.ExtractOp(scalar.value, [], i64)).results[0]
    return tracer.emit(arith.IndexCastOp(element, IndexType())).results[0]
