"""
`training_step(loss, optimizer)`: forward, backward and the optimiser's update, traced
and compiled as one program by `mlc.jit`.

    step = mlc.optim.training_step(loss, mlc.optim.SGD(lr=0.1, momentum=0.9))
    state = step.optimizer.init(params)
    for x, y in batches:
        value, params, state = step(params, state, x, y)

`loss(*params, *batch)` returns a scalar; the gradient is taken with respect to every
parameter. The compiled function takes and returns flat arrays (`mlc.jit` takes no
containers), so `step` spreads the parameters and the state into arguments and gathers
the results back: one compile per parameter count, shapes and dtypes, as `mlc.jit`
caches. Buffers: the new parameters and state are new arrays; rebinding the names to
them (as above) drops the old ones, whose memory the caching allocator hands to the
next step's results (`mlc.backend.buffers`), so steady-state steps reuse the same
buffers. Writing results into their argument buffers (donation) is not done yet.
"""

from collections.abc import Callable, Sequence
from typing import Any

from mlc.autodiff.api import value_and_grad
from mlc.compiler.jit import JitFunction, jit
from mlc.optim.optimizers import Optimizer


def _flat_step(loss: Callable[..., Any], optimizer: Optimizer, n: int, k: int):
    def flat_step(*arrays: Any) -> tuple[Any, ...]:
        params, state, batch = arrays[:n], arrays[n : n + k], arrays[n + k :]
        value, grads = value_and_grad(loss, argnums=tuple(range(n)))(*params, *batch)
        new_params, new_state = optimizer.update(params, grads, state)
        return (value, *new_params, *new_state)

    flat_step.__name__ = f"{getattr(loss, '__name__', 'loss')}_training_step"
    return flat_step


class TrainingStep:
    """`step(params, state, *batch) -> (loss value, params, state)`, compiled."""

    def __init__(
        self,
        loss: Callable[..., Any],
        optimizer: Optimizer,
        compile_with: Callable[[Callable[..., Any]], Any] | None = None,
        **jit_options: Any,
    ):
        self.loss = loss
        self.optimizer = optimizer
        self.compile_with = compile_with or (lambda fn: jit(fn, **jit_options))
        self.compiled: dict[tuple[int, int], JitFunction] = {}

    def __call__(self, params: Sequence[Any], state: Sequence[Any], *batch: Any):
        key = (len(params), len(state))
        if key not in self.compiled:
            fn = _flat_step(self.loss, self.optimizer, *key)
            self.compiled[key] = self.compile_with(fn)
        value, *rest = self.compiled[key](*params, *state, *batch)
        return value, tuple(rest[: key[0]]), tuple(rest[key[0] :])


def training_step(
    loss: Callable[..., Any],
    optimizer: Optimizer,
    compile_with: Callable[[Callable[..., Any]], Any] | None = None,
    **jit_options: Any,
) -> TrainingStep:
    """
    A compiled training step of `loss` under `optimizer`. `mlc.jit`'s options
    (`target=...`, `dynamic=...`) pass on, or `compile_with` (a decorator such as
    `mlc.jit(target="cuda")`) compiles the flat step instead.
    """
    return TrainingStep(loss, optimizer, compile_with, **jit_options)
