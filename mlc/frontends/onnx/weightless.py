"""
onnx's checker and shape inference run on a copy of the model without its large weights.

Both hand the whole `ModelProto` to C++ as bytes (shape inference hands a new one
back): on ResNet-50's 102 MB of weights that was ~0.5 s of a cold compile, for a graph
of ~300 nodes. In the copy each floating-point initializer of `LARGE` elements or more
is a graph input of its type and shape instead; one that is a graph input already (an
input with a default value) stays, since inference reads that input's declared type.
No op's shape rule reads a weight's values, only its type and shape; what data
propagation reads (shapes, axes, scales, pads: integer or small tensors) stays. The
inferred copy gets the initializers back, in their order, and loses the inputs added,
so the model is what inference of the whole gives. Each tensor taken out is checked on
its own, as the checker checks an initializer.
"""

import math

import onnx
import onnx.checker

LARGE = 1024
"""Elements from which a floating-point initializer is left out of the copy."""

FLOATS = frozenset(
    {
        onnx.TensorProto.FLOAT,
        onnx.TensorProto.DOUBLE,
        onnx.TensorProto.FLOAT16,
        onnx.TensorProto.BFLOAT16,
    }
)

# Before IR version 4 an initializer must also be a graph input; the checker says so.
_INITIALIZERS_NEED_INPUTS = 4


def is_weight(tensor: onnx.TensorProto) -> bool:
    """Whether `tensor` is a floating-point tensor of `LARGE` elements or more."""
    return tensor.data_type in FLOATS and math.prod(tensor.dims) >= LARGE


def without_weights(proto: onnx.ModelProto) -> onnx.ModelProto:
    """
    A copy of `proto` whose weights (`is_weight`, not graph inputs) are inputs, or `proto`
    itself when it has none. Each one left out has passed `onnx.checker.check_tensor`.
    """
    graph = proto.graph
    inputs = {value.name for value in graph.input}
    weights = [
        tensor
        for tensor in graph.initializer
        if is_weight(tensor)
        and tensor.name not in inputs
        and proto.ir_version >= _INITIALIZERS_NEED_INPUTS
    ]
    if not weights:
        return proto
    for tensor in weights:
        onnx.checker.check_tensor(tensor)
    taken = {tensor.name for tensor in weights}
    light = onnx.ModelProto()
    light.CopyFrom(proto)
    del light.graph.initializer[:]
    light.graph.initializer.extend(t for t in graph.initializer if t.name not in taken)
    light.graph.input.extend(
        onnx.helper.make_tensor_value_info(t.name, t.data_type, list(t.dims)) for t in weights
    )
    return light


def with_weights(inferred: onnx.ModelProto, proto: onnx.ModelProto) -> onnx.ModelProto:
    """`inferred`, shape inference of `without_weights(proto)` (not `proto` itself), with
    `proto`'s initializers and inputs back."""
    del inferred.graph.input[len(proto.graph.input) :]
    del inferred.graph.initializer[:]
    inferred.graph.initializer.extend(proto.graph.initializer)
    return inferred
