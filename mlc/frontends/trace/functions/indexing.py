"""
`x[...]` on traced arrays: basic indexing as numpy does it, as `ml.slice` + reshape.

Ints select (and drop a dim), slices keep it (any step, negative bounds, clamping),
`...` stands for the untouched dims and `None` inserts a size-1 dim. A traced
integer array indexes the first dim (`ml.gather`). Boolean masks have a
data-dependent shape and are refused with what to use instead.
"""

from typing import Any

from mlc import shapes
from mlc.dialects.ml import SliceOp
from mlc.frontends.trace.array import TracedArray, is_traced
from mlc.frontends.trace.dispatch import method
from mlc.frontends.trace.functions.movement import take
from mlc.frontends.trace.recording import record, reshape_to
from mlc.frontends.trace.tracer import trace_error

INT64_MAX = 2**63 - 1  # a slice bound past either end, clamped by `ml.slice`
INT64_MIN = -(2**63)


@method("__getitem__")
def getitem(x: TracedArray, index: Any) -> TracedArray:
    if is_traced(index):
        if index.dtype.kind == "b":
            trace_error("boolean mask indexing gives a data-dependent shape: use ops.where instead")
        return take(x, index, axis=0)
    entries = _expand(index if isinstance(index, tuple) else (index,), x.ndim)
    starts, ends, steps, out_dims = [], [], [], []
    dim = 0
    for entry in entries:
        if entry is None:
            out_dims.append(1)
            continue
        size = x.raw_shape[dim]
        if isinstance(entry, slice):
            start, end, step = _slice_bounds(entry)
            out_dims.append(shapes.slice_dim(size, start, end, step))
        else:
            start, end, step = _int_bounds(entry, size, dim)
        starts.append(start)
        ends.append(end)
        steps.append(step)
        dim += 1
    sliced = _slice(x, starts, ends, steps)
    if tuple(out_dims) == sliced.raw_shape:
        return sliced
    return reshape_to(sliced, out_dims)


def _expand(index: tuple[Any, ...], rank: int) -> list[Any]:
    """The index with `...` replaced by full slices and missing trailing dims filled."""
    if any(is_traced(i) for i in index):
        trace_error("a traced array may only index alone (x[idx]), not inside a tuple")
    ellipses = sum(1 for i in index if i is Ellipsis)
    if ellipses > 1:
        trace_error("an index can only have a single ellipsis ('...')")
    for entry in index:
        if entry is not None and entry is not Ellipsis and not isinstance(entry, slice | int):
            if not hasattr(entry, "__index__"):
                trace_error(
                    f"only integers, slices, '...' and None index traced arrays, "
                    f"got {type(entry).__name__}"
                )
    used = sum(1 for i in index if i is not None and i is not Ellipsis)
    if used > rank:
        trace_error(f"too many indices for an array of rank {rank}: {used} were given")
    fill = [slice(None)] * (rank - used)
    if ellipses:
        at = next(i for i, e in enumerate(index) if e is Ellipsis)
        return [*index[:at], *fill, *index[at + 1 :]]
    return [*index, *fill]


def _slice_bounds(entry: slice) -> tuple[int, int, int]:
    step = 1 if entry.step is None else _python_int(entry.step)
    if step == 0:
        trace_error("slice step cannot be zero")
    if entry.start is None:
        start = 0 if step > 0 else INT64_MAX
    else:
        start = _python_int(entry.start)
    if entry.stop is None:
        end = INT64_MAX if step > 0 else INT64_MIN
    else:
        end = _python_int(entry.stop)
    return start, end, step


def _python_int(value: Any) -> int:
    if is_traced(value):
        trace_error("slice bounds must be Python integers, not traced arrays")
    return int(value.__index__())


def _int_bounds(entry: Any, size: int, dim: int) -> tuple[int, int, int]:
    i = _python_int(entry)
    if shapes.is_static(size):
        if not -size <= i < size:
            trace_error(f"index {i} is out of bounds for axis {dim} with size {size}")
        i %= size
        return i, i + 1, 1
    end = i + 1 if i < -1 or i >= 0 else INT64_MAX
    return i, end, 1


def _slice(x: TracedArray, starts: list[int], ends: list[int], steps: list[int]) -> TracedArray:
    full = all(
        s == 0 and e >= INT64_MAX and t == 1 for s, e, t in zip(starts, ends, steps, strict=True)
    )
    if full:
        return x
    return record(x.tracer, "indexing", lambda: SliceOp(x.value, starts, ends, steps), (x,))
