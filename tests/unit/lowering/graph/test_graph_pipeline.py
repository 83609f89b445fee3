"""The `mlc` stage as a whole: a second run changes nothing, and its output round-trips."""

import pytest

from mlc.ir import parse_module, print_module
from mlc.pipeline import run_stage
from tests.e2e.graph_programs import EXAMPLES, PROGRAMS

SOURCES = {path.name: path.read_text() for path in EXAMPLES} | PROGRAMS


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_mlc_stage_is_idempotent(name: str):
    module = parse_module(SOURCES[name])
    run_stage(module, "mlc")
    once = print_module(module)
    run_stage(module, "mlc")
    assert print_module(module) == once
    assert print_module(parse_module(once)) == once
