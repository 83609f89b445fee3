"""
Every `mlc.ops` function and traced-array method, compiled for the CPU and `cuda` and compared
with eager numpy on fresh random inputs of odd shapes and several dtypes. Many ops
share one traced program, so a handful of compilations cover them all.
"""

import math

import numpy as np
import pytest

import mlc
from mlc import ops
from tests.gpu.targets import compile_for

rng = np.random.default_rng()
erf = np.vectorize(math.erf)


def odd_shape(rank: int) -> tuple[int, ...]:
    return tuple(int(n) for n in rng.choice([3, 5, 7], size=rank))


def run(target, fn, *args):
    """The traced program's results on `target`, one per leaf of what `fn` returns."""
    out = compile_for(mlc.trace(fn, *args), target)(*args)
    return out if isinstance(out, tuple) else (out,)


def check(got, want, rtol):
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want, strict=True)):
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, f"result {i}"
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol, err_msg=f"result {i}")


def unary(m, x):
    """The unary functions, written once for mlc.ops and once for numpy."""
    softmax = m.softmax if m is ops else _softmax
    layer_norm = m.layer_norm if m is ops else _layer_norm
    return (
        m.exp(x),
        m.log(m.abs(x) + 0.5),
        m.sqrt(m.abs(x)),
        m.tanh(x),
        m.sigmoid(x) if m is ops else 1 / (1 + np.exp(-x)),
        m.erf(x) if m is ops else erf(x).astype(x.dtype),
        m.gelu(x) if m is ops else (0.5 * x * (1 + erf(x / math.sqrt(2)))).astype(x.dtype),
        m.relu(x) if m is ops else np.maximum(x, 0),
        m.abs(x),
        -x,
        softmax(x, axis=-1),
        softmax(x, axis=0),
        layer_norm(x),
    )


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layer_norm(x, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    return ((x - mean) / np.sqrt(x.var(-1, keepdims=True) + eps)).astype(x.dtype)


@pytest.mark.parametrize(("dtype", "rtol"), [(np.float32, 2e-5), (np.float64, 1e-12)])
def test_unary_functions(dtype, rtol, target):
    x = rng.uniform(-3, 3, odd_shape(2)).astype(dtype)
    check(run(target, lambda x: unary(ops, x), x), unary(np, x), rtol)


def test_gelu_tanh_and_integer_inputs(target):
    x = rng.uniform(-3, 3, odd_shape(2)).astype(np.float32)
    i = rng.integers(1, 9, odd_shape(1)).astype(np.int32)
    got = run(
        target, lambda x, i: (ops.gelu(x, "tanh"), ops.exp(i), ops.sqrt(i), ops.relu(i - 4)), x, i
    )
    c = math.sqrt(2 / math.pi)
    tanh_gelu = 0.5 * x * (1 + np.tanh(c * (x + 0.044715 * x**3)))
    check(got, (tanh_gelu, np.exp(i), np.sqrt(i), np.maximum(i - 4, 0)), 1e-5)


def binary(m, x, y, k):
    return (
        x + y,
        x - y,
        x * y,
        x / y,
        m.abs(x) ** y,
        2.0**x,
        m.maximum(x, y),
        m.minimum(x, 0.25),
        x + 1,
        3 - x,
        x * np.float32(2),
        x / 2,
        x > y,
        x >= 0,
        x < y,
        x <= 0.5,
        x == x,
        x != y,
        m.where(x > 0, x, y),
        m.where(x > y, 1.0, x),
        (x > 0) & (y > 0),
        (x > 0) | (y < 0),
        (x > 0) ^ (y < 0),
        ~(x > 0),
        k + 1,
        k * 3 - k,
        k / 2,
        x + k,
        m.maximum(k, 2),
    )


def test_binary_functions_broadcast_and_promote_as_numpy_does(target):
    rows, cols = odd_shape(2)
    x = rng.uniform(-2, 2, (rows, cols)).astype(np.float32)
    y = rng.uniform(0.5, 2, (cols,)).astype(np.float32)
    k = rng.integers(-5, 5, (rows, 1)).astype(np.int32)
    check(run(target, lambda x, y, k: binary(ops, x, y, k), x, y, k), binary(np, x, y, k), 1e-5)


def movement(x, i):
    return (
        x[1],
        x[-1, ::2],
        x[:, 1:-1, ::-2],
        x[..., 0],
        x[None, 1:3],
        x[::2, None, -2:],
        x[i],
        x.T,
        x.transpose(1, 0, 2),
        x.reshape(-1, x.shape[-1]),
        x.reshape(x.size),
        x.astype(np.int32),
        (x > 0).astype(np.float64),
    )


def test_indexing_and_movement(target):
    x = rng.standard_normal(odd_shape(3)).astype(np.float32)
    i = rng.integers(-len(x), len(x), (2, 2))
    got = run(target, lambda x, i: (*movement(x, i), ops.concatenate([x, x * 2], axis=1)), x, i)
    want = (*movement(x, i), np.concatenate([x, x * 2], axis=1))
    check(got, want, 0)


def reductions(x):
    return (
        x.sum(),
        x.sum(axis=0),
        x.sum(axis=(0, 2), keepdims=True),
        x.mean(),
        x.mean(axis=-1),
        x.max(),
        x.max(axis=1, keepdims=True),
        x.min(axis=(1, 2)),
        x.min(),
    )


def check_reassociated(got, fn, x):
    """
    Float sums are reassociated (the GPU splits a row among a warp's lanes, numpy adds
    pairwise), so a result is within n eps sum|x| of the exact one, not equal to numpy's
    to a relative tolerance: a sum that cancels to near 0 would fail that by chance.
    Maxima and minima are exact.
    """
    want, exact, magnitude = fn(x), fn(x.astype(np.float64)), fn(np.abs(x).astype(np.float64))
    bound = x.size * np.finfo(x.dtype).eps
    for i, (g, w, e, m) in enumerate(zip(got, want, exact, magnitude, strict=True)):
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, f"result {i}"
        error = np.abs(g.astype(np.float64) - e)
        assert np.all(error <= bound * m), f"result {i}: {error.max()} over {bound} x {m}"


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.bool_])
def test_reductions(dtype, target):
    x = (rng.standard_normal(odd_shape(3)) * 4).astype(dtype)
    if dtype == np.float32:
        check_reassociated(run(target, reductions, x), reductions, x)
    else:
        check(run(target, reductions, x), reductions(x), 1e-5)


def test_reductions_over_given_axes(target):
    x = (rng.standard_normal(odd_shape(3)) * 4).astype(np.float32)
    got = run(target, lambda x: (ops.sum(x, 1), ops.mean(x, None), ops.max(x, 2), ops.min(x, 0)), x)
    check_reassociated(got, lambda x: (x.sum(1), x.mean(), x.max(2), x.min(0)), x)


def conv2d_reference(x, w, bias, stride, pad, dilation, groups):
    n = x.shape[0]
    o, i, kh, kw = w.shape
    x = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])))
    oh = (x.shape[2] - dilation * (kh - 1) - 1) // stride + 1
    ow = (x.shape[3] - dilation * (kw - 1) - 1) // stride + 1
    out = np.zeros((n, o, oh, ow), x.dtype)
    per_group = o // groups
    for g in range(groups):
        for a in range(kh):
            for b in range(kw):
                patch = x[
                    :,
                    g * i : (g + 1) * i,
                    a * dilation : a * dilation + stride * oh : stride,
                    b * dilation : b * dilation + stride * ow : stride,
                ]
                weights = w[g * per_group : (g + 1) * per_group, :, a, b]
                out[:, g * per_group : (g + 1) * per_group] += np.einsum(
                    "nchw,oc->nohw", patch, weights
                )
    return out + bias[None, :, None, None]


def pool_reference(x, k, reduce, pad=(0, 0, 0, 0)):
    fill = -np.inf if reduce is np.max else np.nan
    x = np.pad(x, ((0, 0), (0, 0), (pad[0], pad[2]), (pad[1], pad[3])), constant_values=fill)
    n, c, h, w = x.shape
    windows = x[:, :, : h // k * k, : w // k * k].reshape(n, c, h // k, k, w // k, k)
    return (np.nanmean if reduce is np.mean else np.max)(windows, axis=(3, 5)).astype(x.dtype)


def f32_vector(n: int) -> np.ndarray:
    return rng.standard_normal(n).astype(np.float32)


def test_neural_network_ops(target):
    a = rng.standard_normal((5, 3)).astype(np.float32)
    b = rng.standard_normal((3, 7)).astype(np.float32)
    batch = rng.standard_normal((2, 1, 5, 3)).astype(np.float32)
    v = rng.standard_normal(3).astype(np.float32)
    x = rng.standard_normal((2, 4, 9, 7)).astype(np.float32)
    w = rng.standard_normal((6, 2, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(6).astype(np.float32)
    scale, shift = (
        rng.standard_normal(7).astype(np.float32),
        rng.standard_normal(7).astype(np.float32),
    )

    def model(a, b, batch, v, x, w, bias):
        return (
            a @ b,
            ops.matmul(batch, b),
            v @ b,
            a @ v,
            ops.conv2d(x, w, bias, stride=2, padding=(1, 2, 0, 1), dilation=1, groups=2),
            ops.conv2d(x, w[:, :1].reshape(6, 1, 3, 3)[:4], None, padding=1, groups=4),
            ops.max_pool2d(x, 2),
            ops.avg_pool2d(x, 3, padding=1),
            ops.layer_norm(a @ b, scale, shift),
        )

    got = run(target, model, a, b, batch, v, x, w, bias)
    depthwise = conv2d_reference(x, w[:4, :1], np.zeros(4, np.float32), 1, (1, 1, 1, 1), 1, 4)
    want = (
        a @ b,
        np.matmul(batch, b),
        v @ b,
        a @ v,
        conv2d_reference(x, w, bias, 2, (1, 2, 0, 1), 1, 2),
        depthwise,
        pool_reference(x, 2, np.max),
        pool_reference(x, 3, np.mean, (1, 1, 1, 1))[:, :, :3, :3],
        _layer_norm(a @ b) * scale + shift,
    )
    check(got, want, 1e-4)


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("shape", [(4, 3, 5, 7), (6, 2), (2, 5, 9)])
def test_batch_norm(training, shape):
    rng = np.random.default_rng()
    x = rng.standard_normal(shape).astype(np.float32) * 3 + 1
    c = shape[1]
    scale, bias = (
        rng.standard_normal(c).astype(np.float32),
        rng.standard_normal(c).astype(np.float32),
    )
    mean, var = rng.standard_normal(c).astype(np.float32), rng.uniform(0.5, 2, c).astype(np.float32)
    got = mlc.jit(lambda *a: ops.batch_norm(*a, training=training, epsilon=1e-3))(
        x, scale, bias, mean, var
    )
    axes = (0, *range(2, x.ndim))
    if training:  # the batch statistics, the variance biased (torch's normalisation)
        mean, var = x.mean(axis=axes), x.var(axis=axes)
    per_channel = (-1, *[1] * (x.ndim - 2))
    want = (x - mean.reshape(per_channel)) / np.sqrt(var.reshape(per_channel) + 1e-3)
    want = want * scale.reshape(per_channel) + bias.reshape(per_channel)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_batch_norm_of_a_vector_is_an_error_at_the_users_line():
    from mlc.frontends.trace import TraceError

    with pytest.raises(TraceError, match=r"test_trace_ops.py:\d+:\d+: error: batch_norm: .*rank 1"):
        mlc.trace(lambda x: ops.batch_norm(x), np.ones(3, np.float32))
