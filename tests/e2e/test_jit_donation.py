"""
`mlc.jit(..., donate_argnums=...)`: results written into their arguments' buffers. An
optimiser step done in place equals the step that returns new arrays, over several
steps, and hands back the caller's own arrays (same objects, same memory); the unsafe
cases (an argument read after its update, arguments sharing memory, a read-only array,
two donated arguments swapped) still compute the right values. Numerical tests run on
the CPU and on `cuda` (the `target` fixture); tests/unit/compiler/test_jit_device_arrays.py
checks device arrays keep their identity with the stand-in `GPUArray`.
"""

import warnings

import numpy as np
import pytest

import mlc
from mlc import diagnostics, ops
from tests.gpu.targets import jit_for

rng = np.random.default_rng()


def loss(w, b, x, y):
    return ops.mean((ops.tanh(x @ w + b) - y) ** 2)


OPTIMISERS = [
    mlc.optim.SGD(lr=0.2),
    mlc.optim.SGD(lr=0.2, momentum=0.9, nesterov=True, weight_decay=1e-2),
    mlc.optim.SGD(lr=0.2, momentum=0.5, dampening=0.3),
    mlc.optim.Adam(lr=0.05, weight_decay=1e-3),
    mlc.optim.AdamW(lr=0.05),
]


def flat_step(opt, n_state):
    def step(*arrays):
        w, b, *state = arrays[: 2 + n_state]
        x, y = arrays[2 + n_state :]
        value, grads = mlc.value_and_grad(loss, argnums=(0, 1))(w, b, x, y)
        params, new_state = opt.update((w, b), grads, tuple(state))
        return (*params, *new_state, value)

    return step


@pytest.mark.parametrize("opt", OPTIMISERS, ids=lambda o: repr(o)[:40])
def test_in_place_step_equals_the_step_returning_new_arrays(target, opt):
    w = rng.standard_normal((13, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    x = rng.standard_normal((21, 13)).astype(np.float32)
    y = rng.standard_normal((21, 5)).astype(np.float32)
    n_state = len(opt.init((w, b)))
    step = flat_step(opt, n_state)
    fresh = jit_for(target)(step)
    in_place = jit_for(target, donate_argnums=tuple(range(2 + n_state)))(step)
    want = [w, b, *opt.init((w, b))]
    mine = [a.copy() for a in want]
    addresses = [a.ctypes.data for a in mine]
    for _ in range(4):
        *want, want_value = fresh(*want, x, y)
        *got, value = in_place(*mine, x, y)
        assert all(g is m for g, m in zip(got, mine, strict=True))
        for g, w_ in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w_, rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(value, want_value, rtol=1e-6)
    assert [a.ctypes.data for a in mine] == addresses
    assert in_place.cache_info() == (3, 1, 0, 1)


def test_an_argument_read_after_its_update_keeps_its_old_values_until_then(target):
    @jit_for(target, donate_argnums=0)
    def update(p, g):
        new = p - 0.5 * g
        return new, ops.sum(p * p)  # p read after new is computed

    p, g = rng.standard_normal(37), rng.standard_normal(37)
    mine = p.copy()
    with diagnostics.capture() as remarks, diagnostics.remarks_enabled():
        new, total = update(mine, g)
    assert new is mine
    np.testing.assert_allclose(new, p - 0.5 * g)
    np.testing.assert_allclose(total, np.sum(p * p))
    assert any("copied into donated argument 0" in r.message for r in remarks)


def test_swapped_and_reversed_arguments(target):
    @jit_for(target, donate_argnums=(0, 1))
    def swap_and_reverse(a, b):
        return b, a[::-1] * 2.0

    a, b = rng.standard_normal(9), rng.standard_normal(9)
    mine_a, mine_b = a.copy(), b.copy()
    first, second = swap_and_reverse(mine_a, mine_b)
    assert first is mine_a and second is mine_b
    np.testing.assert_array_equal(first, b)
    np.testing.assert_allclose(second, a[::-1] * 2.0)


def test_shared_or_read_only_arguments_are_copied_not_overwritten():
    update = mlc.jit(lambda p, g: p - 0.5 * g, donate_argnums=0)
    p = rng.standard_normal(16)
    same = p.copy()
    out = update(same, same)  # donated and read through another argument
    np.testing.assert_allclose(out, p - 0.5 * p)
    assert out is not same
    np.testing.assert_array_equal(same, p)
    frozen = p.copy()
    frozen.flags.writeable = False
    g = rng.standard_normal(16)
    out = update(frozen, g)
    np.testing.assert_allclose(out, p - 0.5 * g)
    np.testing.assert_array_equal(frozen, p)
    view = np.arange(32.0)[::2]  # not contiguous: the checked copy is written
    out = update(view, g)
    np.testing.assert_allclose(out, np.arange(32.0)[::2] - 0.5 * g)


def test_donation_pairs_results_by_type_and_warns_when_none_fits():
    def f(a, b):
        return ops.sum(b), a * 2.0

    paired = mlc.jit(f, donate_argnums=0)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal(5)
    mine = a.copy()
    total, doubled = paired(mine, b)
    assert doubled is mine
    np.testing.assert_allclose(doubled, a * 2.0)
    np.testing.assert_allclose(total, b.sum())
    unpaired = mlc.jit(f, donate_argnums=1)
    with pytest.warns(UserWarning, match=r"donated argument\(s\) 1 match no result"):
        total, _ = unpaired(a, b)
    np.testing.assert_allclose(total, b.sum())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        unpaired(a, b)  # warned once, at the trace


def test_donate_argnums_errors():
    with pytest.raises(TypeError, match="donate_argnums must be"):
        mlc.jit(lambda a: a, donate_argnums=(0, 0))
    f = mlc.jit(lambda a, s: a * s, donate_argnums=1)
    with pytest.raises(TypeError, match="donate_argnums names argument 1, which is not an array"):
        f(np.ones(3), 2.0)


@pytest.mark.gpu
def test_donated_gpu_arrays_are_updated_in_place(monkeypatch):
    """An Adam step on `GPUArray`s writes parameters and state into the same device
    memory and returns the same objects (without a GPU, the PTX is assembled, then it
    skips)."""
    from mlc.compiler import jit as jit_module
    from tests.gpu.targets import compile_for, device_upload

    monkeypatch.setattr(jit_module, "compile_module", compile_for)
    upload = device_upload()
    opt = mlc.optim.Adam(lr=0.05)
    w = rng.standard_normal((13, 5)).astype(np.float32)
    b = rng.standard_normal(5).astype(np.float32)
    x = rng.standard_normal((21, 13)).astype(np.float32)
    y = rng.standard_normal((21, 5)).astype(np.float32)
    want = [w, b, *opt.init((w, b))]
    step = flat_step(opt, len(want) - 2)
    in_place = mlc.jit(step, donate_argnums=tuple(range(len(want))))
    mine = [upload(a) for a in want]
    pointers = [int(a.gpudata) for a in mine]
    batch = upload(x), upload(y)
    for _ in range(3):
        *want, _ = mlc.jit(step)(*want, x, y)
        *got, value = in_place(*mine, *batch)
        assert all(g is m for g, m in zip(got, mine, strict=True))
        assert type(value).__name__ == "GPUArray"
        for g, w_ in zip(got, want, strict=True):
            np.testing.assert_allclose(g.get(), w_, rtol=2e-4, atol=2e-5)
    assert [int(a.gpudata) for a in mine] == pointers
    assert in_place.cache_info() == (2, 1, 0, 1)
