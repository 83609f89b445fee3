"""
`mlc-translate` in-process: LLVM IR from any level of the CPU lowering, `-O3`, `-o`,
and the error contract (exit 1, a located diagnostic, no traceback, no `-o` file).
"""

import io
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from mlc.tools.mlc_translate import main

from mlc.ir import parse_module, print_module
from mlc.pipeline import lower

PROGRAM = """\
func.func @scale(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ml.mul %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""


@dataclass
class Run:
    code: int
    out: str
    err: str


def run_tool(capsys: pytest.CaptureFixture[str], argv: Sequence[str]) -> Run:
    """Run `mlc-translate argv` in-process; argparse errors exit through SystemExit."""
    try:
        code = main(list(argv))
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    captured = capsys.readouterr()
    return Run(code, captured.out, captured.err)


def write(tmp_path: Path, text: str = PROGRAM) -> str:
    path = tmp_path / "in.mlir"
    path.write_text(text)
    return str(path)


def lowered_to(stage: str) -> str:
    return print_module(lower(parse_module(PROGRAM), "cpu", stage))


def test_ml_input_is_lowered_and_translated(capsys, tmp_path):
    run = run_tool(capsys, ["--mlir-to-llvmir", write(tmp_path)])
    assert (run.code, run.err) == (0, "")
    assert 'define {ptr, ptr, i64, [1 x i64], [1 x i64]} @"scale"(' in run.out
    assert 'define void @"_mlc_invoke_scale"(ptr' in run.out
    assert "fmul float" in run.out and "phi " in run.out  # a loop around the product


@pytest.mark.parametrize("stage", ["mlc", "linalg", "loops", "llvm"])
def test_every_level_gives_the_same_ir(capsys, tmp_path, stage):
    from_ml = run_tool(capsys, ["--mlir-to-llvmir", write(tmp_path)])
    from_stage = run_tool(capsys, ["--mlir-to-llvmir", write(tmp_path, lowered_to(stage))])
    assert from_stage.code == 0, from_stage.err
    assert from_stage.out == from_ml.out


def test_stdin(capsys, monkeypatch):
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(PROGRAM.encode())))
    run = run_tool(capsys, ["--mlir-to-llvmir", "-"])
    assert run.code == 0 and '@"scale"' in run.out


def test_optimize_gives_o3_ir(capsys, tmp_path):
    run = run_tool(capsys, ["--mlir-to-llvmir", "-O3", write(tmp_path)])
    assert run.code == 0, run.err
    assert "@scale(" in run.out
    assert "phi " not in run.out  # four elements: the loop is unrolled


def test_output_file(capsys, tmp_path):
    out = tmp_path / "out.ll"
    run = run_tool(capsys, ["--mlir-to-llvmir", write(tmp_path), "-o", str(out)])
    assert (run.code, run.out, run.err) == (0, "", "")
    assert 'define void @"_mlc_invoke_scale"' in out.read_text()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (PROGRAM.replace("%a, %b :", "%a, %b"), ":2:22: error: expected ':'"),
        (
            PROGRAM.replace(
                "-> tensor<4xf32>\n  func.return %0", "-> tensor<3xf32>\n  func.return %a"
            ),
            ":2:3: error: 'ml.mul' op result type",
        ),
    ],
    ids=["parse-error", "verify-error"],
)
def test_bad_ir_exits_1_without_writing_output(capsys, tmp_path, text, message):
    out = tmp_path / "out.ll"
    run = run_tool(capsys, ["--mlir-to-llvmir", write(tmp_path, text), "-o", str(out)])
    assert run.code == 1
    assert message in run.err and "Traceback" not in run.err
    assert not out.exists()


def test_missing_file(capsys, tmp_path):
    run = run_tool(capsys, ["--mlir-to-llvmir", str(tmp_path / "nope.mlir")])
    assert run.code == 1
    assert (
        run.err
        == f"mlc-translate: error: cannot read '{tmp_path}/nope.mlir': No such file or directory\n"
    )


def test_a_translation_flag_is_required(capsys, tmp_path):
    run = run_tool(capsys, [write(tmp_path)])
    assert run.code == 2
    assert "one of the arguments --mlir-to-llvmir --mlir-to-ptx is required" in run.err
