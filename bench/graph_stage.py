"""
Compile time of the `mlc` stage: the `simplify-graph` fixpoint against fixed rounds.

For each example (and the programs of tests/e2e/graph_programs.py), in one process,
alternating, medians of several rounds: the time `pipeline.run_stage(module, "mlc")`
takes, against the same passes with one round of `shape-inference,canonicalize` in
place of each `simplify-graph`, and the rounds each fixpoint needed.

Run: `.venv/bin/python bench/graph_stage.py`; results go to bench/results/graph-stage.md.
"""

import platform
import statistics
import sys
import time
from datetime import date
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE.parent))

from mlc.ir import parse_module  # noqa: E402
from mlc.lowering.graph.simplify_graph import simplify_graph  # noqa: E402
from mlc.pipeline import STAGES, run_pipeline  # noqa: E402
from mlc.registry import make_context  # noqa: E402
from tests.e2e.graph_programs import EXAMPLES, PROGRAMS  # noqa: E402

ROUNDS = 7
FIXED = STAGES["mlc"].replace("simplify-graph", "shape-inference,canonicalize")


def timed(source: str, spec: str) -> float:
    module = parse_module(source)
    start = time.perf_counter()
    run_pipeline(module, spec)
    return time.perf_counter() - start


def fixpoint_rounds(source: str) -> int:
    return simplify_graph(make_context(), parse_module(source))


def main() -> None:
    sources = {p.name: p.read_text() for p in EXAMPLES} | PROGRAMS
    lines = [
        f"## `mlc` stage compile time ({date.today()})",
        "",
        f"Machine: {platform.machine()}, {platform.processor() or 'cpu'}, shared with other"
        f" jobs; python {platform.python_version()}. Medians of {ROUNDS} alternating rounds.",
        f"Fixed: `{FIXED}`. Fixpoint: `{STAGES['mlc']}`.",
        "",
        "| program | fixed ms | fixpoint ms | ratio | rounds |",
        "|---|---|---|---|---|",
    ]
    for name, source in sources.items():
        fixed, fixpoint = [], []
        for _ in range(ROUNDS):
            fixed.append(timed(source, FIXED))
            fixpoint.append(timed(source, STAGES["mlc"]))
        a, b = statistics.median(fixed) * 1e3, statistics.median(fixpoint) * 1e3
        rounds = fixpoint_rounds(source)
        lines.append(f"| {name} | {a:.1f} | {b:.1f} | {b / a:.2f}x | {rounds} |")
        print(lines[-1], flush=True)
    out = HERE / "results" / "graph-stage.md"
    out.write_text("\n".join(lines) + "\n")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
