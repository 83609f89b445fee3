"""mlc.optim's update rules against numpy transcriptions of torch.optim's algorithms."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mlc import optim


def torch_sgd(params, grads_per_step, lr, momentum, dampening, weight_decay, nesterov, maximize):
    """torch.optim.SGD's algorithm (its documentation's pseudo-code), step by step."""
    params = [p.copy() for p in params]
    bufs = [None] * len(params)
    for grads in grads_per_step:
        for i, (p, g) in enumerate(zip(params, grads, strict=True)):
            g = -g if maximize else g
            if weight_decay:
                g = g + weight_decay * p
            if momentum:
                bufs[i] = g if bufs[i] is None else momentum * bufs[i] + (1 - dampening) * g
                g = g + momentum * bufs[i] if nesterov else bufs[i]
            params[i] = p - lr * g
    return params


def torch_adam(params, grads_per_step, lr, betas, eps, weight_decay, decoupled):
    """torch.optim.Adam / AdamW's algorithm, as torch computes it (step size, denominator)."""
    params = [p.copy() for p in params]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    for t, grads in enumerate(grads_per_step, start=1):
        for i, (p, g) in enumerate(zip(params, grads, strict=True)):
            if decoupled:
                p = p * (1 - lr * weight_decay)
            elif weight_decay:
                g = g + weight_decay * p
            m[i] = betas[0] * m[i] + (1 - betas[0]) * g
            v[i] = betas[1] * v[i] + (1 - betas[1]) * g * g
            step_size = lr / (1 - betas[0] ** t)
            denom = np.sqrt(v[i]) / np.sqrt(1 - betas[1] ** t) + eps
            params[i] = p - step_size * m[i] / denom
    return params


def run(opt, params, grads_per_step):
    state = opt.init(params)
    for grads in grads_per_step:
        params, state = opt.update(params, grads, state)
    assert float(state[0]) == len(grads_per_step)
    return params


def problem(seed, dtype, steps=4):
    rng = np.random.default_rng(seed)
    shapes = [(3, 2), (2,), ()]
    params = [rng.standard_normal(s).astype(dtype) for s in shapes]
    grads = [[rng.standard_normal(s).astype(dtype) for s in shapes] for _ in range(steps)]
    return params, grads


@settings(database=None, max_examples=30, deadline=None)
@given(
    lr=st.floats(1e-3, 0.5),
    momentum=st.sampled_from([0.0, 0.5, 0.9]),
    dampening=st.sampled_from([0.0, 0.3]),
    weight_decay=st.sampled_from([0.0, 1e-2]),
    nesterov=st.booleans(),
    maximize=st.booleans(),
    seed=st.integers(0, 2**16),
)
def test_sgd_matches_torch(lr, momentum, dampening, weight_decay, nesterov, maximize, seed):
    if nesterov and (momentum == 0 or dampening):
        with pytest.raises(ValueError, match="Nesterov"):
            optim.SGD(lr=lr, momentum=momentum, dampening=dampening, nesterov=True)
        return
    hyper = dict(
        lr=lr,
        momentum=momentum,
        dampening=dampening,
        weight_decay=weight_decay,
        nesterov=nesterov,
        maximize=maximize,
    )
    params, grads = problem(seed, np.float64)
    got = run(optim.SGD(**hyper), params, grads)
    for g, w in zip(got, torch_sgd(params, grads, **hyper), strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("decoupled", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@settings(database=None, max_examples=20, deadline=None)
@given(
    lr=st.floats(1e-4, 0.1),
    beta1=st.sampled_from([0.0, 0.8, 0.9]),
    beta2=st.sampled_from([0.9, 0.999]),
    weight_decay=st.sampled_from([0.0, 0.05]),
    seed=st.integers(0, 2**16),
)
def test_adam_and_adamw_match_torch(decoupled, dtype, lr, beta1, beta2, weight_decay, seed):
    kind = optim.AdamW if decoupled else optim.Adam
    opt = kind(lr=lr, betas=(beta1, beta2), eps=1e-8, weight_decay=weight_decay)
    params, grads = problem(seed, dtype, steps=5)
    got = run(opt, params, grads)
    # The reference in float64: float32 rounds the two formulas' orders differently.
    wide = [p.astype(np.float64) for p in params]
    wide_grads = [[g.astype(np.float64) for g in step] for step in grads]
    want = torch_adam(wide, wide_grads, lr, (beta1, beta2), 1e-8, weight_decay, decoupled)
    tol = 1e-12 if dtype == np.float64 else 1e-5
    for g, w in zip(got, want, strict=True):
        assert g.dtype == dtype
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def test_the_state_is_flat_arrays():
    params = [np.ones((2, 2), np.float32), np.ones(3, np.float32)]
    assert len(optim.SGD(lr=0.1).init(params)) == 1
    assert len(optim.SGD(lr=0.1, momentum=0.9).init(params)) == 3
    state = optim.Adam().init(params)
    assert len(state) == 5 and state[0].dtype == np.float32 and state[0].shape == ()
    with pytest.raises(ValueError, match="2 parameters, 1 gradients"):
        optim.Adam().update(params, params[:1], state)
