"""
bf16 programs end to end on the CPU and (marked `gpu`) cuda, against ml_dtypes.

ml_dtypes computes a bf16 operation in f32 and rounds the result once, as mlc does:
exact operations (+ - * / max neg abs, casts) must match bit for bit; transcendentals
are within one bf16 ulp (f32's own approximation may sit on the other side of a
rounding boundary); sums, means and matmuls accumulate in f32 and round once, so they
are within one bf16 ulp of the f32 result rounded. Odd shapes, static and dynamic dims.
"""

import ml_dtypes
import numpy as np
import pytest

from tests.gpu.targets import compile_for

BF16 = np.dtype(ml_dtypes.bfloat16)
ULP = 2.0**-7  # bf16's relative spacing: 8 significant bits
SEED = np.random.SeedSequence().entropy


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


def bf16(rng: np.random.Generator, *shape: int, low: float = -3, high: float = 3) -> np.ndarray:
    return rng.uniform(low, high, size=shape).astype(BF16)


def f32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32)


def dims(shape: tuple[int, ...], dynamic: bool) -> str:
    return "x".join("?" if dynamic and d != 1 else str(d) for d in shape)


def assert_bits(got: np.ndarray, want: np.ndarray, what: str) -> None:
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    same = (got.view(np.uint16) == want.view(np.uint16)) | (
        np.isnan(f32(got)) & np.isnan(f32(want))
    )
    assert same.all(), f"{what}: {f32(got)[~same][:5]} != {f32(want)[~same][:5]} (seed {SEED})"


def assert_close(got: np.ndarray, want: np.ndarray, what: str, ulps: float = 1) -> None:
    assert got.dtype == BF16, f"{what}: dtype {got.dtype}"
    np.testing.assert_allclose(
        f32(got), f32(want), rtol=ulps * ULP, atol=1e-6, err_msg=f"{what} (seed {SEED})"
    )


DYNAMIC = pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])


@DYNAMIC
def test_elementwise(target: str, rng: np.random.Generator, dynamic: bool) -> None:
    t = f"tensor<{dims((7, 13), dynamic)}xbf16>"
    ops = {
        "add": "ml.add %x, %y",
        "sub": "ml.sub %x, %y",
        "mul": "ml.mul %x, %y",
        "div": "ml.div %x, %y",
        "max": "ml.max %x, %y",
        "neg": "ml.neg %x",
        "abs": "ml.abs %x",
        "exp": "ml.exp %x",
        "tanh": "ml.tanh %x",
        "sqrt": "ml.sqrt %y",
        "sigmoid": "ml.sigmoid %x",
    }
    body = "\n".join(
        f"  %{name} = {op} : ({', '.join([t] * op.count('%'))}) -> {t}" for name, op in ops.items()
    )
    names = ", ".join(f"%{name}" for name in ops)
    text = (
        f"func.func @main(%x: {t}, %y: {t}) -> ({', '.join([t] * len(ops))}) {{\n{body}\n"
        f"  func.return {names} : {', '.join([t] * len(ops))}\n}}"
    )
    x = bf16(rng, 7, 13)
    y = bf16(rng, 7, 13, low=0.25, high=4)
    got = dict(zip(ops, compile_for(text, target)(x, y), strict=True))
    exact = {
        "add": x + y,
        "sub": x - y,
        "mul": x * y,
        "div": x / y,
        "max": np.maximum(x, y),
        "neg": -x,
        "abs": np.abs(x),
    }
    for name, want in exact.items():
        assert_bits(got[name], want.astype(BF16), name)
    near = {
        "exp": np.exp(f32(x)),
        "tanh": np.tanh(f32(x)),
        "sqrt": np.sqrt(f32(y)),
        "sigmoid": 1 / (1 + np.exp(-f32(x))),
    }
    for name, want in near.items():
        assert_close(got[name], want.astype(BF16), name)


def test_cast_rounding(target: str, rng: np.random.Generator) -> None:
    # Halfway cases (ties to even), overflow to inf, subnormals, NaN, signed zeros.
    special = [1 + 2**-8, 1 + 3 * 2**-8, 3.3895e38, -3.4e38, 1e-40, -0.0, np.inf, np.nan]
    wide = np.concatenate([rng.standard_normal(57) * 10.0 ** rng.integers(-30, 30, 57), special])
    x32 = wide.astype(np.float32)
    text = """
    func.func @main(%x: tensor<?xf32>, %d: tensor<?xf64>, %i: tensor<?xi32>)
        -> (tensor<?xbf16>, tensor<?xbf16>, tensor<?xbf16>, tensor<?xf32>, tensor<?xf16>,
            tensor<?xi32>) {
      %b = "ml.cast"(%x) : (tensor<?xf32>) -> tensor<?xbf16>
      %bd = "ml.cast"(%d) : (tensor<?xf64>) -> tensor<?xbf16>
      %bi = "ml.cast"(%i) : (tensor<?xi32>) -> tensor<?xbf16>
      %back = "ml.cast"(%b) : (tensor<?xbf16>) -> tensor<?xf32>
      %h = "ml.cast"(%b) : (tensor<?xbf16>) -> tensor<?xf16>
      %n = "ml.cast"(%bi) : (tensor<?xbf16>) -> tensor<?xi32>
      func.return %b, %bd, %bi, %back, %h, %n
        : tensor<?xbf16>, tensor<?xbf16>, tensor<?xbf16>, tensor<?xf32>, tensor<?xf16>,
          tensor<?xi32>
    }
    """
    ints = rng.integers(-100000, 100000, 65).astype(np.int32)
    b, bd, bi, back, h, n = compile_for(text, target)(x32, wide, ints)
    assert_bits(b, x32.astype(BF16), "f32 -> bf16")
    assert_bits(bd, wide.astype(BF16), "f64 -> bf16")
    assert_bits(bi, ints.astype(np.float32).astype(BF16), "i32 -> bf16")
    np.testing.assert_array_equal(back, f32(x32.astype(BF16)))
    with np.errstate(over="ignore"):  # f16 overflows to inf, as it should
        np.testing.assert_array_equal(h, f32(x32.astype(BF16)).astype(np.float16))
    np.testing.assert_array_equal(n, f32(bi).astype(np.int32))


@DYNAMIC
def test_reductions_accumulate_in_f32(target: str, rng: np.random.Generator, dynamic: bool) -> None:
    t = f"tensor<{dims((5, 1000), dynamic)}xbf16>"
    r = f"tensor<{dims((5,), dynamic)}xbf16>"
    text = f"""
    func.func @main(%x: {t}) -> ({r}, {r}, {r}) {{
      %s = "ml.reduce_sum"(%x) {{axes = array<i64: 1>, keepdims = false}} : ({t}) -> {r}
      %m = "ml.reduce_mean"(%x) {{axes = array<i64: 1>, keepdims = false}} : ({t}) -> {r}
      %x_max = "ml.reduce_max"(%x) {{axes = array<i64: 1>, keepdims = false}} : ({t}) -> {r}
      func.return %s, %m, %x_max : {r}, {r}, {r}
    }}
    """
    x = bf16(rng, 5, 1000, low=0, high=1)
    s, m, largest = compile_for(text, target)(x)
    # In bf16 a running sum of ~500 would stop growing by terms below 1; in f32 it is exact
    # to well under one bf16 ulp.
    assert_close(s, f32(x).sum(1).astype(BF16), "sum")
    assert_close(m, f32(x).mean(1).astype(BF16), "mean")
    assert_bits(largest, x.max(1), "max")


@pytest.mark.parametrize("shape", [(17, 33, 9), (1, 64, 130), (40, 7, 1)], ids=str)
@DYNAMIC
def test_matmul(target: str, rng: np.random.Generator, shape, dynamic: bool) -> None:
    m, k, n = shape
    a_t, b_t = f"tensor<{dims((m, k), dynamic)}xbf16>", f"tensor<{dims((k, n), dynamic)}xbf16>"
    c_t = f"tensor<{dims((m, n), dynamic)}xbf16>"
    text = f"""
    func.func @main(%a: {a_t}, %b: {b_t}) -> {c_t} {{
      %c = "ml.matmul"(%a, %b) : ({a_t}, {b_t}) -> {c_t}
      func.return %c : {c_t}
    }}
    """
    a, b = bf16(rng, m, k), bf16(rng, k, n)
    got = compile_for(text, target)(a, b)
    want = (a.astype(np.float64) @ b.astype(np.float64)).astype(BF16)
    # Summed in f32 (any order) and rounded once: within an ulp, plus cancellation.
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    error = np.abs(f32(got) - f32(want))
    assert (error <= ULP * np.abs(f32(want)) + 1e-6 * scale).all(), f"seed {SEED}"


def test_constant_weights(target: str, rng: np.random.Generator) -> None:
    # A large constant (kept as a global, not folded) and a small one (folded).
    w = bf16(rng, 48, 40)
    values = ", ".join(f"{v!r}" for v in f32(w).ravel().tolist())
    text = f"""
    func.func @main(%x: tensor<3x48xbf16>) -> tensor<3x40xbf16> {{
      %w = arith.constant dense<[{values}]> : tensor<1920xbf16>
      %w2 = "ml.reshape"(%w) : (tensor<1920xbf16>) -> tensor<48x40xbf16>
      %c = arith.constant dense<1.5> : tensor<bf16>
      %y = "ml.matmul"(%x, %w2) : (tensor<3x48xbf16>, tensor<48x40xbf16>) -> tensor<3x40xbf16>
      %z = "ml.mul"(%y, %c) : (tensor<3x40xbf16>, tensor<bf16>) -> tensor<3x40xbf16>
      func.return %z : tensor<3x40xbf16>
    }}
    """
    x = bf16(rng, 3, 48)
    got = compile_for(text, target)(x)
    want = (f32(x) @ f32(w)).astype(BF16) * BF16.type(1.5)
    assert_close(got, want, "x @ w * 1.5", ulps=2)


def test_wrong_dtype_is_an_error() -> None:
    import mlc

    exe = mlc.compile(
        "func.func @main(%x: tensor<2xbf16>) -> tensor<2xbf16> { return %x : tensor<2xbf16> }"
    )
    with pytest.raises(TypeError, match="bfloat16"):
        exe(np.zeros(2, np.float32))


def test_trace_and_jit_bfloat16_arrays(rng: np.random.Generator) -> None:
    import mlc
    from mlc import ops

    x, w = bf16(rng, 4, 6), bf16(rng, 6, 3)
    module = mlc.trace(lambda x, w: ops.relu(x @ w), x, w)
    assert "tensor<4x3xbf16>" in mlc.print_module(module)

    layer = mlc.jit(lambda x, w: ops.exp(x @ w).sum(axis=1) + 1.0)
    got = layer(x, w)
    h = np.exp(f32((f32(x) @ f32(w)).astype(BF16))).astype(BF16)
    # numpy (with ml_dtypes) gives float32 for bfloat16 + a Python float, and so does mlc
    want = f32(f32(h).sum(1).astype(BF16)) + 1.0
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=ULP, err_msg=f"seed {SEED}")


def test_folded_constants_match_compiled(rng: np.random.Generator) -> None:
    # Folding computes bf16 as the compiled code does (ml_dtypes: f32, rounded once).
    import mlc

    a, b = bf16(rng, 9), bf16(rng, 9, low=0.5, high=2)
    dense = ", ".join(repr(float(v)) for v in f32(a))
    dense_b = ", ".join(repr(float(v)) for v in f32(b))
    text = f"""
    func.func @main() -> (tensor<9xbf16>, tensor<bf16>, tensor<9xf32>) {{
      %a = arith.constant dense<[{dense}]> : tensor<9xbf16>
      %b = arith.constant dense<[{dense_b}]> : tensor<9xbf16>
      %s = "ml.add"(%a, %b) : (tensor<9xbf16>, tensor<9xbf16>) -> tensor<9xbf16>
      %p = "ml.mul"(%s, %b) : (tensor<9xbf16>, tensor<9xbf16>) -> tensor<9xbf16>
      %q = "ml.div"(%p, %b) : (tensor<9xbf16>, tensor<9xbf16>) -> tensor<9xbf16>
      %m = "ml.reduce_max"(%q) {{axes = array<i64: 0>, keepdims = false}}
        : (tensor<9xbf16>) -> tensor<bf16>
      %w = "ml.cast"(%q) : (tensor<9xbf16>) -> tensor<9xf32>
      func.return %q, %m, %w : tensor<9xbf16>, tensor<bf16>, tensor<9xf32>
    }}
    """
    folded = mlc.compile(text)()
    compiled = mlc.compile(text, graph_passes=False)()
    assert "ml." not in mlc.print_module(mlc.compile(text, emit="mlc")), "not folded"
    for got, want in zip(folded, compiled, strict=True):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(np.ravel(got).view(np.uint8), np.ravel(want).view(np.uint8))
    want_q = ((a + b) * b) / b
    assert_bits(compiled[0], want_q, "compiled")


@DYNAMIC
def test_softmax_and_layer_norm_in_f32(
    target: str, rng: np.random.Generator, dynamic: bool
) -> None:
    t = f"tensor<{dims((3, 700), dynamic)}xbf16>"
    v = f"tensor<{dims((700,), dynamic)}xbf16>"
    text = f"""
    func.func @main(%x: {t}, %g: {v}, %b: {v}) -> ({t}, {t}) {{
      %s = "ml.softmax"(%x) {{axis = 1 : i64}} : ({t}) -> {t}
      %n = "ml.layer_norm"(%x, %g, %b) {{axis = 1 : i64, epsilon = 1.0e-05 : f32}}
        : ({t}, {v}, {v}) -> {t}
      func.return %s, %n : {t}, {t}
    }}
    """
    x, g, b = bf16(rng, 3, 700), bf16(rng, 700, low=0.5, high=1.5), bf16(rng, 700)
    s, n = compile_for(text, target)(x, g, b)
    wide = x.astype(np.float64)
    e = np.exp(wide - wide.max(1, keepdims=True))
    mean, var = wide.mean(1, keepdims=True), wide.var(1, keepdims=True)
    normed = (wide - mean) / np.sqrt(var + 1e-5) * f32(g) + f32(b)
    # computed in f32 and rounded once: within one bf16 ulp (bf16 sums would be far off)
    assert_close(s, (e / e.sum(1, keepdims=True)).astype(BF16), "softmax")
    np.testing.assert_allclose(f32(n), normed, rtol=ULP, atol=ULP, err_msg=f"seed {SEED}")
