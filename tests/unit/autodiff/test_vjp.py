"""Tests for `mlc.autodiff.vjp`'s joint function (the numerics: tests/e2e/test_vjp_split.py)."""

import numpy as np
import pytest
from xdsl.dialects import func

import mlc
from mlc.autodiff.joint import JointLayout, joint_layout
from mlc.autodiff.partition import SplitNames, split
from mlc.autodiff.vjp import joint_function
from mlc.diagnostics import verify_module
from mlc.ir import parse_module

PROGRAM = """
func.func @f(%x: tensor<3x4xf32>, %n: tensor<3xi64>)
    -> (tensor<3x4xf32>, tensor<3xi64>, tensor<f32>) {
  %e = ml.exp %x : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %s = ml.reduce_sum %e {axes = array<i64: 0, 1>, keepdims = false}
    : (tensor<3x4xf32>) -> tensor<f32>
  func.return %e, %n, %s : tensor<3x4xf32>, tensor<3xi64>, tensor<f32>
}
"""


def test_joint_function_takes_a_cotangent_per_float_result():
    module = parse_module(PROGRAM)
    f = next(op for op in module.ops if isinstance(op, func.FuncOp))
    joint = joint_function(f, "f_vjp")
    module.body.block.add_op(joint)
    assert not verify_module(module)
    types = [str(t) for t in joint.function_type.inputs]
    assert types == ["tensor<3x4xf32>", "tensor<3xi64>", "tensor<3x4xf32>", "tensor<f32>"]
    outputs = [str(t) for t in joint.function_type.outputs]
    assert outputs == ["tensor<3x4xf32>", "tensor<3xi64>", "tensor<f32>", "tensor<3x4xf32>"]
    assert joint_layout(joint) == JointLayout(cotangents=2, values=3)
    assert len(f.function_type.inputs) == 2  # the function differentiated stays as it was

    forward, backward, cut = split(joint, SplitNames("fwd", "bwd"))
    assert [str(t) for t in forward.function_type.outputs][:3] == outputs[:3]
    assert len(backward.function_type.inputs) == len(cut.saved) + 2
    assert [str(t) for t in backward.function_type.outputs] == ["tensor<3x4xf32>"]


def test_vjp_inside_a_trace_is_refused():
    def outer(x):
        mlc.vjp(lambda y: y * 2.0, x)
        return x

    with pytest.raises(TypeError, match="not inside a trace"):
        mlc.trace(outer, np.ones(3, np.float32))
