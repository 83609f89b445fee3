"""
The CPU benchmark harness (bench/cpu.py) cannot rot: `--quick` runs it end to end, and
the numpy ONNX runner that the model rows use as their baseline agrees with onnxruntime.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).parents[2]
sys.path.insert(0, str(ROOT / "bench"))
sys.path.insert(0, str(ROOT / "examples"))

import onnx_models  # noqa: E402
import onnx_numpy  # noqa: E402


def test_quick_run_writes_a_complete_table(tmp_path: Path):
    output = tmp_path / "results.md"
    done = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "cpu.py"), "--quick", "--output", str(output)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    text = output.read_text()
    assert "f32 FMA peak: **" in text and "copy bandwidth: **" in text
    assert "- Versions: mlc " in text and "- Flags: " in text
    for workload in ["matmul 32 f32", "chain 4096 f32", "softmax 16x24 f32", "PageRank"]:
        rows = [line for line in text.splitlines() if line.startswith(f"| {workload}")]
        systems = {row.split("|")[2].strip() for row in rows}
        assert {"mlc", "numpy", "onnxruntime", "IREE"} <= systems, workload
        mlc_row = next(row for row in rows if row.split("|")[2].strip() == "mlc")
        assert "wrong result" not in mlc_row and "failed" not in mlc_row
        assert float(mlc_row.split("|")[3]) > 0  # a median in ms
    assert "| matmul 32 f32 | onnxruntime | " in text and "x |" in text  # ratios printed
    assert "| first call ms |" in text and "x) |" in mlc_row  # a burst's first call, apart
    assert "## Compile times" in text


def test_bursts_count_settled_calls_apart_from_each_bursts_first(
    monkeypatch: pytest.MonkeyPatch,
):
    """On a fake clock (binary fractions of a second, so the sums are exact): which
    calls a burst counts does not depend on how busy the machine is."""
    import types

    import cpu

    now = [0.0]
    monkeypatch.setattr(cpu, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))

    def call(seconds: float):
        def run():
            now[0] += seconds

        return run

    shape = cpu.Bursts(seconds=1 / 8, settle=1 / 16)
    runs = {"fast": call(1 / 1024), "slow": call(1 / 32)}
    settled, first = cpu.bursts(runs, 0.0, 3, 3, shape)
    assert first == {"fast": [1 / 1024] * 3, "slow": [1 / 32] * 3}  # one a burst
    # Slow calls start at 0, 1/32, 2/32 and 3/32 s into a burst: the last two count.
    assert settled["slow"] == [1 / 32] * 6
    # Fast calls start every 1/1024 s for 1/8 s: those from 1/16 s on count.
    assert settled["fast"] == [1 / 1024] * (3 * 64)


def _run_both(model, inputs):
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in session.get_inputs()]
    want = session.run(None, dict(zip(names, inputs, strict=True)))
    got = onnx_numpy.run_model(model, inputs)
    return got, want[0]


def test_numpy_runner_matches_onnxruntime_on_a_cnn():
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng()
    weights = {
        "w": rng.standard_normal((6, 3, 3, 3), dtype=np.float32),
        "b": rng.standard_normal(6, dtype=np.float32),
        "s": rng.standard_normal(6, dtype=np.float32),
        "t": rng.standard_normal(6, dtype=np.float32),
        "m": rng.standard_normal(6, dtype=np.float32),
        "v": rng.random(6, dtype=np.float32) + 0.5,
        "w2": rng.standard_normal((4, 3, 3, 3), dtype=np.float32),
        "fc": rng.standard_normal((4, 5), dtype=np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[2, 1]),
        helper.make_node("BatchNormalization", ["c", "s", "t", "m", "v"], ["n"]),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("AveragePool", ["p"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["a", "w2"], ["g"], group=2, pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["g"], ["gp"]),
        helper.make_node("Flatten", ["gp"], ["f"]),
        helper.make_node("Gemm", ["f", "fc"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 13, 11])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])],
        [numpy_helper.from_array(a, name) for name, a in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    got, want = _run_both(model, [rng.standard_normal((2, 3, 13, 11), dtype=np.float32)])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_numpy_runner_matches_onnxruntime_on_attention():
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng()
    weights = {
        "g": rng.standard_normal(8, dtype=np.float32),
        "be": rng.standard_normal(8, dtype=np.float32),
        "wq": rng.standard_normal((8, 8), dtype=np.float32),
        "shape": np.array([5, 2, 4], np.int64),
    }
    nodes = [
        helper.make_node("LayerNormalization", ["x", "g", "be"], ["n"], axis=-1),
        helper.make_node("MatMul", ["n", "wq"], ["q"]),
        helper.make_node("Reshape", ["q", "shape"], ["h"]),
        helper.make_node("Transpose", ["h"], ["t"], perm=[1, 0, 2]),
        helper.make_node("Transpose", ["h"], ["tk"], perm=[1, 2, 0]),
        helper.make_node("MatMul", ["t", "tk"], ["s"]),
        helper.make_node("Softmax", ["s"], ["p"], axis=-1),
        helper.make_node("Erf", ["p"], ["e"]),
        helper.make_node("Tanh", ["e"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "attention",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5, 5])],
        [numpy_helper.from_array(a, name) for name, a in weights.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    got, want = _run_both(model, [rng.standard_normal((5, 8), dtype=np.float32)])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


MODELS = [onnx_models.mlp, onnx_models.cnn, onnx_models.transformer_block]


@pytest.mark.parametrize("make", MODELS, ids=lambda f: f.__name__)
def test_numpy_runner_matches_onnxruntime_on_the_bench_models(make):
    """Every model row has its numpy baseline (the transformer's Gather included)."""
    model = make()
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng().standard_normal(shape, dtype=np.float32)
    got, want = _run_both(model, [x])
    np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4)


def test_numpy_runner_names_an_op_it_lacks():
    from onnx import TensorProto, helper

    node = helper.make_node("Hardmax", ["x"], ["y"])
    value = helper.make_tensor_value_info
    graph = helper.make_graph(
        [node], "g", [value("x", TensorProto.FLOAT, [2])], [value("y", TensorProto.FLOAT, [2])]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(NotImplementedError, match="Hardmax"):
        onnx_numpy.run_model(model, [np.zeros(2, np.float32)])


def test_cnn_profile_pieces_chain_into_the_model():
    # bench/cnn_profile.py times the CNN kernel by kernel: its pieces must be the whole
    # model, each node once, and chained they must compute what the model computes.
    ort = pytest.importorskip("onnxruntime")
    sys.path.insert(0, str(ROOT / "examples"))
    import cnn_profile
    import onnx_models

    model = onnx_models.cnn(1)
    pieces = cnn_profile.pieces(model)
    nodes = [n.name for _, piece, _ in pieces for n in piece.graph.node]
    assert nodes == [n.name for n in model.graph.node]
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype(np.float32)
    values = {"input": x}
    for _, piece, inputs in pieces:
        session = ort.InferenceSession(piece.SerializeToString())
        (values[piece.graph.output[0].name],) = session.run(None, {i: values[i] for i in inputs})
    whole = ort.InferenceSession(model.SerializeToString()).run(None, {"input": x})[0]
    np.testing.assert_allclose(values[model.graph.output[0].name], whole, rtol=1e-5, atol=1e-6)
