"""
Call compiled functions on numpy arrays through their `_mlc_invoke_<name>` wrappers.

`convert-to-llvm` gives every public function a wrapper taking one pointer to an array
of pointers: one per argument (to a memref descriptor or to a scalar), then one per
result (where the wrapper writes the result's descriptor or value). This module builds
those descriptors for numpy arrays and turns result descriptors back into arrays.

Ownership: a memref result is a buffer the compiled code `malloc`ed for the caller
(docs/design/lowering.md, level 3). It becomes a numpy array whose base is a
`_MallocBuffer`; when the last array viewing it dies, the buffer's `__del__` calls the
compiled code's `free` on the allocated pointer, exactly once (`mlc.backend.buffers`
keeps large buffers for the next call). Arguments are only borrowed.

The call goes through a `ctypes.CFUNCTYPE` pointer, which releases the GIL for its
duration, so Python threads can run compiled code in parallel.
"""

import ctypes
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
from mlc.backend.assertions import raise_failure
from mlc.backend.jit import JITModule
from mlc.dtypes import DTYPES

INVOKE_PREFIX = "_mlc_invoke_"  # as mlc.lowering.convert_to_llvm.func names wrappers


class RuntimeTypeError(TypeError):
    """An argument that does not fit the compiled function's signature."""


def dtype_of(element: Attribute) -> np.dtype[Any]:
    """The numpy dtype for an MLIR element type; a clear error for ones numpy lacks."""
    if isinstance(element, BFloat16Type):
        raise RuntimeTypeError("bf16 has no numpy dtype: cast to f32 before calling")
    if isinstance(element, IndexType):
        return DTYPES["index"]
    if isinstance(element, IntegerType | Float16Type | Float32Type | Float64Type):
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
    A result buffer from the compiled code's `malloc`, exposed to numpy.

    numpy keeps the object behind `__array_interface__` as the array's base, so this
    lives exactly as long as some array uses the memory, and frees it once on death,
    through the compiled code's `free` (`mlc.backend.buffers`, which may keep it for
    the next call). It holds that function, so the allocator outlives every buffer.
    """

    def __init__(self, allocated: int, interface: dict[str, Any]):
        self.allocated = allocated
        self.__array_interface__ = interface
        self.free = buffers.runtime().free

    def __del__(self) -> None:
        if self.allocated:
            self.free(self.allocated)
            self.allocated = 0


def _scalar_storage(spec: ArgSpec, value: Any) -> Any:
    """One-element numpy storage for a scalar argument or result (its address is passed)."""
    if value is not None and spec.dtype.kind in "iu" and isinstance(value, float):
        raise RuntimeTypeError(f"expected an integer scalar ({spec.dtype}), got {value!r}")
    storage = np.zeros(1, spec.dtype)
    if value is not None:
        storage[0] = value
    return storage


def _descriptor_for(
    spec: ArgSpec, array: Any, position: int
) -> tuple[ctypes.Structure, NDArray[Any]]:
    """A numpy argument's descriptor, and the (contiguous) array it points into."""
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
    array = np.require(array, requirements="C")  # no copy when already C-contiguous
    descriptor = descriptor_struct(array.ndim)()
    descriptor.allocated = descriptor.aligned = array.ctypes.data
    descriptor.offset = 0
    if array.ndim:
        descriptor.sizes[:] = array.shape
        descriptor.strides[:] = [stride // array.itemsize for stride in array.strides]
    return descriptor, array


def _array_from(spec: ArgSpec, descriptor: Any, owners: dict[int, _MallocBuffer]) -> NDArray[Any]:
    """A numpy array over a result descriptor's buffer, owning (and later freeing) it."""
    rank = spec.rank or 0
    shape = tuple(descriptor.sizes) if rank else ()
    strides = tuple(s * spec.dtype.itemsize for s in descriptor.strides) if rank else ()
    address = (descriptor.aligned or 0) + descriptor.offset * spec.dtype.itemsize
    interface = {
        "version": 3,
        "shape": shape,
        "typestr": spec.dtype.str,
        "data": (address, False),
        "strides": strides,
    }
    allocated = descriptor.allocated or 0
    owner = owners.get(allocated)  # one buffer returned twice is still freed once
    if owner is None:
        owner = owners[allocated] = _MallocBuffer(allocated, interface)
        return np.asarray(owner)
    return np.asarray(_View(owner, interface))


class _View:
    """A second array interface onto a buffer another `_MallocBuffer` owns."""

    def __init__(self, owner: _MallocBuffer, interface: dict[str, Any]):
        self.owner = owner
        self.__array_interface__ = interface


class CompiledFunction:
    """A compiled function called on numpy arrays and Python scalars."""

    def __init__(
        self, jit: JITModule, name: str, args: Sequence[ArgSpec], results: Sequence[ArgSpec]
    ):
        self.jit = jit  # the machine code lives as long as the engine
        self.name = name
        self.args = list(args)
        self.results = list(results)
        prototype = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
        self._invoke = prototype(jit.address(INVOKE_PREFIX + name))

    def __call__(self, *values: Any) -> Any:
        """One result as is, several as a tuple, none as None."""
        if len(values) != len(self.args):
            raise RuntimeTypeError(
                f"'{self.name}' takes {len(self.args)} arguments, got {len(values)}"
            )
        keep: list[Any] = []  # everything the pointers point into, alive until the call ends
        pointers = (ctypes.c_void_p * (len(self.args) + len(self.results)))()
        for i, (spec, value) in enumerate(zip(self.args, values, strict=True)):
            if spec.rank is None:
                storage = _scalar_storage(spec, value)
                pointers[i] = storage.ctypes.data
            else:
                storage = _descriptor_for(spec, value, i)
                pointers[i] = ctypes.addressof(storage[0])
            keep.append(storage)
        outputs: list[Any] = []
        for j, spec in enumerate(self.results):
            out = (
                _scalar_storage(spec, None) if spec.rank is None else descriptor_struct(spec.rank)()
            )
            address = out.ctypes.data if spec.rank is None else ctypes.addressof(out)
            pointers[len(self.args) + j] = address
            outputs.append(out)
        self._invoke(pointers)
        del keep
        owners: dict[int, _MallocBuffer] = {}
        results = [
            out[0] if spec.rank is None else _array_from(spec, out, owners)
            for spec, out in zip(self.results, outputs, strict=True)
        ]
        raise_failure()  # after the results own their buffers, which the error frees
        if not results:
            return None
        return results[0] if len(results) == 1 else tuple(results)


def compiled_function(jit: JITModule, name: str, function_type: FunctionType) -> CompiledFunction:
    """Function `name` of `jit`, whose `func.func` type was `function_type`."""
    args, results = signature(function_type)
    return CompiledFunction(jit, name, args, results)
