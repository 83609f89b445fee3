"""
ONNX op converters, one module per op family.

Importing the package registers every converter in the op table (`table`), where
`converter_for` looks them up.
"""

from mlc.frontends.onnx.ops import elementwise, nn, reduction, tensor, window
from mlc.frontends.onnx.ops import recurrent as recurrent  # registers LSTM, GRU and RNN
from mlc.frontends.onnx.ops.table import converter_for, supported_ops

__all__ = ["converter_for", "elementwise", "nn", "reduction", "supported_ops", "tensor", "window"]
