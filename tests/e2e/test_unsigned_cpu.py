"""
Unsigned integers (ui8..ui64) through convert-ml-to-linalg and the CPU and GPU backends, against
numpy on fresh random data spanning the whole range (values past the signed maximum
are where a signed op would go wrong), static and dynamic shapes.
"""

import numpy as np
import pytest

import mlc
from mlc import ops
from tests.gpu.targets import compile_for, jit_for

SEED = np.random.SeedSequence().entropy
UNSIGNED = {"uint8": "ui8", "uint16": "ui16", "uint32": "ui32", "uint64": "ui64"}


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


def full_range(rng: np.random.Generator, shape: tuple[int, ...], dtype: str, low: int = 0):
    return rng.integers(low, np.iinfo(dtype).max, size=shape, dtype=dtype, endpoint=True)


def elementwise_program(element: str, dims: str) -> str:
    t, v, b = f"tensor<{dims}x{element}>", f"tensor<4x{element}>", f"tensor<{dims}xi1>"
    results = [t, t, t, t, t, t, t, b, b, b, t, t]
    body = f"""
  %add = ml.add %x, %y : ({t}, {v}) -> {t}
  %sub = ml.sub %x, %y : ({t}, {v}) -> {t}
  %mul = ml.mul %x, %y : ({t}, {v}) -> {t}
  %div = ml.div %x, %y : ({t}, {v}) -> {t}
  %max = ml.max %x, %y : ({t}, {v}) -> {t}
  %min = ml.min %x, %y : ({t}, {v}) -> {t}
  %neg = ml.neg %x : ({t}) -> {t}
  %lt = ml.cmp "lt", %x, %y : ({t}, {v}) -> {b}
  %ge = ml.cmp "ge", %x, %y : ({t}, {v}) -> {b}
  %ne = ml.cmp "ne", %x, %y : ({t}, {v}) -> {b}
  %relu = ml.relu %x : ({t}) -> {t}
  %abs = ml.abs %x : ({t}) -> {t}
  func.return %add, %sub, %mul, %div, %max, %min, %neg, %lt, %ge, %ne, %relu, %abs :
    {", ".join(results)}"""
    return f"func.func @main(%x: {t}, %y: {v}) -> ({', '.join(results)}) {{{body}\n}}"


@pytest.mark.parametrize(
    ("dtype", "dims"),
    [("uint8", "3x4"), ("uint16", "?x4"), ("uint32", "3x4"), ("uint64", "?x4")],
)
def test_elementwise(rng, dtype, dims, target):
    exe = compile_for(elementwise_program(UNSIGNED[dtype], dims), target)
    x, y = full_range(rng, (3, 4), dtype), full_range(rng, (4,), dtype, low=1)
    with np.errstate(over="ignore"):
        want = [
            *(x + y, x - y, x * y, x // y, np.maximum(x, y), np.minimum(x, y), -x),
            *(x < y, x >= y, x != y, x, x),
        ]
    for got, expected in zip(exe(x, y), want, strict=True):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


CASTS = ["f32", "f64", "i8", "i32", "i64", "ui8", "ui16", "ui64", "i1"]
NUMPY = {"f32": "float32", "f64": "float64", "i8": "int8", "i32": "int32", "i64": "int64"}
NUMPY |= {"ui8": "uint8", "ui16": "uint16", "ui64": "uint64", "i1": "bool"}


@pytest.mark.parametrize("dtype", ["uint8", "uint32"])
def test_casts_from_unsigned(rng, dtype, target):
    source = UNSIGNED[dtype]
    results = ", ".join(f"tensor<?x{t}>" for t in CASTS)
    casts = "\n".join(
        f"  %c{i} = ml.cast %x : (tensor<?x{source}>) -> tensor<?x{t}>" for i, t in enumerate(CASTS)
    )
    names = ", ".join(f"%c{i}" for i in range(len(CASTS)))
    exe = compile_for(
        f"func.func @main(%x: tensor<?x{source}>) -> ({results}) {{\n{casts}\n"
        f"  func.return {names} : {results}\n}}",
        target,
    )
    x = full_range(rng, (17,), dtype)
    for got, element in zip(exe(x), CASTS, strict=True):
        np.testing.assert_array_equal(got, x.astype(NUMPY[element]), err_msg=element)


def test_casts_to_unsigned(rng, target):
    results = "tensor<?xui8>, tensor<?xui32>, tensor<?xui64>, tensor<?xui16>"
    exe = compile_for(
        f"""
func.func @main(%f: tensor<?xf32>, %i: tensor<?xi8>) -> ({results}) {{
  %a = ml.cast %f : (tensor<?xf32>) -> tensor<?xui8>
  %b = ml.cast %f : (tensor<?xf32>) -> tensor<?xui32>
  %c = ml.cast %f : (tensor<?xf32>) -> tensor<?xui64>
  %d = ml.cast %i : (tensor<?xi8>) -> tensor<?xui16>
  func.return %a, %b, %c, %d : {results}
}}
""",
        target,
    )
    f = rng.uniform(0, 250, 33).astype(np.float32)  # in range of every target
    i = rng.integers(-128, 128, 33).astype(np.int8)
    a, b, c, d = exe(f, i)
    np.testing.assert_array_equal(a, f.astype(np.uint8))
    np.testing.assert_array_equal(b, f.astype(np.uint32))
    np.testing.assert_array_equal(c, f.astype(np.uint64))
    np.testing.assert_array_equal(d, i.astype(np.uint16))


def test_sum_matmul_and_constants(rng, target):
    t = "tensor<?x?xui32>"
    exe = compile_for(
        f"""
func.func @main(%a: {t}, %b: {t}) -> (tensor<?xui32>, {t}, {t}) {{
  %s = ml.reduce_sum %a {{axes = array<i64: 1>, keepdims = false}} : ({t}) -> tensor<?xui32>
  %m = ml.matmul %a, %b : ({t}, {t}) -> {t}
  %k = arith.constant dense<[4000000000, 7]> : tensor<2xui32>
  %d = ml.div %a, %k : ({t}, tensor<2xui32>) -> {t}
  func.return %s, %m, %d : tensor<?xui32>, {t}, {t}
}}
""",
        target,
    )
    a, b = full_range(rng, (3, 2), "uint32"), full_range(rng, (2, 5), "uint32")
    s, m, d = exe(a, b)
    np.testing.assert_array_equal(s, a.sum(axis=1, dtype=np.uint32))
    np.testing.assert_array_equal(m, np.matmul(a, b, dtype=np.uint32))
    np.testing.assert_array_equal(d, a // np.array([4000000000, 7], np.uint32))


def test_reduce_max_reports_unsupported_unsigned():
    t = "tensor<4xui8>"
    program = f"""
func.func @main(%a: {t}) -> tensor<ui8> {{
  %s = ml.reduce_max %a {{axes = array<i64: 0>, keepdims = false}} : ({t}) -> tensor<ui8>
  func.return %s : tensor<ui8>
}}
"""
    with pytest.raises(mlc.CompileError, match="element type ui8 is not supported yet"):
        mlc.compile(program)


def test_traced_uint_arrays(rng, target):
    x, y = full_range(rng, (3, 4), "uint16"), full_range(rng, (4,), "uint16", low=1)
    f = jit_for(target)(lambda a, b: (a + b, a * b, a < b, ops.maximum(a, b), a - b))
    with np.errstate(over="ignore"):
        want = (x + y, x * y, x < y, np.maximum(x, y), x - y)
    for got, expected in zip(f(x, y), want, strict=True):
        assert got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("dtype", ["uint8", "uint32", "uint64"])
def test_traced_sum_of_unsigned_is_uint64(rng, dtype, target):
    """numpy sums unsigned integers as uint64: values past int64's range stay exact."""
    x = full_range(rng, (5, 7), dtype)
    f = jit_for(target)(lambda a: (ops.sum(a), ops.sum(a, axis=0)))
    with np.errstate(over="ignore"):
        want = (np.sum(x), np.sum(x, axis=0))
    for got, expected in zip(f(x), want, strict=True):
        assert got.dtype == np.uint64
        np.testing.assert_array_equal(got, expected)
