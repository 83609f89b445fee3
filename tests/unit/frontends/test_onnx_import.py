"""
`mlc.import_onnx`: the function it builds (arguments, results, dynamic dims, locations,
constants) and the one-line errors for models it cannot take.
"""

import importlib
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlc
from mlc.diagnostics import DiagnosticError
from mlc.ir import print_module


def model(nodes, inputs, outputs, initializers=(), opset=17, name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(initializers))
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    proto.ir_version = 8
    return proto


def tensor(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def affine(batch="N"):
    """y = relu(x @ w + b) with a symbolic batch dim and a 300-element weight."""
    w = numpy_helper.from_array(np.arange(300, dtype=np.float32).reshape(30, 10), "w")
    b = numpy_helper.from_array(np.ones(10, np.float32), "b")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"], name="matmul"),
        helper.make_node("Add", ["m", "b"], ["a"], name="bias"),
        helper.make_node("Relu", ["a"], ["y"]),
    ]
    return model(nodes, [tensor("x", [batch, 30])], [tensor("y", [batch, 10])], [w, b])


def test_signature_dynamic_dims_and_dim_names():
    text = print_module(mlc.import_onnx(affine()))
    assert 'func.func @main(%x: tensor<?x30xf32> {ml.dim_names = ["N", ""]})' in text
    assert "-> tensor<?x10xf32>" in text


def test_locations_name_each_node_and_its_position():
    text = print_module(mlc.import_onnx(affine()), debuginfo=True)
    # A node has no line in a binary file: 0:0, MLIR's "no line".
    assert "ml.matmul" in text and 'loc("matmul"("g":0:0))' in text
    assert 'loc("bias"("g":0:0))' in text
    assert 'loc("Relu_2"("g":0:0))' in text  # an unnamed node: <OpType>_<index>


def test_small_constants_inline_large_ones_are_resources():
    text = print_module(mlc.import_onnx(affine()))
    assert "dense<1.000000e+00> : tensor<10xf32>" in text
    assert "dense_resource<w_" in text and "tensor<30x10xf32>" in text


def test_runs_at_several_batch_sizes():
    exe = mlc.compile(affine())
    w = np.arange(300, dtype=np.float32).reshape(30, 10)
    for n in (1, 3, 8):
        x = np.random.default_rng().standard_normal((n, 30)).astype(np.float32)
        np.testing.assert_allclose(exe(x), np.maximum(x @ w + 1, 0), rtol=1e-5, atol=1e-4)


def test_external_data_loads(tmp_path: Path):
    proto = affine(batch=2)
    onnx.save(proto, tmp_path / "m.onnx", save_as_external_data=True, size_threshold=0,
              all_tensors_to_one_file=True, location="weights.bin")  # fmt: skip
    assert (tmp_path / "weights.bin").exists()
    exe = mlc.compile(tmp_path / "m.onnx")
    x = np.ones((2, 30), np.float32)
    w = np.arange(300, dtype=np.float32).reshape(30, 10)
    np.testing.assert_allclose(exe(x), np.maximum(x @ w + 1, 0))


def test_shape_subgraph_folds():
    # Reshape x to (dim0, -1) through Shape -> Gather -> Unsqueeze -> Concat.
    nodes = [
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["d0"], axis=0),
        helper.make_node("Unsqueeze", ["d0", "axes"], ["d0v"]),
        helper.make_node("Concat", ["d0v", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
    ]
    inits = [
        numpy_helper.from_array(np.array(0, np.int64), "zero"),
        numpy_helper.from_array(np.array([0], np.int64), "axes"),
        numpy_helper.from_array(np.array([-1], np.int64), "minus1"),
    ]
    proto = model(nodes, [tensor("x", [2, 3, 4])], [tensor("y", [2, 12])], inits)
    module = mlc.import_onnx(proto)
    assert [op.name for op in module.walk()][2:] == ["ml.reshape", "func.return"]
    x = np.random.default_rng().standard_normal((2, 3, 4)).astype(np.float32)
    np.testing.assert_array_equal(mlc.compile(proto)(x), x.reshape(2, 12))


@pytest.mark.parametrize("opset, expected_axis", [(11, "coerced"), (13, "last")])
def test_softmax_axis_convention_follows_the_opset(opset, expected_axis):
    node = helper.make_node("Softmax", ["x"], ["y"], axis=1)
    proto = model([node], [tensor("x", [2, 3, 4])], [tensor("y", [2, 3, 4])], opset=opset)
    x = np.random.default_rng().standard_normal((2, 3, 4)).astype(np.float32)
    if expected_axis == "coerced":  # opsets < 13: softmax over the flattened dims 1..
        flat = np.exp(x.reshape(2, 12))
        want = (flat / flat.sum(1, keepdims=True)).reshape(2, 3, 4)
    else:
        e = np.exp(x)
        want = e / e.sum(1, keepdims=True)
    np.testing.assert_allclose(mlc.compile(proto)(x), want, rtol=1e-5, atol=1e-6)


# ---------------------------------------------------------------------------
# Bad models
# ---------------------------------------------------------------------------


def import_error(src) -> str:
    with pytest.raises(DiagnosticError) as info:
        mlc.import_onnx(src)
    text = str(info.value)
    assert "\n" not in text
    assert "mlc/" not in text and ".py" not in text  # no internal file names
    return text


def test_unsupported_ops_are_listed_together():
    nodes = [
        helper.make_node("Relu", ["x"], ["a"], name="ok"),
        helper.make_node("DynamicQuantizeLinear", ["a"], ["q1", "s1", "z1"], name="hm1"),
        helper.make_node("DynamicQuantizeLinear", ["a"], ["q2", "s2", "z2"], name="hm2"),
        helper.make_node("HammingWindow", ["a"], ["y"], name="window"),
    ]
    proto = model(nodes, [tensor("x", [3, 3])], [tensor("y", [])], opset=17)
    text = import_error(proto)
    assert "unsupported ONNX ops at opset 17" in text
    assert (
        "DynamicQuantizeLinear (nodes 'hm1', 'hm2')" in text
        and "HammingWindow (nodes 'window')" in text
    )


def test_missing_file():
    text = import_error("nowhere.onnx")
    assert text == "nowhere.onnx: error: cannot read the file: No such file or directory"


def test_truncated_file(tmp_path: Path):
    path = tmp_path / "cut.onnx"
    path.write_bytes(affine().SerializeToString()[:57])
    assert import_error(path) == f"{path}: error: not an ONNX model (truncated, or not a protobuf)"


def test_not_onnx(tmp_path: Path):
    path = tmp_path / "text.onnx"
    path.write_text("func.func @main() { func.return }\n")
    assert import_error(path).startswith(f"{path}: error: not an ONNX model")


def test_inconsistent_shapes():
    node = helper.make_node("Add", ["a", "b"], ["y"], name="add")
    proto = model([node], [tensor("a", [2, 3]), tensor("b", [4, 3])], [tensor("y", [2, 3])])
    assert import_error(proto).startswith("g: node 'add' (Add, opset 17): error: ")


def test_unknown_opset():
    proto = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", [2])], [tensor("y", [2])])
    proto.opset_import[0].version = 99
    assert "unknown opset 99" in import_error(proto)


def test_node_error_names_the_node():
    nodes = [helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"], name="cut")]
    proto = model(
        nodes,
        [
            tensor("x", [4]),
            tensor("starts", [1], TensorProto.INT64),
            tensor("ends", [1], TensorProto.INT64),
            tensor("axes", [1], TensorProto.INT64),
            tensor("steps", [1], TensorProto.INT64),
        ],
        [tensor("y", ["k"])],
    )
    text = import_error(proto)
    assert text.startswith("g: node 'cut' (Slice, opset 17): error: ")
    assert "input 3 ('axes', the axes) must be known at import time" in text


def run_tool(capsys: pytest.CaptureFixture[str], tool: str, *argv: str) -> tuple[int, str, str]:
    """`tool` (mlc_opt, mlc_run) run in-process on `argv`: its exit code, stdout and stderr."""
    main = importlib.import_module(f"mlc.tools.{tool}").main
    try:
        code = main(list(argv))
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_tools_report_one_line_and_exit_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "cut.onnx"
    path.write_bytes(b"\x08\x07garbage")
    for tool in ("mlc_opt", "mlc_run"):
        code, _, err = run_tool(capsys, tool, str(path))
        assert code == 1, err
        assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_mlc_opt_prints_and_lowers_a_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    path = tmp_path / "affine.onnx"
    onnx.save(affine(), path)
    code, out, err = run_tool(capsys, "mlc_opt", str(path), "-p", "convert-ml-to-linalg")
    assert code == 0, err
    assert "linalg.generic" in out and "ml.matmul" not in out
    code, out, err = run_tool(capsys, "mlc_run", str(path), "--random", "--dim", "3")
    assert code == 0, err
    assert "result0: shape=(3, 10) dtype=float32" in out


def test_shape_of_a_dynamic_input_is_read_at_run_time():
    # y = reshape(x, concat(shape(x)[0:1], [-1])) with a symbolic batch: runtime sizes.
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], end=1),
        helper.make_node("Concat", ["s", "minus1"], ["target"], axis=0),
        helper.make_node("Reshape", ["x", "target"], ["y"]),
        helper.make_node("Flatten", ["x"], ["f"], axis=2),
    ]
    inits = [numpy_helper.from_array(np.array([-1], np.int64), "minus1")]
    proto = model(
        nodes, [tensor("x", ["N", "C", 4])], [tensor("y", ["N", "K"]), tensor("f", ["A", 4])], inits
    )
    exe = mlc.compile(proto)
    for shape in [(2, 3, 4), (5, 1, 4)]:
        x = np.random.default_rng().standard_normal(shape).astype(np.float32)
        y, f = exe(x)
        np.testing.assert_array_equal(y, x.reshape(shape[0], -1))
        np.testing.assert_array_equal(f, x.reshape(-1, 4))
