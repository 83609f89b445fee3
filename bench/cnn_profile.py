"""
Where the ResNet-style CNN's time goes at batch 1, per kernel, against onnxruntime's
per-node times.

mlc fuses the CNN into eight kernels (each convolution with its batch norm, relu and
residual add; the max pool; global average pool with the classifier), so the model is
cut into those eight pieces, each compiled alone, and each piece is timed against
onnxruntime running the same piece, calls back to back (`cpu.bursts`), at 1 and 2
threads. Each row includes one call's overhead (the `call overhead` row: a 1x10 relu).
Beside that: onnxruntime's own per-node profile of the whole model
(`SessionOptions.enable_profiling`, which adds a few microseconds per node), the
whole model's compiled code alone (no Python: the call's block of words reused), and
the calls into mlc's thread pool the whole model makes per call.

    .venv/bin/python bench/cnn_profile.py            # appends to bench/results/cnn.md
    .venv/bin/python bench/cnn_profile.py --output -
"""

import argparse
import collections
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).parent.parent / "examples"))

import cpu
import machine
import onnx_models

RESULTS = Path(__file__).parent / "results" / "cnn.md"

# (label, first node, last node) of each kernel mlc makes of the CNN
PIECES = [
    ("stem conv 3->16 3x3 + bn + relu", "stem", "stem.relu"),
    ("max pool 2x2", "pool", "pool"),
    ("layer1.conv1 16->16 + bn + relu", "layer1.conv1", "layer1.relu1"),
    ("layer1.conv2 + bn + add + relu", "layer1.conv2", "layer1.relu2"),
    ("down conv 16->32 stride 2 + bn + relu", "down", "down.relu"),
    ("layer2.conv1 32->32 + bn + relu", "layer2.conv1", "layer2.relu1"),
    ("layer2.conv2 + bn + add + relu", "layer2.conv2", "layer2.relu2"),
    ("global average pool + gemm", "gap", "fc"),
]


def pieces(model: Any) -> list[tuple[str, Any, list[str]]]:
    """Each piece of `model` as a model of its own, with its input names."""
    from onnx import TensorProto, helper, shape_inference

    graph = shape_inference.infer_shapes(model).graph
    values = [*graph.value_info, *graph.input, *graph.output]
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in values}
    initializers = {i.name: i for i in graph.initializer}
    names = [n.name for n in graph.node]
    result = []
    for label, first, last in PIECES:
        nodes = graph.node[names.index(first) : names.index(last) + 1]
        made = {o for n in nodes for o in n.output}
        inputs = list(
            dict.fromkeys(
                i for n in nodes for i in n.input if i not in made and i not in initializers
            )
        )
        weights = [initializers[i] for n in nodes for i in n.input if i in initializers]
        out = nodes[-1].output[0]
        piece = helper.make_graph(
            nodes,
            label,
            [helper.make_tensor_value_info(i, TensorProto.FLOAT, shapes[i]) for i in inputs],
            [helper.make_tensor_value_info(out, TensorProto.FLOAT, shapes[out])],
            weights,
        )
        made_model = helper.make_model(piece, opset_imports=model.opset_import)
        made_model.ir_version = model.ir_version
        result.append((label, made_model, inputs))
    return result


def relu_model() -> Any:
    from onnx import TensorProto, helper

    info = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 10]) for n in "xy"]
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["y"])], "relu", [info[0]], [info[1]]
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _session(model: Any, threads: int, profile: str = "") -> Any:
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    if profile:
        options.enable_profiling = True
        options.profile_file_prefix = profile
    return ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def onnxruntime_nodes(model: Any, x: np.ndarray, threads: int, calls: int) -> dict[str, float]:
    """Median microseconds per node kernel (and per run) in onnxruntime's own profile."""
    with tempfile.TemporaryDirectory() as folder:
        session = _session(model, threads, str(Path(folder) / "ort"))
        for _ in range(calls):
            session.run(None, {"input": x})
        events = json.loads(Path(session.end_profiling()).read_text())
    times: dict[str, list[float]] = collections.defaultdict(list)
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            op = event["args"].get("op_name", "")
            times[f"{event['name'].removesuffix('_kernel_time')} ({op})"].append(event["dur"])
        elif event.get("cat") == "Session" and event["name"] == "model_run":
            times["model_run"].append(event["dur"])
    return {name: statistics.median(ts[calls // 5 :]) for name, ts in times.items()}


def dispatches(exe: Any) -> int:
    """Calls into the thread pool left in the optimised code of the entry function."""
    ir = exe.llvm_ir
    main = ir[ir.index("define ") :]
    main = main[: main.index("\n}\n")]
    return len(re.findall(r"call void @mlc_parallel_for\(", main))


def compiled_only(exe: Any, x: np.ndarray) -> Callable[[], None]:
    """The entry's compiled code alone: the call's block of words reused, no Python."""
    from mlc.backend import buffers

    native = exe.entry._native
    native(x)
    frame = native._frame()
    result = frame.at[len(native.args)]
    free = buffers.runtime().free

    def run() -> None:
        native._invoke(frame.words)
        free(frame.words[result])

    return run


def measure(threads: int, budget: float) -> dict[str, Any]:
    """Every timing at `threads` (run in a process whose MLC_NUM_THREADS is `threads`)."""
    import mlc

    model = onnx_models.cnn(1)
    rng = np.random.default_rng(0)
    x = rng.standard_normal([1, 3, 32, 32]).astype(np.float32)
    runs: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {}
    for label, piece, inputs in [
        *pieces(model),
        ("call overhead (relu 1x10)", relu_model(), ["x"]),
    ]:
        feeds = {
            i.name: rng.standard_normal([d.dim_value for d in i.type.tensor_type.shape.dim]).astype(
                np.float32
            )
            for i in piece.graph.input
        }
        exe, session, args = (
            mlc.compile(piece),
            _session(piece, threads),
            [feeds[i] for i in inputs],
        )
        runs[label] = (lambda e=exe, a=args: e(*a), lambda s=session, f=feeds: s.run(None, f))
    exe, session = mlc.compile(model), _session(model, threads)
    runs["whole model"] = (lambda: exe(x), lambda: session.run(None, {"input": x}))
    flat = {f"{k}|{side}": run for k, pair in runs.items() for side, run in zip("mo", pair)}
    if hasattr(exe.entry._native, "_frame"):  # mlc before its call frames: not measured
        flat["compiled code alone|m"] = compiled_only(exe, x)
    settled, _ = cpu.bursts(flat, budget, 5, 100, cpu.Bursts(0.1, 0.03))
    medians = {k: 1e6 * statistics.median(v) for k, v in settled.items()}
    return {
        "medians": medians,
        "nodes": onnxruntime_nodes(model, x, threads, 2000),
        "dispatches": dispatches(exe),
    }


def report(results: dict[int, dict[str, Any]]) -> list[str]:
    threads = sorted(results)
    lines = [
        "Median microseconds per call, back to back; each piece compiled alone (each row",
        "includes one call's overhead, as the `call overhead` row).",
        "",
        "| kernel | "
        + " | ".join(f"mlc {t}T | onnxruntime {t}T | ratio {t}T" for t in threads)
        + " |",
        "|---|" + "---|---|---|" * len(threads),
    ]
    labels = [p[0] for p in PIECES] + ["call overhead (relu 1x10)", "whole model"]
    for label in labels:
        cells = []
        for t in threads:
            m = results[t]["medians"][f"{label}|m"]
            o = results[t]["medians"][f"{label}|o"]
            cells.append(f"{m:.1f} | {o:.1f} | {o / m:.2f}x")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    alone = " | ".join(
        f"{results[t]['medians'].get('compiled code alone|m', float('nan')):.1f}" for t in threads
    )
    lines += [
        "",
        f"- The whole model's compiled code alone (no Python), {'T, '.join(map(str, threads))}T:"
        f" {alone} us.",
        "- Calls into the thread pool per call of the whole model: "
        + ", ".join(f"{results[t]['dispatches']} at {t}T" for t in threads),
        "",
        "onnxruntime's own profile of the whole model (median us per node kernel; the",
        "profiler adds a few us per node):",
        "",
        "| node | " + " | ".join(f"{t}T" for t in threads) + " |",
        "|---|" + "---|" * len(threads),
    ]
    for node in results[threads[0]]["nodes"]:
        cells = " | ".join(f"{results[t]['nodes'].get(node, float('nan')):.0f}" for t in threads)
        lines.append(f"| {node} | {cells} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    parser.add_argument("--budget", type=float, default=20.0, help="seconds of timing per count")
    parser.add_argument("--output", default=str(RESULTS), help="file to append to; - to print")
    parser.add_argument("--measure", type=int, help=argparse.SUPPRESS)  # one count, as JSON
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure, args.budget)))
        return 0
    results = {}
    for threads in (int(t) for t in args.threads.split(",")):
        # The thread count is read at compile time too; the cache does not key on it.
        env = dict(os.environ, MLC_NUM_THREADS=str(threads), MLC_CACHE="0")
        command = [
            sys.executable,
            sys.argv[0],
            "--measure",
            str(threads),
            "--budget",
            str(args.budget),
        ]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
        results[threads] = json.loads(done.stdout.strip().splitlines()[-1])
    lines = [
        f"## Per-kernel profile at batch 1, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}",
        "",
        *machine.describe(),
        "",
        *report(results),
        "",
    ]
    cpu.publish("\n".join(lines), args.output)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
