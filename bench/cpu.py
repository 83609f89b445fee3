"""
The CPU benchmark suite: mlc against numpy, onnxruntime and IREE, in one process.

For each workload (bench/workloads.py) every system that can run it is compiled and
checked against the numpy reference; then the systems are timed in alternating rounds
(so all see the same machine noise) until each has `--min-runs` rounds and the row's
time budget is spent, or `--max-runs`. In each round a system runs a short burst of
calls back to back, and the burst's first call (after the other systems ran) is
reported apart. The table gives medians, rates against the measured limits
(bench/machine.py: FMA peak, copy bandwidth) and speed ratios (`vs numpy` = numpy's
median / the system's: above 1 is faster than numpy). A system that cannot run a row
gets the reason instead of a number. Compile times follow:
mlc cold (empty disk cache) and cached (a new process's compile: in-memory cache
cleared, disk cache hit), IREE's compile and its load of the compiled module,
onnxruntime's session creation.

    make bench                               # the full run, writes bench/results.md
    .venv/bin/python bench/cpu.py --quick    # small sizes, seconds (the smoke test)
"""

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import machine
import systems
import workloads
from systems import ALLOCATES_PER_CALL, Missing, Prepared
from workloads import SYSTEMS, Workload


@dataclass
class Row:
    workload: Workload
    times: dict[str, list[float]] = field(default_factory=dict[str, list[float]])
    first: dict[str, list[float]] = field(default_factory=dict[str, list[float]])
    prepared: dict[str, Prepared] = field(default_factory=dict[str, Prepared])
    missing: dict[str, str] = field(default_factory=dict[str, str])
    compile_s: dict[str, tuple[float | None, float | None]] = field(
        default_factory=dict[str, tuple[float | None, float | None]]
    )  # system -> (compile, cached compile or load)

    def median(self, system: str) -> float | None:
        times = self.times.get(system)
        return statistics.median(times) if times else None

    def first_median(self, system: str) -> float | None:
        times = self.first.get(system)
        return statistics.median(times) if times else None


def _prepare(workload: Workload, system: str, quick: bool) -> Prepared:
    """Compile `workload` for `system`; `Missing` if it cannot."""
    if why := workload.missing.get(system):
        raise Missing(why)
    args = workload.inputs
    if system == "numpy":
        return systems.prepare_numpy(workload.numpy, args)
    if system in workload.extra:
        return systems.prepare_numpy(workload.extra[system], args)
    if system == "mlc" and workload.mlc is not None:
        return systems.prepare_mlc(workload.mlc(), args)
    if system == "onnxruntime" and workload.onnx is not None:
        return systems.prepare_onnxruntime(workload.onnx(), args)
    if system == "IREE" and workload.iree is not None:
        if quick:
            raise Missing("skipped with --quick (an IREE compile takes seconds)")
        text, input_type = workload.iree()
        return systems.prepare_iree(text, args, input_type)
    raise Missing("no version of this workload for it")


def _check(row: Row, system: str, want: Any) -> None:
    got = row.prepared[system].result()
    pairs = zip(got, want, strict=True) if isinstance(want, tuple) else [(got, want)]
    tolerance = row.workload.tolerance
    for g, w in pairs:
        g = np.asarray(g)
        if g.shape != w.shape or not np.allclose(g, w, rtol=tolerance, atol=tolerance):
            error = np.abs(g - w).max() if g.shape == w.shape else f"shape {g.shape} != {w.shape}"
            raise Missing(f"wrong result (max error {error}): not timed")


def prepare(workload: Workload, quick: bool) -> Row:
    row = Row(workload)
    names = [*SYSTEMS, *workload.extra]
    for system in names:
        try:
            row.prepared[system] = _prepare(workload, system, quick)
        except Missing as error:
            row.missing[system] = str(error)
        except Exception as error:  # a system's own failure is a row note, not a crash
            row.missing[system] = f"failed: {type(error).__name__}: {str(error).splitlines()[0]}"
    if "numpy" not in row.prepared:
        return row
    reference = row.prepared["numpy"].result()
    want = (
        tuple(np.array(w) for w in reference)
        if isinstance(reference, tuple)
        else np.array(reference)
    )
    for system in list(row.prepared):
        if system == "numpy":
            continue
        try:
            _check(row, system, want)
        except Missing as error:
            row.missing[system] = str(error)
            del row.prepared[system]
    return row


def alternate(
    runs: dict[str, Callable[[], object]], budget: float, min_runs: int, max_runs: int
) -> dict[str, list[float]]:
    """
    Seconds per call of each of `runs`, one call each per round, so all see the same
    machine noise; rounds go on until `min_runs` and `budget` seconds are both reached,
    or `max_runs`. The one timing loop of the benchmarks.
    """
    times: dict[str, list[float]] = {name: [] for name in runs}
    start = time.perf_counter()
    for round_ in range(max_runs):
        if round_ >= min_runs and time.perf_counter() - start > budget:
            break
        for name, run in runs.items():
            t = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t)
    return times


@dataclass(frozen=True)
class Bursts:
    """How long each system runs back to back per round, and how much of that is settling."""

    seconds: float = 0.3
    settle: float = 0.1  # another system's BLAS threads spin ~50 ms after its last call


def bursts(
    runs: dict[str, Callable[[], object]],
    budget: float,
    min_runs: int,
    max_runs: int,
    shape: Bursts = Bursts(),
) -> tuple[dict[str, list[float]], dict[str, list[float]]]:
    """
    Seconds per call of each of `runs`, timed in rounds as `alternate` does, but each
    system runs calls back to back for `shape.seconds` per round (at least two), as a
    server issues them.

    Returns the times of the calls that start after the burst's settling time, and the
    times of each burst's first call, apart: on a 2-core machine a call that follows
    another system's work (its own threads asleep, its caches cold, the other's threads
    still spinning) can take twice its back-to-back time, and mixing the two made the
    medians of fast calls bimodal from run to run.
    """
    settled: dict[str, list[float]] = {name: [] for name in runs}
    first: dict[str, list[float]] = {name: [] for name in runs}
    start = time.perf_counter()
    for round_ in range(max_runs):
        if round_ >= min_runs and time.perf_counter() - start > budget:
            break
        for name, run in runs.items():
            burst_start = time.perf_counter()
            calls = 0
            while calls < 2 or time.perf_counter() - burst_start < shape.seconds:
                t = time.perf_counter()
                run()
                took = time.perf_counter() - t
                if calls == 0:
                    first[name].append(took)
                elif t - burst_start >= shape.settle:
                    settled[name].append(took)
                calls += 1
    return settled, first


def burst_medians(runs: dict[str, Callable[[], object]], rounds: int) -> dict[str, float]:
    """Median seconds per call of each of `runs` over `rounds` rounds of `bursts`."""
    settled, _ = bursts(runs, 0.0, rounds, rounds)
    return {name: statistics.median(times) for name, times in settled.items()}


def publish(text: str, output: str) -> None:
    """Print a report and append it to `output` (a results file; `-` only prints)."""
    print(text)
    if output != "-":
        with open(output, "a") as out:
            out.write("\n" + text)


def time_row(
    row: Row, budget: float, min_runs: int, max_runs: int, shape: Bursts = Bursts()
) -> None:
    """Time the row's systems in alternating bursts (`bursts`), then drop their compiled code."""
    row.times, row.first = bursts(
        {name: p.run for name, p in row.prepared.items()}, budget, min_runs, max_runs, shape
    )
    row.compile_s = {n: (p.compile_s, p.cached_compile_s) for n, p in row.prepared.items()}
    row.prepared.clear()  # the compiled code and its buffers are no longer needed


def _rate(row: Row, system: str, limits: dict[str, machine.Limit]) -> tuple[str, str]:
    median = row.median(system)
    workload = row.workload
    if median is None or not workload.unit:
        return "", ""
    scale = 1e9
    rate = workload.work / median / scale
    limit = limits.get(workload.limit)
    share = f"{100 * rate / limit.value:.0f}%" if limit else ""
    return f"{rate:.1f} {workload.unit}", share


def _first_call(row: Row, system: str) -> str:
    """The median first call of a burst, and how much slower it is than back to back."""
    first, median = row.first_median(system), row.median(system)
    if first is None or median is None:
        return ""
    return f"{first * 1e3:.3f} ({first / median:.2f}x)"


def _ratio(row: Row, system: str, base: str) -> str:
    mine, theirs = row.median(system), row.median(base)
    if mine is None or theirs is None:
        return ""
    return f"{theirs / mine:.2f}x"


def table(rows: list[Row], limits: dict[str, machine.Limit]) -> list[str]:
    lines = [
        "| workload | system | median ms | rate | % of limit | vs numpy | vs onnxruntime | "
        "first call ms | runs |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        for system in [*SYSTEMS, *row.workload.extra]:
            name = row.workload.name
            if system in row.missing:
                lines.append(f"| {name} | {system} | - | | | | | | {row.missing[system]} |")
                continue
            median = row.median(system)
            if median is None:
                continue
            rate, share = _rate(row, system, limits)
            lines.append(
                f"| {name} | {system} | {median * 1e3:.3f} | {rate} | {share} | "
                f"{_ratio(row, system, 'numpy')} | {_ratio(row, system, 'onnxruntime')} | "
                f"{_first_call(row, system)} | {len(row.times[system])} |"
            )
    return lines


# Issue targets: (workload name starts with, baseline system, least speed ratio vs it).
TARGETS = [
    ("matmul 1024", "numpy", 0.8),
    ("relu(a*b+c)", "numpy", 3.0),
    ("softmax 4096", "numpy", 3.0),
    ("MLP", "onnxruntime", 1.0),
    ("transformer block", "onnxruntime", 1.0),
    ("ResNet-style CNN", "onnxruntime", 0.7),
    *((name, "IREE", 1.0) for name in ("matmul", "relu(a*b+c)", "softmax", "MLP", "ResNet")),
    ("transformer block", "IREE", 1.0),
]


def target_table(rows: list[Row]) -> list[str]:
    """Each target of the issue against this run: mlc's speed ratio, met or by how much not."""
    lines = ["| workload | mlc vs | needs | measured | met |", "|---|---|---|---|---|"]
    for prefix, base, need in TARGETS:
        for row in rows:
            if not row.workload.name.startswith(prefix):
                continue
            mine, theirs = row.median("mlc"), row.median(base)
            if mine is None or theirs is None:
                missing = row.missing.get("mlc") or row.missing.get(base, "not measured")
                lines.append(f"| {row.workload.name} | {base} | {need:g}x | - | {missing} |")
                continue
            ratio = theirs / mine
            met = "yes" if ratio >= need else f"no ({need / ratio:.1f}x short)"
            lines.append(f"| {row.workload.name} | {base} | {need:g}x | {ratio:.2f}x | {met} |")
    return lines


def compile_table(rows: list[Row]) -> list[str]:
    lines = [
        "| workload | mlc cold s | mlc cached s | IREE compile s | IREE load s | "
        "onnxruntime session s |",
        "|---|---|---|---|---|---|",
    ]
    show: Callable[[float | None], str] = lambda s: "-" if s is None else f"{s:.3f}"  # noqa: E731
    for row in rows:
        none = (None, None)
        mlc, iree, ort = (row.compile_s.get(s, none) for s in ("mlc", "IREE", "onnxruntime"))
        if mlc == iree == ort == none:
            continue
        lines.append(
            f"| {row.workload.name} | {show(mlc[0])} | {show(mlc[1])} | {show(iree[0])} | "
            f"{show(iree[1])} | {show(ort[0])} |"
        )
    return lines


def _warm_up_mlc() -> None:
    """Compile a tiny program once, so the first row's compile time is not import time."""
    import mlc

    mlc.compile(
        "func.func @f(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %y = ml.relu %x : (tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %y : tensor<2xf32>\n}\n"
    )


def report(
    rows: list[Row], limits: dict[str, machine.Limit], args: argparse.Namespace, load: str
) -> str:
    allocating = ", ".join(s for s, yes in ALLOCATES_PER_CALL.items() if yes)
    preallocated = ", ".join(s for s, yes in ALLOCATES_PER_CALL.items() if not yes)
    lines = [
        "# CPU benchmarks" + (" (--quick)" if args.quick else ""),
        "",
        *machine.describe(),
        f"- At the start: {load}",
        "",
        "Measured limits (all cores):",
        f"- f32 FMA peak: **{limits['fma'].value:.1f} GFLOP/s** ({limits['fma'].how})",
        f"- copy bandwidth: **{limits['copy'].value:.1f} GB/s** ({limits['copy'].how})",
        "",
        f"Medians of calls issued back to back, in alternating rounds (at least "
        f"{args.min_runs}, at most {args.max_runs}, about {args.budget:g} s per row): each "
        f"round gives every system {1000 * args.bursts.seconds:g} ms of calls back to back, "
        f"of which the calls starting in the first {1000 * args.bursts.settle:g} ms are not "
        "counted (the previous system's threads may still spin), and the burst's first "
        "call, which follows the other systems' work, is timed apart (`first call ms`, "
        "with its slowdown). `vs numpy` and `vs onnxruntime` are that "
        "system's median over this one's: above 1 is faster. Rates: matmul counts 2n^3 "
        "FLOPs; the chain counts 4 inputs read and 1 output written, softmax 1 read and 1 "
        "write. Results are written into buffers allocated once by "
        f"{preallocated}; {allocating} allocate their results on every call. onnxruntime "
        "and IREE use their default threads (all cores), numpy its BLAS threads.",
        *_load_warning(),
        "",
        *table(rows, limits),
        "",
        "## Targets (issue 7)",
        "",
        *target_table(rows),
        "",
        "## Compile times",
        "",
        "mlc cold: empty disk cache, in a warm process; mlc cached: a second compile as a "
        "new process does it (in-memory cache cleared, machine code from the disk cache). "
        "IREE has no compile cache: its cached counterpart is loading the compiled module.",
        "",
        *compile_table(rows),
        "",
    ]
    return "\n".join(lines)


def _load_warning() -> list[str]:
    """A caution when other work kept the cores busy: threaded systems suffer most from it."""
    if not hasattr(os, "getloadavg") or os.getloadavg()[1] <= machine.cores():
        return []
    return [
        "",
        "**The machine was busy with other work during this run** (load average above the "
        "core count): every time is inflated, and the multithreaded systems (numpy's BLAS, "
        "onnxruntime, IREE) lose the most, since their threads wait for a core at every "
        "synchronisation while mlc runs on one thread. Compare ratios from a quiet machine.",
    ]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes and few runs")
    parser.add_argument(
        "--output",
        type=Path,
        help="results file (default: bench/results.md; none with --quick; - only prints)",
    )
    parser.add_argument("--only", help="run only the workloads whose name contains this")
    parser.add_argument("--budget", type=float, help="seconds of timing per row")
    parser.add_argument("--min-runs", type=int)
    parser.add_argument("--max-runs", type=int)
    args = parser.parse_args(argv)
    defaults = (0.2, 3, 5) if args.quick else (10.0, 5, 100)
    for name, default in zip(("budget", "min_runs", "max_runs"), defaults, strict=True):
        if getattr(args, name) is None:
            setattr(args, name, default)
    args.bursts = Bursts(0.01, 0.002) if args.quick else Bursts()
    if args.output is None and not args.quick:  # a quick run only prints, unless told
        args.output = Path(__file__).parent / "results.md"
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    load_at_start = machine.load()
    print("measuring the machine's limits ...", flush=True)
    limits = {
        "fma": machine.fma_peak(0.02 if args.quick else 0.2, 2 if args.quick else 5),
        "copy": machine.copy_bandwidth(8 if args.quick else 256, 2 if args.quick else 7),
    }
    _warm_up_mlc()
    rows: list[Row] = []
    for make in workloads.quick() if args.quick else workloads.full():
        workload = make()
        if args.only and args.only not in workload.name:
            continue
        print(f"{workload.name} ...", flush=True)
        row = prepare(workload, args.quick)
        time_row(row, args.budget, args.min_runs, args.max_runs, args.bursts)
        rows.append(row)
    text = report(rows, limits, args, load_at_start)
    if args.output is not None and str(args.output) != "-":
        args.output.write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
