"""
`mlc-run` in-process: results against numpy, `--random`, `--save`, and the contract
around errors: 0 on success, 1 on every bad input with one `mlc-run: error:` line (or
a located diagnostic) and no traceback, 2 for argparse usage errors, and no `--save`
file unless the run succeeded.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from mlc.tools.mlc_run import main

PROGRAM = """\
func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = ml.mul %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = ml.sub %a, %b : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}
func.func @twice(%x: tensor<?x3xi32>) -> tensor<?x3xi32> {
  %0 = ml.add %x, %x : (tensor<?x3xi32>, tensor<?x3xi32>) -> tensor<?x3xi32>
  func.return %0 : tensor<?x3xi32>
}
"""

A = np.arange(6, dtype=np.float32).reshape(2, 3)
B = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


@dataclass
class Run:
    code: int
    out: str
    err: str


def run_tool(capsys: pytest.CaptureFixture[str], argv: Sequence[str]) -> Run:
    """Run `mlc-run argv` in-process; argparse errors exit through SystemExit."""
    try:
        code = main(list(argv))
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    captured = capsys.readouterr()
    return Run(code, captured.out, captured.err)


def write(tmp_path: Path, text: str = PROGRAM, name: str = "prog.mlir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def npy(tmp_path: Path, name: str, array: np.ndarray) -> str:
    path = tmp_path / name
    np.save(path, array)
    return str(path)


def test_npy_inputs_give_numpy_results(capsys, tmp_path):
    out = tmp_path / "out.npz"
    argv = [write(tmp_path), npy(tmp_path, "a.npy", A), npy(tmp_path, "b.npy", B)]
    run = run_tool(capsys, [*argv, "--save", str(out)])
    assert (run.code, run.err) == (0, "")
    lines = run.out.splitlines()
    assert lines[0].startswith(f"result0: shape=(2, 3) dtype=float32 sum={(A * B).sum():.6g} ")
    assert lines[1].startswith("result1: shape=(2, 3) dtype=float32 ")
    assert lines[2].startswith("compile: ") and lines[3].startswith("run: ")
    with np.load(out) as saved:
        assert sorted(saved.files) == ["result0", "result1"]
        np.testing.assert_allclose(saved["result0"], A * B, rtol=1e-6)
        np.testing.assert_allclose(saved["result1"], A - B, rtol=1e-6)


def test_random_inputs_follow_seed_dim_and_shape(capsys, tmp_path):
    program = write(tmp_path)
    base = [program, "--entry", "twice", "--random", "--seed", "3"]
    first = run_tool(capsys, [*base, "--dim", "5", "--save", str(tmp_path / "1.npz")])
    again = run_tool(capsys, [*base, "--dim", "5", "--save", str(tmp_path / "2.npz")])
    assert first.code == again.code == 0
    assert first.out.splitlines()[0] == again.out.splitlines()[0]  # same seed, same values
    with np.load(tmp_path / "1.npz") as saved:
        result = saved["result0"]
    assert result.shape == (5, 3) and result.dtype == np.int32
    assert np.all(result % 2 == 0) and np.all(np.abs(result) <= 20)  # 2x in [-10, 10]
    shaped = run_tool(capsys, [*base, "--shape", "x=2x3", "--repeat", "3"])
    assert shaped.code == 0
    assert shaped.out.startswith("result0: shape=(2, 3) dtype=int32 ")
    assert "(median of 3)" in shaped.out


def test_random_floats_are_in_the_unit_interval(capsys, tmp_path):
    out = tmp_path / "out.npz"
    run = run_tool(capsys, [write(tmp_path), "--random", "--save", str(out)])
    assert run.code == 0, run.err
    with np.load(out) as saved:
        product = saved["result0"]
    assert np.all(np.abs(product) <= 1)


# (id, extra arguments, files to create {name: array}, text the error contains)
BAD_INPUTS: list[tuple[str, list[str], dict[str, np.ndarray], str]] = [
    ("missing-npy", ["a.npy", "missing.npy"], {"a.npy": A}, "cannot read '"),
    ("wrong-dtype", ["a.npy", "i.npy"], {"a.npy": A, "i.npy": A.astype(np.int64)}, "dtype"),
    ("wrong-count", ["a.npy"], {"a.npy": A}, "@main takes 2 argument(s), got 1"),
    ("wrong-shape", ["a.npy", "t.npy"], {"a.npy": A, "t.npy": A.T.copy()}, "expected size 2"),
    ("not-npy", ["prog.mlir", "prog.mlir"], {}, "is not a .npy file"),
    ("unknown-entry", ["--random", "--entry", "nope"], {}, "no public function @nope"),
    ("unknown-shape-arg", ["--random", "--shape", "q=2"], {}, "--shape: no argument 'q'"),
    ("npy-and-random", ["a.npy", "--random"], {"a.npy": A}, "not both"),
    (
        "specialize-after-alone",
        ["--random", "--specialize-after", "2"],
        {},
        "--specialize-after needs --specialize",
    ),
    (
        "int-range-outside-the-type",
        ["--random", "--entry", "twice", "--int-range", "3000000000,3000000005"],
        {},
        "--int-range: no value of 3000000000,3000000005 fits argument 0 of @twice (int32)",
    ),
]


@pytest.mark.parametrize(
    ("extra", "files", "message"),
    [case[1:] for case in BAD_INPUTS],
    ids=[case[0] for case in BAD_INPUTS],
)
def test_bad_input_exits_1_with_one_line(capsys, tmp_path, extra, files, message):
    program = write(tmp_path)
    for name, array in files.items():
        npy(tmp_path, name, array)
    argv = [str(tmp_path / a) if a.endswith((".npy", ".mlir")) else a for a in extra]
    out = tmp_path / "out.npz"
    run = run_tool(capsys, [program, *argv, "--save", str(out)])
    assert run.code == 1
    assert run.out == ""
    assert run.err.startswith("mlc-run: error: ") and run.err.count("\n") == 1
    assert message in run.err
    assert not out.exists()


def test_parse_error_is_located_and_nothing_is_saved(capsys, tmp_path):
    program = write(tmp_path, PROGRAM.replace("ml.sub %a, %b :", "ml.sub %a, %b"))
    out = tmp_path / "out.npz"
    run = run_tool(capsys, [program, "--random", "--save", str(out)])
    assert run.code == 1
    assert f"{program}:3:22: error: expected ':'" in run.err
    assert "Traceback" not in run.err
    assert not out.exists()


def test_missing_program(capsys, tmp_path):
    run = run_tool(capsys, [str(tmp_path / "nope.mlir"), "--random"])
    assert run.code == 1
    assert "cannot read" in run.err and "No such file or directory" in run.err


@pytest.mark.parametrize(
    "extra",
    [
        ["--repeat", "0"],
        ["--shape", "x"],
        ["--dim", "-1"],
        ["--no-such-flag"],
        ["--int-range", "5,1"],
        ["--int-range", "1"],
        ["--int-range", "a,b"],
        ["--int-range", "1,2,3"],
        ["--specialize", "--specialize-after", "0"],
        ["--specialize", "--specialize-after", "x"],
    ],
)
def test_usage_errors_exit_2(capsys, tmp_path, extra):
    run = run_tool(capsys, [write(tmp_path), "--random", *extra])
    assert run.code == 2
    assert "usage: mlc-run" in run.err and "Traceback" not in run.err
    if extra[0] == "--int-range":
        assert (
            f"error: argument --int-range: expected LO,HI with integers LO <= HI, got '{extra[1]}'"
            in run.err
        )


def test_int_range_bounds_random_integers(capsys, tmp_path):
    out = tmp_path / "out.npz"
    argv = [write(tmp_path), "--entry", "twice", "--random", "--dim", "64", "--int-range", "2,3"]
    run = run_tool(capsys, [*argv, "--save", str(out)])
    assert run.code == 0, run.err
    with np.load(out) as saved:
        assert set(np.unique(saved["result0"])) == {4, 6}  # 2x in [2, 3]


# ---------------------------------------------------------------------------
# Random inputs in the ranges the program requires (mlc.input_ranges)
# ---------------------------------------------------------------------------


def bert_like(path: Path) -> Path:
    """
    The embeddings of a BERT as torch exports them: word and token-type tables gathered at
    int64 ids (30 and 2 rows), an int64 attention mask cast to bool for a Where; the batch
    dimension is dynamic.
    """
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)
    tables = {"word_table": (30, 8), "type_table": (2, 8)}
    initializers = [
        *(
            numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
            for n, s in tables.items()
        ),
        numpy_helper.from_array(np.array(0.0, np.float32), "zero"),
        numpy_helper.from_array(np.array([2], np.int64), "axes"),
    ]
    nodes = [
        helper.make_node("Gather", ["word_table", "input_ids"], ["words"], name="words"),
        helper.make_node("Gather", ["type_table", "token_type_ids"], ["types"], name="types"),
        helper.make_node("Add", ["words", "types"], ["embeddings"], name="add"),
        helper.make_node("Cast", ["attention_mask"], ["keep"], to=TensorProto.BOOL, name="cast"),
        helper.make_node("Unsqueeze", ["keep", "axes"], ["keep3"], name="unsqueeze"),
        helper.make_node("Where", ["keep3", "embeddings", "zero"], ["out"], name="where"),
    ]
    names = ["input_ids", "token_type_ids", "attention_mask"]
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT64, ["batch", 7]) for n in names]
    output = helper.make_tensor_value_info("out", TensorProto.FLOAT, ["batch", 7, 8])
    graph = helper.make_graph(nodes, "bert_like", inputs, [output], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, path)
    return path


def test_random_token_ids_index_their_tables(capsys, tmp_path):
    model = str(bert_like(tmp_path / "bert.onnx"))
    out = tmp_path / "out.npz"
    run = run_tool(capsys, [model, "--random", "--dim", "3", "--save", str(out)])
    assert run.code == 0, run.err
    assert run.out.startswith("result0: shape=(3, 7, 8) dtype=float32 ")


@pytest.mark.parametrize("int_range", [None, "-10,10", "1,5"])
def test_random_inputs_of_an_embedding_match_onnxruntime(tmp_path, int_range):
    import onnxruntime as ort
    from mlc.tools import mlc_run

    model = str(bert_like(tmp_path / "bert.onnx"))
    argv = [model, "--random", "--seed", "7", "--dim", "5"]
    # `--int-range=LO,HI`: a negative LO would read as a flag after a space
    args = mlc_run.build_parser().parse_args(
        [*argv, *([f"--int-range={int_range}"] * bool(int_range))]
    )
    executable, _ = mlc_run.compile_program(model)
    function = mlc_run.entry_function(executable, None)
    known = mlc_run.known_ranges(model, function.name)
    assert known == {0: range(30), 1: range(2), 2: range(2)}
    ids, types, mask = mlc_run.random_inputs(function, args, known)
    low = 1 if int_range == "1,5" else 0
    assert ids.min() >= low and ids.max() <= (5 if int_range == "1,5" else 29)
    assert set(np.unique(types)) == {low, 1} and set(np.unique(mask)) == {low, 1}
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    feeds = {"input_ids": ids, "token_type_ids": types, "attention_mask": mask}
    (expected,) = session.run(None, feeds)
    np.testing.assert_allclose(function(ids, types, mask), expected, rtol=1e-6, atol=1e-6)


MATMUL = """\
func.func @main(%a: tensor<3x40xf32>, %b: tensor<40x5xf32>) -> tensor<3x5xf32> {
  %0 = ml.matmul %a, %b : (tensor<3x40xf32>, tensor<40x5xf32>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}
"""


@pytest.mark.parametrize("precision", ["f32", "bf16"])
def test_precision_runs_matmuls_in_it(capsys, tmp_path, precision):
    a = np.linspace(-1, 1, 120, dtype=np.float32).reshape(3, 40)
    b = np.linspace(0.3, -0.7, 200, dtype=np.float32).reshape(40, 5)
    out = tmp_path / "out.npz"
    argv = [write(tmp_path, MATMUL), npy(tmp_path, "a.npy", a), npy(tmp_path, "b.npy", b)]
    run = run_tool(capsys, [*argv, "--precision", precision, "--save", str(out)])
    assert (run.code, run.err) == (0, "")
    with np.load(out) as saved:
        got = saved["result0"]
    want = a.astype(np.float64) @ b.astype(np.float64)
    assert got.dtype == np.float32
    error = np.abs(got - want).max() / np.abs(want).max()
    assert (error < 1e-6) if precision == "f32" else (1e-6 < error < 2e-2)


def test_autotune_measures_the_matmul_and_keeps_its_result(capsys, tmp_path, monkeypatch):
    from mlc import tuning

    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path / "cache"))
    a = np.linspace(-1, 1, 120, dtype=np.float32).reshape(3, 40)
    b = np.linspace(0.3, -0.7, 200, dtype=np.float32).reshape(40, 5)
    out = tmp_path / "out.npz"
    argv = [write(tmp_path, MATMUL), npy(tmp_path, "a.npy", a), npy(tmp_path, "b.npy", b)]
    run = run_tool(capsys, [*argv, "--autotune", "--save", str(out)])
    assert (run.code, run.err) == (0, "")
    with np.load(out) as saved:
        np.testing.assert_allclose(saved["result0"], a @ b, rtol=1e-5, atol=1e-6)
    assert len(tuning.recorded()) == 1, "the 3x40x5 matmul was measured and recorded"


def test_unknown_precision_is_a_usage_error(capsys, tmp_path):
    run = run_tool(capsys, [write(tmp_path), "--random", "--precision", "fp8"])
    assert run.code == 2 and "invalid choice: 'fp8'" in run.err and "Traceback" not in run.err


def test_target_cuda_runs_on_the_gpu_or_says_why_not(capsys, tmp_path):
    from tests.gpu.targets import gpu_unavailable_reason

    out = tmp_path / "out.npz"
    argv = [write(tmp_path, MATMUL), "--random", "--target", "cuda", "--save", str(out)]
    run = run_tool(capsys, argv)
    if (reason := gpu_unavailable_reason()) is not None:
        assert run.code == 1 and not out.exists()
        assert run.err.count("\n") == 1 and reason.split(":")[0] in run.err
        return
    assert (run.code, run.err) == (0, "")
    cpu_out = tmp_path / "cpu.npz"
    assert run_tool(capsys, [*argv[:2], "--save", str(cpu_out)]).code == 0
    with np.load(out) as gpu, np.load(cpu_out) as cpu:
        np.testing.assert_allclose(gpu["result0"], cpu["result0"], rtol=1e-5, atol=1e-6)


@pytest.mark.gpu
def test_profile_on_cuda_times_the_launches(capsys, tmp_path):
    from tests.gpu.targets import gpu_unavailable_reason

    if reason := gpu_unavailable_reason():
        pytest.skip(reason)
    run = run_tool(capsys, [write(tmp_path, MATMUL), "--random", "--target", "cuda", "--profile"])
    assert (run.code, run.err) == (0, "")
    assert "@main on cuda" in run.out and "prog.mlir:2" in run.out


def test_unknown_target_is_a_usage_error(capsys, tmp_path):
    run = run_tool(capsys, [write(tmp_path), "--random", "--target", "tpu"])
    assert run.code == 2 and "invalid choice: 'tpu'" in run.err


def test_specialize_runs_a_static_build_of_the_inputs_shapes(capsys, tmp_path):
    program = write(tmp_path)
    base = [program, "--entry", "twice", "--random", "--dim", "6", "--save"]
    plain = run_tool(capsys, [*base, str(tmp_path / "1.npz")])
    run = run_tool(capsys, [*base, str(tmp_path / "2.npz"), "--specialize", "--repeat", "3"])
    assert run.code == 0, run.err
    assert run.out.splitlines()[0] == plain.out.splitlines()[0]
    assert run.out.splitlines()[-1] == "specialize: 3 of 3 runs on a static build"
    after = ["--specialize", "--specialize-after", "3"]
    waiting = run_tool(capsys, [*base[:-1], "--dim", "7", *after])
    assert waiting.out.splitlines()[-1] == "specialize: 0 of 1 runs on a static build"
    static = run_tool(capsys, [program, "--random", "--specialize"])
    assert static.out.splitlines()[-1] == (
        "specialize: the function's inputs have static shapes already"
    )
