"""
Zoo models (tests/zoo/) at batch 1 on the CPU: mlc's time over onnxruntime's, in one
process, the two alternating in bursts (`cpu.bursts`), medians. The ratio is what to
compare between two trees: run this once with each on PYTHONPATH, alternately, since
the machine's load moves absolute times far more than it moves the ratio.

    PYTHONPATH=. .venv/bin/python bench/cpu_models.py mobilenetv2-torchscript resnet-torchscript
    PYTHONPATH=. .venv/bin/python bench/cpu_models.py --budget 4 --json out.json NAME...

Writes one line per model: the median ms of each system and onnxruntime / mlc (above 1:
mlc is faster). bench/results/cpu-models.md records the runs.
"""

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import cpu

import mlc

ZOO = Path(__file__).parent.parent / "tests" / "zoo"


def inputs(name: str) -> dict[str, np.ndarray]:
    """The zoo's first (batch 1) input set of a model."""
    data = np.load(ZOO / f"{name}.npz")
    return {k.split("/", 2)[2]: data[k] for k in data.files if k.startswith("0/in/")}


def measure(name: str, budget: float) -> dict[str, float]:
    """Median seconds per call of mlc and onnxruntime on one model, and their ratio."""
    import onnxruntime  # a benchmark dependency, not mlc's

    path = ZOO / f"{name}.onnx"
    feeds = inputs(name)
    exe = mlc.compile(str(path))
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    args = list(feeds.values())
    runs = {"mlc": lambda: exe(*args), "onnxruntime": lambda: session.run(None, feeds)}
    for run in runs.values():
        run()
    settled, _ = cpu.bursts(runs, budget, min_runs=3, max_runs=1000)
    mlc_s, ort_s = (statistics.median(settled[k]) for k in ("mlc", "onnxruntime"))
    return {"mlc": mlc_s, "onnxruntime": ort_s, "speed": ort_s / mlc_s}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per model")
    parser.add_argument("--json", help="also write the results to this file")
    args = parser.parse_args()
    results = {}
    for name in args.models:
        r = results[name] = measure(name, args.budget)
        ms = r["mlc"] * 1e3, r["onnxruntime"] * 1e3
        print(f"{name:28s} mlc {ms[0]:8.3f} ms  onnxruntime {ms[1]:8.3f} ms  {r['speed']:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
