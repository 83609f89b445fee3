"""
`training_step` on device arrays: checked on the CPU with a stand-in for pycuda's
`GPUArray` (tests/fake_device.py) against the same step on numpy arrays. The real GPU's
twin is tests/e2e/test_optim_training_step.py::test_training_step_on_device_arrays.
"""

import numpy as np

import mlc
from mlc import ops
from mlc.optim import step as step_module
from tests.fake_device import FakeDevice, GPUArray


def loss(w, b, x, y):
    return ops.mean((ops.tanh(x @ w + b) - y) ** 2)


def _case() -> tuple[np.ndarray, ...]:
    """A dense layer's weight and bias and a batch, fresh random."""
    rng = np.random.default_rng()
    w, b = rng.standard_normal((7, 3)).astype(np.float32), np.zeros(3, np.float32)
    x = rng.standard_normal((11, 7)).astype(np.float32)
    y = rng.standard_normal((11, 3)).astype(np.float32)
    return w, b, x, y


def test_device_arrays_stay_on_the_device(monkeypatch):
    fake = FakeDevice().install(monkeypatch, step_module)
    w, b, x, y = _case()
    opt = mlc.optim.Adam(lr=0.05)
    on_host = mlc.optim.training_step(loss, opt)
    on_device = mlc.optim.training_step(loss, opt)
    want_params, want_state = (w, b), opt.init((w, b))
    params = tuple(GPUArray(a) for a in want_params)
    state = tuple(GPUArray(a) for a in want_state)
    batch = (GPUArray(x), y)  # a numpy batch array is copied in
    for _ in range(3):
        value, params, state = on_device(params, state, *batch)
        want_value, want_params, want_state = on_host(want_params, want_state, x, y)
        assert isinstance(value, GPUArray)
        for got, want in zip((*params, *state), (*want_params, *want_state), strict=True):
            assert isinstance(got, GPUArray)
            np.testing.assert_allclose(got.array, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(value.array, want_value, rtol=1e-5)
    assert len(on_device.on_gpu) == 1  # compiled once
    assert fake.copies_in == 3 and FakeDevice.copies_out == 0  # y, once a step
    assert all(kinds == ["device"] * 9 for _, kinds in fake.calls)


def test_donated_device_arrays_are_updated_where_they_are(monkeypatch):
    fake = FakeDevice().install(monkeypatch, step_module)
    w, b, x, y = _case()
    opt = mlc.optim.AdamW(lr=0.05)
    on_host = mlc.optim.training_step(loss, opt)
    in_place = mlc.optim.training_step(loss, opt, donate=True)
    want_params, want_state = (w, b), opt.init((w, b))
    params = tuple(GPUArray(a.copy()) for a in want_params)
    state = tuple(GPUArray(a.copy()) for a in want_state)
    for _ in range(3):
        value, new_params, new_state = in_place(params, state, GPUArray(x), GPUArray(y))
        want_value, want_params, want_state = on_host(want_params, want_state, x, y)
        assert all(n is o for n, o in zip((*new_params, *new_state), (*params, *state)))
        for got, want in zip((*params, *state), (*want_params, *want_state), strict=True):
            np.testing.assert_allclose(got.array, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(value.array, want_value, rtol=1e-5)
    assert len(in_place.on_gpu) == 1 and FakeDevice.copies_out == 0
    assert all(kinds == ["device"] * 9 for _, kinds in fake.calls)
