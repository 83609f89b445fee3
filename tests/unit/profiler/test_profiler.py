"""
The per-layer profiler end to end on the CPU: kernels mapped back to the ONNX nodes
and traced lines they came from, priced by the cost model, the same results as the
program compiled without profiling (which has no timers), and its three outputs.
"""

import json

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlc
from mlc import ops
from mlc.profiler import SCHEMA, Peaks, Profile

RNG = np.random.default_rng(7)
COMPUTING = ["conv", "relu", "pool", "fc", "bias", "softmax"]  # Flatten is a view: no kernel


def _model() -> onnx.ModelProto:
    w = RNG.standard_normal((6, 3, 3, 3)).astype(np.float32)
    m = RNG.standard_normal((6 * 3 * 4, 5)).astype(np.float32)
    b = RNG.standard_normal(5).astype(np.float32)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("MaxPool", ["r"], ["p"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"], name="flat"),
        helper.make_node("MatMul", ["f", "m"], ["mm"], name="fc"),
        helper.make_node("Add", ["mm", "b"], ["a"], name="bias"),
        helper.make_node("Softmax", ["a"], ["y"], name="softmax", axis=1),
    ]
    graph = helper.make_graph(
        nodes,
        "profiled",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 3, 7, 9])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 5])],
        [numpy_helper.from_array(v, n) for v, n in ((w, "w"), (m, "m"), (b, "b"))],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def compiled() -> mlc.Executable:
    return mlc.compile(_model())


@pytest.fixture(scope="module")
def x() -> np.ndarray:
    return RNG.standard_normal((3, 3, 7, 9)).astype(np.float32)


@pytest.fixture(scope="module")
def profile(compiled: mlc.Executable, x: np.ndarray) -> Profile:
    return compiled.profile(x, repeat=3, peaks=Peaks(gflops=100.0, gbps=20.0))


def test_every_computing_node_is_in_some_layer(profile: Profile):
    named = {source for layer in profile.layers for source in layer.sources}
    assert set(COMPUTING) <= named
    assert named <= {*COMPUTING, "flat"}


def test_the_fused_convolution_lists_both_nodes_and_is_priced_on_them(profile: Profile):
    fused = [layer for layer in profile.layers if {"conv", "relu"} <= set(layer.sources)]
    assert len(fused) == 1
    layer = fused[0]
    assert {"ml.conv2d", "ml.relu"} <= set(layer.cost.ops)
    out = 3 * 6 * 7 * 9
    assert layer.cost.flops == out * 2 * 3 * 3 * 3 + out  # the conv's terms, then the relu
    # Read: x and w; written: the relu's result; the conv's result stays in the kernel.
    assert layer.cost.bytes == 4 * (3 * 3 * 7 * 9 + 6 * 3 * 3 * 3 + out)
    assert layer.gflops is not None and layer.gflops > 0


def test_layers_are_sorted_by_time_and_shares_add_up(profile: Profile):
    seconds = [layer.seconds for layer in profile.layers]
    assert seconds == sorted(seconds, reverse=True)
    assert sum(profile.share(layer) for layer in profile.layers) == pytest.approx(1.0)
    assert 0 < profile.kernel_seconds <= profile.call_seconds * 1.01
    assert all(k.runs == 1 for layer in profile.layers for k in layer.kernels)


def test_profiled_results_are_the_programs(compiled: mlc.Executable, profile: Profile, x):
    np.testing.assert_allclose(profile.outputs, compiled(x), rtol=1e-6, atol=1e-7)
    fresh = RNG.standard_normal((3, 3, 7, 9)).astype(np.float32)
    again = compiled.profile(fresh, repeat=1, warmup=0)
    np.testing.assert_allclose(again.outputs, compiled(fresh), rtol=1e-6, atol=1e-7)


def test_only_the_profiling_compile_has_timers(compiled: mlc.Executable):
    assert "mlc_profile" not in compiled.llvm_ir
    profiled = compiled.variant(profile=True)  # pyright: ignore[reportOptionalCall]
    assert "call void @mlc_profile_begin" in profiled.llvm_ir
    assert "@__mlc_profile_kernels" in profiled.llvm_ir


def test_json_follows_the_schema(profile: Profile, tmp_path):
    path = tmp_path / "profile.json"
    profile.save_json(path)
    data = json.loads(path.read_text())
    assert data["schema"] == SCHEMA and data["target"] == "cpu" and data["function"] == "main"
    assert data["peaks"] == {"gflops": 100.0, "gbps": 20.0}
    keys = {"sources", "seconds", "share", "flops", "bytes", "ops", "gflops", "gbps"}
    for layer in data["layers"]:
        assert keys | {"peak_flops_share", "peak_bytes_share", "kernels"} == set(layer)
        assert all(
            set(k) == {"id", "function", "kind", "seconds", "runs"} for k in layer["kernels"]
        )
    ids = sorted(k["id"] for layer in data["layers"] for k in layer["kernels"])
    assert ids == list(range(len(ids)))
    fused = next(layer for layer in data["layers"] if "relu" in layer["sources"])
    assert fused["peak_flops_share"] == pytest.approx(fused["gflops"] / 100.0)


def test_chrome_trace_has_the_call_and_each_kernel_run(profile: Profile, tmp_path):
    path = tmp_path / "trace.json"
    profile.save_trace(path)
    events = json.loads(path.read_text())["traceEvents"]
    call, kernels = events[0], events[1:]
    assert call["name"] == "@main" and call["ph"] == "X"
    assert len(kernels) == len(profile.kernels)
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in kernels)
    assert all(0 <= e["ts"] and e["ts"] + e["dur"] <= call["dur"] + 1e-3 for e in kernels)
    starts = [e["ts"] for e in kernels]
    assert starts == sorted(starts)  # one thread, in program order
    assert any(set(e["args"]["sources"]) >= {"conv", "relu"} for e in kernels)


def test_table_names_every_layer(profile: Profile):
    text = str(profile)
    assert text.splitlines()[0].split()[:3] == ["time", "share", "kernels"]
    assert "conv, relu" in text and "a call (median of 3)" in text
    assert len(profile.table(limit=2).splitlines()) == 1 + 2 + 2  # header, rows, more, total


def _traced(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return ops.softmax(ops.relu(x @ w))


def test_traced_code_maps_to_its_lines():
    x = RNG.standard_normal((5, 7)).astype(np.float32)
    w = RNG.standard_normal((7, 3)).astype(np.float32)
    executable = mlc.compile(mlc.trace(_traced, x, w))
    profile = executable.profile(x, w, repeat=2)
    line = _traced.__code__.co_firstlineno + 1
    named = {source for layer in profile.layers for source in layer.sources}
    assert any(source.endswith(f"test_profiler.py:{line}") for source in named)
    expected = np.maximum(x @ w, 0)
    expected = np.exp(expected - expected.max(1, keepdims=True))
    np.testing.assert_allclose(profile.outputs, expected / expected.sum(1, keepdims=True), 1e-5)


def test_bad_repeat_and_unknown_function(compiled: mlc.Executable, x: np.ndarray):
    with pytest.raises(ValueError, match="repeat must be at least 1"):
        compiled.profile(x, repeat=0)
    with pytest.raises(KeyError, match="no public function @nope"):
        compiled.profile(x, function="nope")
