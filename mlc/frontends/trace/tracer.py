"""
The tracer: where recorded `ml` ops go, where they point, and how values leave Python.

A `Tracer` owns the block ops are appended to (a function body, or the region of an
`scf` op while a branch or loop body is traced) and stamps every op with the
location of the user's line that asked for it: the first Python frame outside the
`mlc` package; `trace_error` reports a `TraceError` at that line. The tracer knows
SSA values only: `TracedArray`s wrap them one layer up (`array`, `recording`).

A traced value asked for its concrete value (`bool()`, `float()`, `np.asarray`)
goes through `Tracer.concretize`: plain tracing (`mlc.trace`) cannot answer and
says what to use instead; `mlc.jit`'s tracer answers by compiling and running the
function so far (a graph break).
"""

import os
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, NoReturn

import ml_dtypes
import numpy as np
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    Float64Type,
    IntAttr,
    IntegerType,
    Signedness,
    StringAttr,
    TensorType,
    UnknownLoc,
)
from xdsl.ir import Attribute, Block, Operation, SSAValue

from mlc.diagnostics import Diagnostic, DiagnosticError, SourceLoc

_MLC_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

ELEMENT_TYPES: dict[np.dtype[Any], Attribute] = {
    np.dtype(ml_dtypes.bfloat16): BFloat16Type(),  # numpy has none; JAX's (and onnx's)
    np.dtype(np.float16): Float16Type(),
    np.dtype(np.float32): Float32Type(),
    np.dtype(np.float64): Float64Type(),
    np.dtype(np.bool_): IntegerType(1),
    np.dtype(np.int8): IntegerType(8),
    np.dtype(np.int16): IntegerType(16),
    np.dtype(np.int32): IntegerType(32),
    np.dtype(np.int64): IntegerType(64),
    np.dtype(np.uint8): IntegerType(8, Signedness.UNSIGNED),
    np.dtype(np.uint16): IntegerType(16, Signedness.UNSIGNED),
    np.dtype(np.uint32): IntegerType(32, Signedness.UNSIGNED),
    np.dtype(np.uint64): IntegerType(64, Signedness.UNSIGNED),
}
DTYPES: dict[Attribute, np.dtype[Any]] = {t: d for d, t in ELEMENT_TYPES.items()}


class TraceError(DiagnosticError):
    """Traced code did something mlc cannot compile; the diagnostic points at the user's line."""


def user_source_loc() -> SourceLoc | None:
    """The file:line:col of the innermost frame outside mlc (the user's code)."""
    frame = sys._getframe(1)  # pyright: ignore[reportPrivateUsage]
    while frame is not None and _is_mlc_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return None
    column = 1
    positions = list(frame.f_code.co_positions())
    index = frame.f_lasti // 2
    if 0 <= index < len(positions) and positions[index][2] is not None:
        column = positions[index][2] + 1  # pyright: ignore[reportOptionalOperand]
    return SourceLoc(frame.f_code.co_filename, frame.f_lineno or 0, column)


def _is_mlc_file(filename: str) -> bool:
    return os.path.abspath(filename).startswith(_MLC_DIR + os.sep)


def user_location() -> Attribute:
    where = user_source_loc()
    if where is None:
        return UnknownLoc()
    return FileLineColLoc(StringAttr(where.file), IntAttr(where.line), IntAttr(where.column))


def trace_error(message: str) -> NoReturn:
    """Stop tracing: `message` at the user's line."""
    raise TraceError([Diagnostic("error", message, user_source_loc())])


def element_type(dtype: np.dtype[Any]) -> Attribute:
    if dtype not in ELEMENT_TYPES:
        known = ", ".join(str(d) for d in ELEMENT_TYPES)
        trace_error(f"arrays of dtype {dtype} cannot be traced (supported: {known})")
    return ELEMENT_TYPES[dtype]


def tensor_type(shape: Sequence[int], dtype: np.dtype[Any]) -> TensorType[Attribute]:
    return TensorType(element_type(dtype), list(shape))


def dense(array: np.ndarray) -> DenseIntOrFPElementsAttr:
    """A `dense<...>` attribute holding a numpy array (native byte order)."""
    type_ = tensor_type(array.shape, array.dtype)
    if array.dtype == np.bool_:
        return DenseIntOrFPElementsAttr.from_list(type_, [int(v) for v in array.flat])  # pyright: ignore[reportArgumentType]
    data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    return DenseIntOrFPElementsAttr(type_, BytesAttr(data))


class Tracer:
    """Records ops into the current block; regions of `scf` ops nest as blocks."""

    def __init__(self, fn: Callable[..., Any] | None = None) -> None:
        self.function_location = _definition(fn)
        self.block = Block()
        self.function_block = self.block  # the body of the function being recorded
        self.region_depth = 0
        self.shape_reads: list[SSAValue] = []

    def register(self, array: Any) -> None:
        """A traced array was made (`mlc.jit` keeps track of them at graph breaks)."""

    def emit(self, op: Operation) -> Operation:
        op.location = user_location()
        self.block.add_op(op)
        return op

    def constant(self, array: np.ndarray) -> SSAValue:
        return self.emit(arith.ConstantOp(dense(array))).results[0]

    @contextmanager
    def region(self, block: Block) -> Iterator[Block]:
        """Record into `block` (the body of an `scf` op) for the duration."""
        outer = self.block
        self.block, self.region_depth = block, self.region_depth + 1
        try:
            yield block
        finally:
            self.block, self.region_depth = outer, self.region_depth - 1

    def read_shape(self, value: SSAValue) -> None:
        """Python read the shape of `value`: the program now depends on its sizes."""
        self.shape_reads.append(value)

    def dynamic_shape_read(self, array: Any) -> None:
        """Python read a size that is only known at run time."""
        trace_error(
            "this array's shape has dynamic dims, whose sizes Python cannot read while tracing"
        )

    def concretize(self, array: Any, why: str) -> Any:
        """The concrete value of a traced array, which plain tracing cannot know."""
        trace_error(
            f"{why} needs the value of a traced array, which tracing does not know: "
            "use ops.cond, ops.where or ops.while_loop, or mlc.jit, which splits "
            "the function here"
        )


def _definition(fn: Callable[..., Any] | None) -> Attribute:
    """Where `fn` is defined, as the location of the function traced from it."""
    code = getattr(fn, "__code__", None)
    if code is None:
        return UnknownLoc()
    return FileLineColLoc(StringAttr(code.co_filename), IntAttr(code.co_firstlineno), IntAttr(1))


_active: list[Tracer] = []


@contextmanager
def tracing(tracer: Tracer) -> Iterator[Tracer]:
    _active.append(tracer)
    try:
        yield tracer
    finally:
        _active.pop()


def current() -> Tracer | None:
    return _active[-1] if _active else None
