"""
The progress line of long compiles: forced on with MLC_PROGRESS=1 it shows the phase
and kernels done / total on the given stream; off in pipes, under pytest and with
MLC_PROGRESS=0.
"""

import io

import pytest

import mlc
from mlc import progress
from mlc.timing import Timer

pytest.importorskip("tqdm")


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_forced_on_shows_phases_and_kernels(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_PROGRESS", "1")
    monkeypatch.setattr(progress, "DELAY", 0.0)
    stream, timer = io.StringIO(), Timer()
    with progress.display(timer, "model.onnx", stream):
        with timer.phase("stage loops"), timer.phase("canonicalize"):
            pass
        progress.kernels(3)
        for _ in range(3):
            progress.advance()
    shown = stream.getvalue()
    assert "model.onnx: stage loops / canonicalize" in shown
    assert "3/3 kernels" in shown
    assert timer.on_phase is None  # the timer is left as it was


def test_nested_displays_draw_one_line(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_PROGRESS", "1")
    monkeypatch.setattr(progress, "DELAY", 0.0)
    outer, inner, timer = io.StringIO(), io.StringIO(), Timer()
    with progress.display(timer, "a", outer), progress.display(timer, "b", inner):
        with timer.phase("x"):
            pass
    assert "a: x" in outer.getvalue() and inner.getvalue() == ""


@pytest.mark.parametrize(
    ("asked", "stream", "under_pytest", "shown"),
    [
        ("", io.StringIO(), False, False),  # a pipe or a file
        ("", Terminal(), False, True),  # a terminal
        ("", Terminal(), True, False),  # a terminal, but in a test
        ("0", Terminal(), False, False),
        ("1", io.StringIO(), True, True),
    ],
)
def test_when_it_is_shown(asked, stream, under_pytest, shown, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_PROGRESS", asked)
    if under_pytest:
        monkeypatch.setenv("PYTEST_CURRENT_TEST", "t")
    else:
        monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    assert progress.enabled(stream) is shown


def test_a_compile_in_a_test_prints_nothing(monkeypatch, capfd: pytest.CaptureFixture[str]):
    monkeypatch.delenv("MLC_PROGRESS", raising=False)
    monkeypatch.delenv("MLC_TIMING", raising=False)
    monkeypatch.setattr(progress, "DELAY", 0.0)
    mlc.compile(
        "func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {\n  func.return %x : tensor<3xf32>\n}"
    )
    assert capfd.readouterr().err == ""
