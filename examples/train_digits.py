"""
Train an MLP classifier with compiled training steps: forward, loss, backward (`mlc.grad`)
and the SGD update traced into one program by `mlc.jit`, compiled once, run every step.

The data are scikit-learn's handwritten digits (8x8 images, shipped with scikit-learn,
no download) when scikit-learn is installed; otherwise a synthetic stand-in of the same
shape: ten noisy prototype images, one per class. Prints the loss and the test accuracy
per epoch. Run it: `python examples/train_digits.py`.
"""

import time

import numpy as np

import mlc
from mlc import ops

CLASSES, HIDDEN = 10, 64


def load_digits(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, str]:
    """Images (n, 64) scaled to [0, 1], labels (n,), and where they came from."""
    try:
        from sklearn.datasets import load_digits as sklearn_digits  # pyright: ignore
    except ImportError:
        prototypes = rng.random((CLASSES, 64)) < 0.3
        labels = rng.integers(0, CLASSES, 1797)
        flips = rng.random((labels.size, 64)) < 0.2  # a fifth of the pixels flipped
        images = (prototypes[labels] ^ flips).astype(np.float32)
        return images, labels, "synthetic digits (scikit-learn is not installed)"
    digits = sklearn_digits()
    return (digits.data / 16.0).astype(np.float32), digits.target, "scikit-learn's digits"


def loss_fn(w1, b1, w2, b2, x, labels):
    """Mean softmax cross-entropy of a one-hidden-layer MLP (labels one-hot)."""
    hidden = ops.relu(x @ w1 + b1)
    probs = ops.softmax(hidden @ w2 + b2, axis=-1)
    return -ops.sum(labels * ops.log(probs + 1e-7)) / x.shape[0]


@mlc.jit
def train_step(w1, b1, w2, b2, x, labels, lr):
    """One SGD step; returns the loss and the updated parameters."""
    loss, grads = mlc.value_and_grad(loss_fn, argnums=(0, 1, 2, 3))(w1, b1, w2, b2, x, labels)
    params = (w1, b1, w2, b2)
    return (loss, *(p - lr * g for p, g in zip(params, grads, strict=True)))


@mlc.jit
def logits_of(w1, b1, w2, b2, x):
    return ops.relu(x @ w1 + b1) @ w2 + b2


def main(epochs: int = 15, batch: int = 32, lr: float = 0.1) -> float:
    rng = np.random.default_rng(0)
    images, labels, source = load_digits(rng)
    order = rng.permutation(labels.size)
    test, train = order[:360], order[360:]
    onehot = np.eye(CLASSES, dtype=np.float32)[labels]
    params = [
        (rng.standard_normal((64, HIDDEN)) * np.sqrt(2 / 64)).astype(np.float32),
        np.zeros(HIDDEN, np.float32),
        (rng.standard_normal((HIDDEN, CLASSES)) * np.sqrt(1 / HIDDEN)).astype(np.float32),
        np.zeros(CLASSES, np.float32),
    ]
    print(f"{source}: {train.size} training and {test.size} test images")
    start = time.perf_counter()
    accuracy = 0.0
    for epoch in range(1, epochs + 1):
        shuffled = rng.permutation(train)
        losses = []
        for i in range(0, shuffled.size - batch + 1, batch):  # full batches: one shape
            rows = shuffled[i : i + batch]
            loss, *params = train_step(*params, images[rows], onehot[rows], lr)
            losses.append(float(loss))
        predicted = np.argmax(logits_of(*params, images[test]), axis=1)
        accuracy = float(np.mean(predicted == labels[test]))
        print(f"epoch {epoch:2d}  loss {np.mean(losses):.4f}  test accuracy {accuracy:.1%}")
    elapsed = time.perf_counter() - start
    print(f"{elapsed:.1f} s; train_step cache: {train_step.cache_info()}")
    if accuracy < 0.95:
        raise SystemExit(f"test accuracy {accuracy:.1%} is below 95%")
    return accuracy


if __name__ == "__main__":
    main()
