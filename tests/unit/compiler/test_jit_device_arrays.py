"""
`mlc.jit` called on device arrays: checked on the CPU with a stand-in for pycuda's
`GPUArray` (tests/fake_device.py) against the same function on numpy arrays. The real
GPU's twin is tests/e2e/test_trace_jit.py::test_jit_on_device_arrays.
"""

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.compiler import jit as jit_module
from mlc.frontends.trace.tracer import TraceError
from tests.fake_device import FakeDevice, GPUArray


def loss(w, b, x, y):
    return ops.mean((ops.tanh(x @ w + b) - y) ** 2)


def data(rng, n=11, k=7, m=3):
    w = rng.standard_normal((k, m)).astype(np.float32)
    b = rng.standard_normal(m).astype(np.float32)
    x = rng.standard_normal((n, k)).astype(np.float32)
    y = rng.standard_normal((n, m)).astype(np.float32)
    return w, b, x, y


def test_value_and_grad_on_device_arrays_compiles_once(monkeypatch):
    fake = FakeDevice().install(monkeypatch, jit_module)
    rng = np.random.default_rng()
    step = mlc.jit(mlc.value_and_grad(loss, argnums=(0, 1)))
    for _ in range(3):
        arrays = data(rng)
        value, (dw, db) = step(*(GPUArray(a) for a in arrays))
        want_value, (want_dw, want_db) = mlc.value_and_grad(loss, argnums=(0, 1))(*arrays)
        assert all(isinstance(r, GPUArray) for r in (value, dw, db))
        np.testing.assert_allclose(value.array, want_value, rtol=1e-5)
        np.testing.assert_allclose(dw.array, want_dw, rtol=1e-4, atol=1e-6)
        np.testing.assert_allclose(db.array, want_db, rtol=1e-4, atol=1e-6)
    assert step.cache_info() == (2, 1, 0, 1)
    assert fake.targets.count("cuda") == 1  # the numpy reference compiles for the cpu
    assert all(kinds == ["device"] * 4 for _, kinds in fake.calls)
    assert FakeDevice.copies_out == 0


def test_host_and_device_calls_are_separate_variants(monkeypatch):
    fake = FakeDevice().install(monkeypatch, jit_module)
    rng = np.random.default_rng()
    f = mlc.jit(lambda a, b: ops.exp(a) * b)
    a, b = rng.standard_normal((5, 9)), rng.standard_normal(9)
    on_host = f(a, b)
    on_device = f(GPUArray(a), GPUArray(b))
    again = f(a, b)
    assert isinstance(on_host, np.ndarray) and isinstance(on_device, GPUArray)
    np.testing.assert_allclose(on_device.array, np.exp(a) * b)
    np.testing.assert_allclose(again, on_host)
    assert f.cache_info() == (1, 2, 0, 2)
    assert fake.targets == ["cpu", "cuda"]


def test_device_call_guards_shapes_and_dtypes(monkeypatch):
    fake = FakeDevice().install(monkeypatch, jit_module)
    f = mlc.jit(lambda a: a * 2.0)
    for shape, dtype in [((3, 4), np.float32), ((3, 4), np.float64), ((5, 4), np.float32)]:
        a = np.random.default_rng().standard_normal(shape).astype(dtype)
        got = f(GPUArray(a))
        assert got.dtype == dtype and got.shape == shape
        np.testing.assert_allclose(got.array, a * 2.0)
    f(GPUArray(np.ones((3, 4), np.float32)))
    assert f.cache_info() == (1, 3, 0, 3)
    assert fake.targets == ["cuda"] * 3


def test_a_gpu_target_keeps_its_name(monkeypatch):
    fake = FakeDevice().install(monkeypatch, jit_module)
    f = mlc.jit(lambda a: a + 1.0, target="gpu")
    f(GPUArray(np.zeros(4, np.float32)))
    assert fake.targets == ["gpu"]


def test_mixing_host_and_device_arrays_is_an_error(monkeypatch):
    FakeDevice().install(monkeypatch, jit_module)
    f = mlc.jit(lambda a, b: a + b)
    with pytest.raises(
        TypeError, match=r"argument 1 is a numpy ndarray but argument 0 is a GPUArray"
    ):
        f(GPUArray(np.zeros(3)), np.zeros(3))
    with pytest.raises(TypeError, match=r"argument 0 is a numpy float64"):
        f(np.float64(1.0), GPUArray(np.zeros(3)))
    assert f(GPUArray(np.zeros(3)), 2.0).array.tolist() == [2.0] * 3  # a Python number is fine


def test_a_graph_break_on_device_arrays_is_an_error_at_the_users_line(monkeypatch):
    FakeDevice().install(monkeypatch, jit_module)

    def branchy(a):
        if ops.sum(a) > 0:  # a Python branch on a traced value
            return a
        return -a

    f = mlc.jit(branchy)
    assert f(np.ones(3)).tolist() == [1.0] * 3  # on the host it breaks and runs
    with pytest.raises(TraceError, match="without graph breaks") as error:
        f(GPUArray(np.ones(3)))
    assert "test_jit_device_arrays.py" in str(error.value)
    assert "mlc/compiler" not in str(error.value)


def test_trace_takes_device_arrays_for_their_types():
    module = mlc.trace(lambda a, b: a @ b, GPUArray(np.zeros((2, 3), np.float32)), np.zeros(3))
    text = str(module)
    assert "tensor<2x3xf32>" in text and "tensor<3xf64>" in text


def test_donated_device_arrays_come_back_as_themselves(monkeypatch):
    FakeDevice().install(monkeypatch, jit_module)
    opt = mlc.optim.SGD(lr=0.1, momentum=0.9)
    w, b, x, y = data(np.random.default_rng())

    def step(w, b, s, mw, mb, x, y):
        value, grads = mlc.value_and_grad(loss, argnums=(0, 1))(w, b, x, y)
        params, state = opt.update((w, b), grads, (s, mw, mb))
        return (*params, *state, value)

    want = [w, b, *opt.init((w, b))]
    mine = [GPUArray(a.copy()) for a in want]
    in_place = mlc.jit(step, donate_argnums=(0, 1, 2, 3, 4))
    on_host = mlc.jit(step)
    for _ in range(3):
        *want, _ = on_host(*want, x, y)
        *got, value = in_place(*mine, GPUArray(x), GPUArray(y))
        assert all(g is m for g, m in zip(got, mine, strict=True))
        assert isinstance(value, GPUArray)
        for g, w_ in zip(got, want, strict=True):
            np.testing.assert_allclose(g.array, w_, rtol=1e-5, atol=1e-6)
