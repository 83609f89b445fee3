"""
`mlc.jit`: guards and exact cache counts, the variant limit, automatic dynamic
shapes, graph breaks (Python's answer on every path, cached pieces), shape buckets
(shared compilations, exact results at every size, refusal on unsafe dims), errors.
The tests whose compiled pieces compute numbers also run on `cuda`; the guard and cache
mechanics are the same for every target and run on the CPU.
"""

import inspect
import os
import warnings

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.compiler.jit import RecompilationWarning
from mlc.frontends.trace import TraceError
from tests.gpu.targets import jit_for

rng = np.random.default_rng()
SCALE = np.float32(2.0)


def f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def info(f) -> tuple[int, int, int, int]:
    return tuple(f.cache_info())


def test_guards_on_shapes_dtypes_scalars_and_globals():
    global SCALE

    @mlc.jit
    def scaled(x, offset):
        return x * SCALE + offset

    x = f32(3, 4)
    np.testing.assert_allclose(scaled(x, 1), x * 2 + 1, rtol=1e-6)
    np.testing.assert_allclose(scaled(x + 1, 1), (x + 1) * 2 + 1, rtol=1e-6)  # hit
    assert info(scaled) == (1, 1, 0, 1)
    scaled(f32(5, 4), 1)  # new shape
    scaled(x.astype(np.float64), 1)  # new dtype
    scaled(x, 2)  # new Python scalar
    scaled(x, 2.0)  # same value, another type
    assert info(scaled) == (1, 5, 0, 5)
    SCALE = np.float32(3.0)  # the global names another object now
    try:
        np.testing.assert_allclose(scaled(x, 1), x * 3 + 1, rtol=1e-6)
    finally:
        SCALE = np.float32(2.0)
    assert info(scaled) == (1, 6, 0, 6)
    scaled(x, 2.0)  # SCALE is another object again (equal, but not the one compiled in)
    scaled(x, 2.0)
    assert info(scaled) == (2, 7, 0, 7)


def test_decorator_factory_and_closures():
    offset = f32(4)

    @mlc.jit(target="cpu", dynamic=False)
    def add_offset(x):
        return x + offset

    x = f32(2, 4)
    np.testing.assert_allclose(add_offset(x), x + offset)
    offset = f32(4)  # a new object in the closure cell: recompiled, new value used
    np.testing.assert_allclose(add_offset(x), x + offset)
    assert info(add_offset) == (0, 2, 0, 2)
    assert add_offset.__name__ == "add_offset"
    with pytest.raises(ValueError, match="dynamic must be False, True or"):
        mlc.jit(lambda x: x, dynamic="sometimes")


def test_too_many_variants_warn_once_and_fall_back_to_dynamic_shapes():
    f = mlc.jit(lambda x: ops.tanh(x) * 2.0, max_variants=2)
    with pytest.warns(RecompilationWarning, match="compiled 2 times") as caught:
        for n in (2, 3, 4, 5, 6, 7):
            x = f32(n, 3)
            np.testing.assert_allclose(f(x), np.tanh(x) * 2, rtol=1e-6)
    assert len(caught) == 1
    assert info(f) == (3, 3, 0, 3)  # 2 static variants, then one with a dynamic dim


def test_automatic_dynamic_compiles_changing_dims_once_and_keeps_size_one_static():
    @mlc.jit(dynamic=True)
    def normalize(x):
        return ops.softmax(x, axis=-1).sum(axis=0)

    def reference(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return (e / e.sum(-1, keepdims=True)).sum(0)

    for n in (3, 5, 8, 13):
        x = f32(n, 6)
        np.testing.assert_allclose(normalize(x), reference(x), rtol=1e-5)
    assert info(normalize) == (2, 2, 0, 2)
    x = f32(1, 6)  # a size-1 dim is never a dynamic one
    np.testing.assert_allclose(normalize(x), reference(x), rtol=1e-5)
    assert info(normalize) == (2, 3, 0, 3)


def test_reading_a_dynamic_size_pins_static_shapes():
    @mlc.jit(dynamic=True)
    def per_row_mean(x):
        return x.sum(axis=1) / x.shape[1]

    for n in (3, 4, 5, 5):
        x = f32(2, n)
        np.testing.assert_allclose(per_row_mean(x), x.sum(1) / n, rtol=1e-6)
    assert info(per_row_mean) == (1, 3, 0, 3)


def branchy(x):
    y = x * 2.0
    if y.sum() > 0:  # a graph break
        return y + 1.0
    return y - float(x.max())  # a second one on this path


def test_graph_breaks_give_pythons_answer_on_both_paths_and_cache_the_pieces(target):
    f = jit_for(target)(branchy)
    positive, negative = np.abs(f32(4)), -np.abs(f32(4))
    for x in (positive, negative, positive, negative, positive * 2):
        np.testing.assert_allclose(f(x), branchy(x), rtol=1e-6)
    hits, misses, breaks, variants = info(f)
    # positive: 1 break; negative: 2 breaks (the float() value is guarded exactly)
    assert (misses, breaks, variants) == (2, 3, 1) and hits == 3
    text = f.explain()
    _, first = inspect.getsourcelines(branchy)
    assert f"{__file__}:{first + 2}:" in text and "bool()" in text
    assert f"{__file__}:{first + 4}:" in text and "float()" in text
    assert [b.reason for b in f.graph_breaks] == ["bool()", "float()"]


def test_values_python_computes_with_are_guarded_exactly():
    @mlc.jit
    def with_norm(x):
        return x / np.linalg.norm(x)  # numpy cannot be traced: a break

    x = f32(5)
    np.testing.assert_allclose(with_norm(x), x / np.linalg.norm(x), rtol=1e-6)
    np.testing.assert_allclose(with_norm(x), x / np.linalg.norm(x), rtol=1e-6)
    y = f32(5)
    np.testing.assert_allclose(with_norm(y), y / np.linalg.norm(y), rtol=1e-6)
    assert info(with_norm) == (1, 2, 2, 1)
    assert "numpy.norm" in with_norm.explain()


def test_a_loop_of_breaks_is_python_control_flow():
    @mlc.jit
    def halvings(x):
        count = 0
        while x.max() > 1.0:
            x = x * 0.5
            count += 1
        return x, count

    x = np.array([5.0, 3.0, 0.5], np.float32)
    got, count = halvings(x)
    assert count == 3
    np.testing.assert_allclose(got, x / 8)
    got, count = halvings(x)
    assert count == 3 and info(halvings) == (1, 1, 4, 1)


def test_a_break_inside_a_traced_body_is_an_error_at_the_users_line():
    def body(x):
        return x * 2.0 if x.sum() > 0 else x

    f = mlc.jit(lambda x: ops.cond(x.max() > 0, body, lambda v: v, x))
    with pytest.raises(TraceError, match=r"inside an ops\.cond branch or loop body") as error:
        f(f32(3))
    assert f"{__file__}:" in str(error.value)
    assert os.path.dirname(mlc.__file__) not in str(error.value)


def test_shape_errors_under_jit_point_at_the_user():
    f = mlc.jit(lambda x, y: x @ y)
    with pytest.raises(TraceError, match=r"contracting dimensions differ.*\(2x3\), \(4x2\)"):
        f(f32(2, 3), f32(4, 2))


def test_buckets_share_a_compilation_and_slice_exact_results(target):
    @jit_for(target, dynamic="bucket")
    def layer(x, w, b):
        return ops.relu(x @ w + b).sum(axis=1)

    w, b = f32(6, 4), f32(4)
    for n in (5, 6, 7, 8):
        x = f32(n, 6)
        got = layer(x, w, b)
        assert got.shape == (n,)
        np.testing.assert_allclose(got, np.maximum(x @ w + b, 0).sum(1), rtol=1e-5, atol=1e-5)
    assert info(layer) == (3, 1, 0, 1)
    for n in (1, 2, 3, 9, 16, 17):
        x = f32(n, 6)
        np.testing.assert_allclose(
            layer(x, w, b), np.maximum(x @ w + b, 0).sum(1), rtol=1e-5, atol=1e-5
        )
    assert info(layer)[1] == 6  # buckets 1 (exact), 2, 4, 16, 32


def test_buckets_are_refused_where_rows_mix():
    @mlc.jit(dynamic="bucket")
    def center(x):
        return x - x.mean(axis=0)  # the mean runs across the rows

    for n in (5, 6, 7):
        x = f32(n, 3)
        np.testing.assert_allclose(center(x), x - x.mean(0), rtol=1e-5, atol=1e-6)
    assert info(center) == (0, 3, 0, 3)


def test_buckets_are_refused_where_python_reads_the_size():
    @mlc.jit(dynamic="bucket")
    def scaled(x):
        return x * x.shape[0]

    for n in (5, 6):
        x = f32(n, 3)
        np.testing.assert_allclose(scaled(x), x * n, rtol=1e-6)
    assert info(scaled) == (0, 2, 0, 2)


def test_numpy_scalars_are_rank_zero_array_arguments():
    f = mlc.jit(lambda x: x + 1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert f(np.float32(1.5)) == np.float32(2.5)


def test_keyword_arguments_bind_to_their_parameters():
    @mlc.jit
    def affine(x, w, scale=2.0):
        return x @ w * scale

    x, w = f32(2, 3), f32(3, 2)
    np.testing.assert_allclose(affine(x, w=w), x @ w * 2, rtol=1e-5)
    np.testing.assert_allclose(affine(x, w, 2.0), x @ w * 2, rtol=1e-5)
    np.testing.assert_allclose(affine(w=w, x=x, scale=3.0), x @ w * 3, rtol=1e-5)
    assert info(affine) == (1, 2, 0, 2)


def test_arrays_inside_containers_are_refused():
    f = mlc.jit(lambda xs: xs[0] + xs[1])
    with pytest.raises(TypeError, match="argument 0 is a list holding arrays"):
        f([f32(2), f32(2)])


def test_identity_and_constant_results():
    f = mlc.jit(lambda x, n: (x, n * 2, None))
    x = f32(3)
    got, twice, nothing = f(x, 4)
    np.testing.assert_array_equal(got, x)
    assert twice == 8 and nothing is None


LIMIT = 4.0


def _scale_by_limit(x):
    return x * LIMIT


def test_globals_read_by_nested_functions_and_helpers_are_guarded():
    global LIMIT

    @mlc.jit
    def capped(x):
        return ops.while_loop(lambda s: s.max() < LIMIT, lambda s: s * 2.0, x), _scale_by_limit(x)

    x = np.full(3, 1.0, np.float32)
    np.testing.assert_allclose(capped(x)[0], np.full(3, 4.0))
    LIMIT = 16.0
    try:
        looped, scaled = capped(x)
    finally:
        LIMIT = 4.0
    np.testing.assert_allclose(looped, np.full(3, 16.0))
    np.testing.assert_allclose(scaled, x * 16)
    assert info(capped) == (0, 2, 0, 2)


def test_dynamic_dims_through_indexing_reshape_and_matmul(target):
    v = f32(4)

    @jit_for(target, dynamic=True)
    def views(x):
        return (
            x[1:, ::2],
            x[-1],
            x[:, 0],
            x[::-1, None, 1:3],
            x.reshape(-1, 2),
            x @ v,
            ops.concatenate([x, x * 2.0], axis=0),
            ops.softmax(x[2:], axis=0).mean(axis=1),
        )

    def reference(x):
        e = np.exp(x[2:] - x[2:].max(0))
        return (
            x[1:, ::2],
            x[-1],
            x[:, 0],
            x[::-1, None, 1:3],
            x.reshape(-1, 2),
            x @ v,
            np.concatenate([x, x * 2.0], axis=0),
            (e / e.sum(0)).mean(1),
        )

    for n in (3, 6, 11):
        x = f32(n, 4)
        for got, want in zip(views(x), reference(x), strict=True):
            assert got.shape == want.shape
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert info(views) == (1, 2, 0, 2)


def test_large_captured_arrays_are_arguments_read_at_each_call(target):
    weights = f32(64, 32)
    small = f32(3)

    @jit_for(target)
    def project(x):
        y = x @ weights
        if y.sum() > 1e9:  # a break: the weights are arguments of both pieces
            return y
        return y * 2.0 + small.sum()

    x = f32(5, 64)
    np.testing.assert_allclose(project(x), (x @ weights) * 2 + small.sum(), rtol=1e-4, atol=1e-4)
    weights *= 3.0  # in place: the next call reads the new values
    np.testing.assert_allclose(project(x), (x @ weights) * 2 + small.sum(), rtol=1e-4, atol=1e-4)
    assert info(project) == (1, 1, 1, 1)
    piece = next(iter(project._variants.values())).root
    assert len(piece.params) == 1 and piece.params[0] is weights
    assert len(piece.executable.entry.signature.inputs) == 2


class Dense:
    def __init__(self, n_in: int, n_out: int):
        self.w, self.b = f32(n_in, n_out), f32(n_out)

    @mlc.jit
    def __call__(self, x):
        return ops.relu(x @ self.w + self.b)


def test_methods_bind_their_instance_and_guard_its_attributes():
    layer = Dense(4, 3)
    x = f32(2, 4)
    close = {"rtol": 1e-5, "atol": 1e-6}
    np.testing.assert_allclose(layer(x), np.maximum(x @ layer.w + layer.b, 0), **close)
    np.testing.assert_allclose(layer(x), np.maximum(x @ layer.w + layer.b, 0), **close)
    layer.b = f32(3)  # a new attribute value: a guard failure, not a stale constant
    np.testing.assert_allclose(layer(x), np.maximum(x @ layer.w + layer.b, 0), **close)
    other = Dense(4, 3)
    np.testing.assert_allclose(other(x), np.maximum(x @ other.w + other.b, 0), **close)
    assert info(Dense.__call__) == (1, 3, 0, 3)


@pytest.mark.gpu
def test_jit_on_device_arrays(monkeypatch):
    """`mlc.jit(mlc.value_and_grad(...))` on `GPUArray`s compiles for cuda once and returns
    `GPUArray`s (without a GPU, its PTX is assembled, then it skips)."""
    from mlc.compiler import jit as jit_module
    from tests.gpu.targets import compile_for, device_upload

    monkeypatch.setattr(jit_module, "compile_module", compile_for)
    upload = device_upload()

    def loss(w, x):
        return ops.mean(ops.tanh(x @ w) ** 2)

    step = mlc.jit(mlc.value_and_grad(loss))
    for _ in range(3):
        w, x = f32(13, 5), f32(21, 13)
        value, dw = step(upload(w), upload(x))
        t = np.tanh(x @ w)
        assert type(value).__name__ == "GPUArray" and type(dw).__name__ == "GPUArray"
        np.testing.assert_allclose(value.get(), np.mean(t**2), rtol=1e-4)
        np.testing.assert_allclose(
            dw.get(), x.T @ (2 * t * (1 - t * t) / t.size), rtol=2e-4, atol=1e-6
        )
    assert info(step) == (2, 1, 0, 1)
