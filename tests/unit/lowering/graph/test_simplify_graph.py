"""`simplify-graph` stops on its passes' own change reports exactly where comparing the
printed module after each round would stop, with the same result."""

from pathlib import Path

import pytest

from mlc.ir import parse_module, print_module
from mlc.lowering.graph.canonicalize import canonicalize
from mlc.lowering.graph.shape_inference import refine_functions
from mlc.lowering.graph.simplify_graph import simplify_graph
from mlc.registry import make_context

GRAPH = Path(__file__).parents[3] / "filecheck" / "lowering" / "graph"
SOURCES = ["simplify-graph", "canonicalize", "shape-inference", "fuse-attention", "licm"]


def _programs() -> list[tuple[str, str]]:
    found = []
    for stem in SOURCES:
        path = GRAPH / f"{stem}.mlir"
        if path.exists():
            for i, text in enumerate(path.read_text().split("// -----")):
                found.append((f"{stem}#{i}", text))
    return found


def _by_printing(module) -> int:
    """The fixpoint found by comparing the printed module after each round."""
    ctx, rounds, after = make_context(), 0, print_module(module)
    while True:
        before = after
        refine_functions(module)
        canonicalize(ctx, module)
        rounds += 1
        after = print_module(module)
        if after == before:
            return rounds


@pytest.mark.parametrize(("name", "text"), _programs(), ids=[n for n, _ in _programs()])
def test_same_fixpoint_as_printing(name, text):
    ours, theirs = parse_module(text), parse_module(text)
    rounds = simplify_graph(make_context(), ours)
    assert rounds == _by_printing(theirs)
    assert print_module(ours) == print_module(theirs)


@pytest.mark.parametrize(("name", "text"), _programs(), ids=[n for n, _ in _programs()])
def test_canonicalize_reports_change(name, text):
    module = parse_module(text)
    before = print_module(module)
    changed = canonicalize(make_context(), module)
    assert changed == (print_module(module) != before)
    assert not canonicalize(make_context(), module)  # a second run finds nothing to do
