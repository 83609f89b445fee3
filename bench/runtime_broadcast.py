"""
What numpy broadcasting decided at run time costs: one elementwise add of two
`n x n` f32 arrays (and a matmul), compiled with static shapes, with dynamic dims
the compiler can prove equal (`ml.dim_names`), and with unrelated dynamic dims
(checked, and read through `tensor.extract` at a run-time stride). Same process,
systems alternated, medians; writes bench/results/runtime-broadcast.md.

    .venv/bin/python bench/runtime_broadcast.py [--n 1024] [--repeats 21]
"""

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import machine
import numpy as np

import mlc

RESULTS = Path(__file__).parent / "results" / "runtime-broadcast.md"


def program(op: str, lhs: str, rhs: str, out: str, attrs: str = "") -> str:
    return f"""
func.func @main(%a: {lhs}{attrs}, %b: {rhs}{attrs}) -> {out} {{
  %r = {op} %a, %b : ({lhs}, {rhs}) -> {out}
  func.return %r : {out}
}}
"""


def variants(n: int, op: str) -> dict[str, str]:
    static = f"tensor<{n}x{n}xf32>"
    dynamic = "tensor<?x?xf32>"
    named = ' {ml.dim_names = ["m", "n"]}' if op == "ml.add" else ""
    result = {
        "static": program(op, static, static, static),
        "dynamic, unrelated dims": program(op, dynamic, dynamic, dynamic),
    }
    if named:
        result["dynamic, named dims"] = program(op, dynamic, dynamic, dynamic, named)
    return result


def median_time(run: Callable[[], object], repeats: int) -> float:
    times: list[float] = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def measure(n: int, repeats: int) -> list[str]:
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((n, n)).astype(np.float32) for _ in range(2))
    rows: list[str] = []
    for op in ("ml.add", "ml.matmul"):
        compiled = {name: mlc.compile(text) for name, text in variants(n, op).items()}
        samples: dict[str, list[float]] = {name: [] for name in compiled}
        for _ in range(5):  # alternate the systems, several rounds
            for name, exe in compiled.items():
                samples[name].append(median_time(lambda exe=exe: exe(a, b), repeats))
        base = statistics.median(samples["static"])
        for name, values in samples.items():
            median = statistics.median(values)
            rows.append(f"| {op} {n}x{n} | {name} | {median * 1e3:.3f} | {median / base:.2f} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n", type=int, default=1024)
    parser.add_argument("--repeats", type=int, default=21)
    args = parser.parse_args()
    rows = measure(args.n, args.repeats)
    text = [
        "# Run-time broadcasting: cost of dynamic dims",
        "",
        *machine.describe(),
        "",
        "Median ms per call (medians of 5 alternating rounds of "
        f"{args.repeats} calls); ratio to the static program.",
        "",
        "| program | variant | ms | vs static |",
        "|---|---|---|---|",
        *rows,
        "",
    ]
    RESULTS.write_text("\n".join(text))
    print("\n".join(text))


if __name__ == "__main__":
    main()
