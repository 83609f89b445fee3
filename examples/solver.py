"""
An iterative solver written in Python: conjugate gradient on a symmetric positive
definite system, twice.

`cg_loop` keeps the iteration inside the compiled program (`ops.while_loop` becomes
one `scf.while`); `cg_python` is the same algorithm as a plain Python loop, which
`mlc.jit` splits at each `if` on a traced value (a graph break) and still runs to
Python's answer. Run it: `python examples/solver.py`.
"""

import numpy as np

import mlc
from mlc import ops


@mlc.jit
def cg_loop(a, b, tolerance=1e-20, max_steps=500):
    """Solve a x = b; returns x and the number of steps taken."""

    def unfinished(state):
        _, _, _, rr, k = state
        return (rr > tolerance) & (k < max_steps)

    def step(state):
        x, r, p, rr, k = state
        ap = a @ p
        alpha = rr / (p * ap).sum()
        x, r = x + alpha * p, r - alpha * ap
        rr_next = (r * r).sum()
        return x, r, r + (rr_next / rr) * p, rr_next, k + 1

    x, _, _, _, steps = ops.while_loop(unfinished, step, (b * 0.0, b, b, (b * b).sum(), 0))
    return x, steps


@mlc.jit
def cg_python(a, b, tolerance=1e-20, max_steps=500):
    """The same solver as a Python loop: each `while` test is a graph break."""
    x, r = b * 0.0, b
    p, rr, steps = r, (r * r).sum(), 0
    while rr > tolerance and steps < max_steps:
        ap = a @ p
        alpha = rr / (p * ap).sum()
        x, r = x + alpha * p, r - alpha * ap
        rr_next = (r * r).sum()
        p, rr, steps = r + (rr_next / rr) * p, rr_next, steps + 1
    return x, steps


def spd_system(rng: np.random.Generator, n: int) -> tuple[np.ndarray, np.ndarray]:
    m = rng.standard_normal((n, n))
    return m @ m.T + n * np.eye(n), rng.standard_normal((n, 1))


def main() -> None:
    rng = np.random.default_rng(0)
    for n in (16, 16, 24):
        a, b = spd_system(rng, n)
        want = np.linalg.solve(a, b)
        x, steps = cg_loop(a, b)
        print(f"n={n}: while_loop CG, {int(steps)} steps, max error {np.abs(x - want).max():.1e}")
        assert np.allclose(x, want, atol=1e-8)
    print("cg_loop cache:", cg_loop.cache_info())
    a, b = spd_system(rng, 12)
    x, steps = cg_python(a, b)
    error = np.abs(x - np.linalg.solve(a, b)).max()
    print(f"n=12: Python-loop CG, {steps} steps, max error {error:.1e}")
    assert np.allclose(x, np.linalg.solve(a, b), atol=1e-8)
    print("cg_python cache:", cg_python.cache_info())
    print(cg_python.explain())


if __name__ == "__main__":
    main()
