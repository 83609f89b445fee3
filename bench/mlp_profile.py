"""
Where the MLP's time goes: each of its layers alone, against onnxruntime and numpy.

The MLP of `examples/onnx_models.py` (64 x 784 -> 1024 -> 1024 -> 10, ONNX Gemm with
transB=1 and a constant weight, bias and ReLU) is cut into its three layers, each an
ONNX model of its own (one Gemm, its ReLU). mlc, onnxruntime and numpy
(`maximum(x @ w.T + b, 0)`) run each layer and the whole model in back-to-back bursts,
alternating (`cpu.bursts`), in this one process; onnxruntime's own per-node times
(`SessionOptions.enable_profiling`) of the whole model are printed beside them.

`--threads N` sets `MLC_NUM_THREADS`, `OPENBLAS_NUM_THREADS` and onnxruntime's intra-op
threads before anything is imported.

    .venv/bin/python bench/mlp_profile.py --threads 2 --output -
"""

import json
import os
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

import thread_args

ROOT = Path(__file__).parent.parent
RESULTS = Path(__file__).parent / "results" / "matmul-kernel.md"
LAYERS = [(784, 1024, True), (1024, 1024, True), (1024, 10, False)]
BATCH = 64


def layer_model(weight, bias, relu: bool):
    """One Gemm (transB=1) with its constant weight and bias, and a ReLU if `relu`."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    n, k = weight.shape
    nodes = [helper.make_node("Gemm", ["x", "w", "b"], ["y"], transB=1)]
    if relu:
        nodes.append(helper.make_node("Relu", ["y"], ["z"]))
    out = "z" if relu else "y"
    graph = helper.make_graph(
        nodes,
        "layer",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, k])],
        [helper.make_tensor_value_info(out, TensorProto.FLOAT, [BATCH, n])],
        [numpy_helper.from_array(weight, "w"), numpy_helper.from_array(bias, "b")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def ort_node_times(model, x, threads: int, calls: int = 400) -> dict[str, float]:
    """onnxruntime's median microseconds per node kernel over `calls` calls."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.enable_profiling = True
    with tempfile.TemporaryDirectory() as folder:
        options.profile_file_prefix = str(Path(folder) / "mlp")
        session = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        feed = {model.graph.input[0].name: x}
        for _ in range(calls):
            session.run(None, feed)
        events = json.loads(Path(session.end_profiling()).read_text())
    times: dict[str, list[float]] = defaultdict(list)
    for event in events:
        if event.get("cat") == "Node" and event["name"].endswith("_kernel_time"):
            times[event["name"].removesuffix("_kernel_time")].append(event["dur"])
    return {name: statistics.median(values[calls // 4 :]) for name, values in times.items()}


def profile(rounds: int, threads: int) -> list[str]:
    import cpu
    import numpy as np
    import onnxruntime as ort
    from onnx import numpy_helper

    import mlc

    sys.path.insert(0, str(ROOT / "examples"))
    import onnx_models

    model = onnx_models.mlp()
    weights = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    rng = np.random.default_rng(0)
    x = rng.standard_normal((BATCH, 784), dtype=np.float32)
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads

    rows = [
        "| layer | mlc us | onnxruntime us | ort node us (profiler) | numpy us "
        "| mlc GFLOP/s | mlc vs ort | mlc vs numpy |",
        "|---|---|---|---|---|---|---|---|",
    ]
    nodes = ort_node_times(model, x, threads)
    inputs = x
    for index, (k, n, relu) in enumerate(LAYERS, start=1):
        w, b = weights[f"fc{index}.weight"], weights[f"fc{index}.bias"]
        layer = layer_model(w, b, relu)
        exe = mlc.compile(layer)
        session = ort.InferenceSession(
            layer.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        feed = {"x": inputs}
        wt = np.ascontiguousarray(w.T)

        def numpy_layer(a=inputs, wt=wt, b=b, relu=relu):
            y = a @ wt + b
            return np.maximum(y, 0) if relu else y

        want = numpy_layer()
        np.testing.assert_allclose(exe(inputs), want, rtol=1e-3, atol=1e-3)
        med = cpu.burst_medians(
            {
                "mlc": lambda e=exe, a=inputs: e(a),
                "ort": lambda s=session, f=feed: s.run(None, f),
                "numpy": numpy_layer,
            },
            rounds,
        )
        # onnxruntime fuses a Gemm and its Relu into one node, "fused fc<i>"
        node = sum(t for name, t in nodes.items() if name.removeprefix("fused ") == f"fc{index}")
        node += nodes.get(f"relu{index}", 0.0)
        flops = 2 * BATCH * k * n
        rows.append(
            f"| {BATCH} x {k} x {n}{' + ReLU' if relu else ''} | {1e6 * med['mlc']:.1f} "
            f"| {1e6 * med['ort']:.1f} | {node:.1f} | {1e6 * med['numpy']:.1f} "
            f"| {flops / med['mlc'] / 1e9:.1f} | {med['ort'] / med['mlc']:.2f}x "
            f"| {med['numpy'] / med['mlc']:.2f}x |"
        )
        inputs = want
    exe = mlc.compile(model)
    session = ort.InferenceSession(
        model.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )
    feed = {"input": x}
    med = cpu.burst_medians({"mlc": lambda: exe(x), "ort": lambda: session.run(None, feed)}, rounds)
    total = sum(nodes.values())
    rows.append(
        f"| whole model | {1e6 * med['mlc']:.1f} | {1e6 * med['ort']:.1f} | {total:.1f} | "
        f"| | {med['ort'] / med['mlc']:.2f}x | |"
    )
    return rows


def main(argv: list[str] | None = None) -> int:
    args = thread_args.parse(__doc__.split("\n\n")[0], RESULTS, argv)

    sys.path.insert(0, str(Path(__file__).parent))
    import cpu
    import machine

    now = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        f"## The MLP layer by layer, {args.threads} thread(s), {now} (load average {load})",
        "",
        *machine.describe(),
        "",
        f"Medians per call of {args.rounds} alternating rounds of back-to-back bursts; "
        "the profiler column is onnxruntime's own kernel time of the node(s) in the "
        "whole model.",
        "",
        *profile(args.rounds, args.threads),
    ]
    cpu.publish("\n".join(lines) + "\n", args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
