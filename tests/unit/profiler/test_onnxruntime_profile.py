"""Reading onnxruntime's per-node profile, and mlc's layers matched with its nodes."""

import numpy as np
import pytest
from onnx import TensorProto, helper

from mlc.lowering.support.kernel_sources import KernelInfo
from mlc.profiler.measure import KernelTime, Layer, Peaks, Timeline
from mlc.profiler.onnxruntime import (
    NodeTime,
    compare,
    comparison_table,
    node_times,
    per_node,
    renamed,
)
from mlc.profiler.report import Profile


def _event(node: str, op: str, microseconds: float) -> dict:
    return {
        "cat": "Node",
        "name": f"{node}_kernel_time",
        "dur": microseconds,
        "args": {"op_name": op},
    }


def test_per_node_takes_the_timed_runs_only():
    warmup = [_event("conv", "Conv", 1000.0), _event("relu", "Relu", 1000.0)]
    timed = [_event("conv", "Conv", d) for d in (10.0, 30.0, 20.0)] + [
        _event("relu", "Relu", 2.0) for _ in range(3)
    ]
    other = [{"cat": "Session", "name": "model_run", "dur": 99.0}]
    nodes = per_node({"traceEvents": [*warmup, *other, *timed]}, warmup=1, repeat=3)
    assert nodes["conv"] == NodeTime("Conv", pytest.approx(20e-6))
    assert nodes["relu"] == NodeTime("Relu", pytest.approx(2e-6))


def _profile() -> Profile:
    info = KernelInfo(0, "main", "scf.parallel", ("conv", "relu"))
    layers = [Layer(("conv", "relu"), [KernelTime(info, 4e-6, 1)], 4e-6)]
    return Profile("cpu", "main", 1, 5e-6, layers, Peaks(), Timeline([], 5000), [info], None)


def test_layers_match_nodes_by_name_and_the_rest_is_listed():
    nodes = {"conv": NodeTime("Conv", 6e-6), "r_nchwc": NodeTime("Conv", 1e-6)}
    assert compare(_profile(), nodes) == [
        ("conv, relu", 4e-6, 6e-6),
        ("r_nchwc (Conv)", None, 1e-6),
    ]
    table = comparison_table(_profile(), nodes)
    assert "1.50x" in table and "r_nchwc (Conv)" in table


def test_node_times_of_a_real_session(tmp_path):
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"], name="only")],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 5])],
    )
    path = tmp_path / "m.onnx"
    path.write_bytes(helper.make_model(graph).SerializeToString())
    nodes = node_times(path, [np.ones((4, 5), np.float32)], repeat=2)
    assert list(nodes) == ["only"] and nodes["only"].op == "Relu" and nodes["only"].seconds > 0


def test_nchwc_nodes_take_the_name_of_the_node_producing_their_tensor():
    nodes = {"conv_out_nchwc": NodeTime("Conv", 1e-6), "pool": NodeTime("MaxPool", 2e-6)}
    named = renamed(nodes, {"conv_out": "relu", "pool_out": "pool"})
    assert named == {"relu": NodeTime("Conv", 1e-6), "pool": NodeTime("MaxPool", 2e-6)}
