"""The conformance report (`tools/onnx_conformance.py`) is the same on every run."""

import random

from mlc.tools.onnx_conformance import Outcome, report, stable

OUTCOMES = [
    Outcome("test_relu", "Relu", "pass", "pass"),
    Outcome("test_b", "Dropout", "output 0: wrong values (max abs error 0.031)", "pass"),
    Outcome(
        "test_a", "Dropout", "import/compile: a | b", "output 0: wrong values (max abs error 10.2)"
    ),
    Outcome("test_c", "Cast", "crash: TypeError: <object at 0x7f3a2c1d>", "pass"),
    Outcome("test_d", "Cast", "import/compile: element type INT4 is not supported", "pass"),
]


def test_report_does_not_depend_on_the_order_of_outcomes():
    shuffled = OUTCOMES[:]
    random.Random(1).shuffle(shuffled)
    first = report({"static": OUTCOMES}, ["Relu", "Dropout", "Cast"])
    assert report({"static": shuffled}, ["Cast", "Dropout", "Relu"]) == first
    failures = first[first.index("## Failures") :].splitlines()
    listed = [line.split("`")[1] for line in failures if line.startswith("- ")]
    assert listed == ["test_c", "test_d", "test_a", "test_b"]  # by op, then by test


def test_verdicts_lose_what_varies_between_runs():
    assert stable("output 0: wrong values (max abs error 5.11)") == "output 0: wrong values"
    assert stable("crash: <Op at 0x7f3a2c1d> | x") == "crash: <Op at 0x?> / x"
    assert (
        stable("import/compile: node 'Split_0' failed") == "import/compile: node 'Split_0' failed"
    )


def test_failure_counts_break_ties_by_name():
    text = report({"static": OUTCOMES}, ["Relu", "Dropout", "Cast"])
    assert "### static (4: import or compile error: 1, internal error: 1, " in text
