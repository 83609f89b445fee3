"""
Call compiled functions on numpy arrays through their `_mlc_invoke_<name>` wrappers.

`convert-to-llvm` gives every public function a wrapper taking one pointer to an array
of pointers: one per argument (to a memref descriptor or to a scalar), then one per
result (where the wrapper writes the result's descriptor or value). This module builds
those descriptors for numpy arrays and turns result descriptors back into arrays.

A call costs a few microseconds of Python, which at batch 1 is a sizeable part of a
small model's run (the CNN's compiled code takes about 0.12 ms): each thread keeps one
block of words per function holding the pointers, descriptors and scalars
(`_Frame`), so a call writes only the arrays' addresses (and their sizes and strides
when they change), and reads the results' descriptors back from it.

Ownership: a memref result is a buffer the compiled code `malloc`ed for the caller
(docs/design/lowering.md, level 3). It becomes a numpy array over a view of the
memory that holds a `_MallocBuffer`; when the last array viewing it dies, its
`__del__` calls the compiled code's `free` on the allocated pointer, exactly once
(`mlc.backend.buffers` keeps large buffers for the next call). Arguments are only
borrowed.

Making that array costs ~2 us, but 40-50 us after a call whose working set evicted the
interpreter's and numpy's state from L2 (a batch-8 CNN): a thread's frame keeps its
last small results (`_Kept`), and a call that finds one dropped by its caller frees its
buffer before the compiled code runs; the code's `malloc` of the same size nearly always
takes that block back, and where the new result's descriptor is the kept one's, the
kept array is returned as it is.

A function of arrays alone is called through `mlc.backend.array_call` instead, which
writes the descriptors from the arrays' own fields and frees the dropped results in one
native step (and, from `call_if_fits`, checks the arguments too), where this process's
object layouts are the ones it reads.

The call goes through a `ctypes.CFUNCTYPE` pointer, which releases the GIL for its
duration, so Python threads can run compiled code in parallel.
"""

import ctypes
import sys
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
)
from xdsl.ir import Attribute

from mlc.backend import buffers
from mlc.backend.array_call import CallBlock, native_call
from mlc.backend.assertions import raise_failure
from mlc.backend.jit import JITModule
from mlc.dtypes import DTYPES

INVOKE_PREFIX = "_mlc_invoke_"  # as mlc.lowering.convert_to_llvm.func names wrappers
REFUSED = object()  # what `CompiledFunction.call_if_fits` returns when it did not call


class RuntimeTypeError(TypeError):
    """An argument that does not fit the compiled function's signature."""


def dtype_of(element: Attribute) -> np.dtype[Any]:
    """The numpy dtype for an MLIR element type; a clear error for ones numpy lacks."""
    if isinstance(element, IndexType):
        return DTYPES["index"]
    if isinstance(element, IntegerType | BFloat16Type | Float16Type | Float32Type | Float64Type):
        name = str(element)
        if name in DTYPES:
            return DTYPES[name]
    raise RuntimeTypeError(f"no numpy dtype for element type {element}")


@dataclass(frozen=True)
class ArgSpec:
    """One argument or result: a memref of `rank` dims, or a scalar when `rank` is None."""

    dtype: np.dtype[Any]
    rank: int | None = None

    @staticmethod
    def of(type_: Attribute) -> "ArgSpec":
        if isinstance(type_, MemRefType):
            return ArgSpec(dtype_of(type_.element_type), type_.get_num_dims())
        return ArgSpec(dtype_of(type_))


def signature(function_type: FunctionType) -> tuple[list[ArgSpec], list[ArgSpec]]:
    """The argument and result specs of a `func.func`'s type (before convert-to-llvm)."""
    return (
        [ArgSpec.of(t) for t in function_type.inputs],
        [ArgSpec.of(t) for t in function_type.outputs],
    )


@cache
def descriptor_struct(rank: int) -> type[ctypes.Structure]:
    """The ctypes layout of `!llvm.struct<(ptr, ptr, i64, array<R x i64>, array<R x i64>)>`."""
    fields: list[tuple[str, Any]] = [
        ("allocated", ctypes.c_void_p),
        ("aligned", ctypes.c_void_p),
        ("offset", ctypes.c_int64),
    ]
    if rank:
        fields += [("sizes", ctypes.c_int64 * rank), ("strides", ctypes.c_int64 * rank)]
    return type(f"MemRefDescriptor{rank}", (ctypes.Structure,), {"_fields_": fields})


class _MallocBuffer:
    """
    Frees a result buffer from the compiled code's `malloc` once, when no array uses it.

    Each result array is made over a view of its memory (`_View`) that holds this
    object, and numpy keeps that view as the array's base, so this lives exactly as long as some
    array uses the memory, and frees it once on death, through the compiled code's
    `free` (`mlc.backend.buffers`, which may keep it for the next call). It holds that
    function, so the allocator outlives every buffer.
    """

    def __init__(self, allocated: int):
        self.allocated = allocated
        self.free = buffers.runtime().free

    def __del__(self) -> None:
        if self.allocated:
            self.free(self.allocated)
            self.allocated = 0


def _check_array(spec: ArgSpec, array: Any, position: int) -> NDArray[Any]:
    """A numpy argument that fits `spec`, made C-contiguous (a copy only where it is not)."""
    if not isinstance(array, np.ndarray):
        raise RuntimeTypeError(
            f"argument {position}: expected a numpy array, got {type(array).__name__}"
        )
    if array.dtype != spec.dtype:
        raise RuntimeTypeError(
            f"argument {position}: expected dtype {spec.dtype}, got {array.dtype}"
        )
    if array.ndim != spec.rank:
        raise RuntimeTypeError(f"argument {position}: expected rank {spec.rank}, got {array.ndim}")
    if array.flags.c_contiguous:
        return array
    return np.require(array, requirements="C")


def array_address(array: NDArray[Any]) -> int:
    """
    The address of a C-contiguous array's first element. Through a ctypes view where
    the array is writable and not empty: about 4x cheaper than `array.ctypes.data`.
    """
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(array))
    except (TypeError, ValueError):  # read-only or empty
        return array.ctypes.data


def _scalar_value(spec: ArgSpec, value: Any) -> Any:
    if value is not None and spec.dtype.kind in "iu" and isinstance(value, float):
        raise RuntimeTypeError(f"expected an integer scalar ({spec.dtype}), got {value!r}")
    return value


def _result_array(
    spec: ArgSpec, described: Sequence[int], owners: dict[int, _MallocBuffer]
) -> NDArray[Any]:
    """
    A numpy array over a result descriptor's buffer (`described`: its words), owning
    (and later freeing) it: one buffer returned twice is still freed once.
    """
    allocated, aligned, offset = described[:3]
    rank = spec.rank or 0
    shape = tuple(described[3 : 3 + rank])
    itemsize = spec.dtype.itemsize
    owner = owners.get(allocated)
    if owner is None:
        owner = owners[allocated] = _MallocBuffer(allocated)
    if 0 in shape:
        return np.empty(shape, spec.dtype)
    view = _View()
    view.owner = owner
    view.__array_interface__ = {
        "data": (aligned + offset * itemsize, False),
        "shape": shape,
        "strides": tuple(s * itemsize for s in described[3 + rank : 3 + 2 * rank]),
        "typestr": spec.dtype.str,
        "version": 3,
    }
    array = np.asarray(view)
    # ml_dtypes' bfloat16 has no typestr of its own ("<V2"): reinterpret the same bytes
    return array if array.dtype == spec.dtype else array.view(spec.dtype)


class _View:
    """
    A result's memory as numpy reads it (`__array_interface__`: address, shape and
    strides, which may be negative), holding the buffer's owner: numpy keeps it as the
    array's base, so the owner lives as long as the array (cheaper than a ctypes view
    of the memory, whose extent would have to be worked out first).
    """

    __slots__ = ("__array_interface__", "owner")


class _Kept:
    """
    A result array the frame holds after returning it, to hand it out again: only
    once nothing else refers to it, to its memory (`_View`) or to its owner, and it
    still has the shape, strides, dtype and writability it was made with.
    """

    __slots__ = ("array", "described", "layout")

    def __init__(self, array: NDArray[Any], described: list[int]):
        self.array = array
        self.described = described
        self.layout = (array.shape, array.strides, array.dtype)

    def references(self) -> tuple[int, int, int]:
        """`sys.getrefcount` of the array, its `_View` and the view's owner."""
        array = self.array
        view = array.base
        owner = view.owner
        return sys.getrefcount(array), sys.getrefcount(view), sys.getrefcount(owner)

    def dropped(self) -> int:
        """The buffer's address if the caller dropped the array (its memory is then
        dead) as it was made, else 0."""
        if self.references() != _UNREFERENCED or weakref.getweakrefcount(self.array):
            return 0
        array = self.array
        if (array.shape, array.strides, array.dtype) != self.layout:
            return 0
        if not array.flags.writeable:
            return 0
        return array.base.owner.allocated


def _unreferenced() -> tuple[int, int, int]:
    """
    What `_Kept.references` counts for a kept array that nothing else refers to: the
    frame's and the interpreter's own references, measured on a stand-in rather than
    assumed (how the interpreter counts its locals and arguments varies by version).
    """
    backing = np.zeros(1, np.float32)
    view = _View()
    view.owner = _MallocBuffer.__new__(_MallocBuffer)  # no memory of its own
    view.owner.allocated = 0
    view.__array_interface__ = backing.__array_interface__
    stand_in = _Kept(np.asarray(view), [])
    del view
    return stand_in.references()


_UNREFERENCED = _unreferenced()


class _Frame:
    """
    One thread's argument block for one function, in one ctypes array of 8-byte words:
    the wrapper's pointer slots (written once), then a memref descriptor for each
    array, a word for each scalar. A call writes only what changed: an array's address
    always, its sizes and strides when they differ from the last call's.
    """

    def __init__(self, specs: Sequence[ArgSpec]):
        self.at: list[int] = []
        words = len(specs)
        for spec in specs:
            self.at.append(words)
            words += 1 if spec.rank is None else 3 + 2 * spec.rank
        self.words = (ctypes.c_int64 * words)()
        base = ctypes.addressof(self.words)
        for slot, at in enumerate(self.at):
            self.words[slot] = base + 8 * at
        as_bytes = np.frombuffer(self.words, np.uint8)
        self.scalars = {
            n: as_bytes[8 * at : 8 * at + spec.dtype.itemsize].view(spec.dtype)
            for n, (spec, at) in enumerate(zip(specs, self.at, strict=True))
            if spec.rank is None
        }
        self.layouts: list[object] = [None] * len(specs)
        self.kept: dict[int, _Kept] = {}  # by the result's position among `specs`
        self.block: CallBlock | None = None  # for `mlc_call_arrays`, where it is used

    def free_dropped(self) -> None:
        """Before a call: free the kept results' buffers their callers dropped (through
        the call block, natively, where there is one), and stop keeping the others."""
        for j, entry in list(self.kept.items()):
            allocated = entry.dropped()
            if not allocated:
                del self.kept[j]
                continue
            owner = entry.array.base.owner
            if self.block is None:
                owner.free(allocated)
            else:
                self.block.free_before(allocated)
            owner.allocated = 0
            self.words[self.at[j]] = 0  # the stale descriptor no longer names the block

    def result(self, j: int, spec: ArgSpec, owners: dict[int, _MallocBuffer]) -> NDArray[Any]:
        """
        After a call: the array of memref result `j` (position among `specs`), the kept
        one where the compiled code returned the buffer it had (and freed before the
        call), else a new one; kept for the next call if small.
        """
        at = self.at[j]
        described = self.words[at : at + 3 + 2 * (spec.rank or 0)]
        entry = self.kept.pop(j, None)
        if entry is not None and described == entry.described:
            owner = entry.array.base.owner
            owner.allocated = described[0]
            owners[owner.allocated] = owner
            array = entry.array
        else:
            array = _result_array(spec, described, owners)
            entry = None
        if array.nbytes < buffers.MIN_CACHED and type(array.base) is _View:
            self.kept[j] = entry or _Kept(array, described)
        return array


class CompiledFunction:
    """A compiled function called on numpy arrays and Python scalars."""

    def __init__(
        self,
        jit: JITModule,
        name: str,
        args: Sequence[ArgSpec],
        results: Sequence[ArgSpec],
        shapes: Sequence[Sequence[int]] | None = None,
    ):
        self.jit = jit  # the machine code lives as long as the engine
        self.name = name
        self.args = list(args)
        self.results = list(results)
        prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        self._address = jit.address(INVOKE_PREFIX + name)
        self._invoke = prototype(self._address)
        self._local = threading.local()
        # The arguments' static shapes (-1: dynamic), for `call_if_fits`'s native check.
        self.shapes = [tuple(s) for s in shapes or [[-1] * (a.rank or 0) for a in self.args]]
        arrays_only = bool(self.args) and all(spec.rank is not None for spec in self.args)
        self._call_arrays = native_call() if arrays_only else None

    def _frame(self) -> _Frame:
        frame = getattr(self._local, "frame", None)
        if frame is None:
            frame = self._local.frame = _Frame([*self.args, *self.results])
            if self._call_arrays is not None:
                plan = [
                    (at, s.dtype, shape) for at, s, shape in zip(frame.at, self.args, self.shapes)
                ]
                frame.block = CallBlock(self._address, frame.words, plan, len(self.results))
        return frame

    def __call__(self, *values: Any) -> Any:
        """One result as is, several as a tuple, none as None; a `RuntimeTypeError` for
        an argument that does not fit (arrays not C-contiguous are copied)."""
        if len(values) != len(self.args):
            raise RuntimeTypeError(
                f"'{self.name}' takes {len(self.args)} arguments, got {len(values)}"
            )
        checked = [
            _scalar_value(spec, value) if spec.rank is None else _check_array(spec, value, i)
            for i, (spec, value) in enumerate(zip(self.args, values, strict=True))
        ]
        return self.unchecked(*checked)

    @property
    def checks_natively(self) -> bool:
        """Whether `call_if_fits` can call (else it always refuses)."""
        return self._call_arrays is not None

    def call_if_fits(self, values: tuple[Any, ...]) -> Any:
        """
        The call, where `values` are arrays that fit the specs as they are, checked by
        `mlc_call_arrays` itself (`mlc.backend.array_call`: exact ndarrays of the specs'
        own dtype objects, ranks and static sizes, C-contiguous); `REFUSED`, without
        calling, for anything else.
        """
        if self._call_arrays is None:
            return REFUSED
        frame = self._frame()
        frame.free_dropped()
        if self._call_arrays(frame.block.address, values, 1):
            return REFUSED
        return self._results(frame)

    def unchecked(self, *values: Any) -> Any:
        """
        The call, for arguments that fit the specs as they are: C-contiguous arrays of
        the spec's dtype and rank, and scalars, as `mlc.compiler.Signature.check` leaves
        them, so that a compiled function does not check its arguments twice.
        """
        frame = self._frame()
        block = frame.block
        if block is not None:  # arrays only: `mlc.backend.array_call`
            frame.free_dropped()
            self._call_arrays(block.address, values, 0)
            return self._results(frame)
        words = frame.words
        for i, (spec, value) in enumerate(zip(self.args, values, strict=True)):
            at = frame.at[i]
            if spec.rank is None:
                frame.scalars[i][0] = value
                continue
            words[at] = words[at + 1] = array_address(value)
            layout = (value.shape, value.strides)
            if layout != frame.layouts[i]:
                frame.layouts[i] = layout
                strides = [stride // spec.dtype.itemsize for stride in value.strides]
                words[at + 2 : at + 3 + 2 * spec.rank] = [0, *value.shape, *strides]
        frame.free_dropped()
        self._invoke(frame.words)  # the caller holds the arguments until it returns
        return self._results(frame)

    def _results(self, frame: _Frame) -> Any:
        """The call's results, read back from `frame`; raises a check that failed in it."""
        owners: dict[int, _MallocBuffer] = {}
        results: list[Any] = []
        for j, spec in enumerate(self.results, len(self.args)):
            if spec.rank is None:
                results.append(frame.scalars[j][0])
            else:
                results.append(frame.result(j, spec, owners))
        raise_failure()  # after the results own their buffers, which the error frees
        if not results:
            return None
        return results[0] if len(results) == 1 else tuple(results)


def compiled_function(jit: JITModule, name: str, function_type: FunctionType) -> CompiledFunction:
    """Function `name` of `jit`, whose `func.func` type was `function_type`."""
    args, results = signature(function_type)
    shapes = [
        [max(size, -1) for size in t.get_shape()] if isinstance(t, MemRefType) else []
        for t in function_type.inputs
    ]  # a dynamic size as -1 (a memref's is the most negative i64)
    return CompiledFunction(jit, name, args, results, shapes)
