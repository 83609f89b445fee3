"""
Large constants as `dense_resource` handles: weights stay out of the ops and LLVM IR.

A frontend turns a constant into an attribute with `elements_attr`. Small ones (at most
`INLINE_LIMIT` elements) are inlined as `dense<...>`, so folding and printing see their
values. Larger ones become `dense_resource<name> : tensor<...>`, the bytes kept here in
a process-wide store keyed by the handle; the handle ends in a digest of the bytes, so
equal IR text means equal data (the compile cache hashes printed IR) and two modules
can never disagree on what a handle holds:

    %w = arith.constant dense_resource<fc1.weight_3f9c2a1b> : tensor<1024x784xf32>

`bufferize` makes such a constant a `memref.global` with the same handle as its value;
`convert-to-llvm` declares it as an external LLVM global with no initialiser, and the
JIT binds that symbol to the stored bytes (`symbol_name`, `lookup`). So a model's
weights are never parsed by LLVM, and shared rather than copied.

MLIR text may carry a resource's bytes itself, in the file's `dialect_resources`
section. `import_blobs` registers those when the text is parsed, renaming each handle
to its digest form, so the rule "equal IR text means equal data" holds for them too;
`blobs_section` prints that section back (`mlc-opt`'s output), so a file keeps its
weights through a round trip.
"""

import hashlib
import re
from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation

from mlc.dtypes import DTYPES, element_type_of_dtype

INLINE_LIMIT = 256  # elements; larger constants become resources
ALIGNMENT = 64  # bytes; as `memref.global`'s (bufferize) and the declared LLVM global's
PREFIX = "__resource_"  # of the LLVM symbols of resources

_store: dict[str, np.ndarray] = {}


def elements_attr(
    array: np.ndarray, name: str = "", inline_limit: int = INLINE_LIMIT
) -> DenseIntOrFPElementsAttr | DenseResourceAttr:
    """The attribute of an `arith.constant` holding `array` (see the module docstring)."""
    data = np.require(array, requirements="C")  # keeps rank 0, unlike ascontiguousarray
    type_ = TensorType(element_type_of_dtype(data.dtype), data.shape)
    if data.size <= inline_limit:
        return DenseIntOrFPElementsAttr(type_, BytesAttr(data.tobytes()))  # pyright: ignore[reportArgumentType]
    return DenseResourceAttr.from_params(register(data, name), type_)


def register(array: np.ndarray, name: str = "") -> str:
    """Store `array` (read-only, contiguous) under a handle made of `name` and its digest."""
    data = np.require(array, requirements="C")  # keeps rank 0, unlike ascontiguousarray
    digest = hashlib.blake2b(data.tobytes(), digest_size=8)
    digest.update(f"{data.dtype.str}{data.shape}".encode())
    stem = re.sub(r"[^\w.]", "_", name)
    suffix = f"_{digest.hexdigest()}"
    # A handle of this form already (printed IR parsed again) stays as it is.
    handle = stem if stem.endswith(suffix) else f"{stem[:48] or 'blob'}{suffix}"
    if handle not in _store:
        stored = _aligned_copy(data)
        stored.setflags(write=False)
        _store[handle] = stored
    return handle


def restore(handle: str, array: np.ndarray) -> None:
    """Store `array` under a `handle` that `register` made (in an earlier process: the
    compile cache keeps the constants a program reads, so that a hit needs no frontend).
    A read-only, contiguous, aligned array (as the cache reads them) is kept, not copied."""
    if handle not in _store:
        adopt = (
            not array.flags.writeable
            and array.flags.c_contiguous
            and array.ctypes.data % ALIGNMENT == 0
        )
        stored = array if adopt else _aligned_copy(array)
        stored.setflags(write=False)
        _store[handle] = stored


def _aligned_copy(data: np.ndarray) -> np.ndarray:
    """
    `data` in a buffer aligned to `ALIGNMENT` bytes.

    Compiled code declares a resource's global with that alignment (as every
    `memref.global`), so LLVM may use aligned vector loads on it; numpy only promises
    16 bytes, and an aligned load from a 16-byte address faults.
    """
    raw = np.empty(data.nbytes + ALIGNMENT, dtype=np.uint8)
    start = -raw.ctypes.data % ALIGNMENT
    aligned = raw[start : start + data.nbytes].view(data.dtype).reshape(data.shape)
    aligned[...] = data
    return aligned


def lookup(handle: str) -> np.ndarray | None:
    """The array a handle stands for, if this process holds it."""
    return _store.get(handle)


def stored() -> list[tuple[str, np.ndarray]]:
    """Every handle this process holds, with its array."""
    return list(_store.items())


def symbol_name(handle: str) -> str:
    """The LLVM symbol of a resource's global."""
    return f"{PREFIX}{handle}"


def _resource_attrs(module: ModuleOp):
    """(op, attribute dict, name, attribute) of every `dense_resource` in `module`."""
    for op in module.walk():
        for attrs in (op.properties, op.attributes):
            for name, attr in attrs.items():
                if isinstance(attr, DenseResourceAttr):
                    yield op, attrs, name, attr


def _decode_blob(blob: str, type_: Attribute) -> np.ndarray:
    """An MLIR blob (`0x`, a 4-byte alignment, then the data, in hex) as an array."""
    assert isinstance(type_, TensorType)
    element = str(type_.element_type)
    if element not in DTYPES:
        raise ValueError(f"element type {element} has no numpy dtype")
    data = bytes.fromhex(blob.removeprefix("0x"))[4:]
    dtype, shape = DTYPES[element], tuple(type_.get_shape())
    expected = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if len(data) != expected:
        raise ValueError(f"holds {len(data)} bytes, its type {type_} needs {expected}")
    return np.frombuffer(data, dtype=dtype).reshape(shape)


def import_blobs(module: ModuleOp, blob_of: Callable[[str], str | None]) -> None:
    """
    Register the resource blobs of parsed text (`blob_of(handle)`: the hex string of
    the file's `dialect_resources` section) and rename their handles in `module` to
    `register`'s. Raises ValueError, naming the handle, for a blob that does not match
    its type.
    """
    renamed: dict[str, str] = {}
    for _, attrs, name, attr in list(_resource_attrs(module)):
        handle = attr.resource_handle.data
        if handle not in renamed:
            renamed[handle] = handle
            if blob := blob_of(handle):
                try:
                    array = _decode_blob(blob, attr.type)
                except ValueError as error:
                    raise ValueError(f"dense_resource<{handle}>: {error}") from None
                renamed[handle] = register(array, handle)
        if renamed[handle] != handle:
            attrs[name] = DenseResourceAttr.from_params(renamed[handle], attr.type)


def encode_blob(array: np.ndarray) -> str:
    """An array as an MLIR blob: `0x`, its alignment as 4 little-endian bytes, its data."""
    data = np.require(array, requirements="C")
    return "0x" + data.dtype.alignment.to_bytes(4, "little").hex() + data.tobytes().hex()


def blobs_section(module: ModuleOp) -> str:
    """
    The `dialect_resources` section MLIR's tools print after a module: the blob of each
    resource `module` reads that this process holds, one a line, sorted by handle.
    Empty when there is none.
    """
    handles = sorted({attr.resource_handle.data for *_, attr in _resource_attrs(module)})
    entries = [f'      {h}: "{encode_blob(_store[h])}"' for h in handles if h in _store]
    if not entries:
        return ""
    body = ",\n".join(entries)
    return f"\n{{-#\n  dialect_resources: {{\n    builtin: {{\n{body}\n    }}\n  }}\n#-}}\n"


def first_without_data(module: ModuleOp) -> tuple[Operation, str] | None:
    """The first op reading a resource this process holds no data for, with its handle."""
    for op, _, _, attr in _resource_attrs(module):
        if attr.resource_handle.data not in _store:
            return op, attr.resource_handle.data
    return None
