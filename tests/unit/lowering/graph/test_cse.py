"""mlc's `cse` replaces and erases exactly what xDSL's `cse` does, on every lit test
program that parses, on loop-level IR, and on a GPU stage's input."""

from pathlib import Path

import pytest
from xdsl.transforms.common_subexpression_elimination import cse as xdsl_cse

from mlc import pipeline
from mlc.ir import parse_module, print_module
from mlc.lowering.graph.cse import cse

FILECHECK = Path(__file__).parents[3] / "filecheck"
LEVELS = ("lowering",)


def _programs() -> list[tuple[str, str]]:
    found = []
    for level in LEVELS:
        for source in sorted((FILECHECK / level).rglob("*.mlir")):
            for i, text in enumerate(source.read_text().split("// -----")):
                try:
                    parse_module(text)
                except Exception:  # a test of a parse error, or of an unregistered op
                    continue
                found.append((f"{source.relative_to(FILECHECK)}#{i}", text))
    return found


PROGRAMS = _programs()


@pytest.mark.parametrize(("name", "text"), PROGRAMS, ids=[n for n, _ in PROGRAMS])
def test_same_as_xdsl(name, text):
    ours, theirs = parse_module(text), parse_module(text)
    cse(ours)
    xdsl_cse(theirs)
    assert print_module(ours) == print_module(theirs)


def test_enough_programs():
    assert len(PROGRAMS) > 200


@pytest.mark.parametrize("stage", ["loops", "parallel-loops"])
def test_same_as_xdsl_on_a_network(stage):
    """The loops of a small CNN's `loops` (CPU) or `parallel-loops` (GPU) stage."""
    examples = Path(__file__).parents[4] / "examples"
    text = (examples / "convnet.mlir").read_text()
    target = "cpu" if stage == "loops" else "gpu"
    module = parse_module(text)
    for each in pipeline.stages_for(target, stage)[:-1]:
        pipeline.run_stage(module, each, target=target)
    specs = pipeline.stage_text(stage, target=target).split(",")
    pipeline.run_pipeline(module, ",".join(specs[: specs.index("cse")]))
    ours, theirs = module.clone(), module.clone()
    cse(ours)
    xdsl_cse(theirs)
    assert print_module(ours) == print_module(theirs)
    assert print_module(ours) != print_module(module)
