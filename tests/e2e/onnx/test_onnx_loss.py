"""
onnx NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss against onnxruntime: the three
reductions, weights, ignore_index, the log_prob output, [N, C] and [N, C, d...] scores,
f32 and f64, static and dynamic batch, on the CPU and `cuda`.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")

SEED = np.random.SeedSequence().entropy
FLOATS = {"float32": TensorProto.FLOAT, "float64": TensorProto.DOUBLE}


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


def model_of(op, attrs, x, t, weighted, log_prob, dynamic, opset):
    float_type = FLOATS[x.dtype.name]
    x_dims = ["n" if dynamic else x.shape[0], *x.shape[1:]]
    t_dims = ["n" if dynamic else t.shape[0], *t.shape[1:]]
    inputs = [
        helper.make_tensor_value_info("x", float_type, x_dims),
        helper.make_tensor_value_info("t", TensorProto.INT64, t_dims),
    ]
    names = ["x", "t"]
    if weighted:
        inputs.append(helper.make_tensor_value_info("w", float_type, [x.shape[1]]))
        names.append("w")
    loss_dims = t_dims if attrs["reduction"] == "none" else []
    outs = [helper.make_tensor_value_info("loss", float_type, loss_dims)]
    if log_prob:
        outs.append(helper.make_tensor_value_info("log_prob", float_type, x_dims))
    node = helper.make_node(op, names, [o.name for o in outs], **attrs)
    graph = helper.make_graph([node], "g", inputs, outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


# (scores shape, reduction, weight input, ignore_index, dtype, dynamic batch)
CASES = [
    ((5, 7), "mean", False, None, "float32", True),
    ((5, 7), "sum", True, None, "float64", False),
    ((3, 4, 6), "none", True, 2, "float32", True),
    ((3, 4, 2, 5), "mean", True, 1, "float32", False),
    ((2, 5, 3), "mean", False, -1, "float64", True),
]


@pytest.mark.parametrize("op", ["NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"])
@pytest.mark.parametrize(("shape", "reduction", "weighted", "ignore", "dtype", "dynamic"), CASES)
def test_loss(rng, target, op, dynamic, shape, reduction, weighted, ignore, dtype):
    x = rng.standard_normal(shape).astype(dtype)
    t_shape = (shape[0], *shape[2:])
    t = rng.integers(0, shape[1], size=t_shape).astype(np.int64)
    if ignore is not None:
        t.flat[::3] = ignore
    attrs = {"reduction": reduction}
    if ignore is not None:
        attrs["ignore_index"] = ignore
    log_prob = op == "SoftmaxCrossEntropyLoss" and reduction != "sum"
    opset = 13 if dynamic else 12
    model = model_of(op, attrs, x, t, weighted, log_prob, dynamic, opset)
    feeds = {"x": x, "t": t}
    if weighted:
        feeds["w"] = rng.uniform(0.5, 2.0, size=shape[1]).astype(dtype)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = session.run(None, feeds)
    exe = compile_for(model, target)
    got = exe(*feeds.values())
    got = got if isinstance(got, tuple | list) else (got,)
    assert len(got) == len(want)
    tol = 1e-5 if dtype == "float32" else 1e-12
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)
