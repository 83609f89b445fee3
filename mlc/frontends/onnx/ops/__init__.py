"""
ONNX op converters, one module per op family.

Importing the package registers every converter in the op table (`table`), where
`converter_for` looks them up.
"""

from mlc.frontends.onnx.ops import activation, elementwise, nn, numeric, reduction, tensor, window
from mlc.frontends.onnx.ops.table import converter_for, supported_ops

__all__ = [
    "activation",
    "converter_for",
    "elementwise",
    "nn",
    "numeric",
    "reduction",
    "supported_ops",
    "tensor",
    "window",
]
