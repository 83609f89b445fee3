"""
`TracedArray`: the stand-in a traced function receives instead of a numpy array.

It behaves as a numpy array as far as tracing can: arithmetic and comparisons (`%`,
and `& | ^ ~`: logical on bools, bitwise on integers), indexing, `.T`, `.reshape`,
reductions, `.argmax`/`.argmin`/`.cumsum`, `.astype`, and numpy functions applied to it
(`__array_ufunc__`, `__array_function__`). Asking for a concrete value (`bool()`,
`float()`, `int()`, `np.asarray`) goes to the tracer.

The array does not build ops itself: its operators, methods and numpy hooks call the
op functions registered by numpy's name in `dispatch`, so this module sits below the
functions that make arrays and imports none of them. `result_dtype` is numpy's type
promotion of operands, which `& | ^` check to pick logical or bitwise.
"""

import inspect
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, TensorType
from xdsl.ir import Attribute, SSAValue

from mlc import shapes
from mlc.frontends.trace.dispatch import ARRAY_FUNCTIONS, METHODS, UFUNCS
from mlc.frontends.trace.tracer import DTYPES, Tracer, trace_error

Scalar = bool | int | float
ArrayLike = (bool, int, float, np.ndarray, np.generic, list, tuple)


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
        return UFUNCS["add"](self, other)

    def __radd__(self, other: Any) -> "TracedArray":
        return UFUNCS["add"](other, self)

    def __sub__(self, other: Any) -> "TracedArray":
        return UFUNCS["subtract"](self, other)

    def __rsub__(self, other: Any) -> "TracedArray":
        return UFUNCS["subtract"](other, self)

    def __mul__(self, other: Any) -> "TracedArray":
        return UFUNCS["multiply"](self, other)

    def __rmul__(self, other: Any) -> "TracedArray":
        return UFUNCS["multiply"](other, self)

    def __truediv__(self, other: Any) -> "TracedArray":
        return UFUNCS["divide"](self, other)

    def __rtruediv__(self, other: Any) -> "TracedArray":
        return UFUNCS["divide"](other, self)

    def __pow__(self, other: Any) -> "TracedArray":
        return UFUNCS["power"](self, other)

    def __rpow__(self, other: Any) -> "TracedArray":
        return UFUNCS["power"](other, self)

    def __matmul__(self, other: Any) -> "TracedArray":
        return UFUNCS["matmul"](self, other)

    def __rmatmul__(self, other: Any) -> "TracedArray":
        return UFUNCS["matmul"](other, self)

    def __floordiv__(self, other: Any) -> "TracedArray":
        trace_error("'//' is not supported on traced arrays: use ops.where with '/' and casts")

    __rfloordiv__ = __floordiv__

    def __mod__(self, other: Any) -> "TracedArray":
        return UFUNCS["remainder"](self, other)

    def __rmod__(self, other: Any) -> "TracedArray":
        return UFUNCS["remainder"](other, self)

    def __neg__(self) -> "TracedArray":
        return UFUNCS["negative"](self)

    def __pos__(self) -> "TracedArray":
        return self

    def __abs__(self) -> "TracedArray":
        return UFUNCS["absolute"](self)

    # -- comparisons and logic ----------------------------------------------------

    def __eq__(self, other: Any) -> "TracedArray":  # type: ignore[override]
        return UFUNCS["equal"](self, other)

    def __ne__(self, other: Any) -> "TracedArray":  # type: ignore[override]
        return UFUNCS["not_equal"](self, other)

    def __lt__(self, other: Any) -> "TracedArray":
        return UFUNCS["less"](self, other)

    def __le__(self, other: Any) -> "TracedArray":
        return UFUNCS["less_equal"](self, other)

    def __gt__(self, other: Any) -> "TracedArray":
        return UFUNCS["greater"](self, other)

    def __ge__(self, other: Any) -> "TracedArray":
        return UFUNCS["greater_equal"](self, other)

    def __and__(self, other: Any) -> "TracedArray":
        return UFUNCS[_bitwise_or_logical("and", self, other)](self, other)

    def __rand__(self, other: Any) -> "TracedArray":
        return UFUNCS[_bitwise_or_logical("and", other, self)](other, self)

    def __or__(self, other: Any) -> "TracedArray":
        return UFUNCS[_bitwise_or_logical("or", self, other)](self, other)

    def __ror__(self, other: Any) -> "TracedArray":
        return UFUNCS[_bitwise_or_logical("or", other, self)](other, self)

    def __xor__(self, other: Any) -> "TracedArray":
        return UFUNCS[_bitwise_or_logical("xor", self, other)](self, other)

    def __rxor__(self, other: Any) -> "TracedArray":
        return UFUNCS[_bitwise_or_logical("xor", other, self)](other, self)

    def __invert__(self) -> "TracedArray":
        return UFUNCS["logical_not" if self.dtype == np.bool_ else "invert"](self)

    # -- shape and movement -------------------------------------------------------

    @property
    def T(self) -> "TracedArray":
        return ARRAY_FUNCTIONS["transpose"](self)

    def transpose(self, *axes: Any) -> "TracedArray":
        return ARRAY_FUNCTIONS["transpose"](self, _varargs(axes))

    def reshape(self, *new_shape: Any) -> "TracedArray":
        return ARRAY_FUNCTIONS["reshape"](self, _varargs(new_shape))

    def astype(self, dtype: Any) -> "TracedArray":
        return METHODS["astype"](self, dtype)

    def __getitem__(self, index: Any) -> "TracedArray":
        return METHODS["__getitem__"](self, index)

    # -- reductions ---------------------------------------------------------------

    def sum(self, axis: Any = None, keepdims: bool = False) -> "TracedArray":
        return ARRAY_FUNCTIONS["sum"](self, axis, keepdims=keepdims)

    def mean(self, axis: Any = None, keepdims: bool = False) -> "TracedArray":
        return ARRAY_FUNCTIONS["mean"](self, axis, keepdims=keepdims)

    def max(self, axis: Any = None, keepdims: bool = False) -> "TracedArray":
        return ARRAY_FUNCTIONS["max"](self, axis, keepdims=keepdims)

    def min(self, axis: Any = None, keepdims: bool = False) -> "TracedArray":
        return ARRAY_FUNCTIONS["min"](self, axis, keepdims=keepdims)

    def argmax(self, axis: Any = None, keepdims: bool = False) -> "TracedArray":
        return ARRAY_FUNCTIONS["argmax"](self, axis, keepdims=keepdims)

    def argmin(self, axis: Any = None, keepdims: bool = False) -> "TracedArray":
        return ARRAY_FUNCTIONS["argmin"](self, axis, keepdims=keepdims)

    def cumsum(self, axis: Any = None, dtype: Any = None) -> "TracedArray":
        return ARRAY_FUNCTIONS["cumsum"](self, axis, dtype=dtype)

    # -- numpy dispatch -----------------------------------------------------------

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        target = UFUNCS.get(ufunc.__name__) if method == "__call__" and not kwargs else None
        if target is None:
            return _eager(ufunc, method, inputs, kwargs)
        return target(*inputs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        target = ARRAY_FUNCTIONS.get(func.__name__)
        if target is None or not _accepts(target, args, kwargs):
            return _eager(func, None, args, kwargs)  # or options mlc.ops does not have
        return target(*args, **kwargs)


def is_traced(value: Any) -> bool:
    """Whether `value` is a traced array (anything else is lifted to a constant)."""
    return isinstance(value, TracedArray)


def _eager(function: Any, method: str | None, args: Any, kwargs: Any) -> Any:
    """A numpy function mlc does not trace: run it on concrete values (a graph break)."""
    name = getattr(function, "__name__", "function")
    concrete = [a.tracer.concretize(a, f"numpy.{name}") if is_traced(a) else a for a in args]
    if method is not None:
        return getattr(function, method)(*concrete, **kwargs)
    return function(*concrete, **kwargs)


def _accepts(function: Any, args: Any, kwargs: Any) -> bool:
    try:
        inspect.signature(function).bind(*args, **kwargs)
    except TypeError:
        return False
    return True


def _bitwise_or_logical(operator: str, *values: Any) -> str:
    """
    `&`, `|`, `^`: logical on bools (as numpy's are), bitwise on integers; the name of
    the ufunc to call (which refuses floats).
    """
    return f"logical_{operator}" if result_dtype(*values) == np.bool_ else f"bitwise_{operator}"


def _varargs(values: tuple[Any, ...]) -> Any:
    """`x.reshape(2, 3)` and `x.reshape((2, 3))` mean the same, as in numpy."""
    if len(values) == 1 and (isinstance(values[0], Sequence) or values[0] is None):
        return values[0]
    return values


# -- operands: what numpy would make of a value ----------------------------------


def refuse_traced_lists(value: Any) -> None:
    """A list of traced arrays is an error, not an array (numpy would concretize it)."""
    if isinstance(value, list | tuple) and any(is_traced(v) for v in value):
        trace_error("a list of traced arrays is not an array: join them with ops.concatenate")


def result_dtype(*values: Any) -> np.dtype[Any]:
    """numpy's promotion: arrays by dtype, Python scalars weakly (NEP 50)."""
    for v in values:
        if not is_traced(v) and not isinstance(v, ArrayLike):
            trace_error(f"cannot use {type(v).__name__} as an array")
        refuse_traced_lists(v)
    parts = [(0 if v.weak else v.dtype) if is_traced(v) else v for v in values]
    try:
        result = np.result_type(*parts)
    except (TypeError, OverflowError) as error:
        trace_error(f"cannot combine these operands: {error}")
    dtypes = [
        p if isinstance(p, np.dtype) else np.asarray(p).dtype
        for p in parts
        if not isinstance(p, bool | int | float)
    ]
    if result == np.float64 and DTYPES[BFloat16Type()] in dtypes and np.float64 not in dtypes:
        # ml_dtypes' bfloat16 with a Python float: numpy's ufuncs give float32, though
        # result_type says float64 (ml_dtypes' loops)
        return np.dtype(np.float32)
    return result
