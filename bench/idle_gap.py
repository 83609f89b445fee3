"""
How much a call slows down when it follows an idle gap instead of the previous call.

`bench/cpu.py` times calls back to back and reports each burst's first call, the one
that follows the other systems' work, apart. On the 2-core machine a call after a 20 ms
gap takes far longer than one issued back to back, for mlc more than for onnxruntime:
this script measures that alone, per system and thread count, with nothing in between
but `time.sleep`, and counts the context switches per call.

    .venv/bin/python bench/idle_gap.py      # appends to bench/results/idle-gap.md
"""

import argparse
import os
import resource
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "examples"))

import cpu
import machine
import onnx_models

RESULTS = Path(__file__).parent / "results" / "idle-gap.md"
GAPS = (0.0, 0.002, 0.02)  # seconds of sleep before each timed call


def timed(run: Callable[[], object], gap: float, calls: int) -> tuple[float, float]:
    """Median ms per call after `gap` seconds idle, and context switches per call."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    times = []
    for _ in range(calls):
        if gap:
            time.sleep(gap)
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    after = resource.getrusage(resource.RUSAGE_SELF)
    switches = (after.ru_nvcsw + after.ru_nivcsw - before.ru_nvcsw - before.ru_nivcsw) / calls
    return 1000 * statistics.median(times), switches - (1 if gap else 0)


def systems(model) -> dict[str, Callable[[], object]]:
    import onnxruntime as ort

    import mlc

    dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(0).standard_normal(dims).astype(np.float32)
    exe = mlc.compile(model)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    name = model.graph.input[0].name
    return {"mlc": lambda: exe(x), "onnxruntime": lambda: session.run(None, {name: x})}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=40)
    parser.add_argument("--output", default=str(RESULTS), help="file to append to; - to print")
    args = parser.parse_args(argv)
    lines = [
        f"## Calls after an idle gap, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        *machine.describe(),
        "",
        "Median ms per call (and context switches per call, the sleep's own not counted).",
        "",
        "| model | system | threads | "
        + " | ".join(f"after {1000 * g:g} ms" for g in GAPS)
        + " | slowdown at the last gap |",
        "|---|---|---|" + "---|" * (len(GAPS) + 1),
    ]
    models = (
        ("MLP", onnx_models.mlp),
        ("CNN batch 1", lambda: onnx_models.cnn(1)),
        ("CNN batch 8", lambda: onnx_models.cnn(8)),
    )
    for label, make in models:
        for system, run in systems(make()).items():
            for threads in ("1", "2") if system == "mlc" else ("default",):
                if threads != "default":
                    os.environ["MLC_NUM_THREADS"] = threads
                for _ in range(5):
                    run()
                cells = [timed(run, gap, args.calls) for gap in GAPS]
                row = " | ".join(f"{ms:.3f} ({sw:.1f})" for ms, sw in cells)
                slowdown = cells[-1][0] / cells[0][0]
                lines.append(f"| {label} | {system} | {threads} | {row} | {slowdown:.2f}x |")
        os.environ.pop("MLC_NUM_THREADS", None)
    text = "\n".join(lines) + "\n"
    cpu.publish(text, args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
