"""ONNX element types and their MLIR and numpy counterparts."""

from typing import Any

import numpy as np
import onnx
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
from mlc.shapes import DYNAMIC

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


def type_name(elem_type: int) -> str | None:
    """The ONNX spelling of an element type, e.g. FLOAT8E4M3FN; None for a number that
    names no ONNX type."""
    try:
        return TensorProto.DataType.Name(elem_type)
    except ValueError:
        return None


def element_type(elem_type: int) -> Attribute:
    """The MLIR element type of an ONNX one; `UnsupportedType` saying why there is none."""
    if elem_type not in ELEMENT_TYPES:
        name = type_name(elem_type)
        if name is None:
            raise UnsupportedType(f"element type {elem_type} is not an ONNX element type")
        raise UnsupportedType(f"element type {name} is not supported")
    return ELEMENT_TYPES[elem_type]


def dtype_of(element: Attribute) -> np.dtype[Any]:
    """The numpy dtype of an MLIR element type (bf16 has none)."""
    if str(element) not in DTYPES:
        raise UnsupportedType(f"element type {element} has no numpy dtype")
    return DTYPES[str(element)]


def tensor_type_of(array: np.ndarray) -> TensorType[Attribute]:
    return TensorType(element_type_of_dtype(array.dtype), array.shape)


def tensor_type(info: onnx.ValueInfoProto) -> tuple[TensorType[Attribute], list[str]]:
    """The tensor type of a graph value and the symbol of each dim ("" if none)."""
    kind = info.type.WhichOneof("value")
    if kind != "tensor_type":
        raise UnsupportedType(f"{kind or 'an untyped value'} is not supported, only tensors")
    tensor = info.type.tensor_type
    element = element_type(tensor.elem_type)
    if not tensor.HasField("shape"):
        raise UnsupportedType("the rank is unknown (the model gives no shape)")
    sizes: list[int] = []
    names: list[str] = []
    for dim in tensor.shape.dim:
        sizes.append(dim.dim_value if dim.HasField("dim_value") else DYNAMIC)
        names.append(dim.dim_param if dim.HasField("dim_param") else "")
    return TensorType(element, sizes), names
