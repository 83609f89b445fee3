"""`mlc.grad` and `mlc.value_and_grad` on traced functions: whole programs, jit, errors."""

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.frontends.trace import TraceError
from tests.finite_differences import numeric_grad


def mlp_loss(w1, b1, w2, b2, x, labels):
    """Softmax cross-entropy of a two-layer MLP (labels one-hot)."""
    hidden = ops.tanh(x @ w1 + b1)
    probs = ops.softmax(hidden @ w2 + b2, axis=-1)
    return -ops.sum(labels * ops.log(probs)) / x.shape[0]


def mlp_grads_by_hand(w1, b1, w2, b2, x, labels):
    hidden = np.tanh(x @ w1 + b1)
    logits = hidden @ w2 + b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    probs = e / e.sum(axis=1, keepdims=True)
    dlogits = (probs - labels) / x.shape[0]
    dhidden = dlogits @ w2.T * (1 - hidden**2)
    return x.T @ dhidden, dhidden.sum(0), hidden.T @ dlogits, dlogits.sum(0)


@pytest.fixture(scope="module")
def mlp():
    rng = np.random.default_rng(0)
    params = [
        rng.standard_normal((5, 7)) * 0.5,
        rng.standard_normal(7) * 0.1,
        rng.standard_normal((7, 3)) * 0.5,
        rng.standard_normal(3) * 0.1,
    ]
    x = rng.standard_normal((4, 5))
    labels = np.eye(3)[rng.integers(0, 3, 4)]
    return params, x, labels


def numpy_loss(w1, b1, w2, b2, x, labels):
    hidden = np.tanh(x @ w1 + b1)
    logits = hidden @ w2 + b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return -np.sum(labels * np.log(e / e.sum(axis=1, keepdims=True))) / x.shape[0]


def test_mlp_gradients_match_the_hand_derived_ones_and_finite_differences(mlp):
    params, x, labels = mlp
    args = [*params, x, labels]
    value, grads = mlc.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3))(*args)
    np.testing.assert_allclose(value, numpy_loss(*args), rtol=1e-10)
    for got, want in zip(grads, mlp_grads_by_hand(*args), strict=True):
        assert got.shape == want.shape and got.dtype == np.float64
        np.testing.assert_allclose(got, want, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(grads[0], numeric_grad(numpy_loss, args, 0), rtol=1e-5, atol=1e-8)


def test_jit_of_value_and_grad_compiles_once(mlp):
    params, x, labels = mlp
    # The program of the test above: the disk cache spares lowering it again.
    step = mlc.jit(mlc.value_and_grad(mlp_loss, argnums=(0, 1, 2, 3)))
    first = step(*params, x, labels)
    second = step(*params, x, labels)
    assert step.cache_info().misses == 1 and step.cache_info().hits == 1
    np.testing.assert_allclose(first[0], second[0])
    assert isinstance(first[1], tuple) and len(first[1]) == 4
    np.testing.assert_allclose(first[1][2], mlp_grads_by_hand(*params, x, labels)[2], rtol=1e-8)


def test_grad_int_argnums_gives_one_array_and_has_aux_passes_aux_through():
    def loss(w, x):
        y = x @ w
        return ops.sum(y * y), y

    rng = np.random.default_rng(1)
    w, x = rng.standard_normal((3, 2)).astype(np.float32), rng.standard_normal((4, 3))
    x = x.astype(np.float32)
    g, aux = mlc.grad(loss, has_aux=True)(w, x)
    assert g.dtype == np.float32 and g.shape == (3, 2)
    np.testing.assert_allclose(g, 2 * x.T @ (x @ w), rtol=1e-5)
    np.testing.assert_allclose(aux, x @ w, rtol=1e-6)
    (value, aux2), g2 = mlc.value_and_grad(loss, has_aux=True)(w, x)
    np.testing.assert_allclose(value, np.sum((x @ w) ** 2), rtol=1e-5)
    np.testing.assert_allclose(aux2, aux)
    np.testing.assert_allclose(g2, g)


def test_grad_inside_a_traced_function_is_one_graph():
    def step(w, x):
        return w - 0.1 * mlc.grad(lambda w: ops.sum(ops.exp(x * w)))(w)

    module = mlc.trace(step, np.ones(3), np.ones(3))
    names = [op.name for op in module.walk()]
    assert names.count("func.func") == 1 and "ml.exp" in names


def test_grad_of_grad():
    d2 = mlc.grad(lambda x: ops.sum(mlc.grad(lambda y: ops.sum(y * y * y))(x)))
    x = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(d2(x), 6 * x)


def test_the_same_array_twice_gets_a_gradient_per_position():
    x = np.array([1.0, 2.0])
    gx, gy = mlc.grad(lambda a, b: ops.sum(a * a * b), argnums=(0, 1))(x, x)
    np.testing.assert_allclose(gx, 2 * x * x)
    np.testing.assert_allclose(gy, x * x)


def test_an_unused_argument_gets_zeros():
    g = mlc.grad(lambda a, b: ops.sum(a), argnums=1)(np.ones(2), np.ones((2, 3)))
    np.testing.assert_array_equal(g, np.zeros((2, 3)))


@pytest.mark.parametrize(
    ("fn", "args", "message"),
    [
        (lambda x: x * 2, [np.ones(3)], "must return a scalar"),
        (lambda x: ops.sum(x), [np.ones(3, np.int32)], "argument 0 has dtype int32"),
        (
            lambda x: ops.sum((x > 0).astype(np.float64)),
            [np.ones(3)],
            "'ml.cmp' op has no gradient",
        ),
        (lambda x: ops.sum(x) if float(ops.sum(x)) > 0 else 0.0, [np.ones(3)], "graph break"),
    ],
    ids=["not-scalar", "integer-argument", "through-a-comparison", "graph-break"],
)
def test_errors_point_at_the_users_line(fn, args, message):
    with pytest.raises(TraceError) as error:
        mlc.grad(fn)(*args)
    assert message in str(error.value)
    assert __file__ in str(error.value)


def test_bad_argnums():
    with pytest.raises(TypeError, match="argnums"):
        mlc.grad(lambda x: x, argnums="0")
    with pytest.raises(ValueError, match="twice"):
        mlc.grad(lambda x: x, argnums=(0, 0))


def test_argnums_beyond_the_arguments_given():
    def loss(x, y):
        return ops.sum(x * y)

    x = np.ones(3)
    with pytest.raises(TraceError, match="argnums names argument 2, but 2 were given"):
        mlc.grad(loss, argnums=(0, 2))(x, x)
    with pytest.raises(TypeError, match="argnums names argument 2, but 2 were given"):
        mlc.grad(loss, argnums=(0, 2), split=True)(x, x)
