"""
One native step from a call's numpy arrays to the compiled function: `mlc_call_arrays`.

After a batch-8 CNN's call has filled the caches with its buffers, each Python step of
the next call runs cold, a few microseconds however little it does: the argument check
took 9-10 us there, getting an array's address through ctypes 7-8 us. So for a function
whose arguments are all arrays, Python hands the tuple of arrays itself to this runtime
function, which reads each array's fields from its `PyArrayObject` (the layout every
numpy extension is compiled against: `data`, `nd`, `dimensions`, `strides`, `descr`,
`flags` after the object header), writes the memref descriptors, frees the dropped
results' blocks the frame lists (`mlc.backend.runtime._Kept`), and calls the function's
`_mlc_invoke_` wrapper.

With `check` set it first checks what `mlc.compiler.Signature.check` would let through
unchanged: a tuple of the right length of exact `numpy.ndarray`s, each with the dtype
object of its spec (numpy's own, one per builtin type), its rank, C-contiguous, and the
static sizes. Anything else (a dtype equal but not numpy's own, a copy needed, a wrong
argument) returns 1 without calling, and the caller takes the full check, which converts
or says what is wrong.

The offsets are checked once per process on stand-in objects against what Python and
numpy report (`native_call`); where they disagree (another interpreter or numpy build)
the runtime keeps its Python path.

The call block (`ctypes.c_int64` words, one per frame): the wrapper's address, the
argument block's address, the number of arrays, the number of blocks to free, the
address of `mlc_free` (`mlc.backend.buffers`) that frees them, the address of the
`numpy.ndarray` type, the word where the blocks to free start; then per array its
descriptor's word offset, its rank, log2 of its item size, the address of its dtype and
the word where its static sizes start (-1 for a dynamic one); then those sizes, then the
blocks to free (a slot per result).
"""

import ctypes
import sys
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np

from mlc.backend import buffers
from mlc.backend.native import compile_runtime, function_address

TUPLE_SIZE, TUPLE_ITEMS = 16, 24  # PyTupleObject: refcount, type, size, then the items
OBJECT_TYPE = 8
ARRAY_DATA, ARRAY_RANK, ARRAY_SIZES, ARRAY_STRIDES = 16, 24, 32, 40  # PyArrayObject_fields
ARRAY_DESCR, ARRAY_FLAGS = 56, 64
C_CONTIGUOUS = 1  # NPY_ARRAY_C_CONTIGUOUS
DYNAMIC = -1

CALL_IR = r"""
define i64 @mlc_call_arrays(ptr %block, ptr %tuple, i64 %check) {
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
  %ndarray_at = getelementptr i64, ptr %block, i64 5
  %ndarray = load ptr, ptr %ndarray_at
  %slots_at = getelementptr i64, ptr %block, i64 6
  %slots = load i64, ptr %slots_at
  %plan = getelementptr i64, ptr %block, i64 HEADER
  br label %free_head
free_head:
  %f = phi i64 [0, %entry], [%f1, %free_body]
  %more_frees = icmp ult i64 %f, %frees
  br i1 %more_frees, label %free_body, label %freed
free_body:
  %slot = add i64 %f, %slots
  %dropped_at = getelementptr i64, ptr %block, i64 %slot
  %dropped = load ptr, ptr %dropped_at
  call void %free_fn(ptr %dropped)
  %f1 = add i64 %f, 1
  br label %free_head
freed:
  store i64 0, ptr %frees_at
  %checking = icmp ne i64 %check, 0
  br i1 %checking, label %check_count, label %head
check_count:
  %count_at = getelementptr i8, ptr %tuple, i64 TUPLE_SIZE
  %count = load i64, ptr %count_at
  %count_ok = icmp eq i64 %count, %n
  br i1 %count_ok, label %check_head, label %refuse
check_head:
  %c = phi i64 [0, %check_count], [%c1, %check_next]
  %more_checks = icmp ult i64 %c, %n
  br i1 %more_checks, label %check_body, label %head
check_body:
  %c_entry = mul i64 %c, 5
  %c_at = getelementptr i64, ptr %plan, i64 %c_entry
  %c_rank_at = getelementptr i64, ptr %c_at, i64 1
  %c_rank = load i64, ptr %c_rank_at
  %c_descr_at = getelementptr i64, ptr %c_at, i64 3
  %c_descr = load ptr, ptr %c_descr_at
  %c_shape_at = getelementptr i64, ptr %c_at, i64 4
  %c_shape = load i64, ptr %c_shape_at
  %c_item_offset = mul i64 %c, 8
  %c_item_byte = add i64 %c_item_offset, TUPLE_ITEMS
  %c_item_at = getelementptr i8, ptr %tuple, i64 %c_item_byte
  %c_array = load ptr, ptr %c_item_at
  %type_at = getelementptr i8, ptr %c_array, i64 OBJECT_TYPE
  %type = load ptr, ptr %type_at
  %is_array = icmp eq ptr %type, %ndarray
  br i1 %is_array, label %check_fields, label %refuse
check_fields:
  %descr_at = getelementptr i8, ptr %c_array, i64 ARRAY_DESCR
  %descr = load ptr, ptr %descr_at
  %descr_ok = icmp eq ptr %descr, %c_descr
  %nd_at = getelementptr i8, ptr %c_array, i64 ARRAY_RANK
  %nd32 = load i32, ptr %nd_at
  %nd = sext i32 %nd32 to i64
  %rank_ok = icmp eq i64 %nd, %c_rank
  %flags_at = getelementptr i8, ptr %c_array, i64 ARRAY_FLAGS
  %flags = load i32, ptr %flags_at
  %contiguous_bit = and i32 %flags, C_CONTIGUOUS
  %contiguous = icmp ne i32 %contiguous_bit, 0
  %fields_ok1 = and i1 %descr_ok, %rank_ok
  %fields_ok = and i1 %fields_ok1, %contiguous
  br i1 %fields_ok, label %dims_start, label %refuse
dims_start:
  %c_sizes_at = getelementptr i8, ptr %c_array, i64 ARRAY_SIZES
  %c_sizes = load ptr, ptr %c_sizes_at
  %wanted = getelementptr i64, ptr %block, i64 %c_shape
  br label %dims_head
dims_head:
  %d = phi i64 [0, %dims_start], [%d1, %dims_body]
  %more_dims_c = icmp ult i64 %d, %c_rank
  br i1 %more_dims_c, label %dims_body, label %check_next
dims_body:
  %want_at = getelementptr i64, ptr %wanted, i64 %d
  %want = load i64, ptr %want_at
  %got_at = getelementptr i64, ptr %c_sizes, i64 %d
  %got = load i64, ptr %got_at
  %any = icmp eq i64 %want, DYNAMIC
  %same = icmp eq i64 %want, %got
  %size_ok = or i1 %any, %same
  %d1 = add i64 %d, 1
  br i1 %size_ok, label %dims_head, label %refuse
check_next:
  %c1 = add i64 %c, 1
  br label %check_head
refuse:
  ret i64 1
head:
  %i = phi i64 [0, %freed], [0, %check_head], [%i1, %next]
  %more = icmp ult i64 %i, %n
  br i1 %more, label %body, label %call
body:
  %entry5 = mul i64 %i, 5
  %at_at = getelementptr i64, ptr %plan, i64 %entry5
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
  ret i64 0
}

define void @mlc_call_nothing(ptr %words) {
entry:
  ret void
}
"""

HEADER = 7  # words before the plan (module docstring)
_CALL = ctypes.CFUNCTYPE(ctypes.c_int64, ctypes.c_void_p, ctypes.py_object, ctypes.c_int64)


class CallBlock:
    """
    One frame's call block for a function of arrays: each argument's descriptor at word
    `at` of `words`, with its dtype and static shape (`DYNAMIC` sizes), and `results`
    slots for blocks to free before the call.
    """

    def __init__(
        self,
        invoke: int,
        words: ctypes.Array,
        arrays: Sequence[tuple[int, np.dtype, Sequence[int]]],
        results: int,
    ):
        shapes = HEADER + 5 * len(arrays)
        self.dropped = shapes + sum(len(shape) for _, _, shape in arrays)
        self.words = (ctypes.c_int64 * (self.dropped + results))()
        self.address = ctypes.addressof(self.words)
        free = buffers.runtime().free_address
        header = [invoke, ctypes.addressof(words), len(arrays), 0, free, id(np.ndarray)]
        self.words[:HEADER] = [*header, self.dropped]
        for i, (at, dtype, shape) in enumerate(arrays):
            entry = HEADER + 5 * i
            shift = dtype.itemsize.bit_length() - 1
            self.words[entry : entry + 5] = [at, len(shape), shift, id(dtype), shapes]
            self.words[shapes : shapes + len(shape)] = list(shape)
            shapes += len(shape)

    def free_before(self, allocated: int) -> None:
        """Free `allocated` (compiled code's) at the next call, before that code runs."""
        count = self.words[3]
        self.words[self.dropped + count] = allocated
        self.words[3] = count + 1


OFFSETS = {
    "HEADER": HEADER,
    "TUPLE_SIZE": TUPLE_SIZE,
    "TUPLE_ITEMS": TUPLE_ITEMS,
    "OBJECT_TYPE": OBJECT_TYPE,
    "ARRAY_DATA": ARRAY_DATA,
    "ARRAY_RANK": ARRAY_RANK,
    "ARRAY_SIZES": ARRAY_SIZES,
    "ARRAY_STRIDES": ARRAY_STRIDES,
    "ARRAY_DESCR": ARRAY_DESCR,
    "ARRAY_FLAGS": ARRAY_FLAGS,
    "C_CONTIGUOUS": C_CONTIGUOUS,
    "DYNAMIC": DYNAMIC,
}


@cache
def _engine_call() -> tuple[Any, int]:
    text = CALL_IR
    for name, value in OFFSETS.items():
        text = text.replace(name, str(value))
    engine = compile_runtime(text)
    call = _CALL(function_address(engine, "mlc_call_arrays"))
    return call, function_address(engine, "mlc_call_nothing")


def _fields_hold(arrays: tuple[np.ndarray, ...]) -> bool:
    """Whether the tuple's size and items and the arrays' type, data pointer, rank, dtype
    and contiguity are at the offsets `mlc_call_arrays` reads (read here within each
    object: no pointer followed)."""
    read = lambda address, kind: kind.from_address(address).value  # noqa: E731
    if read(id(arrays) + TUPLE_SIZE, ctypes.c_int64) != len(arrays):
        return False
    for i, a in enumerate(arrays):
        fields = [
            (id(arrays) + TUPLE_ITEMS + 8 * i, ctypes.c_void_p, id(a)),
            (id(a) + OBJECT_TYPE, ctypes.c_void_p, id(type(a))),
            (id(a) + ARRAY_DATA, ctypes.c_void_p, a.__array_interface__["data"][0]),
            (id(a) + ARRAY_RANK, ctypes.c_int, a.ndim),
            (id(a) + ARRAY_DESCR, ctypes.c_void_p, id(a.dtype)),
        ]
        if any(read(address, kind) != value for address, kind, value in fields):
            return False
        if bool(read(id(a) + ARRAY_FLAGS, ctypes.c_int) & C_CONTIGUOUS) != a.flags.c_contiguous:
            return False
    return True


def _offsets_hold() -> bool:
    """Whether `mlc_call_arrays` reads and checks what numpy reports, on stand-in arrays
    of several ranks, item sizes and strides (negative ones too)."""
    base = np.arange(2 * 3 * 5, dtype=np.float64).reshape(2, 3, 5)
    arrays = (base, base[:, ::-1, 1:4], np.zeros((), np.int8), np.ones(7, np.float16))
    if sys.implementation.name != "cpython" or not _fields_hold(arrays):
        return False
    sizes = [3 + 2 * a.ndim for a in arrays]
    at = [sum(sizes[:i]) for i in range(len(arrays))]
    words = (ctypes.c_int64 * sum(sizes))()
    plan = [(a_at, a.dtype, a.shape) for a_at, a in zip(at, arrays, strict=True)]
    call, nothing = _engine_call()
    block = CallBlock(nothing, words, plan, 0)
    if call(block.address, arrays, 1) != 1:  # the strided view is refused
        return False
    if call(block.address, arrays, 0) != 0:
        return False
    for a, a_at in zip(arrays, at, strict=True):
        data = a.__array_interface__["data"][0]
        strides = [s // a.itemsize for s in a.strides]
        if list(words[a_at : a_at + 3 + 2 * a.ndim]) != [data, data, 0, *a.shape, *strides]:
            return False
    contiguous = (base, np.zeros((), np.int8))
    block = CallBlock(
        nothing, words, [(0, base.dtype, (DYNAMIC, 3, 5)), (13, np.dtype(np.int8), ())], 0
    )
    return call(block.address, contiguous, 1) == 0 and call(block.address, arrays[:2], 1) == 1


@cache
def native_call() -> Any:
    """`mlc_call_arrays(block, arrays, check)` as a ctypes function, or None where this
    process's object layouts are not the ones it reads (the runtime then writes the
    descriptors itself)."""
    try:
        return _engine_call()[0] if _offsets_hold() else None
    except (OSError, RuntimeError):
        return None
