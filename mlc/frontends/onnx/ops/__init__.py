"""
ONNX op converters, one module per op family.

Importing the package registers every converter in the op table (`table`), where
`converter_for` looks them up.
"""

from mlc.frontends.onnx.ops import (
    einsum,
    indexing,
    elementwise,
    nn,
    normalization,
    reduction,
    structure,
    tensor,
    window,
)
from mlc.frontends.onnx.ops.table import converter_for, supported_ops

__all__ = [
    "converter_for",
    "einsum",
    "indexing",
    "elementwise",
    "nn",
    "normalization",
    "reduction",
    "structure",
    "supported_ops",
    "tensor",
    "window",
]
