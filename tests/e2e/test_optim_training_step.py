"""A compiled training step (value_and_grad + an mlc.optim update) on each target, against
numpy: the gradients by hand, the update by mlc.optim on numpy arrays."""

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.optim import step as step_module
from tests.gpu.targets import compile_for, device_upload, jit_for


def loss(w, b, x, y):
    return ops.mean((ops.tanh(x @ w + b) - y) ** 2)


def grads_by_hand(w, b, x, y):
    t = np.tanh(x @ w + b)
    dz = 2 * (t - y) / t.size * (1 - t * t)
    return x.T @ dz, dz.sum(0)


OPTIMISERS = [
    mlc.optim.SGD(lr=0.3, momentum=0.9, nesterov=True, weight_decay=1e-2),
    mlc.optim.SGD(lr=0.3, momentum=0.5, dampening=0.2),
    mlc.optim.Adam(lr=0.05, weight_decay=1e-3),
    mlc.optim.AdamW(lr=0.05),
]


@pytest.mark.parametrize("opt", OPTIMISERS, ids=lambda o: type(o).__name__)
def test_training_step(target, opt):
    rng = np.random.default_rng()
    w = rng.standard_normal((13, 5)).astype(np.float32)
    b = np.zeros(5, np.float32)
    x = rng.standard_normal((21, 13)).astype(np.float32)
    y = rng.standard_normal((21, 5)).astype(np.float32)
    step = mlc.optim.training_step(loss, opt, compile_with=jit_for(target))
    params, state = (w, b), opt.init((w, b))
    want_params, want_state = params, state
    values = []
    for _ in range(4):
        value, params, state = step(params, state, x, y)
        want_params, want_state = opt.update(
            want_params, grads_by_hand(*want_params, x, y), want_state
        )
        for got, want in zip((*params, *state), (*want_params, *want_state), strict=True):
            assert got.dtype == np.float32
            np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)
        values.append(float(value))
    assert values[-1] < values[0]
    assert len(step.compiled) == 1


@pytest.mark.parametrize("opt", OPTIMISERS, ids=lambda o: type(o).__name__)
def test_donated_training_step(target, opt):
    """`donate=True`: the same values as the step returning new arrays, written into the
    arrays it was given (same objects and memory) step after step."""
    rng = np.random.default_rng()
    w = rng.standard_normal((13, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    x = rng.standard_normal((21, 13)).astype(np.float32)
    y = rng.standard_normal((21, 5)).astype(np.float32)
    fresh = mlc.optim.training_step(loss, opt, compile_with=jit_for(target))
    in_place = mlc.optim.training_step(loss, opt, compile_with=jit_for(target), donate=True)
    want_params, want_state = (w, b), opt.init((w, b))
    params = tuple(a.copy() for a in want_params)
    state = tuple(a.copy() for a in want_state)
    mine = (*params, *state)
    addresses = [a.ctypes.data for a in mine]
    for _ in range(4):
        want_value, want_params, want_state = fresh(want_params, want_state, x, y)
        value, params, state = in_place(params, state, x, y)
        assert all(n is o for n, o in zip((*params, *state), mine, strict=True))
        for got, want in zip(mine, (*want_params, *want_state), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(value, want_value, rtol=1e-6)
    assert [a.ctypes.data for a in mine] == addresses
    assert in_place.compiled[(2, len(mine) - 2)].cache_info() == (3, 1, 0, 1)


def test_donation_needs_an_mlc_jit():
    step = mlc.optim.training_step(loss, mlc.optim.SGD(), compile_with=lambda fn: fn, donate=True)
    w, b = np.ones((3, 2), np.float32), np.ones(2, np.float32)
    with pytest.raises(TypeError, match=r"donate=True needs compile_with to give an mlc\.jit"):
        step(
            (w, b),
            (np.zeros((), np.float32),),
            np.ones((4, 3), np.float32),
            np.ones((4, 2), np.float32),
        )


def mlp_loss(w1, b1, w2, b2, x, y):
    h = ops.relu(x @ w1 + b1)
    return ops.sum((h @ w2 + b2 - y) ** 2) / x.shape[0]


def mlp_grads_by_hand(w1, b1, w2, b2, x, y):
    z = x @ w1 + b1
    h = np.maximum(z, 0)
    dout = 2 * (h @ w2 + b2 - y) / x.shape[0]
    dz = (dout @ w2.T) * (z > 0)
    return x.T @ dz, dz.sum(0), h.T @ dout, dout.sum(0)


def test_mlp_step_backward_matmuls(target):
    # The backward's matmul forms on odd sizes: dy @ W.T (B packed transposed, 16 k at
    # a time: K = 19 ends inside a block, N = 45 inside a panel), x.T @ dy (A read
    # transposed), the bias gradients' batch sums, each weight gradient's zero fill far
    # before its matmul.
    rng = np.random.default_rng()
    sizes = [(37, 45), (45,), (45, 19), (19,)]
    params = tuple(rng.standard_normal(s).astype(np.float32) / 4 for s in sizes)
    x = rng.standard_normal((23, 37)).astype(np.float32)
    y = rng.standard_normal((23, 19)).astype(np.float32)
    opt = mlc.optim.SGD(lr=0.05, momentum=0.9)
    step = mlc.optim.training_step(mlp_loss, opt, compile_with=jit_for(target))
    state = opt.init(params)
    want_params, want_state = params, state
    for _ in range(2):
        _, params, state = step(params, state, x, y)
        grads = mlp_grads_by_hand(*(p.astype(np.float64) for p in want_params), x, y)
        want_params, want_state = opt.update(want_params, grads, want_state)
        for got, want in zip((*params, *state), (*want_params, *want_state), strict=True):
            np.testing.assert_allclose(got, want, rtol=2e-4, atol=2e-5)


def _device_case(monkeypatch):
    """How to put an array on the device (`device_upload`), and a dense layer's
    parameters and batch on the host."""
    monkeypatch.setattr(step_module, "compile_module", compile_for)
    upload = device_upload()
    rng = np.random.default_rng()
    params = (rng.standard_normal((13, 5)).astype(np.float32), np.zeros(5, np.float32))
    x = rng.standard_normal((21, 13)).astype(np.float32)
    y = rng.standard_normal((21, 5)).astype(np.float32)
    return upload, params, x, y


@pytest.mark.gpu
def test_training_step_on_device_arrays(monkeypatch):
    """Parameters, state and loss stay `GPUArray`s from step to step (without a GPU, the
    step's PTX is assembled, then it skips)."""
    upload, params, x, y = _device_case(monkeypatch)
    opt = mlc.optim.AdamW(lr=0.05)
    step = mlc.optim.training_step(loss, opt)
    state = opt.init(params)
    on_device = tuple(upload(a) for a in params), tuple(upload(a) for a in state)
    for _ in range(3):
        value, *on_device = step(*on_device, upload(x), upload(y))
        params, state = opt.update(params, grads_by_hand(*params, x, y), state)
        assert type(value).__name__ == "GPUArray"
        for got, want in zip((*on_device[0], *on_device[1]), (*params, *state), strict=True):
            assert type(got).__name__ == "GPUArray"
            np.testing.assert_allclose(got.get(), want, rtol=2e-4, atol=2e-5)
    assert len(step.on_gpu) == 1


@pytest.mark.gpu
def test_donated_training_step_on_device_arrays(monkeypatch):
    """`donate=True` on `GPUArray`s: parameters and state updated in their own device
    memory (same objects, same pointers) (without a GPU, the PTX is assembled, then it
    skips)."""
    upload, params, x, y = _device_case(monkeypatch)
    opt = mlc.optim.SGD(lr=0.3, momentum=0.9, weight_decay=1e-2)
    step = mlc.optim.training_step(loss, opt, donate=True)
    state = opt.init(params)
    mine = tuple(upload(a) for a in (*params, *state))
    pointers = [int(a.gpudata) for a in mine]
    batch = upload(x), upload(y)
    for _ in range(3):
        _, new_params, new_state = step(mine[:2], mine[2:], *batch)
        assert all(n is o for n, o in zip((*new_params, *new_state), mine, strict=True))
        params, state = opt.update(params, grads_by_hand(*params, x, y), state)
        for got, want in zip(mine, (*params, *state), strict=True):
            np.testing.assert_allclose(got.get(), want, rtol=2e-4, atol=2e-5)
    assert [int(a.gpudata) for a in mine] == pointers
