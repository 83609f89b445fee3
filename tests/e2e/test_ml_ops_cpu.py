"""
Every `ml` op, compiled by `mlc.compile` for the CPU and for the GPU (`cuda`, see
tests/gpu/targets.py), against numpy on fresh random data.

Programs group several ops over the same arguments (one compile, several results),
and run with static shapes and with every dim other than 1 dynamic (`?`), so one
compiled function serves any size. Tolerances: rtol 1e-5, 1e-4 for transcendentals.
"""

import itertools
import math

import numpy as np
import pytest

from mlc.dialects import ml
from tests.e2e.programs import program, random_array, tensor
from tests.gpu.targets import compile_for

SEED = np.random.SeedSequence().entropy


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    # Fresh data every run; the seed is in the test's report if it fails.
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


def assert_matches(got, want, rtol=1e-5, atol=1e-6, what=""):
    want = np.asarray(want)
    assert isinstance(got, np.ndarray), f"{what}: expected an array, got {type(got)}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape} (seed {SEED})"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    if np.issubdtype(want.dtype, np.floating):
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"{what} seed {SEED}")
    else:
        np.testing.assert_array_equal(got, want, err_msg=f"{what} seed {SEED}")


@pytest.fixture(autouse=True)
def _on_every_target(target: str) -> None:
    # Every test runs on each target (tests/e2e/conftest.py): `run` and
    # `compile_target` read it from here.
    global TARGET
    TARGET = target


TARGET = "cpu"


def compile_target(module):
    return compile_for(module, TARGET)


def run(module, *args):
    results = compile_target(module)(*args)
    return results if isinstance(results, tuple) else (results,)


DYNAMIC = pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])

# ---------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------


def trunc_div(a, b):
    return (np.sign(a) * np.sign(b) * (np.abs(a) // np.abs(b))).astype(a.dtype)


BINARY = {
    "add": (ml.AddOp, np.add),
    "sub": (ml.SubOp, np.subtract),
    "mul": (ml.MulOp, np.multiply),
    "div": (ml.DivOp, None),
    "max": (ml.MaxOp, np.maximum),
    "min": (ml.MinOp, np.minimum),
}

BROADCASTS = [
    ((3, 4), (3, 4)),
    ((3, 5), (5,)),
    ((3, 1), (1, 4)),
    ((), (2, 3)),
    ((2, 1, 5), (3, 1)),
    ((0, 4), (4,)),
    ((7,), ()),
]


@DYNAMIC
@pytest.mark.parametrize("lhs_shape, rhs_shape", BROADCASTS, ids=str)
def test_binary_broadcasting(rng, lhs_shape, rhs_shape, dynamic):
    dtype = "float32"
    a = random_array(rng, lhs_shape, dtype)
    b = random_array(rng, rhs_shape, dtype)
    b = np.where(np.abs(b) < 0.1, 0.5, b).astype(dtype)
    for name, (op, reference) in BINARY.items():
        module = program(
            [tensor(lhs_shape, dtype, dynamic), tensor(rhs_shape, dtype, dynamic)],
            lambda x, y, op=op: op(x, y),
        )
        want = np.divide(a, b) if name == "div" else reference(a, b)
        (got,) = run(module, a, b)
        assert_matches(got, want, what=name)


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64", "int8"])
def test_binary_dtypes(rng, dtype):
    a = random_array(rng, (4, 6), dtype, -50, 50)
    b = random_array(rng, (6,), dtype, 1, 9) * np.where(rng.random(6) < 0.5, -1, 1).astype(dtype)
    for name, (op, reference) in BINARY.items():
        module = program([tensor((4, 6), dtype), tensor((6,), dtype)], lambda x, y, op=op: op(x, y))
        if name == "div":
            want = np.divide(a, b) if dtype == "float64" else trunc_div(a, b)
        else:
            want = reference(a, b)
        (got,) = run(module, a, b)
        assert_matches(got, np.asarray(want, dtype=dtype), rtol=1e-12, what=name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_pow(rng, dtype):
    a = random_array(rng, (3, 5), dtype, 0.1, 3)
    b = random_array(rng, (5,), dtype, -2, 2)
    module = program([tensor((3, 5), dtype), tensor((5,), dtype)], ml.PowOp)
    (got,) = run(module, a, b)
    assert_matches(got, np.power(a, b), rtol=1e-4, what="pow")


@DYNAMIC
@pytest.mark.parametrize("predicate", ["eq", "ne", "lt", "le", "gt", "ge"])
def test_cmp_and_select(rng, predicate, dynamic):
    shape = (4, 5)
    a = random_array(rng, shape, "int32", -2, 2).astype(np.float32)
    b = random_array(rng, (5,), "int32", -2, 2).astype(np.float32)
    module = program(
        [tensor(shape, "float32", dynamic), tensor((5,), "float32", dynamic)],
        lambda x, y: [c := ml.CmpOp(predicate, x, y), ml.SelectOp(c.result, x, y)],
    )
    reference = {
        "eq": np.equal,
        "ne": np.not_equal,
        "lt": np.less,
        "le": np.less_equal,
        "gt": np.greater,
        "ge": np.greater_equal,
    }[predicate]
    (got,) = run(module, a, b)
    assert_matches(got, np.where(reference(a, b), a, b), what=predicate)
    cmp_only = program(
        [tensor(shape, "float32", dynamic), tensor((5,), "float32", dynamic)],
        lambda x, y: ml.CmpOp(predicate, x, y),
    )
    (got,) = run(cmp_only, a, b)
    assert_matches(got, reference(a, b), what=predicate)


def _erf(x):
    return np.vectorize(math.erf, otypes=[x.dtype])(x)


def _gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))


UNARY = {
    "neg": (ml.NegOp, np.negative, (-3, 3)),
    "abs": (ml.AbsOp, np.abs, (-3, 3)),
    "exp": (ml.ExpOp, np.exp, (-5, 5)),
    "log": (ml.LogOp, np.log, (0.01, 10)),
    "sqrt": (ml.SqrtOp, np.sqrt, (0, 10)),
    "rsqrt": (ml.RsqrtOp, lambda x: 1 / np.sqrt(x), (0.01, 10)),
    "tanh": (ml.TanhOp, np.tanh, (-5, 5)),
    "sigmoid": (ml.SigmoidOp, lambda x: 1 / (1 + np.exp(-x)), (-8, 8)),
    "relu": (ml.ReluOp, lambda x: np.maximum(x, 0), (-3, 3)),
    "erf": (ml.ErfOp, _erf, (-4, 4)),
    "gelu": (ml.GeluOp, lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))), (-4, 4)),
    "gelu_tanh": (lambda x: ml.GeluOp(x, "tanh"), _gelu_tanh, (-4, 4)),
}


@DYNAMIC
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary(rng, name, dtype, dynamic):
    op, reference, (low, high) = UNARY[name]
    for shape in [(3, 17), (), (0, 2)]:
        x = random_array(rng, shape, dtype, low, high)
        module = program([tensor(shape, dtype, dynamic)], op)
        (got,) = run(module, x)
        assert_matches(got, reference(x).astype(dtype), rtol=1e-4, atol=1e-5, what=name)


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_unary(rng, dtype):
    x = random_array(rng, (5, 3), dtype, -9, 9)
    for op, reference in [(ml.NegOp, np.negative), (ml.AbsOp, np.abs), (ml.ReluOp, None)]:
        module = program([tensor((5, 3), dtype)], op)
        (got,) = run(module, x)
        want = np.maximum(x, 0) if reference is None else reference(x)
        assert_matches(got, want.astype(dtype), what=op.name)


@pytest.mark.parametrize(
    "source, result",
    [
        ("float32", "float64"),
        ("float64", "float32"),
        ("float32", "int32"),
        ("int32", "float32"),
        ("int64", "int32"),
        ("int32", "int64"),
        ("bool", "float32"),
        ("float32", "bool"),
        ("int8", "int64"),
    ],
)
def test_cast(rng, source, result):
    x = random_array(rng, (4, 5), source, -100, 100)
    if source == "float32":
        x[0, :3] = [0.25, -0.75, 0.0]  # small values: truncation and != 0 differ
    module = program([tensor((4, 5), source)], lambda v: ml.CastOp(v, tensor((4, 5), result)))
    (got,) = run(module, x)
    # Float to integer truncates toward zero (numpy's astype does too); to bool is != 0.
    want = x.astype(result)
    assert_matches(got, want, what="cast")


# ---------------------------------------------------------------------------
# Contractions and reductions
# ---------------------------------------------------------------------------

MATMULS = [
    ((4, 8), (8, 16)),
    ((1, 7), (7, 1)),
    ((13, 5), (5, 3)),
    ((2, 3, 4), (2, 4, 5)),
    ((2, 3, 4), (4, 5)),
    ((3, 1, 2, 6), (5, 6, 3)),
    ((0, 4), (4, 3)),
    ((3, 0), (0, 2)),
]


@DYNAMIC
@pytest.mark.parametrize("a_shape, b_shape", MATMULS, ids=str)
def test_matmul(rng, a_shape, b_shape, dynamic):
    a = random_array(rng, a_shape, "float32")
    b = random_array(rng, b_shape, "float32")
    module = program(
        [tensor(a_shape, "float32", dynamic), tensor(b_shape, "float32", dynamic)], ml.MatmulOp
    )
    (got,) = run(module, a, b)
    assert_matches(got, np.matmul(a, b), rtol=1e-5, atol=1e-5, what="matmul")


@pytest.mark.parametrize("dtype", ["float64", "int32", "int64"])
def test_matmul_dtypes(rng, dtype):
    a = random_array(rng, (6, 9), dtype, -5, 5)
    b = random_array(rng, (9, 4), dtype, -5, 5)
    module = program([tensor((6, 9), dtype), tensor((9, 4), dtype)], ml.MatmulOp)
    (got,) = run(module, a, b)
    assert_matches(got, np.matmul(a, b), rtol=1e-12, what="matmul")


REDUCTIONS = {
    "sum": (ml.ReduceSumOp, np.sum),
    "mean": (ml.ReduceMeanOp, np.mean),
    "max": (ml.ReduceMaxOp, np.max),
    "min": (ml.ReduceMinOp, np.min),
}


@DYNAMIC
@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axes", [(1,), (0, 2), (-1,), (0, 1, 2)], ids=str)
@pytest.mark.parametrize("name", sorted(REDUCTIONS))
def test_reduce(rng, name, axes, keepdims, dynamic):
    op, reference = REDUCTIONS[name]
    x = random_array(rng, (3, 4, 5), "float32")
    module = program(
        [tensor((3, 4, 5), "float32", dynamic)], lambda v: op(v, axes=axes, keepdims=keepdims)
    )
    (got,) = run(module, x)
    want = reference(x, axis=axes, keepdims=keepdims).astype("float32")
    assert_matches(got, want, rtol=1e-5, atol=1e-5, what=name)


@pytest.mark.parametrize("dtype", ["int32", "int64", "float64"])
def test_reduce_dtypes(rng, dtype):
    x = random_array(rng, (6, 7), dtype, -20, 20)
    for name, (op, reference) in REDUCTIONS.items():
        if name == "mean" and dtype != "float64":
            continue
        module = program([tensor((6, 7), dtype)], lambda v, op=op: op(v, axes=(1,)))
        (got,) = run(module, x)
        assert_matches(got, reference(x, axis=1).astype(dtype), rtol=1e-12, what=name)


@DYNAMIC
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax(rng, axis, dynamic):
    x = random_array(rng, (5, 9), "float32", -20, 20)
    module = program([tensor((5, 9), "float32", dynamic)], lambda v: ml.SoftmaxOp(v, axis=axis))
    (got,) = run(module, x)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    assert_matches(got, e / e.sum(axis=axis, keepdims=True), rtol=1e-4, atol=1e-6)


@DYNAMIC
@pytest.mark.parametrize("axis", [-1, 1])
def test_layer_norm(rng, axis, dynamic):
    x = random_array(rng, (2, 3, 8), "float32")
    norm_shape = x.shape[axis:]
    scale = random_array(rng, norm_shape, "float32")
    bias = random_array(rng, norm_shape, "float32")
    module = program(
        [
            tensor(x.shape, "float32", dynamic),
            tensor(norm_shape, "float32"),
            tensor(norm_shape, "float32"),
        ],
        lambda v, s, b: ml.LayerNormOp(v, s, b, axis=axis, epsilon=1e-5),
    )
    (got,) = run(module, x, scale, bias)
    axes = tuple(range(axis % 3, 3))
    mean = x.mean(axis=axes, keepdims=True)
    var = x.var(axis=axes, keepdims=True)
    want = (x - mean) / np.sqrt(var + 1e-5) * scale + bias
    assert_matches(got, want.astype("float32"), rtol=1e-4, atol=1e-5)


@DYNAMIC
def test_batch_norm(rng, dynamic):
    x = random_array(rng, (2, 3, 4, 5), "float32")
    scale, bias, mean = (random_array(rng, (3,), "float32") for _ in range(3))
    var = random_array(rng, (3,), "float32", 0.5, 2)
    module = program(
        [tensor(x.shape, "float32", dynamic)] + [tensor((3,), "float32")] * 4,
        lambda v, s, b, m, w: ml.BatchNormOp(v, s, b, m, w, epsilon=1e-5),
    )
    (got,) = run(module, x, scale, bias, mean, var)
    shape = (1, 3, 1, 1)
    want = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + 1e-5) * scale.reshape(
        shape
    ) + bias.reshape(shape)
    assert_matches(got, want.astype("float32"), rtol=1e-4, atol=1e-5)


# ---------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------


@DYNAMIC
@pytest.mark.parametrize("perm", [(1, 0, 2), (2, 0, 1), (0, 1, 2)], ids=str)
def test_transpose(rng, perm, dynamic):
    x = random_array(rng, (2, 3, 5), "float32")
    module = program([tensor(x.shape, "float32", dynamic)], lambda v: ml.TransposeOp(v, perm))
    (got,) = run(module, x)
    assert_matches(got, np.transpose(x, perm))


@pytest.mark.parametrize(
    "shape, target", [((2, 3, 4), (6, 4)), ((6,), (2, 3)), ((2, 3), (-1,)), ((1,), ())], ids=str
)
def test_reshape_static(rng, shape, target):
    x = random_array(rng, shape, "float32")
    module = program([tensor(shape, "float32")], lambda v: ml.ReshapeOp(v, target))
    (got,) = run(module, x)
    assert_matches(got, x.reshape(target))


def test_reshape_with_shape_operand(rng):
    x = random_array(rng, (6, 4), "float32")
    module = program(
        [tensor((6, 4), "float32", True), tensor((3,), "int64")],
        lambda v, s: ml.ReshapeOp(v, shape=s, result_type=tensor((3, 2, 4), "float32", True)),
    )
    (got,) = run(module, x, np.array([3, 2, 4], dtype=np.int64))
    assert_matches(got, x.reshape(3, 2, 4))


@pytest.mark.parametrize("shape, target", [((3, 1), (2, 3, 4)), ((), (5,)), ((4,), (3, 4))])
def test_broadcast_to(rng, shape, target):
    x = random_array(rng, shape, "float32")
    module = program(
        [tensor(shape, "float32")], lambda v: ml.BroadcastToOp(v, tensor(target, "float32"))
    )
    (got,) = run(module, x)
    assert_matches(got, np.broadcast_to(x, target))


@DYNAMIC
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concat(rng, axis, dynamic):
    shapes = [(2, 3), (2, 3), (2, 3)]
    shapes = [
        tuple(d + i if k == axis % 2 else d for k, d in enumerate(s)) for i, s in enumerate(shapes)
    ]
    xs = [random_array(rng, s, "float32") for s in shapes]
    module = program(
        [tensor(s, "float32", dynamic) for s in shapes], lambda *vs: ml.ConcatOp(list(vs), axis)
    )
    (got,) = run(module, *xs)
    assert_matches(got, np.concatenate(xs, axis=axis))


SLICES = [
    ((1, 0), (3, 5), (1, 2)),
    ((-3, 1), (100, -1), (1, 1)),
    ((4, 4), (0, -100), (-1, -2)),
    ((0, 0), (0, 5), (1, 1)),
]


@DYNAMIC
@pytest.mark.parametrize("starts, ends, steps", SLICES, ids=str)
def test_slice(rng, starts, ends, steps, dynamic):
    x = random_array(rng, (5, 6), "float32")
    module = program(
        [tensor(x.shape, "float32", dynamic)], lambda v: ml.SliceOp(v, starts, ends, steps)
    )
    (got,) = run(module, x)
    index = tuple(slice(s, e, t) for s, e, t in zip(starts, ends, steps, strict=True))
    assert_matches(got, x[index])


@DYNAMIC
@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("index_dtype", ["int32", "int64"])
def test_gather(rng, axis, index_dtype, dynamic):
    x = random_array(rng, (4, 5, 3), "float32")
    size = x.shape[axis]
    indices = rng.integers(-size, size, size=(2, 3)).astype(index_dtype)
    module = program(
        [tensor(x.shape, "float32", dynamic), tensor(indices.shape, index_dtype, dynamic)],
        lambda d, i: ml.GatherOp(d, i, axis),
    )
    (got,) = run(module, x, indices)
    assert_matches(got, np.take(x, indices, axis=axis))


# ---------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------


def conv2d_reference(x, w, bias, strides, dilations, pads, groups):
    n, _c, h, wd = x.shape
    o, i, kh, kw = w.shape
    top, left, bottom, right = pads
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    sh, sw = strides
    dh, dw = dilations
    oh = (h + top + bottom - dh * (kh - 1) - 1) // sh + 1
    ow = (wd + left + right - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, o, oh, ow), dtype=np.float64)
    per_group = o // groups
    for f in range(o):
        g = f // per_group
        for p in range(kh):
            for q in range(kw):
                window = xp[
                    :,
                    g * i : (g + 1) * i,
                    p * dh : p * dh + sh * oh : sh,
                    q * dw : q * dw + sw * ow : sw,
                ]
                out[:, f] += np.einsum("nchw,c->nhw", window, w[f, :, p, q])
    if bias is not None:
        out += bias.reshape(1, -1, 1, 1)
    return out.astype(x.dtype)


CONVS = [
    dict(
        x=(1, 3, 8, 8),
        w=(4, 3, 3, 3),
        strides=(1, 1),
        dilations=(1, 1),
        pads=(0, 0, 0, 0),
        groups=1,
    ),
    dict(
        x=(2, 4, 9, 7),
        w=(6, 2, 3, 2),
        strides=(2, 1),
        dilations=(1, 2),
        pads=(1, 0, 2, 1),
        groups=2,
    ),
    dict(
        x=(1, 4, 6, 6),
        w=(4, 1, 3, 3),
        strides=(1, 1),
        dilations=(1, 1),
        pads=(1, 1, 1, 1),
        groups=4,
    ),
]


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("case", CONVS, ids=range(len(CONVS)))
def test_conv2d(rng, case, bias):
    x = random_array(rng, case["x"], "float32")
    w = random_array(rng, case["w"], "float32")
    b = random_array(rng, (case["w"][0],), "float32") if bias else None
    attrs = {k: case[k] for k in ("strides", "dilations", "pads", "groups")}
    types = [tensor(x.shape, "float32"), tensor(w.shape, "float32")]
    if bias:
        types.append(tensor(b.shape, "float32"))
    module = program(types, lambda *vs: ml.Conv2dOp(vs[0], vs[1], vs[2] if bias else None, **attrs))
    (got,) = run(module, *([x, w, b] if bias else [x, w]))
    want = conv2d_reference(x.astype(np.float64), w.astype(np.float64), b, **attrs)
    assert_matches(got, want.astype("float32"), rtol=1e-4, atol=1e-4)


def test_conv2d_dynamic_batch_and_size(rng):
    module = program(
        [tensor((5, 3, 5, 5), "float32", dynamic=True), tensor((2, 3, 3, 3), "float32")],
        lambda v, w: ml.Conv2dOp(v, w, pads=(1, 1, 1, 1)),
    )
    exe = compile_target(module)
    w = random_array(rng, (2, 3, 3, 3), "float32")
    for shape in [(1, 3, 5, 5), (3, 3, 8, 6)]:
        x = random_array(rng, shape, "float32")
        want = conv2d_reference(x, w, None, (1, 1), (1, 1), (1, 1, 1, 1), 1)
        assert_matches(exe(x, w), want, rtol=1e-4, atol=1e-4)


def test_conv2d_all_dims_dynamic(rng):
    # Every loop bound is unknown at compile time: the nest's estimated work must not
    # overflow the index constants of the parallel dispatch.
    module = program(
        [
            tensor((2, 3, 7, 5), "float32", dynamic=True),
            tensor((4, 3, 3, 3), "float32", dynamic=True),
        ],
        lambda v, w: ml.Conv2dOp(v, w, strides=(2, 2), pads=(1, 1, 1, 1)),
    )
    exe = compile_target(module)
    for x_shape, w_shape in [((2, 3, 7, 5), (4, 3, 3, 3)), ((3, 2, 9, 8), (5, 2, 3, 3))]:
        x = random_array(rng, x_shape, "float32")
        w = random_array(rng, w_shape, "float32")
        want = conv2d_reference(x, w, None, (2, 2), (1, 1), (1, 1, 1, 1), 1)
        assert_matches(exe(x, w), want, rtol=1e-4, atol=1e-4)


def pool_reference(x, kernel, strides, pads, kind):
    top, left, bottom, right = pads
    fill = -np.inf if kind == "max" else 0.0
    xp = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    ones = np.pad(np.ones_like(x), ((0, 0), (0, 0), (top, bottom), (left, right)))
    kh, kw = kernel
    sh, sw = strides
    oh = (xp.shape[2] - kh) // sh + 1
    ow = (xp.shape[3] - kw) // sw + 1
    out = np.empty((*x.shape[:2], oh, ow), dtype=x.dtype)
    for r in range(oh):
        for c in range(ow):
            window = xp[:, :, r * sh : r * sh + kh, c * sw : c * sw + kw]
            if kind == "max":
                out[:, :, r, c] = window.max(axis=(2, 3))
            else:
                count = ones[:, :, r * sh : r * sh + kh, c * sw : c * sw + kw].sum(axis=(2, 3))
                out[:, :, r, c] = window.sum(axis=(2, 3)) / count
    return out


POOLS = [
    ((2, 2), (2, 2), (0, 0, 0, 0)),
    ((3, 3), (1, 1), (1, 1, 1, 1)),
    ((3, 2), (2, 1), (1, 0, 2, 1)),
    ((3, 3), (2, 2), (1, 1, 1, 1)),  # a ResNet stem's pool
    ((2, 3), (3, 3), (0, 1, 1, 0)),  # stride 3: the window kernel's scalar rows
]


@DYNAMIC
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("kernel, strides, pads", POOLS, ids=str)
def test_pool2d(rng, kind, kernel, strides, pads, dynamic):
    x = random_array(rng, (2, 3, 7, 6), "float32")
    op = ml.MaxPool2dOp if kind == "max" else ml.AvgPool2dOp
    module = program(
        [tensor(x.shape, "float32", dynamic)], lambda v: op(v, kernel, strides=strides, pads=pads)
    )
    (got,) = run(module, x)
    assert_matches(got, pool_reference(x, kernel, strides, pads, kind), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(1, 2, 5, 37), (3, 4, 3, 3), (2, 3, 16, 16)], ids=str)
def test_pool_rows(rng, kind, dtype, shape):
    # Rows wider than a vector, narrower than one, and a whole image of 8-wide rows: the
    # window kernel's vector blocks and their masks, f16 through its scalar rows.
    x = random_array(rng, shape, dtype)
    op = ml.MaxPool2dOp if kind == "max" else ml.AvgPool2dOp
    attrs = dict(strides=(2, 2), pads=(1, 1, 1, 1))
    (got,) = run(program([tensor(shape, dtype)], lambda v: op(v, (3, 3), **attrs)), x)
    want = pool_reference(x.astype(np.float64), (3, 3), (2, 2), (1, 1, 1, 1), kind)
    tolerance = 2e-3 if dtype == "float16" else 1e-6
    assert_matches(got, want.astype(dtype), rtol=tolerance, atol=tolerance)


def test_max_pool_propagates_nan(rng):
    x = random_array(rng, (2, 3, 9, 20), "float32")
    x[0, 1, 4, 7] = x[1, 2, 0, 19] = np.nan  # inside the image and on its right border
    module = program(
        [tensor(x.shape, "float32")],
        lambda v: ml.MaxPool2dOp(v, (3, 3), strides=(2, 2), pads=(1, 1, 1, 1)),
    )
    (got,) = run(module, x)
    want = pool_reference(x, (3, 3), (2, 2), (1, 1, 1, 1), "max")
    assert np.array_equal(np.isnan(got), np.isnan(want)) and np.isnan(want).sum() > 0
    assert_matches(got, want, rtol=0, atol=0)


def window_view(xp, offset, strides, dilations, outputs):
    """The elements of padded `xp` that kernel position `offset` reads, per output."""
    index = tuple(
        slice(k * d, k * d + s * o, s)
        for k, s, d, o in zip(offset, strides, dilations, outputs, strict=True)
    )
    return xp[(slice(None), slice(None), *index)]


def window_outputs(x, kernel, strides, dilations, pads):
    n = len(kernel)
    return [
        (x.shape[2 + i] + pads[i] + pads[i + n] - d * (k - 1) - 1) // s + 1
        for i, (k, s, d) in enumerate(zip(kernel, strides, dilations, strict=True))
    ]


def pad_spatial(x, pads, value):
    n = len(pads) // 2
    widths = ((0, 0), (0, 0), *((pads[i], pads[i + n]) for i in range(n)))
    return np.pad(x, widths, constant_values=value)


def conv_nd_reference(x, w, strides, dilations, pads, groups):
    """onnx Conv over any number of spatial dims, in float64."""
    kernel = w.shape[2:]
    outputs = window_outputs(x, kernel, strides, dilations, pads)
    xp = pad_spatial(x.astype(np.float64), pads, 0.0)
    out = np.zeros((x.shape[0], w.shape[0], *outputs))
    per_group, i = w.shape[0] // groups, w.shape[1]
    for f in range(w.shape[0]):
        g = f // per_group
        for offset in itertools.product(*(range(k) for k in kernel)):
            view = window_view(xp, offset, strides, dilations, outputs)[:, g * i : (g + 1) * i]
            out[:, f] += np.tensordot(view, w[(f, slice(None), *offset)], axes=([1], [0]))
    return out


def pool_nd_reference(x, kernel, strides, dilations, pads, kind):
    """onnx MaxPool / AveragePool (pads not counted) over any number of spatial dims."""
    outputs = window_outputs(x, kernel, strides, dilations, pads)
    xp = pad_spatial(x, pads, -np.inf if kind == "max" else 0.0)
    counted = pad_spatial(np.ones_like(x), pads, 0.0)
    views = [
        window_view(xp, o, strides, dilations, outputs)
        for o in itertools.product(*(range(k) for k in kernel))
    ]
    if kind == "max":
        return np.max(views, axis=0)
    counts = [
        window_view(counted, o, strides, dilations, outputs)
        for o in itertools.product(*(range(k) for k in kernel))
    ]
    return np.sum(views, axis=0) / np.sum(counts, axis=0)


CONVS_ND = [
    dict(x=(2, 3, 11), w=(4, 3, 3), strides=(2,), dilations=(2,), pads=(1, 2), groups=1),
    dict(
        x=(1, 4, 5, 6, 4),
        w=(6, 2, 3, 2, 2),
        strides=(1, 2, 1),
        dilations=(1, 1, 2),
        pads=(1, 0, 1, 1, 1, 0),
        groups=2,
    ),
    dict(
        x=(2, 2, 4, 4, 5),
        w=(3, 2, 2, 2, 2),
        strides=(2, 2, 2),
        dilations=(1, 1, 1),
        pads=(0,) * 6,
        groups=1,
    ),
]


@DYNAMIC
@pytest.mark.parametrize("case", CONVS_ND, ids=range(len(CONVS_ND)))
def test_conv_1d_3d(rng, case, dynamic):
    x = random_array(rng, case["x"], "float32")
    w = random_array(rng, case["w"], "float32")
    attrs = {k: case[k] for k in ("strides", "dilations", "pads", "groups")}
    op = {3: ml.Conv1dOp, 5: ml.Conv3dOp}[x.ndim]
    module = program(
        [tensor(x.shape, "float32", dynamic), tensor(w.shape, "float32")],
        lambda v, k: op(v, k, **attrs),
    )
    (got,) = run(module, x, w)
    want = conv_nd_reference(x, w, **attrs).astype("float32")
    assert_matches(got, want, rtol=1e-4, atol=1e-4)


POOLS_ND = [
    ((3,), (2,), (2,), (1, 2)),
    ((3, 2), (2, 1), (2, 3), (2, 1, 1, 0)),
    ((3, 1, 2), (1, 2, 1), (2, 1, 2), (1, 0, 0, 2, 0, 1)),
]


@DYNAMIC
@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("kernel, strides, dilations, pads", POOLS_ND, ids=str)
def test_pool_nd_dilated(rng, kind, kernel, strides, dilations, pads, dynamic):
    x = random_array(rng, (2, 3, 9, 8, 7)[: 2 + len(kernel)], "float32")
    ops = {"max": (ml.MaxPool1dOp, ml.MaxPool2dOp, ml.MaxPool3dOp)}
    ops["avg"] = (ml.AvgPool1dOp, ml.AvgPool2dOp, ml.AvgPool3dOp)
    op = ops[kind][len(kernel) - 1]
    attrs = dict(strides=strides, dilations=dilations, pads=pads)
    module = program([tensor(x.shape, "float32", dynamic)], lambda v: op(v, kernel, **attrs))
    (got,) = run(module, x)
    want = pool_nd_reference(x, kernel, strides, dilations, pads, kind)
    assert_matches(got, want.astype("float32"), rtol=1e-5, atol=1e-6)


def test_float16(rng):
    a = random_array(rng, (3, 8), "float16", -2, 2)
    b = random_array(rng, (8,), "float16", 0.5, 2)
    for op, reference in [(ml.AddOp, np.add), (ml.MulOp, np.multiply), (ml.DivOp, np.divide)]:
        module = program([tensor((3, 8), "float16"), tensor((8,), "float16")], op)
        (got,) = run(module, a, b)
        assert_matches(got, reference(a, b), rtol=1e-3, atol=1e-3, what=op.name)
    (got,) = run(program([tensor((3, 8), "float16")], ml.ExpOp), a)
    assert_matches(got, np.exp(a), rtol=2e-3, atol=1e-3, what="exp")
