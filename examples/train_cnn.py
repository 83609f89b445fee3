"""
Train a small CNN (conv, relu, max pooling, a linear layer, cross-entropy) on the digits
of `train_digits.py` with `mlc.optim`: forward, backward and the SGD-with-momentum update
are one program (`mlc.optim.training_step`), compiled once, run every step.

Prints the loss and the test accuracy per epoch. Run it: `python examples/train_cnn.py`.
"""

import importlib.util
import time
from pathlib import Path

import numpy as np

import mlc
from mlc import ops

CLASSES, CHANNELS = 10, 8


def _load_digits():
    """`load_digits` of the neighbouring train_digits.py (scikit-learn's, or synthetic)."""
    path = Path(__file__).with_name("train_digits.py")
    spec = importlib.util.spec_from_file_location("train_digits", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.load_digits


def logits_of(w, b, v, c, x):
    """(N, 1, 8, 8) images -> conv 3x3 -> relu -> 2x2 max pooling -> linear (N, 10)."""
    h = ops.relu(ops.conv2d(x, w, b, padding=1))  # (N, 8, 8, 8)
    h = ops.max_pool2d(h, 2)  # (N, 8, 4, 4)
    return h.reshape(x.shape[0], -1) @ v + c


def loss_fn(w, b, v, c, x, labels):
    """Mean softmax cross-entropy (labels one-hot)."""
    logits = logits_of(w, b, v, c, x)
    shifted = logits - ops.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - ops.log(ops.sum(ops.exp(shifted), axis=-1, keepdims=True))
    return -ops.sum(labels * log_probs) / x.shape[0]


predict = mlc.jit(logits_of)


def main(epochs: int = 4, batch: int = 32) -> float:
    rng = np.random.default_rng(0)
    images, labels, source = _load_digits()(rng)
    images = images.reshape(-1, 1, 8, 8)
    order = rng.permutation(labels.size)
    test, train = order[:360], order[360:]
    onehot = np.eye(CLASSES, dtype=np.float32)[labels]
    params = (
        (rng.standard_normal((CHANNELS, 1, 3, 3)) * np.sqrt(2 / 9)).astype(np.float32),
        np.zeros(CHANNELS, np.float32),
        (rng.standard_normal((CHANNELS * 16, CLASSES)) * np.sqrt(1 / 128)).astype(np.float32),
        np.zeros(CLASSES, np.float32),
    )
    step = mlc.optim.training_step(loss_fn, mlc.optim.SGD(lr=0.05, momentum=0.9))
    state = step.optimizer.init(params)
    print(f"{source}: {train.size} training and {test.size} test images")
    start = time.perf_counter()
    accuracy = 0.0
    for epoch in range(1, epochs + 1):
        shuffled = rng.permutation(train)
        losses = []
        for i in range(0, shuffled.size - batch + 1, batch):  # full batches: one shape
            rows = shuffled[i : i + batch]
            loss, params, state = step(params, state, images[rows], onehot[rows])
            losses.append(float(loss))
        predicted = np.argmax(predict(*params, images[test]), axis=1)
        accuracy = float(np.mean(predicted == labels[test]))
        print(f"epoch {epoch:2d}  loss {np.mean(losses):.4f}  test accuracy {accuracy:.1%}")
    elapsed = time.perf_counter() - start
    (compiled,) = step.compiled.values()
    print(f"{elapsed:.1f} s; training step cache: {compiled.cache_info()}")
    if accuracy < 0.9:
        raise SystemExit(f"test accuracy {accuracy:.1%} is below 90%")
    return accuracy


if __name__ == "__main__":
    main()
