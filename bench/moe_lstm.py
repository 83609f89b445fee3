"""
A Mixtral-style sparse mixture-of-experts layer and a two-layer LSTM, the routed and
recurrent models of issue 23: mlc against onnxruntime on the CPU, and against torch on
the GPU (eager for the MoE layer, cuDNN for the LSTM).

- moe: 8 experts, top-2, 1024 tokens, d 512, FFN 1024 (SiLU); the graph torch's dynamo
  exporter writes for it (`examples/sparse_moe.py`: TopK, NonZero per expert, Gather,
  ScatterND add), each expert's matmuls on its own tokens, a count known at run time;
- lstm: `torch.nn.LSTM(256, 256, num_layers=2)` on sequence 128, batch 8, as its
  TorchScript export writes it (two ONNX `LSTM` nodes, layout 0, a Squeeze between);
- gru (CPU only): `torch.nn.GRU` of the same sizes, as two ONNX `GRU` nodes with
  `linear_before_reset=1`, as torch exports it.

    PYTHONPATH=. .venv/bin/python bench/moe_lstm.py cpu [--budget 10] [--out FILE]
    PYTHONPATH=. .venv/bin/python bench/moe_lstm.py gpu [--out FILE] [--profile [DIR]]

Each row checks mlc's output against the other system's first, then times both in one
process: on the CPU alternating in bursts (`cpu.bursts`, medians of the settled calls),
on the GPU with CUDA events around one call, alternating, medians (`gpu.compare`). The
ratio is the other system's time over mlc's (above 1: mlc is faster); the compile
column is a cold compile (the disk cache off). `gpu` needs torch
with CUDA and pycuda, and says why it stops without them. Results: bench/results/moe-lstm.md.

`--profile` (GPU) also prints, after each row, where an mlc call spends its time
(`exe.profile`: CUDA events around each launch, layer by layer, with the launches a
call makes and the time outside kernels); with a DIR it writes each row's profile
there as JSON (`<row>.json`).
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

import cpu
import machine
import sparse_moe

import mlc

MOE = {"experts": 8, "k": 2, "tokens": 1024, "dim": 512, "hidden": 1024}
LSTM = {"layers": 2, "hidden": 256, "features": 256, "sequence": 128, "batch": 8}


def moe_model() -> tuple[onnx.ModelProto, sparse_moe.Weights, np.ndarray]:
    """The MoE graph, its weights, and an input of `tokens` tokens (as [1, tokens, dim])."""
    w = sparse_moe.random_weights(MOE["dim"], MOE["hidden"], MOE["experts"], seed=0)
    x = np.random.default_rng(1).standard_normal((1, MOE["tokens"], MOE["dim"]), np.float32)
    return sparse_moe.sparse_moe("dynamo", w, MOE["k"]), w, x


def lstm_weights(gates: int = 4) -> list[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per layer W [1, gH, in], R [1, gH, H], B [1, 2gH] in ONNX's gate order (LSTM:
    i, o, f, c; GRU, `gates=3`: z, r, h)."""
    rng = np.random.default_rng(2)
    h = LSTM["hidden"]
    bound = 1 / np.sqrt(h)
    layers = []
    for layer in range(LSTM["layers"]):
        fan_in = LSTM["features"] if layer == 0 else h
        layers.append(
            tuple(
                rng.uniform(-bound, bound, shape).astype(np.float32)
                for shape in [(1, gates * h, fan_in), (1, gates * h, h), (1, 2 * gates * h)]
            )
        )
    return layers


def lstm_model(weights, op: str = "LSTM") -> tuple[onnx.ModelProto, np.ndarray]:
    """The stacked LSTM (or GRU) as TorchScript exports `torch.nn.LSTM` (layout 0), and
    an input."""
    seq, batch, h = LSTM["sequence"], LSTM["batch"], LSTM["hidden"]
    nodes, initializers, x = [], [], "x"
    name = op.lower()
    extra = {"linear_before_reset": 1} if op == "GRU" else {}
    for layer, (w, r, b) in enumerate(weights):
        names = [f"{name}.w{layer}", f"{name}.r{layer}", f"{name}.b{layer}"]
        initializers += [numpy_helper.from_array(a, n) for a, n in zip((w, r, b), names)]
        y = f"{name}.y{layer}"
        nodes.append(helper.make_node(op, [x, *names], [y], name=y, hidden_size=h, **extra))
        x = f"{name}.out{layer}"
        axes = f"{name}.axes{layer}"
        initializers.append(numpy_helper.from_array(np.array([1]), axes))
        nodes.append(helper.make_node("Squeeze", [y, axes], [x], name=x))
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [seq, batch, LSTM["features"]])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [seq, batch, h])],
        initializers,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    x = np.random.default_rng(3).standard_normal((seq, batch, LSTM["features"]), np.float32)
    return model, x


# --- the CPU: mlc against onnxruntime -------------------------------------------------------


def cpu_row(name: str, model: onnx.ModelProto, x: np.ndarray, budget: float) -> dict:
    import onnxruntime  # a benchmark dependency, not mlc's

    start = time.perf_counter()
    exe = mlc.compile(model)
    compile_s = time.perf_counter() - start
    session = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    feeds = {"x": x}
    (want,) = session.run(None, feeds)
    np.testing.assert_allclose(exe(x), want, rtol=1e-3, atol=1e-4)
    runs = {"mlc": lambda: exe(x), "onnxruntime": lambda: session.run(None, feeds)}
    settled, _ = cpu.bursts(runs, budget, min_runs=3, max_runs=1000)
    mlc_s, ort_s = (statistics.median(settled[k]) for k in ("mlc", "onnxruntime"))
    print(f"{name}: mlc {mlc_s * 1e3:.2f} ms, onnxruntime {ort_s * 1e3:.2f} ms", flush=True)
    return {"name": name, "mlc": mlc_s, "other": ort_s, "compile": compile_s}


def cpu_report(budget: float) -> str:
    model, _, x = moe_model()
    lstm, lx = lstm_model(lstm_weights())
    gru, gx = lstm_model(lstm_weights(gates=3), "GRU")
    rows = [
        cpu_row("moe", model, x, budget),
        cpu_row("lstm", lstm, lx, budget),
        cpu_row("gru", gru, gx, budget),
    ]
    return "\n".join(
        [
            "## CPU: mlc against onnxruntime",
            "",
            *machine.describe(),
            "",
            *table(rows, "onnxruntime"),
        ]
    )


def table(rows: list[dict], other: str) -> list[str]:
    shapes = {
        "moe": "{experts} experts, top-{k}, {tokens} tokens, d {dim}, FFN {hidden}".format(**MOE),
        "lstm": "{layers} layers, hidden {hidden}, sequence {sequence}, batch {batch}".format(
            **LSTM
        ),
    }
    shapes["gru"] = shapes["lstm"]
    lines = [
        f"| row | shape | mlc ms | {other} ms | {other} / mlc | mlc compile s |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['name']} | {shapes[r['name']]} | {r['mlc'] * 1e3:.2f} | "
            f"{r['other'] * 1e3:.2f} | {r['other'] / r['mlc']:.2f}x | {r['compile']:.1f} |"
        )
    return lines


# --- the GPU: mlc against torch ---------------------------------------------------------------


def torch_moe(torch, w: sparse_moe.Weights):
    """The layer in torch eager, as `bench/zoo.py`'s `moe_sparse` writes it."""
    router = torch.from_numpy(w.router).cuda()
    up = [torch.from_numpy(u).cuda() for u in w.up]
    down = [torch.from_numpy(d).cuda() for d in w.down]
    silu = torch.nn.functional.silu

    def layer(x):
        tokens = x.reshape(-1, x.shape[-1])
        logits, chosen = torch.topk(tokens @ router.T, MOE["k"], dim=-1)
        weights = torch.softmax(logits, dim=-1)
        out = torch.zeros_like(tokens)
        for e in range(MOE["experts"]):
            token, slot = torch.where(chosen == e)
            h = silu(tokens.index_select(0, token) @ up[e].T) @ down[e].T
            out.index_add_(0, token, h * weights[token, slot].unsqueeze(-1))
        return out.reshape(x.shape)

    return layer


def torch_lstm(torch, weights):
    """`torch.nn.LSTM` (cuDNN) holding the ONNX weights, gates reordered to i, f, g, o."""
    lstm = torch.nn.LSTM(LSTM["features"], LSTM["hidden"], num_layers=LSTM["layers"]).cuda()
    h = LSTM["hidden"]
    order = np.concatenate([np.arange(g * h, (g + 1) * h) for g in (0, 2, 3, 1)])
    with torch.no_grad():
        for layer, (w, r, b) in enumerate(weights):
            for name, value in [
                (f"weight_ih_l{layer}", w[0][order]),
                (f"weight_hh_l{layer}", r[0][order]),
                (f"bias_ih_l{layer}", b[0][: 4 * h][order]),
                (f"bias_hh_l{layer}", b[0][4 * h :][order]),
            ]:
                getattr(lstm, name).copy_(torch.from_numpy(np.ascontiguousarray(value)))
    return lambda x: lstm(x)[0]


def print_profile(name: str, exe, view, into: Path | None) -> None:
    """`exe.profile(view)`'s table, and the launches and seconds of a call around it."""
    profile = exe.profile(view)
    data = profile.as_json()
    launches = sum(k["runs"] for layer in data["layers"] for k in layer["kernels"])  # a call
    print(
        f"{name} profile: {data['call_seconds'] * 1e3:.3f} ms a call, "
        f"{data['kernel_seconds'] * 1e3:.3f} ms in kernels, "
        f"{data['outside_seconds'] * 1e3:.3f} ms outside, {launches} launches",
        flush=True,
    )
    print(profile.table(limit=40), flush=True)
    if into is not None:
        into.mkdir(parents=True, exist_ok=True)
        profile.save_json(into / f"{name}.json")


def gpu_row(
    device, name: str, model, reference, x: np.ndarray, profile: Path | bool = False
) -> dict:
    from gpu import compare

    torch = device.torch
    start = time.perf_counter()
    exe = mlc.compile(model, target="cuda")
    compile_s = time.perf_counter() - start
    xt = torch.from_numpy(x).cuda()
    view = device.view(xt)
    with torch.no_grad():
        want = reference(xt)
        got = torch.as_tensor(exe(view).get(), device="cuda")
        error = float(torch.linalg.norm(got - want) / torch.linalg.norm(want))
        if error > 1e-3:
            raise AssertionError(f"{name}: relative L2 error {error:.2e} against torch")
        times = compare(torch, {"mlc": lambda: exe(view), "torch": lambda: reference(xt)}, 20)
    print(f"{name}: mlc {times['mlc']:.3f} ms, torch {times['torch']:.3f} ms", flush=True)
    print(f"{name}: relative L2 error {error:.2e} against torch", flush=True)
    if profile is not False:
        print_profile(name, exe, view, profile if isinstance(profile, Path) else None)
    return {
        "name": name,
        "mlc": times["mlc"] / 1e3,
        "other": times["torch"] / 1e3,
        "compile": compile_s,
    }


def gpu_report(profile: Path | bool = False) -> str:
    from gpu_setup import Device

    device = Device()
    torch = device.torch
    model, w, x = moe_model()
    weights = lstm_weights()
    lstm, lx = lstm_model(weights)
    torch.backends.cudnn.benchmark = True
    rows = [
        gpu_row(device, "moe", model, torch_moe(torch, w), x, profile),
        gpu_row(device, "lstm", lstm, torch_lstm(torch, weights), lx, profile),
    ]
    return "\n".join(
        [
            "## GPU: mlc against torch (eager MoE, cuDNN LSTM)",
            "",
            device.versions(),
            "",
            *table(rows, "torch"),
        ]
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("where", choices=["cpu", "gpu"])
    parser.add_argument("--budget", type=float, default=10.0, help="CPU seconds per row")
    parser.add_argument("--out", type=Path, help="also write the report to this file")
    parser.add_argument(
        "--profile",
        nargs="?",
        type=Path,
        const=True,
        default=False,
        metavar="DIR",
        help="gpu: print each row's exe.profile table (with DIR: also its JSON there)",
    )
    args = parser.parse_args(argv)
    os.environ["MLC_CACHE"] = "0"  # the compile column is a cold compile, not a cache hit
    if args.where == "gpu":
        from mlc.backend.cuda import CudaUnavailableError
        from mlc.extras import MissingDependencyError

        try:
            report = gpu_report(args.profile)
        except (MissingDependencyError, CudaUnavailableError) as error:
            print(f"gpu rows skipped: {error}", file=sys.stderr)
            return 1
    else:
        report = cpu_report(args.budget)
    print(report)
    if args.out:
        args.out.write_text(report + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
