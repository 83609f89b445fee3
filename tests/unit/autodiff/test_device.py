"""
`mlc.vjp` on `cuda` keeps its residuals on the device: checked on the CPU with a stand-in
for pycuda's `GPUArray` (tests/fake_device.py), against the CPU halves.
"""

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.autodiff import vjp as vjp_module
from tests.fake_device import FakeDevice, GPUArray


def loss(x, w, b):
    return ops.sum(ops.tanh(x @ w + b) ** 2)


def two_outputs(x, w):
    h = ops.exp(x @ w)
    return ops.sum(h), h * 2.0


def case(rng):
    return [rng.standard_normal(s).astype(np.float32) for s in [(5, 3), (3, 7), (7,)]]


@pytest.fixture
def fake(monkeypatch):
    return FakeDevice().install(monkeypatch, vjp_module)


def test_residuals_stay_on_the_device_for_numpy_primals(fake):
    args = case(np.random.default_rng())
    value, vjp_fn = mlc.vjp(loss, *args, target="cuda")
    assert isinstance(value, np.ndarray)  # copied out: the caller gave numpy arrays
    assert vjp_fn.residuals and all(isinstance(r, GPUArray) for r in vjp_fn.residuals)
    assert vjp_fn.saved_bytes == sum(r.nbytes for r in vjp_fn.residuals)
    grads = vjp_fn(np.float32(1.0))
    assert all(isinstance(g, np.ndarray) for g in grads)
    # Both halves ran on device arrays alone; only the value and the gradients came out.
    assert [kinds for _, kinds in fake.calls] == [
        ["device"] * 3,
        ["device"] * len(fake.calls[1][1]),
    ]
    assert FakeDevice.copies_out == 1 + len(grads)
    want_value, vjp_cpu = mlc.vjp(loss, *args)
    np.testing.assert_allclose(value, want_value, rtol=1e-6)
    for g, w in zip(grads, vjp_cpu(np.float32(1.0)), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_device_primals_give_device_outputs_and_gradients(fake):
    rng = np.random.default_rng()
    x, w = (rng.standard_normal(s).astype(np.float32) for s in [(4, 3), (3, 6)])
    (total, h), vjp_fn = mlc.vjp(two_outputs, GPUArray(x), GPUArray(w), target="cuda")
    assert isinstance(total, GPUArray) and isinstance(h, GPUArray)
    assert fake.copies_in == 0 and FakeDevice.copies_out == 0
    ct = rng.standard_normal((4, 6)).astype(np.float32)
    # The first output's cotangent is not given: zeros, made on the device.
    gx, gw = vjp_fn((None, GPUArray(ct)))
    assert isinstance(gx, GPUArray) and isinstance(gw, GPUArray)
    assert FakeDevice.copies_out == 0
    assert all(kind == "device" for _, kinds in fake.calls for kind in kinds)
    dz = 2.0 * ct * np.exp(x @ w)
    np.testing.assert_allclose(gx.array, dz @ w.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gw.array, x.T @ dz, rtol=1e-5, atol=1e-5)


def test_device_primals_need_a_gpu_target():
    x = GPUArray(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="GPUArray arguments need target='cuda'"):
        mlc.vjp(lambda a: ops.sum(a), x)
