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
buffers. With `donate=True` the parameters and state are donated (`mlc.jit`'s
`donate_argnums`): the step writes them in place, in the arrays it was given, and
returns those same arrays; the old values are gone.

On the GPU: given pycuda `GPUArray`s (any parameter, state or batch array), the step is
traced once per shapes and dtypes and compiled for `cuda` (`target=` names another GPU
target), and runs on device arrays: parameters, state and loss come back as `GPUArray`s
and nothing is copied to the host (a numpy batch array is copied in). The old
parameters' and state's device memory returns to the stream-ordered pool when the names
are rebound, so the next step's results take the same memory.
"""

from collections.abc import Callable, Sequence
from typing import Any

from mlc.autodiff import device
from mlc.autodiff.api import value_and_grad
from mlc.compiler.compile_path import compile as compile_module
from mlc.compiler.donation import mark_donated
from mlc.compiler.jit import JitFunction, jit
from mlc.frontends.trace.program import trace
from mlc.optim.optimizers import Optimizer


def _flat_step(loss: Callable[..., Any], optimizer: Optimizer, n: int, k: int):
    def flat_step(*arrays: Any) -> tuple[Any, ...]:
        params, state, batch = arrays[:n], arrays[n : n + k], arrays[n + k :]
        value, grads = value_and_grad(loss, argnums=tuple(range(n)))(*params, *batch)
        new_params, new_state = optimizer.update(params, grads, state)
        return (*new_params, *new_state, value)  # argument i donates to result i

    flat_step.__name__ = f"{getattr(loss, '__name__', 'loss')}_training_step"
    return flat_step


class TrainingStep:
    """`step(params, state, *batch) -> (loss value, params, state)`, compiled."""

    def __init__(
        self,
        loss: Callable[..., Any],
        optimizer: Optimizer,
        compile_with: Callable[[Callable[..., Any]], Any] | None = None,
        donate: bool = False,
        **jit_options: Any,
    ):
        self.loss = loss
        self.optimizer = optimizer
        self.donate = donate
        self.compile_with = compile_with or (lambda fn: jit(fn, **jit_options))
        self.compiled: dict[tuple[int, int], JitFunction] = {}
        self.gpu_target = jit_options.get("target", "cuda")
        self.on_gpu: dict[Any, Any] = {}  # device programs by counts, shapes and dtypes

    def __call__(self, params: Sequence[Any], state: Sequence[Any], *batch: Any):
        arrays = (*params, *state, *batch)
        if any(device.is_device_array(a) for a in arrays):
            return self._device_call(params, state, batch)
        key = (len(params), len(state))
        if key not in self.compiled:
            fn = _flat_step(self.loss, self.optimizer, *key)
            self.compiled[key] = self._donating(self.compile_with(fn), sum(key))
        *rest, value = self.compiled[key](*params, *state, *batch)
        return value, tuple(rest[: key[0]]), tuple(rest[key[0] :])

    def _donating(self, compiled: Any, count: int) -> Any:
        """The compiled step, donating its first `count` arguments when asked to."""
        if not self.donate:
            return compiled
        if not isinstance(compiled, JitFunction):
            raise TypeError("training_step: donate=True needs compile_with to give an mlc.jit")
        compiled.donate_argnums = tuple(range(count))
        return compiled

    def _device_call(self, params: Sequence[Any], state: Sequence[Any], batch: Sequence[Any]):
        """The step on device arrays, compiled for the GPU once per shapes and dtypes."""
        arrays = (*params, *state, *batch)
        for i, a in enumerate(arrays):
            if not (device.is_device_array(a) or hasattr(a, "shape")):
                raise TypeError(
                    f"training_step: argument {i} is a {type(a).__name__}; on the GPU every "
                    "parameter, state and batch value must be an array"
                )
        n, k = len(params), len(state)
        key = (n, k, tuple((tuple(a.shape), str(a.dtype)) for a in arrays))
        function = self.on_gpu.get(key)
        if function is None:
            flat = _flat_step(self.loss, self.optimizer, n, k)
            module = trace(flat, *(device.host_like(a) for a in arrays))
            if self.donate:
                mark_donated(next(iter(module.ops)), range(n + k))  # pyright: ignore[reportArgumentType]
            function = self.on_gpu[key] = compile_module(module, self.gpu_target)
        *rest, value = function(*(device.to_device(a) for a in arrays))
        return value, tuple(rest[:n]), tuple(rest[n:])


def training_step(
    loss: Callable[..., Any],
    optimizer: Optimizer,
    compile_with: Callable[[Callable[..., Any]], Any] | None = None,
    donate: bool = False,
    **jit_options: Any,
) -> TrainingStep:
    """
    A compiled training step of `loss` under `optimizer`. `mlc.jit`'s options
    (`target=...`, `dynamic=...`) pass on, or `compile_with` (a decorator such as
    `mlc.jit(target="cuda")`) compiles the flat step instead. `donate=True` updates
    the parameters and state in place: the step returns the arrays it was given.
    """
    return TrainingStep(loss, optimizer, compile_with, donate, **jit_options)
