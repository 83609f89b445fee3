"""
`mlc-opt` in-process: exit codes, what goes to stdout and stderr, `-o`, `--debug`,
and diagnostics emitted by passes.

The lit tests in tests/filecheck/tools/ check the text of each flag's output; these
check the contract around it: 0 on success, 1 on every kind of bad input, never a
traceback unless `--debug`, and no output file unless the run succeeded.
"""

import io
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from mlc.tools.mlc_opt import main
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import DiagnosticException

from mlc import driver, registry
from mlc.diagnostics import op_error, op_remark, op_warning
from mlc.dialects.ml import NegOp

VALID = """\
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  %1 = ml.abs %0 : (tensor<4xf32>) -> tensor<4xf32>
  func.return %1 : tensor<4xf32>
}
"""

# Parses, but the ml.neg result type contradicts the inferred one (line 2).
INVALID = VALID.replace(
    "%0 = ml.neg %a : (tensor<4xf32>) -> tensor<4xf32>",
    "%0 = ml.neg %a : (tensor<4xf32>) -> tensor<3xf32>",
).replace("%1 = ml.abs %0 : (tensor<4xf32>)", "%1 = ml.abs %0 : (tensor<3xf32>)")

# The ml.neg on line 2 lacks its `:`.
MALFORMED = VALID.replace("ml.neg %a : (", "ml.neg %a (")

UNREGISTERED = VALID.replace(
    "ml.abs %0 : (tensor<4xf32>) -> tensor<4xf32>",
    '"acme.frob"(%0) : (tensor<4xf32>) -> tensor<4xf32>',
)


def expecting(comment: str) -> str:
    """VALID with `comment` on a line of its own above the ml.neg (now line 3)."""
    return VALID.replace("{\n", f"{{\n  {comment}\n", 1)


@dataclass
class Run:
    code: int
    out: str
    err: str


def run_opt(capsys: pytest.CaptureFixture[str], argv: Sequence[str]) -> Run:
    """Run `mlc-opt argv` in-process; `--help` and friends exit through SystemExit."""
    try:
        code = main(list(argv))
    except SystemExit as done:
        code = done.code if isinstance(done.code, int) else 1
    captured = capsys.readouterr()
    return Run(code, captured.out, captured.err)


def write(tmp_path: Path, text: str | bytes, name: str = "in.mlir") -> str:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)
    return str(path)


def feed_stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))


# ---------------------------------------------------------------------------
# Success
# ---------------------------------------------------------------------------


def test_valid_input_exits_0_and_prints_the_module(capsys, tmp_path):
    run = run_opt(capsys, [write(tmp_path, VALID), "-p", "cse,canonicalize"])
    assert run.code == 0
    assert run.err == ""
    assert run.out.startswith("builtin.module {\n")
    # canonicalize folds abs(neg(a)) to abs(a).
    assert "ml.abs %a" in run.out


@pytest.mark.parametrize("argv", [[], ["-"]], ids=["no-argument", "dash"])
def test_stdin(capsys, monkeypatch, argv):
    feed_stdin(monkeypatch, VALID)
    run = run_opt(capsys, [*argv, "--print-debuginfo"])
    assert run.code == 0, run.err
    assert 'loc("<stdin>":2:3)' in run.out


@pytest.mark.parametrize(
    "text", ["", "\n", "// only a comment\n"], ids=["empty", "blank", "comment"]
)
def test_input_without_ops_is_an_empty_module(capsys, tmp_path, text):
    run = run_opt(capsys, [write(tmp_path, text), "--verify-roundtrip"])
    assert run.code == 0, run.err
    assert run.out == "builtin.module {\n}\n"


def test_split_input_file_with_a_trailing_separator(capsys, tmp_path):
    run = run_opt(capsys, [write(tmp_path, VALID + "\n// -----\n"), "--split-input-file"])
    assert run.code == 0, run.err
    assert run.out.count("// -----\n") == 1


def test_output_file_is_written_and_stdout_stays_empty(capsys, tmp_path):
    out = tmp_path / "out.mlir"
    run = run_opt(capsys, [write(tmp_path, VALID), "-o", str(out)])
    assert (run.code, run.out, run.err) == (0, "", "")
    expected = run_opt(capsys, [write(tmp_path, VALID)]).out
    assert out.read_text() == expected


@pytest.mark.parametrize("flag", ["--version", "--list-passes", "--help"])
def test_informational_flags_exit_0(capsys, flag):
    run = run_opt(capsys, [flag])
    assert run.code == 0
    assert run.out and run.err == ""


# ---------------------------------------------------------------------------
# Every kind of bad input: exit 1, a diagnostic on stderr, no traceback
# ---------------------------------------------------------------------------

# (id, input text or None for no file, extra arguments, text the error contains)
BAD_INPUTS: list[tuple[str, str | bytes | None, list[str], str]] = [
    ("unknown-pass", VALID, ["-p", "cs"], "unknown pass 'cs' (did you mean 'cse'?)"),
    ("bad-pass-option", VALID, ["-p", "canonicalize{bogus=1}"], "pass 'canonicalize'"),
    (
        "bad-option-value",
        VALID,
        ["-p", "memref-streamify{streams=x}"],
        "pass 'memref-streamify'",
    ),
    ("malformed-pipeline", VALID, ["-p", "cse{"], "invalid pass pipeline 'cse{'"),
    ("missing-file", None, [], "No such file or directory"),
    ("directory", None, ["."], "Is a directory"),
    ("unknown-flag", VALID, ["--no-such-flag"], "unrecognized arguments: --no-such-flag"),
    ("flag-without-value", VALID, ["-p"], "expected one argument"),
    ("two-inputs", VALID, ["extra.mlir"], "unrecognized arguments: extra.mlir"),
    ("not-utf8", b"\xff\xfe\x00", [], "is not UTF-8 text"),
    ("malformed-ir", MALFORMED, [], ":2:18: error: expected ':'"),
    ("ir-does-not-verify", INVALID, [], ":2:3: error: 'ml.neg' op result type"),
    ("unregistered-op", UNREGISTERED, [], "operation acme.frob is not registered"),
    (
        "unmet-expectation",
        expecting("// expected-error @+1 {{never}}"),
        ["--verify-diagnostics"],
        'expected error "never" was not produced',
    ),
    (
        "unexpected-diagnostic",
        INVALID,
        ["--verify-diagnostics"],
        "unexpected error: 'ml.neg' op result type",
    ),
    (
        "bad-chunk-among-good",
        VALID + "// -----\n" + INVALID,
        ["--split-input-file"],
        ":8:3: error: 'ml.neg' op result type",
    ),
]


def bad_argv(tmp_path: Path, text: str | bytes | None, extra: list[str]) -> list[str]:
    if text is None:
        if extra == ["."]:
            return [str(tmp_path)]
        return [str(tmp_path / "does-not-exist.mlir"), *extra]
    return [write(tmp_path, text), *extra]


@pytest.mark.parametrize(
    ("text", "extra", "message"),
    [case[1:] for case in BAD_INPUTS],
    ids=[case[0] for case in BAD_INPUTS],
)
def test_bad_input_exits_1_with_a_diagnostic(capsys, tmp_path, text, extra, message):
    run = run_opt(capsys, bad_argv(tmp_path, text, extra))
    assert run.code == 1
    assert message in run.err
    assert "Traceback" not in run.err
    first = run.err.splitlines()[0]
    assert first.startswith("mlc-opt: error: ") or ": error: " in first
    assert "internal error" not in run.err


@pytest.mark.parametrize(
    ("text", "extra", "message"),
    [case[1:] for case in BAD_INPUTS],
    ids=[case[0] for case in BAD_INPUTS],
)
def test_no_output_file_on_error(capsys, tmp_path, text, extra, message):
    out = tmp_path / "out" / "result.mlir"
    out.parent.mkdir()
    run = run_opt(capsys, [*bad_argv(tmp_path, text, extra), "-o", str(out)])
    assert run.code == 1
    assert not out.exists()
    assert run.out == ""


def test_usage_errors_are_one_line(capsys, tmp_path):
    run = run_opt(capsys, [write(tmp_path, VALID), "-p", "cs"])
    assert run.err == "mlc-opt: error: unknown pass 'cs' (did you mean 'cse'?)\n"
    assert run.out == ""


def test_unwritable_output_is_an_error(capsys, tmp_path):
    out = tmp_path / "missing-dir" / "out.mlir"
    run = run_opt(capsys, [write(tmp_path, VALID), "-o", str(out)])
    assert run.code == 1
    assert run.err.startswith(f"mlc-opt: error: cannot write '{out}'")
    assert "Traceback" not in run.err


def test_parse_error_shows_the_source_line_and_a_caret(capsys, tmp_path):
    path = write(tmp_path, MALFORMED)
    run = run_opt(capsys, [path])
    assert run.err.splitlines() == [
        f"{path}:2:18: error: expected ':'",
        "  %0 = ml.neg %a (tensor<4xf32>) -> tensor<4xf32>",
        " " * 17 + "^",
    ]


# ---------------------------------------------------------------------------
# Internal errors and --debug
# ---------------------------------------------------------------------------


def explode(*args: object, **kwargs: object) -> None:
    raise RuntimeError("boom")


def test_internal_error_is_one_line_without_debug(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(driver, "print_module", explode)
    out = tmp_path / "out.mlir"
    run = run_opt(capsys, [write(tmp_path, VALID), "-o", str(out)])
    assert run.code == 1
    assert run.err == (
        "mlc-opt: internal error: RuntimeError: boom (run with --debug for a traceback)\n"
    )
    assert not out.exists()


def test_debug_reraises_an_internal_error(capsys, tmp_path, monkeypatch):
    monkeypatch.setattr(driver, "print_module", explode)
    with pytest.raises(RuntimeError, match="boom"):
        main([write(tmp_path, VALID), "--debug"])


def test_debug_does_not_change_user_errors(capsys, tmp_path):
    run = run_opt(capsys, [write(tmp_path, INVALID), "--debug"])
    assert run.code == 1
    assert "'ml.neg' op result type" in run.err
    assert "Traceback" not in run.err


# ---------------------------------------------------------------------------
# Diagnostics from passes (a tiny test pass registered for the test)
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class DiagnosePass(ModulePass):
    """Reports on every ml.neg: a warning, a remark, an error, or an xDSL exception."""

    name: ClassVar[str] = "test-diagnose-neg"
    kind: str = "warning"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for neg in [o for o in op.walk() if isinstance(o, NegOp)]:
            match self.kind:
                case "warning":
                    op_warning(neg, "negation found")
                case "remark":
                    op_remark(neg, "negation found")
                case "error":
                    op_error(neg, "cannot handle negation")
                case "xdsl":
                    raise DiagnosticException("Something went wrong")
                case "crash":
                    raise KeyError("internal")
                case "break":
                    result = neg.results[0]
                    result._type = TensorType(f32, [3])  # pyright: ignore[reportPrivateUsage]


@pytest.fixture
def diagnose_pass(monkeypatch: pytest.MonkeyPatch) -> Callable[[str], list[str]]:
    monkeypatch.setitem(registry.MLC_PASSES, DiagnosePass.name, lambda: DiagnosePass)
    return lambda kind: ["-p", f"{DiagnosePass.name}{{kind={kind}}}"]


def test_test_pass_is_listed(capsys, diagnose_pass):
    assert DiagnosePass.name in run_opt(capsys, ["--list-passes"]).out.split()


@pytest.mark.parametrize(
    ("severity", "flags"), [("warning", []), ("warning", ["--remarks"]), ("remark", ["--remarks"])]
)
def test_non_fatal_diagnostic_goes_to_stderr(capsys, tmp_path, diagnose_pass, severity, flags):
    path = write(tmp_path, VALID)
    run = run_opt(capsys, [path, *diagnose_pass(severity), *flags])
    assert run.code == 0
    assert run.err == f"{path}:2:3: {severity}: 'ml.neg' op negation found\n"
    assert "ml.neg" in run.out
    assert "negation found" not in run.out


def test_remarks_are_off_by_default(capsys, tmp_path, diagnose_pass):
    run = run_opt(capsys, [write(tmp_path, VALID), *diagnose_pass("remark")])
    assert (run.code, run.err) == (0, "")
    assert "ml.neg" in run.out


def test_remarks_flag_does_not_outlive_the_run(capsys, tmp_path, diagnose_pass):
    path = write(tmp_path, VALID)
    run_opt(capsys, [path, *diagnose_pass("remark"), "--remarks"])
    assert run_opt(capsys, [path, *diagnose_pass("remark")]).err == ""


@pytest.mark.parametrize("severity", ["warning", "remark"])
@pytest.mark.parametrize("where", ["@+1", "@below"])
def test_expected_diagnostic_matches_under_verify_diagnostics(
    capsys, tmp_path, diagnose_pass, severity, where
):
    text = expecting(f"// expected-{severity} {where} {{{{negation found}}}}")
    argv = [write(tmp_path, text), "--verify-diagnostics", *diagnose_pass(severity)]
    run = run_opt(capsys, argv)
    assert (run.code, run.err) == (0, "")
    assert "ml.neg" in run.out


def test_unexpected_warning_fails_verify_diagnostics(capsys, tmp_path, diagnose_pass):
    path = write(tmp_path, VALID)
    run = run_opt(capsys, [path, "--verify-diagnostics", *diagnose_pass("warning")])
    assert run.code == 1
    first = run.err.splitlines()[0]
    assert first == f"{path}:2:3: error: unexpected warning: 'ml.neg' op negation found"


def test_warning_is_not_an_expected_error(capsys, tmp_path, diagnose_pass):
    text = expecting("// expected-error @+1 {{negation found}}")
    argv = [write(tmp_path, text), "--verify-diagnostics", *diagnose_pass("warning")]
    run = run_opt(capsys, argv)
    assert run.code == 1
    assert "unexpected warning" in run.err
    assert 'expected error "negation found" was not produced' in run.err


def test_op_error_in_a_pass(capsys, tmp_path, diagnose_pass):
    path = write(tmp_path, VALID)
    out = tmp_path / "out.mlir"
    run = run_opt(capsys, [path, *diagnose_pass("error"), "-o", str(out)])
    assert run.code == 1
    assert run.err.startswith(f"{path}:2:3: error: 'ml.neg' op cannot handle negation\n")
    assert not out.exists()


def test_op_error_matches_expected_error(capsys, tmp_path, diagnose_pass):
    text = expecting("// expected-error @+1 {{cannot handle negation}}")
    argv = [write(tmp_path, text), "--verify-diagnostics", *diagnose_pass("error")]
    run = run_opt(capsys, argv)
    assert (run.code, run.err) == (0, "")


def test_xdsl_exception_in_a_pass(capsys, tmp_path, diagnose_pass):
    run = run_opt(capsys, [write(tmp_path, VALID), *diagnose_pass("xdsl")])
    assert run.code == 1
    assert run.err == "error: pass 'test-diagnose-neg' failed: something went wrong\n"


def test_pass_that_breaks_the_ir_is_caught_by_the_verifier(capsys, tmp_path, diagnose_pass):
    path = write(tmp_path, VALID)
    run = run_opt(capsys, [path, *diagnose_pass("break")])
    assert run.code == 1
    assert f"{path}:2:3: error: 'ml.neg' op result type tensor<3xf32>" in run.err
    assert "Traceback" not in run.err


def test_crash_in_a_pass_is_an_internal_error(capsys, tmp_path, diagnose_pass):
    run = run_opt(capsys, [write(tmp_path, VALID), *diagnose_pass("crash")])
    assert run.code == 1
    assert run.err.startswith("mlc-opt: internal error: KeyError")
    assert "Traceback" not in run.err
    with pytest.raises(KeyError):
        main([write(tmp_path, VALID), *diagnose_pass("crash"), "--debug"])


def test_dumps_and_timing_go_to_stderr(capsys, tmp_path, diagnose_pass):
    out = tmp_path / "out.mlir"
    argv = [write(tmp_path, VALID), "-p", "cse", "--print-ir-after-all", "--timing"]
    run = run_opt(capsys, [*argv, "-o", str(out)])
    assert run.code == 0
    assert run.out == ""
    assert "// -----// IR Dump After cse //----- //" in run.err
    assert "Execution time report" in run.err
    assert "IR Dump" not in out.read_text()


def test_unexpected_remark_fails_verify_diagnostics(capsys, tmp_path, diagnose_pass):
    """Under --verify-diagnostics remarks are captured even without --remarks."""
    path = write(tmp_path, VALID)
    run = run_opt(capsys, [path, "--verify-diagnostics", *diagnose_pass("remark")])
    assert run.code == 1
    assert run.err.splitlines()[0] == (
        f"{path}:2:3: error: unexpected remark: 'ml.neg' op negation found"
    )
