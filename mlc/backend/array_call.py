"""
One native step from a call's numpy arrays to the compiled function: `mlc_call_arrays`.

After a batch-8 CNN's call has filled the caches with its buffers, each Python step of
the next call runs cold, a few microseconds however little it does; getting an array's
address through ctypes took 7-8 us there, most of the arguments' share. So for a
function whose arguments are all arrays (checked by `mlc.compiler.Signature.check`),
Python hands the tuple of arrays itself to this runtime function, which reads each
array's data pointer, sizes and strides from its `PyArrayObject` (the layout every
numpy extension is compiled against: `data`, `nd`, `dimensions`, `strides` after the
object header), writes the memref descriptors, frees the dropped results' blocks the
frame lists (`mlc.backend.runtime._Kept`), and calls the function's `_mlc_invoke_`
wrapper.

The offsets are checked once per process on stand-in arrays against what numpy reports
(`available`); where they disagree (another interpreter or numpy build) the runtime
keeps its Python path.

The call block (`ctypes.c_int64` words, one per frame): the wrapper's address, the
argument block's address, the number of arrays, the number of blocks to free, the
address of `mlc_free` (`mlc.backend.buffers`) that frees them, then per array its
descriptor's word offset, its rank and log2 of its item size, then the blocks to free
(a slot per result).
"""

import ctypes
import sys
from collections.abc import Sequence
from functools import cache

import numpy as np

from mlc.backend import buffers
from mlc.backend.native import compile_runtime, function_address

TUPLE_ITEMS = 24  # PyTupleObject: refcount, type, size, then the items
ARRAY_DATA, ARRAY_RANK, ARRAY_SIZES, ARRAY_STRIDES = 16, 24, 32, 40  # PyArrayObject_fields

CALL_IR = r"""
define void @mlc_call_arrays(ptr %block, ptr %tuple) {
entry:
  %invoke = load ptr, ptr %block
  %words_at = getelementptr i64, ptr %block, i64 1
  %words = load ptr, ptr %words_at
  %n_at = getelementptr i64, ptr %block, i64 2
  %n = load i64, ptr %n_at
  %frees_at = getelementptr i64, ptr %block, i64 3
  %frees = load i64, ptr %frees_at
  %free_fn_at = getelementptr i64, ptr %block, i64 4
  %free_fn = load ptr, ptr %free_fn_at
  %plan = getelementptr i64, ptr %block, i64 5
  %plan_words = mul i64 %n, 3
  %dropped_list = getelementptr i64, ptr %plan, i64 %plan_words
  br label %free_head
free_head:
  %f = phi i64 [0, %entry], [%f1, %free_body]
  %more_frees = icmp ult i64 %f, %frees
  br i1 %more_frees, label %free_body, label %freed
free_body:
  %dropped_at = getelementptr i64, ptr %dropped_list, i64 %f
  %dropped = load ptr, ptr %dropped_at
  call void %free_fn(ptr %dropped)
  %f1 = add i64 %f, 1
  br label %free_head
freed:
  store i64 0, ptr %frees_at
  br label %head
head:
  %i = phi i64 [0, %freed], [%i1, %next]
  %more = icmp ult i64 %i, %n
  br i1 %more, label %body, label %call
body:
  %entry3 = mul i64 %i, 3
  %at_at = getelementptr i64, ptr %plan, i64 %entry3
  %at = load i64, ptr %at_at
  %rank_at = getelementptr i64, ptr %at_at, i64 1
  %rank = load i64, ptr %rank_at
  %shift_at = getelementptr i64, ptr %at_at, i64 2
  %shift = load i64, ptr %shift_at
  %item_offset = mul i64 %i, 8
  %item_byte = add i64 %item_offset, TUPLE_ITEMS
  %item_at = getelementptr i8, ptr %tuple, i64 %item_byte
  %array = load ptr, ptr %item_at
  %data_at = getelementptr i8, ptr %array, i64 ARRAY_DATA
  %data = load ptr, ptr %data_at
  %sizes_at = getelementptr i8, ptr %array, i64 ARRAY_SIZES
  %sizes = load ptr, ptr %sizes_at
  %strides_at = getelementptr i8, ptr %array, i64 ARRAY_STRIDES
  %strides = load ptr, ptr %strides_at
  %descriptor = getelementptr i64, ptr %words, i64 %at
  store ptr %data, ptr %descriptor
  %aligned_at = getelementptr i64, ptr %descriptor, i64 1
  store ptr %data, ptr %aligned_at
  %offset_at = getelementptr i64, ptr %descriptor, i64 2
  store i64 0, ptr %offset_at
  %sizes_out = getelementptr i64, ptr %descriptor, i64 3
  %strides_out = getelementptr i64, ptr %sizes_out, i64 %rank
  br label %dim_head
dim_head:
  %k = phi i64 [0, %body], [%k1, %dim_body]
  %more_dims = icmp ult i64 %k, %rank
  br i1 %more_dims, label %dim_body, label %next
dim_body:
  %size_in = getelementptr i64, ptr %sizes, i64 %k
  %size = load i64, ptr %size_in
  %size_out = getelementptr i64, ptr %sizes_out, i64 %k
  store i64 %size, ptr %size_out
  %stride_in = getelementptr i64, ptr %strides, i64 %k
  %stride_bytes = load i64, ptr %stride_in
  %stride = ashr i64 %stride_bytes, %shift
  %stride_out = getelementptr i64, ptr %strides_out, i64 %k
  store i64 %stride, ptr %stride_out
  %k1 = add i64 %k, 1
  br label %dim_head
next:
  %i1 = add i64 %i, 1
  br label %head
call:
  call void %invoke(ptr %words)
  ret void
}

define void @mlc_call_nothing(ptr %words) {
entry:
  ret void
}
"""

OFFSETS = {
    "TUPLE_ITEMS": TUPLE_ITEMS,
    "ARRAY_DATA": ARRAY_DATA,
    "ARRAY_SIZES": ARRAY_SIZES,
    "ARRAY_STRIDES": ARRAY_STRIDES,
}
HEADER = 5  # words before the plan: wrapper, argument block, arrays, blocks to free, free
_CALL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.py_object)


class CallBlock:
    """
    One frame's call block for a function of array arguments, each a descriptor at word
    `at` of `words` with a rank and an item size (`plan`), and `results` slots for
    blocks to free before the call.
    """

    def __init__(
        self, invoke: int, words: ctypes.Array, plan: Sequence[tuple[int, int, int]], results: int
    ):
        self.words = (ctypes.c_int64 * (HEADER + 3 * len(plan) + results))()
        free = buffers.runtime().free_address
        self.words[:HEADER] = [invoke, ctypes.addressof(words), len(plan), 0, free]
        for i, (at, rank, itemsize) in enumerate(plan):
            base = HEADER + 3 * i
            self.words[base : base + 3] = [at, rank, itemsize.bit_length() - 1]
        self.dropped = HEADER + 3 * len(plan)  # the first slot of a block to free

    def free_before(self, allocated: int) -> None:
        """Free `allocated` (compiled code's) at the next call, before that code runs."""
        count = self.words[3]
        self.words[self.dropped + count] = allocated
        self.words[3] = count + 1


@cache
def _engine_call() -> tuple[object, int]:
    text = CALL_IR
    for name, value in OFFSETS.items():
        text = text.replace(name, str(value))
    engine = compile_runtime(text)
    return _CALL(function_address(engine, "mlc_call_arrays")), function_address(
        engine, "mlc_call_nothing"
    )


def _fields_hold(arrays: tuple[np.ndarray, ...]) -> bool:
    """Whether the tuple's items and the arrays' data pointers and ranks are at the
    offsets `mlc_call_arrays` reads (read here within each object: no pointer followed)."""
    read = lambda address, kind: kind.from_address(address).value  # noqa: E731
    for i, a in enumerate(arrays):
        if read(id(arrays) + TUPLE_ITEMS + 8 * i, ctypes.c_void_p) != id(a):
            return False
        if read(id(a) + ARRAY_DATA, ctypes.c_void_p) != a.__array_interface__["data"][0]:
            return False
        if read(id(a) + ARRAY_RANK, ctypes.c_int) != a.ndim:
            return False
    return True


def _offsets_hold() -> bool:
    """Whether `mlc_call_arrays` reads what numpy reports, on stand-in arrays of several
    ranks, item sizes and strides (negative ones too)."""
    base = np.arange(2 * 3 * 5, dtype=np.float64).reshape(2, 3, 5)
    arrays = (base, base[:, ::-1, 1:4], np.zeros((), np.int8), np.ones(7, np.float16))
    if sys.implementation.name != "cpython" or not _fields_hold(arrays):
        return False
    sizes = [3 + 2 * a.ndim for a in arrays]
    at = [sum(sizes[:i]) for i in range(len(arrays))]
    words = (ctypes.c_int64 * sum(sizes))()
    plan = [(a_at, a.ndim, a.itemsize) for a_at, a in zip(at, arrays, strict=True)]
    call, nothing = _engine_call()
    block = CallBlock(nothing, words, plan, 0)
    call(ctypes.addressof(block.words), arrays)
    for a, a_at in zip(arrays, at, strict=True):
        data = a.__array_interface__["data"][0]
        strides = [s // a.itemsize for s in a.strides]
        if list(words[a_at : a_at + 3 + 2 * a.ndim]) != [data, data, 0, *a.shape, *strides]:
            return False
    return True


@cache
def native_call() -> object | None:
    """`mlc_call_arrays(block, arrays)` as a ctypes function, or None where this process's
    object layouts are not the ones it reads (the runtime then writes descriptors itself)."""
    try:
        return _engine_call()[0] if _offsets_hold() else None
    except (OSError, RuntimeError):
        return None
