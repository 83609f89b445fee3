"""
Gradients of padded convolutions through `mlc.grad` against a numpy reference: the
weight-gradient convolution takes the (relu'd) cotangent as its weights and the padded
image as its input, so its packing from the unpadded image sees shapes and pads the
forward's never does. Pads 0 to 2, strides 1 and 2, batch 1 and 5, odd images, f32/f64,
on each target (the GPU's convolutions absorb paddings through the same checks).
"""

import numpy as np
import pytest

import mlc
from mlc import ops
from tests.gpu.targets import jit_for


def _windows(x: np.ndarray, kernel: tuple[int, int], stride: int, pad: int) -> np.ndarray:
    """The padded image's windows, (n, c, kh, kw, oh, ow)."""
    padded = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    kh, kw = kernel
    oh = (padded.shape[2] - kh) // stride + 1
    ow = (padded.shape[3] - kw) // stride + 1
    out = np.empty((*x.shape[:2], kh, kw, oh, ow), x.dtype)
    for i in range(kh):
        for j in range(kw):
            rows, columns = slice(i, i + stride * oh, stride), slice(j, j + stride * ow, stride)
            out[:, :, i, j] = padded[:, :, rows, columns]
    return out


def reference(x, w, b, stride, pad, relu):
    """Gradients of sum(act(conv(x, w, b)) ** 2) in w, b and x, in float64."""
    x, w, b = (a.astype(np.float64) for a in (x, w, b))
    cols = _windows(x, w.shape[2:], stride, pad)
    y = np.einsum("ncijhw,ocij->nohw", cols, w) + b[None, :, None, None]
    dy = 2 * np.maximum(y, 0) if relu else 2 * y
    dw = np.einsum("ncijhw,nohw->ocij", cols, dy)
    db = dy.sum(axis=(0, 2, 3))
    dcols = np.einsum("nohw,ocij->ncijhw", dy, w)
    dpadded = np.zeros((x.shape[0], x.shape[1], x.shape[2] + 2 * pad, x.shape[3] + 2 * pad))
    oh, ow = dy.shape[2:]
    for i in range(w.shape[2]):
        for j in range(w.shape[3]):
            rows, columns = slice(i, i + stride * oh, stride), slice(j, j + stride * ow, stride)
            dpadded[:, :, rows, columns] += dcols[:, :, i, j]
    dx = dpadded[:, :, pad : pad + x.shape[2], pad : pad + x.shape[3]]
    return dw, db, dx


# (image, weight, stride, pad, relu, dtype)
CASES = [
    ((5, 2, 7, 6), (3, 2, 3, 3), 1, 1, True, "float64"),  # the small CNN's convolution
    ((5, 2, 7, 6), (3, 2, 3, 3), 1, 1, True, "float32"),
    ((5, 2, 7, 6), (3, 2, 3, 3), 1, 1, False, "float64"),
    ((5, 2, 7, 6), (3, 2, 3, 3), 1, 0, True, "float64"),
    ((5, 2, 7, 6), (3, 2, 3, 3), 1, 2, True, "float64"),
    ((1, 2, 7, 6), (3, 2, 3, 3), 1, 1, True, "float64"),
    ((5, 3, 9, 11), (4, 3, 3, 3), 2, 1, True, "float64"),
    ((1, 3, 9, 11), (4, 3, 3, 3), 2, 1, True, "float32"),
    ((5, 3, 11, 9), (4, 3, 3, 3), 2, 2, False, "float32"),
    ((2, 3, 13, 15), (6, 3, 5, 5), 1, 2, True, "float32"),
    ((1, 3, 17, 17), (8, 3, 7, 7), 2, 3, True, "float32"),  # a stem
    ((5, 4, 8, 8), (4, 4, 3, 3), 1, 1, True, "float64"),  # rows that divide the vector
]


@pytest.mark.parametrize("case", CASES, ids=range(len(CASES)))
def test_padded_conv_grad_matches_numpy(case, target):
    x_shape, w_shape, stride, pad, relu, dtype = case
    rng = np.random.default_rng(sum(x_shape) * 31 + sum(w_shape) + pad)
    x = rng.standard_normal(x_shape).astype(dtype)
    w = (rng.standard_normal(w_shape) * 0.4).astype(dtype)
    b = (rng.standard_normal(w_shape[0]) * 0.1).astype(dtype)

    def loss(w, b, x):
        y = ops.conv2d(x, w, b, stride=stride, padding=pad)
        return ops.sum((ops.relu(y) if relu else y) ** 2)

    got = jit_for(target)(mlc.grad(loss, argnums=(0, 1, 2)))(w, b, x)
    rtol = (1e-4 if target == "cpu" else 1e-3) if dtype == "float32" else 1e-10
    for g, want in zip(got, reference(x, w, b, stride, pad, relu), strict=True):
        assert np.all(np.isfinite(g))
        scale = np.abs(want).max()
        np.testing.assert_allclose(g, want, rtol=rtol, atol=rtol * scale)
