"""
`mlc.trace`: the recorded program's ops, types and locations, checked against numpy's
shapes and dtypes (no code is run here; tests/e2e runs traced programs).
"""

import inspect

import numpy as np
import pytest
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import FileLineColLoc, TensorType

import mlc
from mlc import ops
from mlc.frontends.trace.tracer import DTYPES

rng = np.random.default_rng()


def f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def results_of(module) -> list[TensorType]:
    function = next(op for op in module.body.ops if isinstance(op, func.FuncOp))
    return list(function.function_type.outputs)


def numpy_view(t: TensorType) -> tuple[tuple[int, ...], np.dtype]:
    return t.get_shape(), DTYPES[t.element_type]


def same_as_numpy(fn, *args):
    """The traced program's result types are numpy's shapes and dtypes."""
    want = fn(*args)
    want = want if isinstance(want, tuple) else (want,)
    got = [numpy_view(t) for t in results_of(mlc.trace(fn, *args))]
    assert got == [(np.shape(w), np.asarray(w).dtype) for w in want]


def test_function_is_named_after_python_and_keeps_argument_names():
    def affine(x, w):
        return x @ w

    module = mlc.trace(affine, f32(2, 3), f32(3, 4))
    function = next(iter(module.body.ops))
    assert function.sym_name.data == "affine"
    assert [a.name_hint for a in function.args] == ["x", "w"]
    assert results_of(module)[0].get_shape() == (2, 4)


def test_every_op_points_at_the_users_line():
    def model(x):
        y = x * 2.0
        return ops.relu(y).sum(axis=0)

    module = mlc.trace(model, f32(3, 4))
    _, first = inspect.getsourcelines(model)
    lines = {}
    for op in module.walk():
        if op.parent_op() is None or isinstance(op, func.FuncOp):
            continue
        assert isinstance(op.location, FileLineColLoc), op.name
        assert op.location.filename.data == __file__
        lines[op.name] = op.location.line.data
    assert lines["ml.mul"] == first + 1
    assert lines["ml.relu"] == lines["ml.reduce_sum"] == first + 2


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, i: x + 1,  # Python ints are weak: f32 stays f32
        lambda x, i: x * 2.5,
        lambda x, i: i + 1,  # int32 stays int32
        lambda x, i: i * 1.5,  # int and float: float64
        lambda x, i: i / 3,  # true division of ints: float64
        lambda x, i: x + i,  # f32 + int32: float64
        lambda x, i: x + np.ones(4, np.float64),  # arrays are strong
        lambda x, i: 2**x,
        lambda x, i: (x > 0, i <= 2, x == x),
        lambda x, i: (x.sum(), i.sum(), i.mean(), (x > 0).sum(), (x > 0).max()),
        lambda x, i: (x.astype(np.int32), i.astype(np.float16), x.dtype == np.float32),
    ],
)
def test_types_follow_numpy_promotion(fn):
    same_as_numpy(fn, f32(3, 4), rng.integers(-5, 5, (3, 4)).astype(np.int32))


INDICES = [
    1,
    -1,
    (slice(None), 2),
    (slice(1, None), slice(None, None, 2)),
    (slice(None, None, -1), -2),
    (Ellipsis, 1),
    (None, slice(1, 3)),
    (1, None, Ellipsis, slice(-3, None)),
    (slice(-100, 100, 3),),
    (slice(5, 1, -2), slice(None), 0),
    (),
]


@pytest.mark.parametrize("index", INDICES, ids=repr)
def test_indexing_shapes_are_numpy_shapes(index):
    same_as_numpy(lambda x: x[index], f32(6, 5, 4))


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.T,
        lambda x: x.transpose(2, 0, 1),
        lambda x: x.reshape(-1, 4),
        lambda x: x.reshape((5, 24)),
        lambda x: ops.reshape(x, -1),
        lambda x: (x.sum(), x.sum(axis=(0, 2)), x.mean(axis=-1, keepdims=True)),
        lambda x: (x.max(axis=1), x.min(axis=None, keepdims=True)),
        lambda x: x.reshape(len(x), x.size // x.shape[0] // (x.ndim - 2)),
        lambda x: ops.concatenate([x, x * 2], axis=1),
        lambda x: ops.matmul(x, np.ones((4, 3), np.float32)),
        lambda x: ops.matmul(x[0, 0], np.ones((4, 3), np.float32)),
        lambda x: ops.matmul(np.ones((3, 6, 4), np.float32), x[0, 0]),
        lambda x: ops.where(x > 0, x, 0.0),
        lambda x: ops.maximum(x, 0.5) - ops.minimum(x, np.float32(0.5)),
    ],
)
def test_movement_and_reductions_match_numpy_types(fn):
    check_against_numpy(fn, f32(6, 5, 4))


NUMPY_OPS = {
    "reshape": np.reshape,
    "concatenate": np.concatenate,
    "matmul": np.matmul,
    "where": np.where,
    "maximum": np.maximum,
    "minimum": np.minimum,
}


def check_against_numpy(fn, x):
    """Trace `fn` with mlc.ops, run it with numpy's functions of the same names."""

    class NumpyOps:
        def __getattr__(self, name):
            return NUMPY_OPS[name]

    numpy_fn = type(fn)(fn.__code__, {**fn.__globals__, "ops": NumpyOps()})
    want = numpy_fn(x)
    got = mlc.trace(fn, x)
    want = want if isinstance(want, tuple) else (want,)
    flat = [w for w in want if not isinstance(w, tuple | int)]
    types = results_of(got)
    assert [numpy_view(t) for t in types[: len(flat)]] == [
        (np.shape(w), np.asarray(w).dtype) for w in flat
    ]


def test_numpy_functions_on_traced_arrays_record_ops():
    def fn(x):
        return np.exp(x) + np.sum(x, axis=0) - np.maximum(x, 0)

    module = mlc.trace(fn, f32(2, 3))
    names = {op.name for op in module.walk()}
    assert {"ml.exp", "ml.reduce_sum", "ml.max", "ml.add", "ml.sub"} <= names


def test_constants_are_dense_constants():
    weights = f32(3, 2)

    def fn(x):
        return x @ weights + 1

    module = mlc.trace(fn, f32(4, 3))
    constants = [op for op in module.walk() if isinstance(op, arith.ConstantOp)]
    assert [c.value.type.get_shape() for c in constants] == [(3, 2), ()]
    assert list(constants[0].value.get_values()) == pytest.approx(weights.ravel().tolist())


def test_returned_numbers_become_constant_results():
    module = mlc.trace(lambda x: (x, 2.0), f32(2))
    assert [numpy_view(t) for t in results_of(module)] == [((2,), np.float32), ((), np.float64)]


def test_control_flow_records_scf_with_captured_outer_values():
    def fn(x, w):
        y = ops.fori_loop(0, 3, lambda i, s: s @ w, x)
        z = ops.while_loop(lambda s: s.sum() < 10.0, lambda s: s * 2.0 + x, y)
        return ops.cond(z.max() > 0, lambda a: a + w, lambda a: a - x, z)

    module = mlc.trace(fn, f32(3, 3), f32(3, 3))
    function = next(iter(module.body.ops))
    loops = [op for op in module.walk() if isinstance(op, scf.ForOp | scf.WhileOp | scf.IfOp)]
    assert [type(op) for op in loops] == [scf.ForOp, scf.WhileOp, scf.IfOp]
    x, w = function.args
    inner_uses = {
        use.operation.name
        for arg in (x, w)
        for use in arg.uses
        if use.operation.parent_op() is not function
    }
    assert {"ml.matmul", "ml.add", "ml.sub"} <= inner_uses


def index_entries(sizes):
    from hypothesis import strategies as st

    bound = st.one_of(st.none(), st.integers(-9, 9))
    entries = [
        st.integers(-size, size - 1)
        | st.slices(size)
        | st.builds(slice, bound, bound, bound.filter(lambda s: s != 0))
        for size in sizes
    ]
    return st.tuples(*entries)


def test_indexing_shapes_match_numpy_on_random_indices():
    from hypothesis import given, settings
    from hypothesis import strategies as st

    shapes = st.lists(st.integers(1, 6), min_size=1, max_size=3).flatmap(
        lambda s: st.tuples(st.just(tuple(s)), index_entries(s), st.integers(0, len(s)))
    )

    @settings(max_examples=60, deadline=None)
    @given(shapes)
    def check(case):
        shape, index, new_axis_at = case
        index = (*index[:new_axis_at], None, *index[new_axis_at:])
        x = np.zeros(shape, np.float32)
        same_as_numpy(lambda x: x[index], x)

    check()


def test_numpy_integers_work_as_sizes_and_unknown_options_break():
    module = mlc.trace(lambda x: ops.reshape(x, np.int64(6)), f32(2, 3))
    assert results_of(module)[0].get_shape() == (6,)
    module = mlc.trace(
        lambda x: ops.max_pool2d(x, np.int64(2), padding=(0, 0, 1, 1)), f32(1, 1, 4, 4)
    )
    assert results_of(module)[0].get_shape() == (1, 1, 2, 2)
    with pytest.raises(mlc.frontends.trace.TraceError, match=r"numpy\.mean needs the value"):
        mlc.trace(lambda x: np.mean(x, dtype=np.float64), f32(3))
