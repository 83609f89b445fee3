"""
Where `mlc.compile` spends its time: per stage and per pass, cold and cached.

For each program (the examples, the ONNX models of `examples/onnx_models.py`,
ResNet-50 from `bench/resnet50.py` and three CNNs of the model zoo, `tests/zoo`) two
fresh processes run, with a new empty cache folder:
- cold: `mlc.compile` with an empty disk cache under `MLC_TIMING=1`: its stage times
  (`compile_times`), and each pass within its stage read from the timing report;
- cached (warm): a second process compiling the same program (a disk cache hit).
The import of mlc is timed on its own. Results go to bench/results/compile-time.md,
whose hand-written "## Findings" section, if any, is kept.

`--gpu` times the GPU compile instead, which needs no GPU: the `gpu` target's stages
and `to_ptx` for sm_90, in a fresh process per program, three times each (the
examples and the ONNX models, with the CNN at batch 32 too); bench/results/compile-time-gpu.md.

`--passes` prints, for each program, the CPU seconds (`time.process_time`, the cycle
collector off as in `mlc.compile`) of each pass of the `loops` and `llvm` stages and of
the `loops` stage's verification, on the IR `mlc.compile` would give them, in a fresh
process: the per-pass table of the results file. Nothing is written.

    .venv/bin/python bench/compile_time.py [--output PATH] [--only NAME] [--gpu] [--passes]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import machine

HERE = Path(__file__).parent
ROOT = HERE.parent

# Each child prints one JSON line. `SOURCE` evaluates to what `mlc.compile` takes.
COMPILE = """
import json, sys, time
start = time.perf_counter()
import mlc
imported = time.perf_counter()
exe = mlc.compile(SOURCE)
done = time.perf_counter()
print(json.dumps({"import": imported - start, "compile": done - imported,
                  "hit": exe.from_cache, "stages": exe.compile_times}))
"""

GPU_COMPILE = """
import json, time
import mlc
from mlc.backend.ptx import kernel_names, to_ptx
start = time.perf_counter()
lowered = mlc.compile(SOURCE, target="gpu", emit="nvvm")
lowered_at = time.perf_counter()
ptx = to_ptx(lowered)
done = time.perf_counter()
print(json.dumps({"stages": lowered_at - start, "ptx": done - lowered_at,
                  "kernels": len(kernel_names(lowered))}))
"""
GPU_RUNS = 3

PASSES = """
import gc, json, time
from mlc import diagnostics, pipeline
from mlc.frontends.onnx import import_onnx
from mlc.ir import parse_module
from mlc.registry import make_context, parse_pipeline
gc.disable()
module = import_onnx(SOURCE) if not isinstance(SOURCE, str) else parse_module(open(SOURCE).read())
for stage in ("mlc", "linalg"):
    pipeline.run_stage(module, stage)
ctx, rows = make_context(), []
for stage in ("loops", "llvm"):
    for each in parse_pipeline(pipeline.STAGES[stage]):
        start = time.process_time()
        each.apply(ctx, module)
        rows.append([stage, each.name, time.process_time() - start])
    if stage == "loops":
        start = time.process_time()
        assert not diagnostics.verify_module(module)
        rows.append([stage, "(verify)", time.process_time() - start])
print(json.dumps(rows))
"""

MODELS = {
    "MLP (ONNX)": "mlp()",
    "CNN batch 1 (ONNX)": "cnn(batch=1)",
    "transformer block (ONNX)": "transformer_block(seq=128, hidden=256, heads=4)",
}
# Models built by a module of bench/: name -> (module, call).
BENCH_MODELS = {"ResNet-50 (ONNX)": ("resnet50", "resnet50()")}
# CNNs of the model zoo (tests/zoo), by file name.
ZOO_MODELS = ("mobilenetv2-dynamo", "densenet-dynamo", "efficientnet-dynamo")
TARGETS = {"MLP": 5.0, "transformer": 5.0, "CNN": 20.0, "ResNet-50": 8.0}
FINDINGS = "## Findings"  # a hand-written section of the results file, kept on reruns


def programs() -> dict[str, str]:
    """Name -> a Python expression for the source, evaluated in the child."""
    found = {
        f"examples/{name}": repr(str(ROOT / "examples" / name))
        for name in ("mlp.mlir", "transformer_block.mlir", "convnet.mlir", "pagerank.mlir")
    }
    models = ROOT / "examples" / "onnx_models.py"
    for name, call in MODELS.items():
        found[name] = (
            f"__import__('sys').path.insert(0, {str(models.parent)!r}) or "
            f"__import__('onnx_models').{call}"
        )
    for name, (module, call) in BENCH_MODELS.items():
        found[name] = (
            f"__import__('sys').path.insert(0, {str(HERE)!r}) or __import__({module!r}).{call}"
        )
    for model in ZOO_MODELS:
        path = ROOT / "tests" / "zoo" / f"{model}.onnx"
        found[f"zoo {model}"] = f"__import__('onnx').load({str(path)!r})"
    return found


def gpu_report(programs: dict[str, str]) -> list[str]:
    """The GPU compile of each program, `GPU_RUNS` fresh processes each: median seconds."""
    lines = ["| program | kernels | stages s | to_ptx s | total s (runs) |"]
    lines.append("|---|---|---|---|---|")
    for name, source in programs.items():
        print(f"{name} ...", flush=True)
        with tempfile.TemporaryDirectory(prefix="mlc-compile-time-") as cache_dir:
            runs = [child(GPU_COMPILE, source, cache_dir) for _ in range(GPU_RUNS)]
        if any(isinstance(run, str) for run in runs):
            error = next(run for run in runs if isinstance(run, str))
            lines.append(f"| {name} | | cannot compile: {error} | | |")
            continue
        stages = statistics.median(run["stages"] for run in runs)
        ptx = statistics.median(run["ptx"] for run in runs)
        totals = ", ".join(f"{run['stages'] + run['ptx']:.2f}" for run in runs)
        lines.append(f"| {name} | {runs[0]['kernels']} | {stages:.2f} | {ptx:.2f} | {totals} |")
    return lines


def child(code: str, source: str, cache_dir: str, timing: bool = False) -> dict | list | str:
    """Run `code` with `SOURCE` bound in a fresh process; its JSON, or its last error
    line. With `timing`, under `MLC_TIMING=1`: the JSON's "passes" are the report's
    rows nested one level down ([stage, pass, seconds])."""
    env = {**os.environ, "MLC_CACHE_DIR": cache_dir, "MLC_TIMING": "1" if timing else "0"}
    env.pop("MLC_CACHE", None)
    done = subprocess.run(
        [sys.executable, "-c", f"SOURCE = {source}\n{code}"],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
    )
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or ["no output"]
        return lines[-1][:200]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    if timing and isinstance(result, dict):
        result["passes"] = report_rows(done.stderr)
    return result


ROW = re.compile(r"^\s+(\d+\.\d+) \(\s*[\d.]+%\)  ( *)(.+)$")


def report_rows(report: str) -> list[list]:
    """[stage, pass, seconds] for each pass line of an `MLC_TIMING` report."""
    rows: list[list] = []
    parent = ""
    for line in report.splitlines():
        if (match := ROW.match(line)) is None:
            continue
        depth, name = len(match.group(2)) // 2, match.group(3)
        if depth == 0:
            parent = name.removeprefix("stage ")
        elif depth == 1 and name != "(other)":
            rows.append([parent, name, float(match.group(1))])
    return rows


def measure(source: str) -> tuple[dict | str, dict | str, list | str]:
    with tempfile.TemporaryDirectory(prefix="mlc-compile-time-") as cache_dir:
        cold = child(COMPILE, source, cache_dir, timing=True)
        cached = child(COMPILE, source, cache_dir)
    passes = cold["passes"] if isinstance(cold, dict) else cold
    return cold, cached, passes


def _target(name: str) -> str:
    for word, seconds in TARGETS.items():
        if word in name and "ONNX" in name:
            return f"< {seconds:g} s"
    return ""


def report(results: dict[str, tuple[dict | str, dict | str, list | str]]) -> list[str]:
    lines = [
        "| program | import mlc s | cold compile s | target | cached compile s | hit |",
        "|---|---|---|---|---|---|",
    ]
    for name, (cold, cached, _) in results.items():
        if isinstance(cold, str):
            lines.append(f"| {name} | | cannot compile: {cold} | | | |")
            continue
        hit = cached["hit"] if isinstance(cached, dict) else cached
        cached_s = f"{cached['compile']:.3f}" if isinstance(cached, dict) else "-"
        lines.append(
            f"| {name} | {cold['import']:.2f} | {cold['compile']:.2f} | {_target(name)} | "
            f"{cached_s} | {hit} |"
        )
    stage_names = sorted(
        {s for cold, _, _ in results.values() if isinstance(cold, dict) for s in cold["stages"]},
        key=lambda s: min(
            list(cold["stages"]).index(s)
            for cold, _, _ in results.values()
            if isinstance(cold, dict) and s in cold["stages"]
        ),
    )
    compiled = {n: r[0] for n, r in results.items() if isinstance(r[0], dict)}
    lines += ["", "Cold compile by stage (seconds, `MLC_TIMING=1` prints the same):", ""]
    lines.append("| stage | " + " | ".join(compiled) + " |")
    lines.append("|---|" + "---|" * len(compiled))
    for stage in stage_names:
        cells = [f"{cold['stages'].get(stage, 0.0):.3f}" for cold in compiled.values()]
        lines.append(f"| {stage} | " + " | ".join(cells) + " |")
    lines += ["", "The slowest passes of the cold compile (`MLC_TIMING`'s report):", ""]
    lines += ["| program | stage | pass | seconds |", "|---|---|---|---|"]
    for name, (_, _, passes) in results.items():
        if isinstance(passes, str):
            continue
        for stage, pass_name, seconds in sorted(passes, key=lambda p: -p[2])[:6]:
            lines.append(f"| {name} | {stage} | {pass_name} | {seconds:.3f} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output", type=Path, default=HERE / "results" / "compile-time.md")
    parser.add_argument("--only", help="only the programs whose name contains this")
    parser.add_argument("--gpu", action="store_true", help="time the GPU compile instead")
    parser.add_argument("--passes", action="store_true", help="CPU seconds of each late pass")
    args = parser.parse_args(argv)
    if args.gpu:
        return gpu_main(args)
    if args.passes:
        return passes_main(args)
    results = {}
    for name, source in programs().items():
        if args.only and args.only not in name:
            continue
        print(f"{name} ...", flush=True)
        results[name] = measure(source)
    text = "\n".join(
        [
            "# mlc compile times",
            "",
            *machine.describe(),
            "",
            "Each number comes from a fresh process (see bench/compile_time.py); the cold "
            "compile starts from an empty disk cache, the cached one is the next process's "
            "compile of the same program. Import time is Python importing mlc (mostly xDSL).",
            "",
            *report(results),
            "",
        ]
    )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    if args.output.exists() and FINDINGS in (old := args.output.read_text()):
        text += "\n" + old[old.index(FINDINGS) :]  # the written analysis is kept
    args.output.write_text(text)
    print(text)
    return 0


def passes_main(args: argparse.Namespace) -> int:
    """Print the `loops` and `llvm` stages' passes' CPU seconds for each program."""
    for name, source in programs().items():
        if args.only and args.only not in name:
            continue
        with tempfile.TemporaryDirectory(prefix="mlc-compile-time-") as cache_dir:
            rows = child(PASSES, source, cache_dir)
        print(f"\n{name} (load average {os.getloadavg()[0]:.1f})")
        if isinstance(rows, str):
            print(f"  cannot compile: {rows}")
            continue
        for stage, pass_name, seconds in rows:
            print(f"  {stage:6} {pass_name:28} {seconds:7.3f}")
        print(f"  {'total':35} {sum(row[2] for row in rows):7.3f}")
    return 0


def gpu_main(args: argparse.Namespace) -> int:
    found = programs()
    found["CNN batch 32 (ONNX)"] = found["CNN batch 1 (ONNX)"].replace("batch=1", "batch=32")
    chosen = {n: s for n, s in found.items() if not args.only or args.only in n}
    text = "\n".join(
        [
            "# mlc GPU compile times",
            "",
            *machine.describe(),
            "",
            '`mlc.compile(..., target="gpu", emit="nvvm")` (the stages) and `to_ptx` for '
            f"sm_90, in a fresh process, {GPU_RUNS} runs each (bench/compile_time.py --gpu).",
            "",
            *gpu_report(chosen),
            "",
        ]
    )
    output = args.output
    if output == HERE / "results" / "compile-time.md":
        output = HERE / "results" / "compile-time-gpu.md"
    with output.open("a") as results:
        results.write(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
