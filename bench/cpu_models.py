"""
Zoo models (tests/zoo/) at batch 1 and 8 on the CPU: mlc's time over onnxruntime's, in
one process, the two alternating in bursts (`cpu.bursts`), medians. The ratio is what
to compare between two trees: run this once with each on PYTHONPATH, alternately, since
the machine's load moves absolute times far more than it moves the ratio.

    PYTHONPATH=. .venv/bin/python bench/cpu_models.py mobilenetv2-torchscript resnet-torchscript
    PYTHONPATH=. .venv/bin/python bench/cpu_models.py --batch 1 8 --budget 4 --json out.json NAME...

Writes one line per model and batch: each system's first call after compiling (ms) and
its steady-state median (ms), and onnxruntime / mlc of the steady state (above 1: mlc is
faster). Batch 8 repeats the zoo's batch-1 input (the models' batch dim is dynamic).
`--autotune` adds two contenders: the model with its inputs' shapes fixed (`static`), and
the same compiled with `autotune=True` (`tuned`; `autotune-tiles` times static layers
only), with the speed of each over mlc's default build and of tuned over static (what the
measured tile sizes alone gain). `--specialize` adds the contender `specialised`:
`mlc.compile(..., specialize=True)`, whose first call compiles the static build for the
call's shapes (its first-call time includes that compile; run with an empty
MLC_CACHE_DIR to see it), with its speed over mlc's dynamic build and onnxruntime's
over it. bench/results/cpu-models.md records the runs.
"""

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

import cpu

import mlc

ZOO = Path(__file__).parent.parent / "tests" / "zoo"


def inputs(name: str, batch: int = 1) -> dict[str, np.ndarray]:
    """The zoo's first (batch 1) input set of a model, repeated `batch` times."""
    data = np.load(ZOO / f"{name}.npz")
    feeds = {k.split("/", 2)[2]: data[k] for k in data.files if k.startswith("0/in/")}
    return {k: np.concatenate([v] * batch) if batch > 1 else v for k, v in feeds.items()}


def measure(
    name: str, budget: float, batch: int = 1, autotune: bool = False, specialize: bool = False
) -> dict[str, float]:
    """First-call and median seconds per call of mlc and onnxruntime on one model at
    `batch`, and the ratio of the medians (with `autotune`, of the tuned build too;
    with `specialize`, of the specialising one)."""
    import onnx
    import onnxruntime  # a benchmark dependency, not mlc's

    from mlc.compiler.shape_inputs import fix_dims

    path = ZOO / f"{name}.onnx"
    feeds = inputs(name, batch)
    exe = mlc.compile(str(path))
    session = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    args = list(feeds.values())
    runs = {"mlc": lambda: exe(*args), "onnxruntime": lambda: session.run(None, feeds)}
    if autotune:
        fixed = fix_dims(onnx.load(str(path)), {k: v.shape for k, v in feeds.items()})
        static = mlc.compile(fixed)
        start = time.perf_counter()
        tuned = mlc.compile(fixed, autotune=True)
        tuning = time.perf_counter() - start
        np.testing.assert_allclose(tuned(*args), exe(*args), rtol=1e-3, atol=1e-4)
        runs["static"] = lambda: static(*args)
        runs["tuned"] = lambda: tuned(*args)
    if specialize:
        specialised = mlc.compile(str(path), specialize=True)
        runs["specialised"] = lambda: specialised(*args)
    first = {}
    for key, run in runs.items():
        start = time.perf_counter()
        run()
        first[key] = time.perf_counter() - start
    if specialize:
        np.testing.assert_allclose(specialised(*args), exe(*args), rtol=1e-3, atol=1e-4)
    settled, _ = cpu.bursts(runs, budget, min_runs=3, max_runs=1000)
    mlc_s, ort_s = (statistics.median(settled[k]) for k in ("mlc", "onnxruntime"))
    result = {
        "mlc": mlc_s,
        "onnxruntime": ort_s,
        "speed": ort_s / mlc_s,
        "mlc_first": first["mlc"],
        "onnxruntime_first": first["onnxruntime"],
    }
    if autotune:
        static_s, tuned_s = (statistics.median(settled[k]) for k in ("static", "tuned"))
        result |= {
            "static": static_s,
            "tuned": tuned_s,
            "static_speed": mlc_s / static_s,
            "tuned_speed": static_s / tuned_s,
            "tuning": tuning,
        }
    if specialize:
        specialised_s = statistics.median(settled["specialised"])
        result |= {
            "specialised": specialised_s,
            "specialised_first": first["specialised"],
            "specialised_speed": mlc_s / specialised_s,
            "onnxruntime_speed_specialised": ort_s / specialised_s,
        }
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="+")
    parser.add_argument("--batch", type=int, nargs="+", default=[1], help="batch sizes")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds per model")
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--autotune", action="store_true", help="also a build with autotune=True")
    parser.add_argument(
        "--specialize", action="store_true", help="also a build with specialize=True"
    )
    args = parser.parse_args()
    results = {}
    for name in args.models:
        for batch in args.batch:
            r = results[f"{name}@{batch}"] = measure(
                name, args.budget, batch, args.autotune, args.specialize
            )
            ms = {k: v * 1e3 for k, v in r.items() if "speed" not in k}
            tuned = (
                f"  static {ms['static']:8.3f} ms, {r['static_speed']:.2f}x mlc's; "
                f"tuned {ms['tuned']:8.3f} ms, {r['tuned_speed']:.2f}x static's "
                f"(tuning and compile {r['tuning']:.1f} s)"
                if "tuned" in r
                else ""
            )
            if "specialised" in r:
                tuned += (
                    f"  specialised {ms['specialised']:8.3f} ms (first "
                    f"{ms['specialised_first']:8.1f} ms), {r['specialised_speed']:.2f}x mlc's, "
                    f"onnxruntime/specialised {r['onnxruntime_speed_specialised']:.2f}x"
                )
            print(
                f"{name:26s} batch {batch}  first: mlc {ms['mlc_first']:8.2f} ms, "
                f"onnxruntime {ms['onnxruntime_first']:8.2f} ms  steady: mlc {ms['mlc']:8.3f} ms, "
                f"onnxruntime {ms['onnxruntime']:8.3f} ms  {r['speed']:.2f}x{tuned}",
                flush=True,
            )
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
