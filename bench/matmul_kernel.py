"""
The matmul micro-kernel and the models built on it, at a chosen thread count.

- Matmuls against numpy's BLAS: one that the kernel bounds (its operands in L2), the
  bench's square sizes, the MLP's two shapes (64 x 784 x 1024, 64 x 1024 x 10) and
  narrow ones (N = 3, 13 and 10) on either side of `tiling_model.PLAIN_LOOP_COLUMNS`.
- The ONNX models (MLP, CNN at batch 1 and 8, transformer block) against onnxruntime.

`--threads N` sets `MLC_NUM_THREADS`, `OPENBLAS_NUM_THREADS` and onnxruntime's intra-op
threads before anything is imported, so every system uses N threads. Each system runs
in back-to-back bursts (as a server issues calls; `cpu.bursts`, the suite's loop), the
systems alternating burst by burst in this one process; the medians per call and
their ratios are printed and appended to `bench/results/matmul-kernel.md` with the
machine, versions and date.
The idle-gap effect is `bench/idle_gap.py`'s subject, not this one's.

    .venv/bin/python bench/matmul_kernel.py --threads 1
"""

import sys
import time
from pathlib import Path

import thread_args

RESULTS = Path(__file__).parent / "results" / "matmul-kernel.md"
MATMULS = [(192, 256, 512), (256, 256, 256), (1024, 1024, 1024), (2048, 2048, 2048)]
MATMULS += [(64, 784, 1024), (64, 1024, 10)]
# Narrow N, around `PLAIN_LOOP_COLUMNS` (the kernel from 5 columns, plain loops below).
MATMULS += [(256, 256, 3), (256, 256, 13), (1024, 784, 10)]
MODELS = ["MLP", "CNN batch 1", "CNN batch 8", "transformer block"]


def matmul_rows(rounds: int) -> list[str]:
    import cpu
    import numpy as np

    import mlc

    rng = np.random.default_rng(0)
    rows = ["| m x k x n | mlc GFLOP/s | numpy GFLOP/s | mlc vs numpy |", "|---|---|---|---|"]
    for m, k, n in MATMULS:
        a, b = (rng.standard_normal(s, dtype=np.float32) for s in ((m, k), (k, n)))
        ta, tb, tc = (f"tensor<{x}x{y}xf32>" for x, y in ((m, k), (k, n), (m, n)))
        exe = mlc.compile(f"""func.func @mm(%a: {ta}, %b: {tb}) -> {tc} {{
          %c = ml.matmul %a, %b : ({ta}, {tb}) -> {tc}
          func.return %c : {tc}
        }}""")
        np.testing.assert_allclose(exe(a, b), a @ b, rtol=1e-3, atol=1e-2 * np.sqrt(k))
        med = cpu.burst_medians({"mlc": lambda: exe(a, b), "numpy": lambda: a @ b}, rounds)
        flops = 2 * m * k * n
        rows.append(
            f"| {m} x {k} x {n} | {flops / med['mlc'] / 1e9:.1f} "
            f"| {flops / med['numpy'] / 1e9:.1f} | {med['numpy'] / med['mlc']:.2f}x |"
        )
    return rows


def model_rows(rounds: int, threads: int) -> list[str]:
    import cpu
    import numpy as np
    import onnxruntime as ort

    import mlc

    sys.path.insert(0, str(Path(__file__).parent.parent / "examples"))
    import onnx_models

    makers = {
        "MLP": onnx_models.mlp,
        "CNN batch 1": lambda: onnx_models.cnn(1),
        "CNN batch 8": lambda: onnx_models.cnn(8),
        "transformer block": onnx_models.transformer_block,
    }
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    rows = ["| model | mlc ms | onnxruntime ms | mlc vs onnxruntime |", "|---|---|---|---|"]
    for name in MODELS:
        model = makers[name]()
        dims = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
        x = np.random.default_rng(0).standard_normal(dims).astype(np.float32)
        exe = mlc.compile(model)
        session = ort.InferenceSession(
            model.SerializeToString(), options, providers=["CPUExecutionProvider"]
        )
        feed = {model.graph.input[0].name: x}
        want = session.run(None, feed)[0]
        np.testing.assert_allclose(exe(x), want, rtol=1e-3, atol=1e-3)
        med = cpu.burst_medians(
            {"mlc": lambda: exe(x), "ort": lambda: session.run(None, feed)}, rounds
        )
        rows.append(
            f"| {name} | {1e3 * med['mlc']:.3f} | {1e3 * med['ort']:.3f} "
            f"| {med['ort'] / med['mlc']:.2f}x |"
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    args = thread_args.parse(__doc__.split("\n\n")[0], RESULTS, argv)

    sys.path.insert(0, str(Path(__file__).parent))
    import cpu
    import machine

    now = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    lines = [
        f"## Matmul kernel, {args.threads} thread(s), {now}",
        "",
        *machine.describe(),
        "",
        f"Medians per call of {args.rounds} alternating rounds of back-to-back bursts "
        "(`cpu.bursts`: the calls after each burst's settling time).",
        "",
        *matmul_rows(args.rounds),
        "",
        *model_rows(args.rounds, args.threads),
    ]
    cpu.publish("\n".join(lines) + "\n", args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
