"""ONNX element types and their MLIR and numpy counterparts."""

from typing import Any

import numpy as np
from onnx import TensorProto
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.ir import Attribute

from mlc.dtypes import DTYPES, UnsupportedType, element_type_of_dtype

ELEMENT_TYPES: dict[int, Attribute] = {
    TensorProto.FLOAT: Float32Type(),
    TensorProto.DOUBLE: Float64Type(),
    TensorProto.FLOAT16: Float16Type(),
    TensorProto.BFLOAT16: BFloat16Type(),
    TensorProto.BOOL: IntegerType(1),
    TensorProto.INT8: IntegerType(8),
    TensorProto.INT16: IntegerType(16),
    TensorProto.INT32: IntegerType(32),
    TensorProto.INT64: IntegerType(64),
    TensorProto.UINT8: IntegerType(8, Signedness.UNSIGNED),
    TensorProto.UINT16: IntegerType(16, Signedness.UNSIGNED),
    TensorProto.UINT32: IntegerType(32, Signedness.UNSIGNED),
    TensorProto.UINT64: IntegerType(64, Signedness.UNSIGNED),
}


def type_name(elem_type: int) -> str:
    """The ONNX spelling of an element type, e.g. FLOAT8E4M3FN."""
    try:
        return TensorProto.DataType.Name(elem_type)
    except ValueError:
        return f"element type {elem_type}"


def element_type(elem_type: int) -> Attribute:
    if elem_type not in ELEMENT_TYPES:
        raise UnsupportedType(f"element type {type_name(elem_type)} is not supported")
    return ELEMENT_TYPES[elem_type]


def dtype_of(element: Attribute) -> np.dtype[Any]:
    """The numpy dtype of an MLIR element type (bf16 has none)."""
    if str(element) not in DTYPES:
        raise UnsupportedType(f"element type {element} has no numpy dtype")
    return DTYPES[str(element)]


def tensor_type_of(array: np.ndarray) -> TensorType[Attribute]:
    return TensorType(element_type_of_dtype(array.dtype), array.shape)
