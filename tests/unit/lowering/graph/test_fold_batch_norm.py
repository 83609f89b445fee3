"""`fold-batch-norm`'s arithmetic and constants, against batch norm applied to a product."""

import numpy as np
import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseResourceAttr

from mlc import resources
from mlc.lowering.graph.fold_batch_norm import constant, folded_parameters
from mlc.lowering.graph.patterns.fold import constant_array


def batch_norm(y: np.ndarray, norm: tuple[np.ndarray, ...], epsilon: float) -> np.ndarray:
    scale, shift, mean, var = (p.reshape(-1, 1) for p in norm)
    return (y - mean) / np.sqrt(var + epsilon) * scale + shift


@pytest.mark.parametrize("with_bias", [True, False])
def test_folded_weights_give_the_batch_norm_of_the_product(with_bias: bool):
    # A 1x1 convolution is a product over the input channels: y[o] = W[o] . x + b[o].
    rng = np.random.default_rng()
    weight = rng.standard_normal((5, 3, 1, 1))
    bias = rng.standard_normal(5) if with_bias else None
    norm = (
        rng.uniform(0.5, 1.5, 5),
        rng.uniform(-1, 1, 5),
        rng.uniform(-1, 1, 5),
        rng.uniform(0.5, 1.5, 5),
    )
    x = rng.standard_normal((3, 7))
    product = weight[:, :, 0, 0] @ x + (0 if bias is None else bias.reshape(-1, 1))
    new_weight, new_bias = folded_parameters(weight, bias, norm, 1e-3)
    folded = new_weight[:, :, 0, 0] @ x + new_bias.reshape(-1, 1)
    np.testing.assert_allclose(folded, batch_norm(product, norm, 1e-3), rtol=1e-12, atol=1e-12)


def test_folding_computes_in_float64_and_keeps_the_weights_dtype():
    # W * s with s = 1 / sqrt(3 + eps): the float64 value, rounded once to f16.
    weight = np.full((1, 1, 1, 1), 3.0, np.float16)
    ones, zeros = np.ones(1, np.float16), np.zeros(1, np.float16)
    norm = (ones, zeros, zeros, np.full(1, 3.0, np.float16))
    new_weight, new_bias = folded_parameters(weight, None, norm, 1e-8)
    assert new_weight.dtype == new_bias.dtype == np.float16
    assert new_weight[0, 0, 0, 0] == np.float16(3.0 / np.sqrt(3.0 + 1e-8))


def test_large_folded_weights_are_resources_and_read_back():
    weight = np.random.default_rng().standard_normal((16, 8, 3, 3)).astype(np.float32)
    op = constant(weight, "layer.weight.folded")
    assert isinstance(op.value, DenseResourceAttr)
    assert op.value.resource_handle.data.startswith("layer.weight.folded_")
    held = constant_array(op.result)
    assert held is not None and np.array_equal(held, weight)


def test_small_folded_constants_are_inline_and_read_back():
    bias = np.array([0.5, -1.0], np.float32)
    op = constant(bias, "layer.weight.folded_bias")
    assert not isinstance(op.value, DenseResourceAttr)
    held = constant_array(op.result)
    assert held is not None and np.array_equal(held, bias)


def test_a_resource_this_process_does_not_hold_is_not_a_constant():
    attr = DenseResourceAttr.from_params("never_registered", constant(np.ones(2), "").result.type)
    assert resources.lookup("never_registered") is None
    assert constant_array(arith.ConstantOp(attr, attr.type).result) is None
