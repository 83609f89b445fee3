"""
The one table where element types meet numpy: MLIR spelling -> numpy dtype.

Used wherever arrays cross into or out of mlc: the runtime (arguments and results of
compiled functions) and the ONNX frontend (initializers and inputs). bf16 has no numpy
dtype and is absent; `index` is a 64-bit integer, as the backend lowers it.
"""

from typing import Any

import numpy as np

DTYPES: dict[str, np.dtype[Any]] = {
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
