"""The example programs stay valid and go through the pipeline `make run` shows."""

from pathlib import Path

import pytest

from mlc import driver
from mlc.registry import parse_pipeline

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("*.mlir"))


def test_there_are_examples():
    assert len(EXAMPLES) >= 4


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_compiles_through_graph_passes(path: Path):
    options = driver.OptOptions(
        passes=parse_pipeline("canonicalize,matmul-chain-reorder,cse,licm,dce"),
        verify_roundtrip=True,
    )
    result = driver.process(path.read_text(), str(path), options)
    assert result.diagnostics == []
    assert result.output is not None and "func.func" in result.output
