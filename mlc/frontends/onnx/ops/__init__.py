"""
ONNX op converters, one module per op family.

Importing the package registers every converter in the op table (`table`), where
`converter_for` looks them up.
"""

from mlc.frontends.onnx.ops import (
    activation,
    attention,
    control_flow,
    crop,
    data_sized,
    deform_conv,
    det,
    einsum,
    elementwise,
    grid,
    indexing,
    loss,
    nn,
    normalization,
    numeric,
    pad,
    pooling,
    recurrent,
    reduction,
    resize,
    rotary,
    scan,
    sequence,
    structure,
    suppression,
    tensor,
    window,
)
from mlc.frontends.onnx.ops.table import converter_for, supported_ops

__all__ = [
    "activation",
    "attention",
    "control_flow",
    "converter_for",
    "crop",
    "data_sized",
    "deform_conv",
    "det",
    "einsum",
    "elementwise",
    "grid",
    "indexing",
    "loss",
    "nn",
    "normalization",
    "numeric",
    "pad",
    "pooling",
    "recurrent",
    "reduction",
    "resize",
    "rotary",
    "scan",
    "sequence",
    "structure",
    "supported_ops",
    "suppression",
    "tensor",
    "window",
]
