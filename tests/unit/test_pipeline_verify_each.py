"""
Verifying after every pass: `pipeline.run_pipeline(verify_each=...)`, the
`MLC_VERIFY_EACH` switch of `mlc.compile`, and `mlc-opt --verify-each`, each with a
pass that breaks the IR (registered for the test only): the error names the pass and
the op it left invalid.
"""

from dataclasses import dataclass

import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.dialects.linalg.ops import IndexOp
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

import mlc
from mlc import pipeline, registry
from mlc.compiler import executable_cache
from mlc.diagnostics import DiagnosticError
from mlc.ir import parse_module

PROGRAM = """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ml.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""

BROKEN = "test-misplace-index"


@dataclass(frozen=True)
class MisplaceIndexPass(ModulePass):
    """Puts a `linalg.index` at the top of every function, outside any generic."""

    name = BROKEN

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for function in [o for o in op.walk() if isinstance(o, func.FuncOp)]:
            Rewriter.insert_op(IndexOp(0), InsertPoint.at_start(function.body.block))


@pytest.fixture(autouse=True)
def broken_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.MLC_PASSES, BROKEN, lambda: MisplaceIndexPass)
    monkeypatch.delenv(pipeline.VERIFY_EACH_ENV, raising=False)


def errors_of(spec: str, **kwargs) -> list[str]:
    with pytest.raises(DiagnosticError) as raised:
        pipeline.run_pipeline(parse_module(PROGRAM), spec, **kwargs)
    return [d.message for d in raised.value.diagnostics]


def test_verify_each_names_the_pass_and_the_op():
    (message,) = errors_of(f"cse,{BROKEN},cse", verify_each=True)
    assert message.startswith("'linalg.index' op ")
    assert message.endswith(f"expects parent op 'linalg.generic' (invalid after pass '{BROKEN}')")


def test_without_verify_each_the_pipeline_is_verified_once():
    (message,) = errors_of(f"cse,{BROKEN},cse", verify_each=False)
    assert "expects parent op 'linalg.generic'" in message and "after pass" not in message


def test_without_verify_each_nor_verify_nothing_is_checked():
    module = parse_module(PROGRAM)
    pipeline.run_pipeline(module, BROKEN, verify=False, verify_each=False)
    assert any(isinstance(op, IndexOp) for op in module.walk())


def test_verify_each_checks_even_where_the_caller_verifies_later():
    (message,) = errors_of(BROKEN, verify=False, verify_each=True)
    assert message.endswith(f"(invalid after pass '{BROKEN}')")


@pytest.mark.parametrize(
    ("value", "on"),
    [("1", True), ("true", True), ("yes", True), ("0", False), ("", False), ("false", False)],
)
def test_environment_switch(monkeypatch, value, on):
    monkeypatch.setenv(pipeline.VERIFY_EACH_ENV, value)
    assert pipeline.verify_each_requested() is on
    (message,) = errors_of(BROKEN)
    assert ("after pass" in message) is on


def with_broken_stage(monkeypatch, stage: str) -> None:
    """`stage` of every target runs the broken pass after its own passes."""
    text = f"{pipeline.STAGES[stage]},{BROKEN}"
    monkeypatch.setitem(pipeline.STAGES, stage, text)
    monkeypatch.setattr(pipeline, "TARGET_STAGE_TEXT", {})


def test_compile_names_the_pass_under_mlc_verify_each(monkeypatch):
    with_broken_stage(monkeypatch, "linalg")
    monkeypatch.setenv(pipeline.VERIFY_EACH_ENV, "1")
    with pytest.raises(mlc.CompileError) as raised:
        mlc.compile(PROGRAM, emit="linalg")
    text = str(raised.value)
    assert "'linalg.index' op" in text and f"(invalid after pass '{BROKEN}')" in text
    assert "\n" not in text


def test_compile_without_the_switch_still_reports_the_invalid_op(monkeypatch):
    with_broken_stage(monkeypatch, "mlc")
    with pytest.raises(mlc.CompileError) as raised:
        mlc.compile(PROGRAM, emit="linalg")
    assert "'linalg.index' op" in str(raised.value) and "after pass" not in str(raised.value)


def test_a_valid_program_compiles_and_runs_under_mlc_verify_each(monkeypatch):
    import numpy as np

    monkeypatch.setenv(pipeline.VERIFY_EACH_ENV, "1")
    monkeypatch.setenv("MLC_CACHE", "0")  # lowered here, not found on disk or in memory
    monkeypatch.setattr(executable_cache, "memory", type(executable_cache.memory)())
    exe = mlc.compile(PROGRAM.replace("ml.neg", "ml.abs"))
    x = np.array([-1.5, 2.0, -3.0, 0.25], np.float32)
    np.testing.assert_array_equal(exe(x), np.abs(x))


def test_compile_verifies_the_emitted_module_only(monkeypatch):
    """Between stages nothing is verified; the module handed back is, once, with the
    cycle collector still paused (the lowering's IR is one large live graph)."""
    import gc

    from mlc import diagnostics

    calls = []
    real = diagnostics.verify_module

    def counted(module):
        calls.append(gc.isenabled())
        return real(module)

    monkeypatch.setattr(diagnostics, "verify_module", counted)
    mlc.compile(PROGRAM, emit="loops")
    assert len(calls) == 2  # the source as it is loaded, then the emitted module
    assert calls[1] is False
