"""
One-node ONNX models built with `onnx.helper`, compiled with mlc and run by onnxruntime.

`check(op, inputs, ...)` builds a model whose graph inputs are `inputs` (name, array)
(those named in `known` become initializers, so the importer sees their values; those
in `dynamic` get symbolic dims), compiles it for `target` and compares each output with
onnxruntime's: dtype, shape and values.
"""

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import helper, numpy_helper

from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")


def single_node_model(
    op: str,
    inputs: Sequence[tuple[str, np.ndarray]],
    attrs: dict[str, Any],
    opset: int,
    known: dict[str, np.ndarray],
    dynamic: Sequence[str],
) -> onnx.ModelProto:
    node = helper.make_node(op, [name for name, _ in inputs], ["y"], **attrs)
    graph_inputs = [
        helper.make_tensor_value_info(
            name,
            helper.np_dtype_to_tensor_dtype(array.dtype),
            [f"{name}{i}" if name in dynamic else d for i, d in enumerate(array.shape)],
        )
        for name, array in inputs
        if name not in known
    ]
    initializers = [numpy_helper.from_array(array, name) for name, array in known.items()]
    graph = helper.make_graph(
        [node], op.lower(), graph_inputs, [onnx.ValueInfoProto(name="y")], initializers
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    found = [v.type for v in inferred.graph.value_info if v.name == "y"]
    # Ops onnx defines as functions (GroupNormalization) infer nothing: the input's type.
    model.graph.output[0].type.CopyFrom(found[0] if found else graph_inputs[0].type)
    return model


def check(
    op: str,
    inputs: Sequence[tuple[str, np.ndarray]],
    attrs: dict[str, Any] | None = None,
    *,
    opset: int,
    target: str = "cpu",
    known: Sequence[str] = (),
    dynamic: Sequence[str] = (),
    rtol: float = 1e-5,
    atol: float = 1e-6,
) -> None:
    """mlc's result of the one-node model against onnxruntime's."""
    arrays = dict(inputs)
    model = single_node_model(
        op, inputs, attrs or {}, opset, {k: arrays[k] for k in known}, dynamic
    )
    feeds = {name: array for name, array in inputs if name not in known}
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, feeds)
    got = compile_for(model, target)(*feeds.values())
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
