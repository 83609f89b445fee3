"""
An LSTM language model written in Python with `mlc.ops` and compiled by `mlc.jit`.

Tokens are looked up in an embedding table (`ops.take`), one LSTM layer runs over time
as `ops.scan` (jax.lax.scan's carry and stacked outputs: the carry is the state `(h,
c)`, each step's output its `h`), and a projection gives every position's logits over
the vocabulary, from which the model's loss is the next token's cross-entropy. The
input projection of every step is one matmul before the loop, as cuDNN and
onnxruntime do, so each step multiplies only by the recurrent weights. The same model in
numpy (a Python loop over time) checks it. Run it: `python examples/lstm_lm.py`.
"""

import time

import numpy as np

import mlc
from mlc import ops

VOCAB, EMBED, HIDDEN = 96, 32, 64


def step(carry, projected, recurrent):
    """One LSTM step: gates i, f, g, o side by side in `projected + h @ recurrent`."""
    h, c = carry
    z = projected + h @ recurrent
    i, f, g, o = (z[:, k * HIDDEN : (k + 1) * HIDDEN] for k in range(4))
    c = ops.sigmoid(f) * c + ops.sigmoid(i) * ops.tanh(g)
    h = ops.sigmoid(o) * ops.tanh(c)
    return (h, c), h


@mlc.jit
def next_token_loss(tokens, targets, table, w, u, b, proj, bias, h0, c0):
    """The mean cross-entropy of each position's logits against the next token."""
    x = ops.take(table, ops.transpose(tokens), axis=0)  # (T, B, EMBED)
    projected = x @ w + b  # every step's input projection, one matmul
    _, hs = ops.scan(lambda carry, p: step(carry, p, u), (h0, c0), projected)
    logits = hs @ proj + bias  # (T, B, VOCAB)
    shifted = logits - ops.max(logits, axis=-1, keepdims=True)
    log_probs = shifted - ops.log(ops.sum(ops.exp(shifted), axis=-1, keepdims=True))
    picked = ops.take_along_axis(log_probs, ops.transpose(targets)[:, :, None], axis=-1)
    return -ops.mean(picked)


def next_token_loss_numpy(tokens, targets, table, w, u, b, proj, bias, h0, c0):
    def sigmoid(x):
        return 1 / (1 + np.exp(-x))

    h, c, losses = h0, c0, []
    for t in range(tokens.shape[1]):
        z = table[tokens[:, t]] @ w + b + h @ u
        i, f, g, o = (z[:, k * HIDDEN : (k + 1) * HIDDEN] for k in range(4))
        c = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        h = sigmoid(o) * np.tanh(c)
        logits = h @ proj + bias
        shifted = logits - logits.max(axis=-1, keepdims=True)
        log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))
        losses.append(log_probs[np.arange(len(h)), targets[:, t]])
    return -np.mean(losses)


def weights(rng: np.random.Generator) -> list[np.ndarray]:
    scale = 1 / np.sqrt(HIDDEN)
    shapes = [(VOCAB, EMBED), (EMBED, 4 * HIDDEN), (HIDDEN, 4 * HIDDEN), (4 * HIDDEN,),
              (HIDDEN, VOCAB), (VOCAB,)]  # fmt: skip
    return [(rng.standard_normal(s) * scale).astype(np.float32) for s in shapes]


def main() -> None:
    rng = np.random.default_rng(0)
    params = weights(rng)
    for batch, steps in ((4, 24), (4, 24), (8, 40)):
        text = rng.integers(0, VOCAB, (batch, steps + 1))
        tokens, targets = text[:, :-1].astype(np.int64), text[:, 1:].astype(np.int64)
        state = [np.zeros((batch, HIDDEN), np.float32) for _ in range(2)]
        got = float(next_token_loss(tokens, targets, *params, *state))
        want = float(next_token_loss_numpy(tokens, targets, *params, *state))
        print(f"batch {batch}, {steps} steps: loss {got:.5f}, |mlc - numpy| {abs(got - want):.1e}")
        assert abs(got - want) < 1e-4 * abs(want)
    print("cache:", next_token_loss.cache_info())
    times = {"mlc.jit": [], "numpy": []}
    for _ in range(7):  # alternate, so both see the same machine noise
        for name, fn in (("mlc.jit", next_token_loss), ("numpy", next_token_loss_numpy)):
            start = time.perf_counter()
            fn(tokens, targets, *params, *state)
            times[name].append(time.perf_counter() - start)
    t_mlc, t_np = (float(np.median(times[k])) * 1e3 for k in ("mlc.jit", "numpy"))
    print(f"batch {batch}, {steps} steps: mlc.jit {t_mlc:.3f} ms, numpy {t_np:.3f} ms")


if __name__ == "__main__":
    main()
