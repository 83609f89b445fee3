"""Gradients by central differences, the reference the autodiff tests compare with."""

from collections.abc import Callable, Sequence

import numpy as np


def numeric_grad(
    fn: Callable[..., object], args: Sequence[np.ndarray], i: int, eps: float = 1e-6
) -> np.ndarray:
    """d fn(*args) / d args[i] for a scalar-valued `fn`, one element at a time."""
    grad = np.zeros_like(args[i])
    for index in np.ndindex(args[i].shape):
        moved = []
        for sign in (1, -1):
            shifted = [np.array(a, copy=True) for a in args]
            shifted[i][index] += sign * eps
            moved.append(float(fn(*shifted)))  # pyright: ignore[reportArgumentType]
        grad[index] = (moved[0] - moved[1]) / (2 * eps)
    return grad
