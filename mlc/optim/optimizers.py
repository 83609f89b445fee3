"""
SGD (momentum, dampening, weight decay, Nesterov) and Adam / AdamW, with torch.optim's
formulas, as pure functions of arrays: `update(params, grads, state) -> (params, state)`.

Parameters and gradients are sequences of arrays; the state is a flat tuple of arrays
(`init` makes it): the step count first (a rank-0 array of the first parameter's
dtype), then one buffer per parameter for each moment the optimiser keeps. Flat tuples
of arrays are what `mlc.jit` takes and returns, so a compiled training step carries the
state from call to call. Everything is array arithmetic: on numpy arrays it computes,
on traced arrays it records the update into the program being traced.
"""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mlc.frontends.trace.array import is_traced
from mlc.frontends.trace.functions.elementwise import sqrt as traced_sqrt
from mlc.frontends.trace.functions.elementwise import where as traced_where

Arrays = tuple[Any, ...]


def _sqrt(x: Any) -> Any:
    return traced_sqrt(x) if is_traced(x) else np.sqrt(x)


def _where(condition: Any, a: Any, b: Any) -> Any:
    if any(is_traced(v) for v in (condition, a, b)):
        return traced_where(condition, a, b)
    return np.where(condition, a, b)


def _zeros(p: Any) -> np.ndarray:
    return np.zeros(np.shape(p), np.asarray(p).dtype)


class Optimizer(ABC):
    """An update rule: `init(params) -> state`, `update(params, grads, state)`."""

    moments: int = 0  # buffers per parameter in the state

    def init(self, params: Sequence[Any]) -> Arrays:
        """The step count (0) and zero buffers shaped like the parameters."""
        if not params:
            raise ValueError("an optimiser needs at least one parameter")
        step = np.zeros((), np.asarray(params[0]).dtype)
        return (step, *(_zeros(p) for _ in range(self.moments) for p in params))

    def update(self, params: Sequence[Any], grads: Sequence[Any], state: Sequence[Any]):
        """The parameters after one step, and the new state."""
        n = len(params)
        if len(grads) != n or len(state) != 1 + self.moments * n:
            raise ValueError(
                f"{type(self).__name__}.update: {n} parameters, {len(grads)} gradients and "
                f"a state of {len(state)} arrays (expected {1 + self.moments * n})"
            )
        step, buffers = state[0], state[1:]
        moments = [tuple(buffers[k * n : (k + 1) * n]) for k in range(self.moments)]
        new_params, new_moments = self.apply(tuple(params), tuple(grads), step, moments)
        flat = [b for moment in new_moments for b in moment]
        return tuple(new_params), (step + 1, *flat)

    @abstractmethod
    def apply(
        self, params: Arrays, grads: Arrays, step: Any, moments: list[Arrays]
    ) -> tuple[Arrays, list[Arrays]]:
        """One step from step count `step` (the steps taken before this one)."""


@dataclass(frozen=True)
class SGD(Optimizer):
    """
    torch.optim.SGD: `g = grad + weight_decay * p` (negated with `maximize`); with
    momentum, `b = g` on the first step and `b = momentum * b + (1 - dampening) * g`
    after, then `g = g + momentum * b` (Nesterov) or `g = b`; `p = p - lr * g`.
    """

    lr: float = 1e-3
    momentum: float = 0.0
    dampening: float = 0.0
    weight_decay: float = 0.0
    nesterov: bool = False
    maximize: bool = False

    def __post_init__(self) -> None:
        if self.nesterov and (self.momentum <= 0 or self.dampening != 0):
            raise ValueError("Nesterov momentum needs momentum > 0 and dampening 0")

    @property
    def moments(self) -> int:  # pyright: ignore[reportIncompatibleVariableOverride]
        return 1 if self.momentum else 0

    def apply(self, params, grads, step, moments):
        new_params, buffers = [], []
        for i, (p, g) in enumerate(zip(params, grads, strict=True)):
            g = -g if self.maximize else g
            if self.weight_decay:
                g = g + self.weight_decay * p
            if self.momentum:
                later = self.momentum * moments[0][i] + (1 - self.dampening) * g
                b = later if self.dampening == 0 else _where(step == 0, g, later)
                buffers.append(b)
                g = g + self.momentum * b if self.nesterov else b
            new_params.append(p - self.lr * g)
        return tuple(new_params), [tuple(buffers)] if self.momentum else []


@dataclass(frozen=True)
class Adam(Optimizer):
    """
    torch.optim.Adam: with `t` the step number (from 1), `g = grad + weight_decay * p`,
    `m = b1 m + (1 - b1) g`, `v = b2 v + (1 - b2) g^2`,
    `p = p - lr * (m / (1 - b1^t)) / (sqrt(v / (1 - b2^t)) + eps)`.
    """

    lr: float = 1e-3
    betas: tuple[float, float] = (0.9, 0.999)
    eps: float = 1e-8
    weight_decay: float = 0.0

    moments = 2
    decoupled = False  # AdamW: decay the parameters, not the gradient

    def apply(self, params, grads, step, moments):
        b1, b2 = self.betas
        t = step + 1
        correction1, correction2 = 1 - b1**t, 1 - b2**t
        new_params, firsts, seconds = [], [], []
        for p, g, m, v in zip(params, grads, *moments, strict=True):
            if self.weight_decay and self.decoupled:
                p = p * (1 - self.lr * self.weight_decay)
            elif self.weight_decay:
                g = g + self.weight_decay * p
            m = b1 * m + (1 - b1) * g
            v = b2 * v + (1 - b2) * (g * g)
            denominator = _sqrt(v / correction2) + self.eps
            new_params.append(p - self.lr * (m / correction1) / denominator)
            firsts.append(m)
            seconds.append(v)
        return tuple(new_params), [tuple(firsts), tuple(seconds)]


@dataclass(frozen=True)
class AdamW(Adam):
    """torch.optim.AdamW: Adam with decoupled weight decay, `p = p (1 - lr wd)` first."""

    weight_decay: float = 1e-2
    decoupled = True
