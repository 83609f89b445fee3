"""
Numpy broadcasting decided at run time: dynamic dims that are 1 broadcast, and sizes
that are neither equal nor 1 raise `mlc.RuntimeCheckError` naming the op's location.

Every program has only dynamic dims, so one compiled function meets every case; the
data is fresh and random on each run, compared with numpy exactly (or at rtol 1e-6), on
the CPU and on `cuda`.
"""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mlc
from mlc.compiler import CompileError
from tests.gpu.targets import TARGETS, compile_for, compile_once

SEED = np.random.SeedSequence().entropy


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


def dynamic(rank: int, element: str) -> str:
    return f"tensor<{'?x' * rank}{element}>"


def binary_program(op: str, ranks: tuple[int, int], element: str) -> str:
    a, b = (dynamic(r, element) for r in ranks)
    out = dynamic(max(ranks), element)
    return f"""
func.func @main(%a: {a}, %b: {b}) -> {out} {{
  %r = {op} %a, %b : ({a}, {b}) -> {out}
  func.return %r : {out}
}}
"""


def random(rng: np.random.Generator, shape: tuple[int, ...], dtype: str) -> np.ndarray:
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-50, 50, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


PAIRS = [
    ((3, 4), (3, 4)),
    ((1, 4), (3, 4)),
    ((3, 1), (1, 4)),
    ((1, 1), (3, 4)),
    ((3, 4), (1, 1)),
    ((0, 4), (1, 4)),
    ((1, 4), (0, 1)),
    ((1, 1), (1, 1)),
]

BINARY = {"ml.add": np.add, "ml.sub": np.subtract, "ml.mul": np.multiply, "ml.max": np.maximum}


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_dims_of_size_one_broadcast(rng, op, dtype, target):
    element = {"float32": "f32", "float64": "f64", "int32": "i32", "int64": "i64"}[dtype]
    exe = compile_for(binary_program(op, (2, 2), element), target)
    for lhs, rhs in PAIRS:
        a, b = random(rng, lhs, dtype), random(rng, rhs, dtype)
        np.testing.assert_array_equal(exe(a, b), BINARY[op](a, b), err_msg=f"{lhs} {rhs}")


def test_ranks_differ(rng, target):
    exe = compile_for(binary_program("ml.add", (3, 1), "f32"), target)
    for lhs, rhs in [((2, 3, 4), (4,)), ((2, 3, 4), (1,)), ((2, 1, 4), (4,)), ((1, 1, 1), (5,))]:
        a, b = random(rng, lhs, "float32"), random(rng, rhs, "float32")
        np.testing.assert_array_equal(exe(a, b), a + b)


def test_compare_and_select(rng, target):
    x, c = dynamic(2, "f32"), dynamic(2, "i1")
    v = dynamic(1, "f32")
    exe = compile_for(
        f"""
func.func @main(%x: {x}, %y: {v}, %z: {x}) -> ({c}, {x}) {{
  %c = ml.cmp "lt", %x, %y : ({x}, {v}) -> {c}
  %s = ml.select %c, %y, %z : ({c}, {v}, {x}) -> {x}
  func.return %c, %s : {c}, {x}
}}
""",
        target,
    )
    for xs, ys, zs in [((3, 4), (4,), (3, 4)), ((3, 1), (4,), (1, 1)), ((1, 4), (1,), (3, 1))]:
        x_, y_, z_ = (random(rng, s, "float32") for s in (xs, ys, zs))
        less, chosen = exe(x_, y_, z_)
        np.testing.assert_array_equal(less, x_ < y_)
        np.testing.assert_array_equal(chosen, np.where(x_ < y_, y_, z_))


BROADCAST_TO = """
func.func @main(%y: tensor<?x?xf32>, %s: tensor<3xi64>) -> (tensor<?x?x?xf32>, tensor<2x3x4xf32>) {
  %r = ml.broadcast_to %y, %s : (tensor<?x?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %t = ml.broadcast_to %y : (tensor<?x?xf32>) -> tensor<2x3x4xf32>
  func.return %r, %t : tensor<?x?x?xf32>, tensor<2x3x4xf32>
}
"""


def test_broadcast_to_with_dims_of_size_one(rng, target):
    exe = compile_for(BROADCAST_TO, target)
    shape = np.array([2, 3, 4], np.int64)
    for ys in [(3, 4), (1, 4), (3, 1), (1, 1)]:
        y = random(rng, ys, "float32")
        dynamic_target, static_target = exe(y, shape)
        np.testing.assert_array_equal(dynamic_target, np.broadcast_to(y, (2, 3, 4)))
        np.testing.assert_array_equal(static_target, np.broadcast_to(y, (2, 3, 4)))


def test_broadcast_to_mismatch_raises(target):
    exe = compile_for(BROADCAST_TO, target)
    with pytest.raises(mlc.RuntimeCheckError, match=r"'ml.broadcast_to' op operand dim 1"):
        exe(np.ones((3, 5), np.float32), np.array([2, 3, 4], np.int64))


BATCHED = """
func.func @main(%a: tensor<?x?x?xf32>, %b: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %r = ml.matmul %a, %b : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  func.return %r : tensor<?x?x?xf32>
}
"""


def test_matmul_batch_dims_of_size_one(rng, target):
    exe = compile_for(BATCHED, target)
    for a_shape, b_shape in [
        ((5, 3, 4), (5, 4, 2)),
        ((1, 3, 4), (5, 4, 2)),
        ((5, 3, 4), (1, 4, 2)),
    ]:
        a, b = random(rng, a_shape, "float32"), random(rng, b_shape, "float32")
        np.testing.assert_allclose(exe(a, b), a @ b, rtol=1e-5, atol=1e-5)


RESHAPED = """
func.func @main(%a: tensor<?xf32>, %s: tensor<3xi64>, %b: tensor<?x?x?xf32>) -> tensor<?x?x?xf32> {
  %r = ml.reshape %a, %s : (tensor<?xf32>, tensor<3xi64>) -> tensor<?x?x?xf32>
  %m = ml.matmul %r, %b : (tensor<?x?x?xf32>, tensor<?x?x?xf32>) -> tensor<?x?x?xf32>
  func.return %m : tensor<?x?x?xf32>
}
"""


def test_matmul_mismatches_raise(rng, target):
    ones = np.ones
    # Argument dims the program ties together are checked before it runs.
    with pytest.raises(ValueError, match=r"must have one size .* %a dim 2 is 4, %b dim 1 is 5"):
        compile_for(BATCHED, target)(ones((2, 3, 4), np.float32), ones((2, 5, 2), np.float32))
    # Dims only known inside the program are checked where they meet.
    exe = compile_for(RESHAPED, target)
    a, b = random(rng, (24,), "float32"), random(rng, (1, 4, 2), "float32")
    want = a.reshape(2, 3, 4) @ b
    np.testing.assert_allclose(exe(a, np.array([2, 3, 4]), b), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(mlc.RuntimeCheckError, match=r"'ml.matmul' op operand #0 dim 0, operand"):
        exe(a, np.array([2, 3, 4]), ones((5, 4, 2), np.float32))
    with pytest.raises(mlc.RuntimeCheckError, match=r"must equal operand #1 dim 1 \(the inner"):
        exe(a, np.array([2, 4, 3]), ones((2, 4, 2), np.float32))


def test_mismatch_is_a_located_one_line_error_and_leaves_no_trace(rng, target):
    text = binary_program("ml.add", (2, 2), "f32").replace(
        "-> tensor<?x?xf32>\n  func.return", '-> tensor<?x?xf32> loc("model.py":7:3)\n  func.return'
    )
    exe = compile_for(text, target)
    with pytest.raises(mlc.RuntimeCheckError) as error:
        exe(np.ones((3, 4), np.float32), np.ones((2, 4), np.float32))
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("model.py:7:3: error: 'ml.add' op operand #0 dim 0, operand #1 dim 0")
    assert "must be 1 or one common size (broadcast to result dim 0)" in message
    assert isinstance(error.value, ValueError)
    # The failure belongs to that call only: the next one runs normally.
    a, b = random(rng, (1, 4), "float32"), random(rng, (3, 4), "float32")
    np.testing.assert_array_equal(exe(a, b), a + b)


def test_static_operand_against_dynamic_one(rng, target):
    a, b = "tensor<?x?xf32>", "tensor<3x1xf32>"
    exe = compile_for(
        f"""
func.func @main(%a: {a}, %b: {b}) -> tensor<3x?xf32> {{
  %r = ml.sub %a, %b : ({a}, {b}) -> tensor<3x?xf32>
  func.return %r : tensor<3x?xf32>
}}
""",
        target,
    )
    for shape in [(3, 4), (1, 4), (3, 1), (1, 1)]:
        x, y = random(rng, shape, "float32"), random(rng, (3, 1), "float32")
        np.testing.assert_array_equal(exe(x, y), x - y)
    with pytest.raises(mlc.RuntimeCheckError, match=r"operand #0 dim 0 must be 1 or 3"):
        exe(np.ones((2, 4), np.float32), np.ones((3, 1), np.float32))


def test_a_program_whose_static_shapes_conflict_does_not_compile():
    with pytest.raises(CompileError):
        mlc.compile(binary_program("ml.add", (2, 2), "f32").replace("?x?xf32>, %b", "3x4xf32>, %b"))


dims = st.sampled_from([1, 2, 3])


@pytest.mark.parametrize("target", TARGETS)
@settings(database=None, max_examples=40, deadline=None)
@given(choices=st.lists(st.tuples(dims, st.booleans(), st.booleans()), min_size=3, max_size=3))
def test_random_compatible_shapes_match_numpy(target, choices):
    # Per dim: a size, and whether each operand has it (else 1). Compiled once, cached.
    exe = compile_once(binary_program("ml.mul", (3, 3), "f64"), target)
    lhs = tuple(size if keep else 1 for size, keep, _ in choices)
    rhs = tuple(size if keep else 1 for size, _, keep in choices)
    rng = np.random.default_rng()
    a, b = random(rng, lhs, "float64"), random(rng, rhs, "float64")
    np.testing.assert_array_equal(exe(a, b), a * b)
