"""
convert-ml-to-linalg: the broadcasting maps, full lowering of each op family, and the
numbers the generics compute (run by xDSL's interpreter, compared with numpy).
"""

# The IR below is written one op per line, as in .mlir files.
# ruff: noqa: E501

from collections.abc import Sequence
from itertools import product
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import DYNAMIC_INDEX, ModuleOp
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls
from xdsl.interpreters import arith as interp_arith
from xdsl.interpreters import builtin as interp_builtin
from xdsl.interpreters import func as interp_func
from xdsl.interpreters import linalg as interp_linalg
from xdsl.interpreters import math as interp_math
from xdsl.interpreters import tensor as interp_tensor
from xdsl.interpreters.shaped_array import ShapedArray
from xdsl.interpreters.utils.ptr import TypedPtr
from xdsl.ir.affine import AffineExpr

from mlc.diagnostics import OpError
from mlc.ir import parse_module
from mlc.lowering.convert_ml_to_linalg import ConvertMLToLinalgPass, check_fully_lowered
from mlc.lowering.convert_ml_to_linalg.common import broadcast_map
from mlc.registry import make_context

# ---------------------------------------------------------------------------
# Broadcasting maps
# ---------------------------------------------------------------------------


@st.composite
def broadcast_pair(draw: st.DrawFn) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """An output shape and an operand shape that numpy broadcasts to it."""
    out = tuple(draw(st.lists(st.integers(1, 4), max_size=4)))
    rank = draw(st.integers(0, len(out)))
    operand = tuple(1 if draw(st.booleans()) else d for d in out[len(out) - rank :])
    return out, operand


@given(broadcast_pair())
def test_broadcast_map_reads_what_numpy_broadcasts(pair: tuple[tuple[int, ...], ...]):
    out, operand = pair
    source = np.arange(int(np.prod(operand))).reshape(operand)
    expected = np.broadcast_to(source, out)
    indexing = broadcast_map(operand, out)
    assert indexing.num_dims == len(out)
    for index in np.ndindex(*out):
        assert source[indexing.eval(index, ())] == expected[index]


def test_broadcast_map_dynamic_dims_are_assumed_equal():
    dyn = DYNAMIC_INDEX
    d0, d1 = AffineExpr.dimension(0), AffineExpr.dimension(1)
    assert broadcast_map((dyn, 8), (dyn, 8)).results == (d0, d1)
    # A static 1 may still meet a larger dynamic dim: read index 0.
    assert broadcast_map((1, dyn), (dyn, dyn)).results == (AffineExpr.constant(0), d1)
    # A 1 facing a 1 is not a broadcast.
    assert broadcast_map((1,), (4, 1)).results == (d1,)


def test_broadcast_map_extra_loops():
    indexing = broadcast_map((3,), (2, 3), num_loops=3)
    assert indexing.num_dims == 3
    assert indexing.results == (AffineExpr.dimension(1),)


# ---------------------------------------------------------------------------
# Nothing of `ml` is left
# ---------------------------------------------------------------------------

FAMILIES = {
    "elementwise": """
      %0 = ml.add %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      %1 = ml.gelu %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
      %2 = ml.cmp "le", %1, %a : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
      %3 = ml.select %2, %1, %a : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      %r = ml.cast %3 : (tensor<2x3xf32>) -> tensor<2x3xi32>
    """,
    "matmul": """
      %b = ml.matmul %a, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
      %c = ml.matmul %b, %a : (tensor<2x2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
      %r = ml.cast %c : (tensor<2x3xf32>) -> tensor<2x3xi32>
    """,
    "reduction": """
      %0 = ml.reduce_mean %a {axes = array<i64: 0>, keepdims = true} : (tensor<2x3xf32>) -> tensor<1x3xf32>
      %1 = ml.reduce_max %a {axes = array<i64: 0>, keepdims = true} : (tensor<2x3xf32>) -> tensor<1x3xf32>
      %2 = ml.reduce_min %a {axes = array<i64: 0>, keepdims = true} : (tensor<2x3xf32>) -> tensor<1x3xf32>
      %3 = ml.sub %1, %2 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
      %4 = ml.add %3, %0 : (tensor<1x3xf32>, tensor<1x3xf32>) -> tensor<1x3xf32>
      %5 = ml.add %a, %4 : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<2x3xf32>
      %r = ml.cast %5 : (tensor<2x3xf32>) -> tensor<2x3xi32>
    """,
    "normalization": """
      %s = ml.softmax %a {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
      %v = ml.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<2x3xf32>) -> tensor<3xf32>
      %l = ml.layer_norm %s, %v, %v {axis = -1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
      %n = ml.batch_norm %l, %v, %v, %v, %v {epsilon = 1.0e-05 : f32} : (tensor<2x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
      %r = ml.cast %n : (tensor<2x3xf32>) -> tensor<2x3xi32>
    """,
}


def lowered(body: str, signature: str) -> ModuleOp:
    module = parse_module(f"func.func @f({signature} {{\n{body}\n}}")
    module.verify()
    ConvertMLToLinalgPass().apply(make_context(), module)
    module.verify()
    return module


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_no_ml_op_is_left(family: str):
    body = FAMILIES[family] + "  func.return %r : tensor<2x3xi32>"
    module = lowered(body, "%a: tensor<2x3xf32>, %w: tensor<3x2xf32>) -> tensor<2x3xi32>")
    names = {op.name for op in module.walk()}
    assert not any(name.startswith("ml.") for name in names)
    assert "linalg.generic" in names


def test_a_leftover_ml_op_is_a_located_error():
    module = parse_module(
        "func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {\n"
        '  %0 = ml.exp %a : (tensor<2xf32>) -> tensor<2xf32> loc("m.py":3:1)\n'
        "  func.return %0 : tensor<2xf32>\n}"
    )
    with pytest.raises(OpError, match=r"no lowering for 'ml\.exp'") as error:
        check_fully_lowered(module)
    assert str(error.value.diagnostic().location) == "m.py:3:1"


# ---------------------------------------------------------------------------
# Numbers: the lowered IR run by xDSL's interpreter against numpy
# ---------------------------------------------------------------------------


@register_impls
class MissingScalarOps(InterpreterFunctions):
    """Scalar ops the lowering emits that xDSL's interpreter does not implement."""

    @impl(arith.DivfOp)
    def run_divf(self, interpreter: Interpreter, op: arith.DivfOp, args: Any) -> Any:
        return (args[0] / args[1],)

    @impl(math.RsqrtOp)
    def run_rsqrt(self, interpreter: Interpreter, op: math.RsqrtOp, args: Any) -> Any:
        return (1 / np.sqrt(args[0]),)


@register_impls
class MultiResultGeneric(InterpreterFunctions):
    """
    `linalg.generic` on tensors with any number of results.

    xDSL's interpreter stores every yielded value into the first output, which breaks
    the two-result row kernels (softmax's max and sum, layer norm's two sums).
    """

    @impl(GenericOp)
    def run_generic(self, interpreter: Interpreter, op: GenericOp, args: Any) -> Any:
        n_in = len(op.inputs)
        maps = [m.data for m in op.indexing_maps.data]
        outputs = tuple(out.copy() for out in args[n_in:])
        operands = (*args[:n_in], *outputs)
        shapes_ = [d for a in operands if isinstance(a, ShapedArray) for d in a.shape]
        ranges = op.get_shapes_to_loops_map().eval(shapes_, [])
        for indices in product(*(range(r) for r in ranges)):
            scalars = tuple(
                a.load(m.eval(indices, ())) if isinstance(a, ShapedArray) else a
                for a, m in zip(operands, maps, strict=True)
            )
            values = interpreter.run_ssacfg_region(op.body, scalars, "generic")
            for out, m, value in zip(outputs, maps[n_in:], values, strict=True):
                out.store(m.eval(indices, ()), value)
        return outputs


def run(body: str, inputs: Sequence[np.ndarray], result: str) -> np.ndarray:
    """Lower `body` (ml ops on f64 or i64 args %a, %b, ...) and interpret it."""

    def type_of(x: np.ndarray) -> str:
        element = "f64" if x.dtype == np.float64 else "i64"
        return f"tensor<{'x'.join(map(str, x.shape))}{'x' if x.shape else ''}{element}>"

    args = ", ".join(f"%{chr(97 + i)}: {type_of(x)}" for i, x in enumerate(inputs))
    module = lowered(f"{body}\n  func.return %r : {result}", f"{args}) -> {result}")
    interpreter = Interpreter(module)
    for functions in (
        interp_arith.ArithFunctions(),
        interp_builtin.BuiltinFunctions(),
        interp_func.FuncFunctions(),
        interp_linalg.LinalgFunctions(),
        interp_math.MathFunctions(),
        interp_tensor.TensorFunctions(),
        MissingScalarOps(),
    ):
        interpreter.register_implementations(functions)
    interpreter.register_implementations(MultiResultGeneric(), override=True)
    shaped = [
        ShapedArray(
            (TypedPtr.new_float64 if x.dtype == np.float64 else TypedPtr.new_int64)(
                x.ravel().tolist()
            ),
            list(x.shape),
        )
        for x in inputs
    ]
    (out,) = interpreter.call_op("f", tuple(shaped))
    return np.array(out.data).reshape(out.shape)


RNG = np.random.default_rng(0)


def test_broadcasting_add_numbers():
    a, b = RNG.random((2, 1, 4)), RNG.random((3, 1))
    body = "%r = ml.add %a, %b : (tensor<2x1x4xf64>, tensor<3x1xf64>) -> tensor<2x3x4xf64>"
    np.testing.assert_allclose(run(body, [a, b], "tensor<2x3x4xf64>"), a + b)


def test_batched_matmul_numbers():
    a, b = RNG.random((2, 1, 3, 4)), RNG.random((5, 4, 2))
    body = "%r = ml.matmul %a, %b : (tensor<2x1x3x4xf64>, tensor<5x4x2xf64>) -> tensor<2x5x3x2xf64>"
    np.testing.assert_allclose(run(body, [a, b], "tensor<2x5x3x2xf64>"), a @ b)


def test_integer_matmul_numbers():
    a, b = RNG.integers(-5, 5, (3, 4)), RNG.integers(-5, 5, (4, 2))
    body = "%r = ml.matmul %a, %b : (tensor<3x4xi64>, tensor<4x2xi64>) -> tensor<3x2xi64>"
    np.testing.assert_array_equal(run(body, [a, b], "tensor<3x2xi64>"), a @ b)


@pytest.mark.parametrize(
    ("op", "reference"),
    [
        ("reduce_sum", np.sum),
        ("reduce_max", np.max),
        ("reduce_min", np.min),
        ("reduce_mean", np.mean),
    ],
)
def test_reduction_numbers(op: str, reference: Any):
    x = RNG.random((2, 3, 4))
    body = (
        f"%r = ml.{op} %a {{axes = array<i64: 0, -1>, keepdims = true}} "
        ": (tensor<2x3x4xf64>) -> tensor<1x3x1xf64>"
    )
    expected = reference(x, axis=(0, 2), keepdims=True)
    np.testing.assert_allclose(run(body, [x], "tensor<1x3x1xf64>"), expected)


def test_softmax_numbers():
    x = RNG.random((2, 3, 4)) * 10
    body = "%r = ml.softmax %a {axis = 1 : i64} : (tensor<2x3x4xf64>) -> tensor<2x3x4xf64>"
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(
        run(body, [x], "tensor<2x3x4xf64>"), e / e.sum(axis=1, keepdims=True)
    )


def test_layer_norm_numbers():
    x, scale, bias = RNG.random((2, 3, 4)), RNG.random((3, 4)), RNG.random((4,))
    body = (
        "%r = ml.layer_norm %a, %b, %c {axis = 1 : i64, epsilon = 1.0e-05 : f32} "
        ": (tensor<2x3x4xf64>, tensor<3x4xf64>, tensor<4xf64>) -> tensor<2x3x4xf64>"
    )
    mean = x.mean(axis=(1, 2), keepdims=True)
    var = x.var(axis=(1, 2), keepdims=True)
    expected = (x - mean) / np.sqrt(var + 1e-5) * scale + bias
    np.testing.assert_allclose(run(body, [x, scale, bias], "tensor<2x3x4xf64>"), expected)


def test_batch_norm_numbers():
    x = RNG.random((2, 3, 2, 2))
    scale, bias, mean, var = (RNG.random(3) for _ in range(4))
    body = (
        "%r = ml.batch_norm %a, %b, %c, %d, %e {epsilon = 1.0e-05 : f32} : (tensor<2x3x2x2xf64>, "
        "tensor<3xf64>, tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> tensor<2x3x2x2xf64>"
    )
    channel = (1, 3, 1, 1)
    expected = (x - mean.reshape(channel)) / np.sqrt(var.reshape(channel) + 1e-5)
    expected = expected * scale.reshape(channel) + bias.reshape(channel)
    out = run(body, [x, scale, bias, mean, var], "tensor<2x3x2x2xf64>")
    np.testing.assert_allclose(out, expected)
