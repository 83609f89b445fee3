"""`mlc.timing`: nested phases, reports whose lines add up, and `MLC_TIMING=1`."""

import re
import time

import numpy as np
import pytest

import mlc
from mlc import pipeline, timing
from mlc.timing import OTHER, Timer

PROGRAM = """
func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = ml.matmul %a, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = ml.relu %0 : (tensor<8x4xf32>) -> tensor<8x4xf32>
  func.return %1 : tensor<8x4xf32>
}
"""

ROW = re.compile(r"^\s+(\d+\.\d+) \(\s*[\d.]+%\)  ( *)(.+)$")


def _rows(report: str) -> list[tuple[int, str, float]]:
    """(depth, name, seconds) of each line of a report, `Total` last."""
    rows = []
    for line in report.splitlines():
        if match := ROW.match(line):
            rows.append((len(match.group(2)) // 2, match.group(3), float(match.group(1))))
    return rows


def _check_adds_up(rows: list[tuple[int, str, float]]) -> None:
    """Every parent equals the sum of its children, and the top level the total."""
    *rows, (_, total_name, total) = rows
    assert total_name == "Total"
    assert sum(s for depth, _, s in rows if depth == 0) == pytest.approx(total, abs=1e-3)
    for index, (depth, name, seconds) in enumerate(rows):
        children = []
        for child_depth, _, child_seconds in rows[index + 1 :]:
            if child_depth <= depth:
                break
            if child_depth == depth + 1:
                children.append(child_seconds)
        if children:
            assert sum(children) == pytest.approx(seconds, abs=1e-3), name


def test_nested_phases_are_recorded_under_their_parent():
    timer = Timer()
    with timer.phase("outer"):
        with timer.phase("inner"):
            time.sleep(0.002)
        with timer.phase("inner"):
            pass
        timer.add("elsewhere", 0.5)
    with timer.phase("second"):
        pass
    assert list(timer.seconds) == ["outer", "second"]
    assert set(timer.nested) == {
        ("outer",),
        ("outer", "inner"),
        ("outer", "elsewhere"),
        ("second",),
    }
    assert timer.nested[("outer", "elsewhere")] == 0.5
    assert timer.nested[("outer", "inner")] >= 0.002
    rows = timer.rows()
    assert [(d, n) for d, n, _ in rows] == [
        (0, "outer"),
        (1, "inner"),
        (1, "elsewhere"),
        (1, OTHER),
        (0, "second"),
    ]


def test_by_time_sorts_each_level_slowest_first():
    timer = Timer()
    timer.add_path(("a",), 1.0)
    timer.add_path(("b",), 3.0)
    timer.add_path(("b", "x"), 1.0)
    timer.add_path(("b", "y"), 1.5)
    names = [n for _, n, _ in timer.rows(by_time=True)]
    assert names == ["b", "y", "x", OTHER, "a"]
    rows = _rows(timer.report(by_time=True))
    assert rows[-1] == (0, "Total", 4.0)
    _check_adds_up(rows)


def test_module_level_phase_records_into_the_active_timer_only():
    with timing.phase("nobody listens"):
        pass
    timer = Timer()
    with timer.active(), timer.phase("stage"):
        assert timing.current() is timer
        with timing.phase("pass"):
            pass
    assert timing.current() is None
    assert ("stage", "pass") in timer.nested


def test_run_pipeline_times_each_pass_and_the_verifier():
    module = mlc.compile(PROGRAM, emit="mlc")
    timer = Timer()
    with timer.active(), timer.phase("stage linalg"):
        pipeline.run_pipeline(module, "convert-ml-to-linalg,linalg-fuse-elementwise")
    passes = [path[1] for path in timer.nested if len(path) == 2]
    assert passes == ["convert-ml-to-linalg", "linalg-fuse-elementwise", "verify"]


def test_mlc_timing_prints_every_stage_and_adds_up(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("MLC_TIMING", "1")
    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path))
    exe = mlc.compile(PROGRAM)
    a = np.random.default_rng(0).standard_normal((8, 16), dtype=np.float32)
    b = np.random.default_rng(1).standard_normal((16, 4), dtype=np.float32)
    np.testing.assert_allclose(exe(a, b), np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)
    err = capsys.readouterr().err
    assert err.startswith("mlc.compile: cpu, compiled\n")
    rows = _rows(err)
    names = {name for _, name, _ in rows}
    stages = {f"stage {s}" for s in pipeline.stages_for("cpu")}
    assert stages <= {name for depth, name, _ in rows if depth == 0}
    assert {"canonicalize", "convert-to-llvm", "cache lookup"} <= names
    assert {"translate to LLVM IR", "LLVM optimize", "LLVM codegen"} <= names
    _check_adds_up(rows)
    top = [seconds for depth, _, seconds in rows[:-1] if depth == 0]
    assert top == sorted(top, reverse=True)


def test_mlc_timing_off_prints_nothing(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("MLC_TIMING", "0")
    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path))
    mlc.compile(PROGRAM.replace("ml.relu", "ml.neg"))
    assert capsys.readouterr().err == ""
