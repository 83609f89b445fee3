"""
The one table where element types meet numpy: MLIR spelling -> numpy dtype.

Used wherever arrays cross into or out of mlc: the runtime (arguments and results of
compiled functions), constants made from arrays (`mlc.resources`) and the ONNX
frontend (initializers and inputs). bf16 is `ml_dtypes.bfloat16` (the dtype JAX and
onnx use); `index` is a 64-bit integer, as the backend lowers it.
"""

from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute

DTYPES: dict[str, np.dtype[Any]] = {
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "f16": np.dtype(np.float16),
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "i1": np.dtype(np.bool_),
    "i8": np.dtype(np.int8),
    "i16": np.dtype(np.int16),
    "i32": np.dtype(np.int32),
    "i64": np.dtype(np.int64),
    "ui8": np.dtype(np.uint8),
    "ui16": np.dtype(np.uint16),
    "ui32": np.dtype(np.uint32),
    "ui64": np.dtype(np.uint64),
    "index": np.dtype(np.int64),
}

# The element type each name of `DTYPES` spells.
ELEMENT_TYPES: dict[str, Attribute] = {
    "bf16": BFloat16Type(),
    "f16": Float16Type(),
    "f32": Float32Type(),
    "f64": Float64Type(),
    "i1": IntegerType(1),
    "i8": IntegerType(8),
    "i16": IntegerType(16),
    "i32": IntegerType(32),
    "i64": IntegerType(64),
    "ui8": IntegerType(8, Signedness.UNSIGNED),
    "ui16": IntegerType(16, Signedness.UNSIGNED),
    "ui32": IntegerType(32, Signedness.UNSIGNED),
    "ui64": IntegerType(64, Signedness.UNSIGNED),
    "index": IndexType(),
}


class UnsupportedType(Exception):
    """An element type (or a numpy dtype) that has no counterpart on the other side."""


def element_type_of_dtype(dtype: np.dtype[Any]) -> Attribute:
    """The MLIR element type of a numpy dtype (int64 is `i64`, never `index`)."""
    for name, candidate in DTYPES.items():
        if candidate == dtype:
            return ELEMENT_TYPES[name]
    raise UnsupportedType(f"numpy dtype {dtype} is not supported")


def is_floating(dtype: np.dtype[Any]) -> bool:
    """Whether `dtype` is a float, bfloat16 included (numpy does not count it one)."""
    return bool(np.issubdtype(dtype, np.floating)) or dtype == DTYPES["bf16"]
