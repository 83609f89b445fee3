"""
An imported ONNX model inside a differentiated loss (`traced_call`): `mlc.value_and_grad`
split into forward and backward (`mlc.vjp`) against the joint form and central
differences, and the partitioner's remarks on the model's nodes. A small synthetic CNN by
default; a zoo model (tests/zoo) with `MLC_TEST_SLOW=1`.
"""

import os
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlc
from mlc import ops
from mlc.autodiff.imported import traced_call
from mlc.diagnostics import capture
from mlc.frontends.onnx import onnx_params
from tests.e2e.onnx.test_onnx_finetune import small_cnn
from tests.finite_differences import numeric_grad

ZOO = Path(__file__).parents[2] / "zoo"


def fixed_batch(model: onnx.ModelProto, batch: int) -> onnx.ModelProto:
    """The model with its inputs' first (batch) dim fixed to `batch`."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    for value in model.graph.input:
        dims = value.type.tensor_type.shape.dim
        if dims and not dims[0].dim_value:
            dims[0].ClearField("dim_param")
            dims[0].dim_value = batch
    for value in model.graph.output:
        dims = value.type.tensor_type.shape.dim
        if dims and not dims[0].dim_value:
            dims[0].ClearField("dim_param")
            dims[0].dim_value = batch
    return model


def small_mlp(rng, batch: int) -> onnx.ModelProto:
    """Gemm 5->7 -> Tanh -> Gemm 7->3 (float64), its weights initializers."""
    weights = {
        "fc1.w": rng.standard_normal((7, 5)) * 0.5,
        "fc1.b": rng.standard_normal(7) * 0.1,
        "fc2.w": rng.standard_normal((3, 7)) * 0.5,
        "fc2.b": rng.standard_normal(3) * 0.1,
    }
    nodes = [
        helper.make_node("Gemm", ["x", "fc1.w", "fc1.b"], ["h"], transB=1),
        helper.make_node("Tanh", ["h"], ["t"]),
        helper.make_node("Gemm", ["t", "fc2.w", "fc2.b"], ["logits"], transB=1),
    ]
    f64 = TensorProto.DOUBLE
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", f64, [batch, 5])],
        [helper.make_tensor_value_info("logits", f64, [batch, 3])],
        [numpy_helper.from_array(w, name) for name, w in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def mlp_loss_numpy(w1, b1, w2, b2, x, labels):
    logits = np.tanh(x @ w1.T + b1) @ w2.T + b2
    shifted = logits - logits.max(-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(-1, keepdims=True))
    return -(labels * log_probs).sum() / x.shape[0]


def classifier_loss(model, n_params):
    def loss(*args):
        logits = model(*args[:-1])
        shifted = logits - ops.max(logits, axis=-1, keepdims=True)
        log_probs = shifted - ops.log(ops.sum(ops.exp(shifted), axis=-1, keepdims=True))
        return -ops.sum(args[-1] * log_probs) / logits.shape[0]

    return loss


def check(model_proto, x, classes, checked, rtol, reference=None):
    rng = np.random.default_rng()
    model = traced_call(mlc.import_onnx(model_proto, params_as_args=True))
    params = list(onnx_params(model_proto).values())
    labels = np.eye(classes, dtype=x.dtype)[rng.integers(0, classes, x.shape[0])]
    loss = classifier_loss(model, len(params))
    argnums = tuple(range(len(params)))
    args = (*params, x, labels)
    with capture() as remarks:
        value, grads = mlc.value_and_grad(loss, argnums, split=True)(*args)
    joint_value, joint = mlc.value_and_grad(loss, argnums)(*args)
    np.testing.assert_allclose(value, joint_value, rtol=rtol)
    for g, j in zip(grads, joint, strict=True):
        np.testing.assert_allclose(g, j, rtol=rtol, atol=rtol * np.abs(j).max())
    forward = reference or mlc.jit(loss)
    for i in checked:  # central differences on a few parameters
        numeric = numeric_grad(forward, [a.astype(np.float64) for a in args], i, eps=1e-4)
        scale = np.abs(numeric).max()
        np.testing.assert_allclose(grads[i], numeric, rtol=1e-3, atol=1e-3 * scale)
    return remarks


def test_split_gradients_of_an_imported_mlp():
    rng = np.random.default_rng()
    x = rng.standard_normal((6, 5))
    remarks = check(small_mlp(rng, 6), x, 3, [0, 1, 2, 3], 1e-9, mlp_loss_numpy)
    saved = [str(r.location) for r in remarks if "saved for the backward" in r.message]
    assert any("node 'Tanh_1'" in where for where in saved), saved  # the model's nodes
    summary = [r.message for r in remarks if "split into @loss_forward" in r.message]
    assert len(summary) == 1 and "saves" in summary[0]


@pytest.mark.skipif(
    os.environ.get("MLC_TEST_SLOW") != "1", reason="compiles for 25 s: MLC_TEST_SLOW=1 runs it"
)
def test_split_gradients_of_an_imported_cnn():
    rng = np.random.default_rng()
    proto = small_cnn(rng, np.float64, batch=4)
    x = rng.standard_normal((4, 1, 6, 6))
    remarks = check(proto, x, 3, checked=[0, 2], rtol=1e-9)
    assert any("saved for the backward" in r.message for r in remarks)


def test_traced_call_refuses_dynamic_arguments_and_wrong_types():
    proto = small_cnn(np.random.default_rng(), np.float32, batch="N")
    with pytest.raises(ValueError, match=r"argument #4 of @main is tensor<\?x1x6x6xf32>"):
        traced_call(mlc.import_onnx(proto, params_as_args=True))
    model = traced_call(mlc.import_onnx(fixed_batch(proto, 2), params_as_args=True))
    params = list(onnx_params(proto).values())
    with pytest.raises(mlc.frontends.trace.tracer.TraceError, match="argument #4 is"):
        mlc.jit(model)(*params, np.zeros((3, 1, 6, 6), np.float32))


@pytest.mark.skipif(
    os.environ.get("MLC_TEST_SLOW") != "1", reason="a zoo ResNet: 10 min, MLC_TEST_SLOW=1"
)
def test_split_gradients_of_a_zoo_model():
    proto = fixed_batch(onnx.load(str(ZOO / "resnet-torchscript.onnx")), 2)
    x = np.random.default_rng().standard_normal((2, 3, 32, 32)).astype(np.float32)
    classes = proto.graph.output[0].type.tensor_type.shape.dim[1].dim_value
    remarks = check(proto, x, classes, checked=[], rtol=2e-3)
    assert any("split into @loss_forward" in r.message for r in remarks)
