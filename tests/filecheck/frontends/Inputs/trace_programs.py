"""Print the programs `mlc.trace` records for a few Python functions (for trace.mlir)."""

import sys

import numpy as np

import mlc
from mlc import ops


def mlp(x, w, b):
    h = ops.relu(x @ w + b)
    return ops.softmax(h * 0.5)


def views(x):
    return x[1:, ::2].T, x[-1], x.reshape(-1)


def control(x, n):
    y = ops.fori_loop(0, n, lambda i, s: s * 2.0 + i, x)
    z = ops.while_loop(lambda s: s.sum() < 100.0, lambda s: s + x, y)
    return ops.cond(z.max() > 0, lambda: z, lambda: -z)


def main() -> None:
    debuginfo = "--debuginfo" in sys.argv
    f32 = np.float32
    programs = [
        (mlp, (np.ones((4, 8), f32), np.ones((8, 3), f32), np.ones(3, f32))),
        (views, (np.ones((5, 6), f32),)),
        (control, (np.ones(3, f32), np.int64(4))),
    ]
    for fn, args in programs:
        print(mlc.print_module(mlc.trace(fn, *args), debuginfo=debuginfo))


if __name__ == "__main__":
    main()
