"""
Tests for the `ml` canonicalization patterns (`mlc.lowering.graph.patterns.ml`).

The pure helpers are checked on their own (permutation composition against numpy,
identity elements with signed zeros, splat constants); then each rewrite runs
through xDSL's own `canonicalize` pass on a tiny program, and a small numpy
evaluator shows the program computes the same values before and after.
"""

from collections.abc import Callable
from itertools import permutations
from typing import Any

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.transforms.canonicalize import CanonicalizePass

from mlc.diagnostics import verify_module
from mlc.ir import parse_module, print_module
from mlc.lowering.graph.patterns.ml import (
    compose_perms,
    is_identity_element,
    is_identity_perm,
    splat_value,
)

# ---------------------------------------------------------------------------
# Pure helpers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("inner", list(permutations(range(3))))
@pytest.mark.parametrize("outer", list(permutations(range(3))))
def test_compose_perms_matches_numpy(inner: tuple[int, ...], outer: tuple[int, ...]):
    x = np.arange(24).reshape(2, 3, 4)
    expected = np.transpose(np.transpose(x, inner), outer)
    np.testing.assert_array_equal(np.transpose(x, compose_perms(inner, outer)), expected)


def test_is_identity_perm():
    assert is_identity_perm((0, 1, 2))
    assert is_identity_perm(())
    assert not is_identity_perm((1, 0))


@pytest.mark.parametrize(
    ("value", "kind", "floating", "expected"),
    [
        (1.0, "mul", True, True),
        (1, "div", False, True),
        (2.0, "mul", True, False),
        (0.0, "mul", True, False),
        (-0.0, "add", True, True),
        (0.0, "add", True, False),  # -0.0 + 0.0 is +0.0
        (0.0, "sub", True, True),
        (-0.0, "sub", True, False),  # -0.0 - -0.0 is +0.0
        (0, "add", False, True),
        (0, "sub", False, True),
        (1, "add", False, False),
    ],
)
def test_is_identity_element(value: float, kind: str, floating: bool, expected: bool):
    assert is_identity_element(value, kind, floating) is expected


@pytest.mark.parametrize(
    ("constant", "expected"),
    [
        ("dense<1.0> : tensor<2x3xf32>", 1.0),
        ("dense<-0.0> : tensor<f32>", -0.0),
        ("dense<7> : tensor<4xi8>", 7),
        ("dense<[1.0, 2.0]> : tensor<2xf32>", None),
        ("dense<> : tensor<0xf32>", None),
    ],
)
def test_splat_value(constant: str, expected: float | None):
    module = parse_module(f"%c = arith.constant {constant}")
    value = splat_value(next(iter(module.ops)).results[0])
    assert value == expected
    if expected is not None:
        assert np.signbit(value) == np.signbit(expected)


# ---------------------------------------------------------------------------
# Rewrites preserve values
# ---------------------------------------------------------------------------

NUMPY: dict[str, Callable[..., Any]] = {
    "ml.add": np.add,
    "ml.sub": np.subtract,
    "ml.mul": np.multiply,
    "ml.div": np.divide,
    "ml.neg": np.negative,
    "ml.abs": np.abs,
    "ml.relu": lambda x: np.maximum(x, 0),
}


def run_op(op: Operation, args: list[np.ndarray]) -> np.ndarray:
    """What one op computes, by numpy, for the ops these programs use."""
    result = op.results[0].type
    assert isinstance(result, TensorType)
    shape = result.get_shape()
    if isinstance(op, arith.ConstantOp):
        assert isinstance(op.value, DenseIntOrFPElementsAttr)
        return np.array(op.value.get_values()).reshape(shape)
    if op.name == "ml.transpose":
        return np.transpose(args[0], op.properties["perm"].get_values())  # pyright: ignore
    if op.name in ("ml.reshape", "ml.broadcast_to"):
        fn = np.reshape if op.name == "ml.reshape" else np.broadcast_to
        return fn(args[0], shape)
    if op.name == "ml.cast":
        return args[0].astype(np.float32 if "f32" in str(result) else np.int32)
    return NUMPY[op.name](*args)


def evaluate(module: ModuleOp, inputs: list[np.ndarray]) -> list[np.ndarray]:
    """Run the module's one function on `inputs`, op by op."""
    fn = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    env: dict[SSAValue, np.ndarray] = dict(zip(fn.body.block.args, inputs))
    for op in fn.body.block.ops:
        args = [env[v] for v in op.operands]
        if isinstance(op, func.ReturnOp):
            return args
        env[op.results[0]] = run_op(op, args)
    raise AssertionError("no func.return")


def canonicalize(text: str) -> tuple[ModuleOp, ModuleOp]:
    before = parse_module(text)
    after = parse_module(text)
    CanonicalizePass().apply(Context(), after)
    verify_module(after)
    return before, after


PROGRAMS = {
    "transpose": (
        """
  func.func @f(%x: tensor<2x3x4xf32>) -> (tensor<4x3x2xf32>, tensor<2x3x4xf32>) {
    %0 = ml.transpose %x {perm = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<3x4x2xf32>
    %1 = ml.transpose %0 {perm = array<i64: 1, 0, 2>} : (tensor<3x4x2xf32>) -> tensor<4x3x2xf32>
    %2 = ml.transpose %0 {perm = array<i64: 2, 0, 1>} : (tensor<3x4x2xf32>) -> tensor<2x3x4xf32>
    func.return %1, %2 : tensor<4x3x2xf32>, tensor<2x3x4xf32>
  }""",
        [(2, 3, 4)],
    ),
    "reshape_broadcast": (
        """
  func.func @f(%x: tensor<2x3x4xf32>) -> (tensor<4x6xf32>, tensor<2x3x4xf32>) {
    %0 = ml.reshape %x : (tensor<2x3x4xf32>) -> tensor<24xf32>
    %1 = ml.reshape %0 : (tensor<24xf32>) -> tensor<4x6xf32>
    %2 = ml.reshape %x : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    %3 = ml.broadcast_to %2 : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
    func.return %1, %3 : tensor<4x6xf32>, tensor<2x3x4xf32>
  }""",
        [(2, 3, 4)],
    ),
    "unary": (
        """
  func.func @f(%x: tensor<5xf32>) -> (tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>) {
    %0 = ml.neg %x : (tensor<5xf32>) -> tensor<5xf32>
    %1 = ml.neg %0 : (tensor<5xf32>) -> tensor<5xf32>
    %2 = ml.relu %x : (tensor<5xf32>) -> tensor<5xf32>
    %3 = ml.relu %2 : (tensor<5xf32>) -> tensor<5xf32>
    %4 = ml.abs %0 : (tensor<5xf32>) -> tensor<5xf32>
    %5 = ml.abs %4 : (tensor<5xf32>) -> tensor<5xf32>
    %6 = ml.cast %5 : (tensor<5xf32>) -> tensor<5xf32>
    func.return %1, %3, %4, %6 : tensor<5xf32>, tensor<5xf32>, tensor<5xf32>, tensor<5xf32>
  }""",
        [(5,)],
    ),
    "identity_elements": (
        """
  func.func @f(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
    %one = arith.constant dense<1.0> : tensor<1x3xf32>
    %zero = arith.constant dense<0.0> : tensor<f32>
    %negzero = arith.constant dense<-0.0> : tensor<f32>
    %0 = ml.mul %one, %x : (tensor<1x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = ml.div %0, %one : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
    %2 = ml.sub %1, %zero : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    %3 = ml.add %negzero, %x : (tensor<f32>, tensor<2x3xf32>) -> tensor<2x3xf32>
    %4 = ml.mul %x, %zero : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
    func.return %2, %3, %4 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
  }""",
        [(2, 3)],
    ),
}


def ml_op_count(module: ModuleOp) -> int:
    return sum(op.name.startswith("ml.") for op in module.walk())


@pytest.mark.parametrize("name", PROGRAMS)
def test_rewrites_preserve_values(name: str):
    text, input_shapes = PROGRAMS[name]
    before, after = canonicalize(text)
    assert ml_op_count(after) < ml_op_count(before), print_module(after)
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(np.float32) for s in input_shapes]
    inputs[0].flat[0] = -0.0  # signed zeros must survive the rewrites
    for want, got in zip(evaluate(before, inputs), evaluate(after, inputs), strict=True):
        assert want.shape == got.shape
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
        np.testing.assert_array_equal(got, want)


def test_float_add_zero_is_kept_for_signed_zeros():
    text = """
    func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
      %zero = arith.constant dense<0.0> : tensor<f32>
      %0 = ml.add %x, %zero : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
      func.return %0 : tensor<3xf32>
    }"""
    _, after = canonicalize(text)
    assert ml_op_count(after) == 1
    # Why it must stay: numpy says -0.0 + 0.0 is +0.0, not x.
    assert not np.signbit(np.float32(-0.0) + np.float32(0.0))
