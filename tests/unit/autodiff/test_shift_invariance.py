"""Maxima subtracted for stability only (`mlc.autodiff.shift_invariance`): which ones
the analysis finds, and gradients through them against numpy and finite differences."""

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.autodiff.shift_invariance import invariant_maxima
from mlc.dialects import ml
from mlc.ir import parse_module
from tests.finite_differences import numeric_grad


def cross_entropy(logits, labels):
    """Softmax cross-entropy with the max subtracted by hand, as bench/training.py does."""
    shifted = logits - ops.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - ops.log(ops.sum(ops.exp(shifted), axis=-1, keepdims=True))
    return -ops.sum(labels * log_probs) / logits.shape[0]


def shift_weighted(logits, weights):
    """The differences themselves, weighted: the max's own gradient is part of the result."""
    shifted = logits - ops.max(logits, axis=-1, keepdims=True)
    return ops.sum(ops.exp(shifted) * weights)


def _numpy(fn):
    def call(logits, other):
        shifted = logits - logits.max(axis=-1, keepdims=True)
        if fn is cross_entropy:
            log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
            return -np.sum(other * log_probs) / logits.shape[0]
        return np.sum(np.exp(shifted) * other)

    return call


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_cross_entropy_gradient_is_softmax_minus_labels(seed):
    rng = np.random.default_rng(seed)
    rows, classes = int(rng.integers(1, 9)), int(rng.integers(2, 12))
    logits = rng.standard_normal((rows, classes))
    logits[0, :2] = logits[0].max() + 1.0  # a tie for the max: no effect on the gradient
    labels = np.eye(classes)[rng.integers(0, classes, rows)]
    got = mlc.grad(cross_entropy)(logits, labels)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    want = (e / e.sum(axis=1, keepdims=True) - labels) / rows
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)
    numeric = numeric_grad(_numpy(cross_entropy), [logits, labels], 0)
    np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-8)


def test_a_max_the_result_depends_on_is_differentiated():
    rng = np.random.default_rng(3)
    logits, weights = rng.standard_normal((3, 5)), rng.standard_normal((3, 5))
    got = mlc.grad(shift_weighted)(logits, weights)
    numeric = numeric_grad(_numpy(shift_weighted), [logits, weights], 0)
    np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-8)


PROGRAM = """
func.func @f(%x: tensor<4x10xf32>, %y: tensor<4x4xf32>) -> (tensor<4x10xf32>, tensor<4x4xf32>) {
  %m = ml.reduce_max %x {axes = array<i64: 1>, keepdims = true}
    : (tensor<4x10xf32>) -> tensor<4x1xf32>
  %s = ml.sub %x, %m : (tensor<4x10xf32>, tensor<4x1xf32>) -> tensor<4x10xf32>
  %p = ml.softmax %s {axis = 1 : i64} : (tensor<4x10xf32>) -> tensor<4x10xf32>
  %n = ml.reduce_min %y {axes = array<i64: 1>, keepdims = false}
    : (tensor<4x4xf32>) -> tensor<4xf32>
  %t = ml.sub %y, %n : (tensor<4x4xf32>, tensor<4xf32>) -> tensor<4x4xf32>
  %q = ml.softmax %t {axis = 1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  func.return %p, %q : tensor<4x10xf32>, tensor<4x4xf32>
}
"""


def test_the_analysis_finds_a_softmax_shift_but_not_a_broadcast_one_nor_an_output():
    function = next(iter(parse_module(PROGRAM).ops))
    ops_ = list(function.body.block.ops)
    maxima = [op.result for op in ops_ if isinstance(op, ml.ReduceMaxOp | ml.ReduceMinOp)]
    # the min, not kept as a column, is broadcast along the rows: a shift per column
    assert invariant_maxima(ops_, []) == {maxima[0]}
    assert invariant_maxima(ops_, [maxima[0]]) == set()
