"""`mlc-run --profile`: the table, --json, --trace, --save, --compare onnxruntime, and
one-line errors for options that need --profile or an .onnx program."""

import json

import numpy as np
import pytest
from mlc.tools.mlc_run import main
from onnx import TensorProto, helper, numpy_helper

PROGRAM = """\
func.func @main(%a: tensor<3x5xf32>, %b: tensor<5x2xf32>) -> tensor<3x2xf32> {
  %0 = ml.matmul %a, %b : (tensor<3x5xf32>, tensor<5x2xf32>) -> tensor<3x2xf32>
  %1 = ml.tanh %0 : (tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %1 : tensor<3x2xf32>
}
"""


def _run(capsys, argv):
    try:
        code = main([str(a) for a in argv])
    except SystemExit as done:
        code = done.code
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _onnx(tmp_path):
    w = numpy_helper.from_array(np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3), "w")
    graph = helper.make_graph(
        [
            helper.make_node("MatMul", ["x", "w"], ["m"], name="proj"),
            helper.make_node("Sigmoid", ["m"], ["y"], name="gate"),
        ],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
        [w],
    )
    path = tmp_path / "m.onnx"
    path.write_bytes(helper.make_model(graph).SerializeToString())
    return path


def test_profile_prints_the_table_and_writes_json_trace_and_results(capsys, tmp_path):
    program = tmp_path / "p.mlir"
    program.write_text(PROGRAM)
    files = {name: tmp_path / f"{name}.json" for name in ("profile", "trace")}
    argv = [program, "--random", "--profile", "--repeat", "3", "--peaks", "50,10"]
    argv += ["--json", files["profile"], "--trace", files["trace"], "--save", tmp_path / "o.npz"]
    code, out, err = _run(capsys, argv)
    assert (code, err) == (0, "")
    assert out.splitlines()[0].split()[:2] == ["time", "share"]
    assert "(median of 3)" in out and "p.mlir:2" in out  # the matmul's line
    data = json.loads(files["profile"].read_text())
    assert data["repeat"] == 3 and data["peaks"] == {"gflops": 50.0, "gbps": 10.0}
    assert json.loads(files["trace"].read_text())["traceEvents"][0]["name"] == "@main"
    with np.load(tmp_path / "o.npz") as saved:
        assert saved["result0"].shape == (3, 2)


def test_compare_onnxruntime_matches_nodes(capsys, tmp_path):
    code, out, err = _run(
        capsys, [_onnx(tmp_path), "--random", "--profile", "--compare", "onnxruntime"]
    )
    assert (code, err) == (0, "")
    assert "onnxruntime" in out and "proj" in out and "gate" in out


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--json", "x.json"], "--json needs --profile"),
        (["--profile", "--compare", "onnxruntime"], "--compare onnxruntime needs an .onnx program"),
    ],
)
def test_option_errors_are_one_line(capsys, tmp_path, extra, message):
    program = tmp_path / "p.mlir"
    program.write_text(PROGRAM)
    code, out, err = _run(capsys, [program, "--random", *extra])
    assert code == 1 and out == "" and err.strip() == f"mlc-run: error: {message}"


def test_bad_peaks_is_a_usage_error(capsys, tmp_path):
    code, _, err = _run(capsys, [tmp_path / "p.mlir", "--profile", "--peaks", "fast"])
    assert code == 2 and "expected GFLOPS,GBPS" in err
