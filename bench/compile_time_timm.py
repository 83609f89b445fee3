"""
Cold compile times of full-size image models from timm (ResNet-50, DenseNet-121,
ViT-tiny, DeiT-tiny, MobileViT-S, EfficientNet-B0), for the CPU and cuda, several
compiles at once as a machine with many cores runs them.

`export DIR` writes each model as ONNX (random weights, TorchScript exporter, opset 17,
batch 1 at 224x224): it needs torch and timm (the GPU machine has them). `compile DIR`
then compiles every `.onnx` of DIR for each target in its own fresh process with an
empty disk cache (`MLC_CACHE=0`), `--jobs` at a time, checks the CPU build's output
against onnxruntime on one random input, and prints a table of wall and CPU seconds
(the process and its code generation workers). The cuda compile is the `gpu` target's
stages and `to_ptx` for sm_90a: it needs no GPU.

    python bench/compile_time_timm.py export DIR [--only NAME,...]
    python bench/compile_time_timm.py compile DIR [--jobs N] [--targets cpu,cuda] [--json F]
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = {  # file name -> timm model
    "resnet50": "resnet50",
    "densenet121": "densenet121",
    "vit_tiny": "vit_tiny_patch16_224",
    "deit_tiny": "deit_tiny_patch16_224",
    "mobilevit_s": "mobilevit_s",
    "efficientnet_b0": "efficientnet_b0",
}
TIMEOUT_S = 900

EXPORT = """
import sys, timm, torch
model = timm.create_model(sys.argv[2], pretrained=False).eval()
torch.onnx.export(model, (torch.randn(1, 3, 224, 224),), sys.argv[1], opset_version=17,
                  dynamo=False, input_names=["pixels"], output_names=["logits"])
"""

# One compile in a fresh process: wall and CPU seconds, and for the CPU the largest
# difference from onnxruntime's output.
COMPILE = """
import json, os, resource, sys, time
start = time.perf_counter()
import numpy as np, onnx
import mlc
path, target = sys.argv[1], sys.argv[2]
model = onnx.load(path)
if target == "cpu":
    exe = mlc.compile(model)
else:
    from mlc.backend.ptx import to_ptx
    exe = to_ptx(mlc.compile(model, target="gpu", emit="nvvm", sm="sm_90a"), "sm_90a")
wall = time.perf_counter() - start
own = resource.getrusage(resource.RUSAGE_SELF)
workers = resource.getrusage(resource.RUSAGE_CHILDREN)
row = {"wall": wall, "cpu": own.ru_utime + own.ru_stime,
       "workers": workers.ru_utime + workers.ru_stime}
if target == "cpu":
    import onnxruntime as ort
    x = np.random.default_rng(0).standard_normal((1, 3, 224, 224)).astype(np.float32)
    want = ort.InferenceSession(path).run(None, {model.graph.input[0].name: x})[0]
    got = np.asarray(exe(x))
    row["error"] = float(np.max(np.abs(got - want)) / max(1e-6, np.max(np.abs(want))))
print(json.dumps(row))
"""


def export(directory: Path, only: list[str] | None) -> int:
    directory.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name, timm_name in MODELS.items():
        if only and name not in only:
            continue
        path = directory / f"{name}.onnx"
        done = subprocess.run(
            [sys.executable, "-c", EXPORT, str(path), timm_name],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
        ok = done.returncode == 0 and path.exists()
        failed += not ok
        tail = (done.stderr.strip().splitlines() or [""])[-1]
        print(f"{name}: {'exported' if ok else 'failed: ' + tail}", flush=True)
    return 1 if failed else 0


def compile_one(path: Path, target: str) -> dict:
    path_before = os.environ.get("PYTHONPATH")
    python_path = os.pathsep.join([str(ROOT), *([path_before] if path_before else [])])
    env = {**os.environ, "MLC_CACHE": "0", "PYTHONPATH": python_path}
    try:
        done = subprocess.run(
            [sys.executable, "-c", COMPILE, str(path), target],
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
            env=env,
        )
    except subprocess.TimeoutExpired:
        return {"failed": f"over {TIMEOUT_S} s"}
    if done.returncode:
        return {"failed": (done.stderr.strip().splitlines() or ["?"])[-1][:160]}
    return json.loads(done.stdout.strip().splitlines()[-1])


def compile_all(directory: Path, jobs: int, targets: list[str], output: Path | None) -> int:
    paths = sorted(directory.glob("*.onnx"))
    work = [(path, target) for path in paths for target in targets]
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        rows = dict(zip(work, pool.map(lambda w: compile_one(*w), work), strict=True))
    print(f"{len(work)} cold compiles, {jobs} at a time, {os.cpu_count()} cores")
    print("| model | target | wall s | CPU s (+ workers) | error vs onnxruntime |")
    print("|---|---|---|---|---|")
    for (path, target), row in rows.items():
        if "failed" in row:
            print(f"| {path.stem} | {target} | failed: {row['failed']} | | |")
            continue
        error = f"{row['error']:.1e}" if "error" in row else "-"
        cpu = f"{row['cpu']:.1f} (+ {row['workers']:.1f})"
        print(f"| {path.stem} | {target} | {row['wall']:.1f} | {cpu} | {error} |")
    if output:
        output.write_text(json.dumps({f"{p.stem} {t}": r for (p, t), r in rows.items()}))
    return 1 if any("failed" in row for row in rows.values()) else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True)
    exporting = commands.add_parser("export")
    exporting.add_argument("directory", type=Path)
    exporting.add_argument("--only", type=lambda s: s.split(","))
    compiling = commands.add_parser("compile")
    compiling.add_argument("directory", type=Path)
    compiling.add_argument("--jobs", type=int, default=8)
    compiling.add_argument("--targets", type=lambda s: s.split(","), default=["cpu", "cuda"])
    compiling.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.command == "export":
        return export(args.directory, args.only)
    return compile_all(args.directory, args.jobs, args.targets, args.json)


if __name__ == "__main__":
    sys.exit(main())
