"""
Fused code against unfused code and numpy: `linalg-fuse-elementwise` and the row kernels.

Each program is compiled twice, with the default pipeline and with every
`linalg-fuse-elementwise` taken out of it, for the CPU and for `cuda`, and both run on
the same fresh random inputs at odd sizes (1, primes, sizes around vector widths),
dynamic dims included.
"""

import numpy as np
import pytest

from mlc import pipeline
from mlc.compiler import executable_cache
from mlc.dialects import ml
from tests.e2e.programs import program, random_array, tensor
from tests.gpu.targets import compile_all, compile_for

SEED = np.random.SeedSequence().entropy
SIZES = (1, 7, 15, 16, 17, 33)


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


FUSION = "linalg-fuse-elementwise"


def compiled(module, target: str, fuse: bool, monkeypatch: pytest.MonkeyPatch):
    """Compile `module` for `target`, with or without `linalg-fuse-elementwise`, a fresh cache."""
    with monkeypatch.context() as patch:
        patch.setattr(executable_cache, "memory", type(executable_cache.memory)())
        if not fuse:
            unfused = {
                name: {
                    stage: ",".join(
                        p for p in pipeline.stage_text(stage, target=name).split(",") if p != FUSION
                    )
                    for stage in stages
                }
                for name, stages in pipeline.TARGET_STAGES.items()
            }
            patch.setattr(pipeline, "TARGET_STAGE_TEXT", unfused)
        return compile_for(module.clone(), target)


def both(module, target: str, monkeypatch):
    """The program compiled with the default pipeline's fusion and without."""
    return compile_all(
        lambda: compiled(module, target, True, monkeypatch),
        lambda: compiled(module, target, False, monkeypatch),
    )


def check(got, unfused, want, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(got, unfused, rtol=rtol, atol=atol, err_msg=f"seed {SEED}")
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"seed {SEED}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_chain_with_broadcasts(rng, target, dtype, monkeypatch):
    # relu(a * b + c[cols]) * s[rows, 1] + d, every dim but the broadcast ones dynamic.
    args = [
        tensor((5, 9), dtype, True),
        tensor((5, 9), dtype, True),
        tensor((9,), dtype, True),
        tensor((5, 1), dtype, True),
        tensor((5, 9), dtype, True),
    ]

    def build(a, b, c, s, d):
        t = [ml.MulOp(a, b)]
        t.append(ml.AddOp(t[-1], c))
        t.append(ml.ReluOp(t[-1]))
        t.append(ml.MulOp(t[-1], s))
        t.append(ml.AddOp(t[-1], d))
        return t

    fused, unfused = both(program(args, build), target, monkeypatch)
    for rows in SIZES:
        for cols in (1, 16, 17):
            a, b, d = (random_array(rng, (rows, cols), dtype) for _ in range(3))
            c = random_array(rng, (cols,), dtype)
            s = random_array(rng, (rows, 1), dtype)
            want = np.maximum(a * b + c, 0) * s + d
            check(fused(a, b, c, s, d), unfused(a, b, c, s, d), want)


def test_integer_chain(rng, target, monkeypatch):
    args = [tensor((37,), "int32", True), tensor((37,), "int32", True)]

    def build(a, b):
        product, total = ml.MulOp(a, b), ml.AddOp(a, b)
        return [product, total, ml.MaxOp(product, total)]

    module = program(args, build)
    fused, unfused = both(module, target, monkeypatch)
    for n in SIZES:
        a, b = (random_array(rng, (n,), "int32", -50, 50) for _ in range(2))
        np.testing.assert_array_equal(fused(a, b), unfused(a, b))
        np.testing.assert_array_equal(fused(a, b), np.maximum(a * b, a + b))


def test_producer_with_several_consumers(rng, target, monkeypatch):
    # t feeds two consumers and is returned: kept, and its consumers still correct.
    args = [tensor((13,), "float32", True), tensor((13,), "float32", True)]

    def build(a, b):
        t = ml.MulOp(a, b)
        u, v = ml.ExpOp(t), ml.NegOp(t)
        w = ml.AddOp(u, v)
        return [t, u, v, w, ml.AddOp(w, t)]

    fused, unfused = both(program(args, build), target, monkeypatch)
    for n in SIZES:
        a, b = (random_array(rng, (n,), "float32", -2, 2) for _ in range(2))
        t = a * b
        check(fused(a, b), unfused(a, b), np.exp(t) - t + t, rtol=1e-5)


def test_elementwise_into_reduction(rng, target, monkeypatch):
    args = [tensor((6, 33), "float32", True)]

    def build(x):
        e = ml.ExpOp(x)
        return [e, ml.ReduceSumOp(e, axes=[1], keepdims=False)]

    fused, unfused = both(program(args, build), target, monkeypatch)
    for rows, cols in ((1, 1), (3, 15), (7, 16), (2, 97)):
        x = random_array(rng, (rows, cols), "float32")
        check(fused(x), unfused(x), np.exp(x).sum(axis=1), rtol=1e-5)


@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_matmul_epilogue(rng, target, activation, monkeypatch):
    # relu/gelu(x @ w + bias) + residual: one generic, the epilogue on the last k.
    args = [
        tensor((5, 17), "float32", True),
        tensor((17, 19), "float32"),
        tensor((19,), "float32"),
        tensor((5, 19), "float32", True),
    ]

    def build(x, w, bias, residual):
        mm = ml.MatmulOp(x, w)
        biased = ml.AddOp(mm, bias)
        act = ml.ReluOp(biased) if activation == "relu" else ml.GeluOp(biased)
        return [mm, biased, act, ml.AddOp(act, residual)]

    # The default pipeline fuses the epilogue, and linalg-tile's kernel applies it.
    fused, unfused = both(program(args, build), target, monkeypatch)
    for rows in (1, 2, 16, 17):
        x = random_array(rng, (rows, 17), "float32")
        w = random_array(rng, (17, 19), "float32")
        bias = random_array(rng, (19,), "float32")
        residual = random_array(rng, (rows, 19), "float32")
        h = x.astype(np.float64) @ w + bias
        if activation == "relu":
            act = np.maximum(h, 0)
        else:
            from math import erf

            act = 0.5 * h * (1 + np.vectorize(erf)(h / np.sqrt(2)))
        want = (act + residual).astype(np.float32)
        check(fused(x, w, bias, residual), unfused(x, w, bias, residual), want, 1e-4, 1e-4)


def test_conv_batch_norm_relu(rng, target, monkeypatch):
    args = [tensor((2, 3, 9, 9), "float32"), tensor((4, 3, 3, 3), "float32")]
    args += [tensor((4,), "float32")] * 4

    def build(x, w, s, b, m, v):
        c = ml.Conv2dOp(x, w, pads=[1, 1, 1, 1])
        var = ml.AbsOp(v)
        n = ml.BatchNormOp(c, s, b, m, var, epsilon=1e-5)
        return [c, var, n, ml.ReluOp(n)]

    fused, unfused = both(program(args, build), target, monkeypatch)
    x = random_array(rng, (2, 3, 9, 9), "float32")
    w = random_array(rng, (4, 3, 3, 3), "float32")
    s, b, m, v = (random_array(rng, (4,), "float32") for _ in range(4))
    np.testing.assert_allclose(fused(x, w, s, b, m, v), unfused(x, w, s, b, m, v), 1e-5, 1e-5)


def softmax(x, axis):
    x = x.astype(np.float64)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("axis", [-1, 0])
def test_softmax_large_magnitudes(rng, target, dtype, axis, monkeypatch):
    module = program([tensor((4, 9), dtype, True)], lambda x: ml.SoftmaxOp(x, axis=axis))
    exe = compile_for(module, target)
    for shape in ((1, 1), (3, 17), (17, 3), (2, 65)):
        x = random_array(rng, shape, dtype, -1e4, 1e4)
        x[0, 0] = 3e4  # a row whose max is far above the rest
        got = exe(x)
        np.testing.assert_allclose(got, softmax(x, axis), rtol=1e-5, atol=1e-7)
        assert np.all(np.isfinite(got))


def test_softmax_masked_entries(rng, target):
    module = program([tensor((5, 8), "float32", True)], lambda x: ml.SoftmaxOp(x, axis=-1))
    x = random_array(rng, (5, 8), "float32", -5, 5)
    x[:, :3] = -np.inf  # masked before the first finite entry
    x[2, 5] = -np.inf
    exe = compile_for(module, target)
    got = exe(x)
    np.testing.assert_allclose(got, softmax(x, -1), rtol=1e-5, atol=1e-7)
    x[4, :] = -np.inf  # a fully masked row is NaN, as in numpy
    assert np.isnan(exe(x)[4]).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm_large_mean(rng, target, dtype):
    args = [tensor((3, 33), dtype, True), tensor((33,), dtype, True), tensor((33,), dtype, True)]
    module = program(args, lambda x, g, b: ml.LayerNormOp(x, g, b, axis=-1, epsilon=1e-5))
    exe = compile_for(module, target)
    for rows, cols in ((1, 1), (2, 17), (5, 64), (3, 33)):
        x = (1e4 + random_array(rng, (rows, cols), dtype)).astype(dtype)
        g, b = (random_array(rng, (cols,), dtype) for _ in range(2))
        wide = x.astype(np.float64)
        mean = wide.mean(axis=-1, keepdims=True)
        want = (wide - mean) / np.sqrt(wide.var(axis=-1, keepdims=True) + 1e-5) * g + b
        np.testing.assert_allclose(exe(x, g, b), want, rtol=1e-3, atol=1e-3)
