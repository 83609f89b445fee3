"""
The training MLP's matmuls (batch 64, 784-1024-1024) and 1024^3, mlc against numpy, at
one thread count: how a small-M GEMM scales where the row blocks are fewer than the
threads (`tiling_model.matmul_split`) and B is packed every call (the weights are
arguments of a training step).

Run once per thread count (the variables are read once per process):

    for t in 1 4 16; do .venv/bin/python bench/small_m_matmuls.py --threads $t --output -; done

Each row alternates the two systems in bursts (`bench/cpu.py`'s `bursts`), medians.
"""

import sys
from pathlib import Path

import thread_args

RESULTS = Path(__file__).parent / "results" / "training.md"
# (name, A's shape, B's shape as the product reads it, whether B is given transposed)
SHAPES = [
    ("x @ W1", (64, 784), (784, 1024), False),
    ("h @ W2", (64, 1024), (1024, 1024), False),
    ("h^T @ g (dW2)", (1024, 64), (64, 1024), False),
    ("g @ W2^T (dh)", (64, 1024), (1024, 1024), True),
    ("1024^3", (1024, 1024), (1024, 1024), False),
]


def main(argv: list[str] | None = None) -> None:
    args = thread_args.parse(__doc__.split("\n\n")[0], RESULTS, argv)
    import numpy as np
    from cpu import Bursts, bursts
    from machine import describe

    import mlc
    from mlc import ops

    rng = np.random.default_rng(0)
    lines = [
        f"### Small-M matmuls, {args.threads} thread(s) (`bench/small_m_matmuls.py`)",
        "",
        *describe(),
        "",
        "| product | mlc us | numpy us | GFLOP/s mlc | numpy / mlc |",
        "|---|---|---|---|---|",
    ]
    for name, a_shape, b_shape, transposed in SHAPES:
        a = rng.standard_normal(a_shape, dtype=np.float32)
        b = rng.standard_normal(b_shape, dtype=np.float32)
        if transposed:
            b = np.ascontiguousarray(b.T)  # stored (N, K), read as its transpose
            fn = mlc.jit(lambda x, y: ops.matmul(x, ops.transpose(y, (1, 0))))
            reference = lambda x, y: x @ y.T  # noqa: E731
        else:
            fn = mlc.jit(lambda x, y: ops.matmul(x, y))
            reference = np.matmul
        np.testing.assert_allclose(fn(a, b), reference(a, b), rtol=1e-3, atol=1e-3)
        runs = {"mlc": lambda: fn(a, b), "numpy": lambda: reference(a, b)}
        times, _ = bursts(runs, 0.0, args.rounds, args.rounds, Bursts(0.2, 0.05))
        mlc_us, numpy_us = (float(np.median(times[k])) * 1e6 for k in ("mlc", "numpy"))
        flops = 2 * a_shape[0] * a_shape[1] * b_shape[1]
        lines.append(
            f"| {name} | {mlc_us:.0f} | {numpy_us:.0f} | {flops / mlc_us / 1e3:.0f} "
            f"| {numpy_us / mlc_us:.2f}x |"
        )
    text = "\n".join([*lines, ""])
    if args.output == "-":
        sys.stdout.write(text)
    else:
        with open(args.output, "a") as out:
            out.write("\n" + text)


if __name__ == "__main__":
    main()
