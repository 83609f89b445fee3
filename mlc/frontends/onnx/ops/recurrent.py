"""
Recurrent ONNX ops: LSTM, GRU and RNN, with every attribute and input.

Each op is a cell (one step's gates, `Cell`) that `recurrence` runs in a loop over time
per direction, after one matmul projecting the input of every step. The activations are
the functions ONNX names (`Activation`), built from `ml` ops.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from xdsl.ir import SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError, Value
from mlc.frontends.onnx.ops.build import dtype
from mlc.frontends.onnx.ops.recurrence import (
    Builder,
    Cell,
    Recurrence,
    add_values,
    as_ssa,
    columns,
    concat_values,
    direction_of,
)
from mlc.frontends.onnx.ops.table import converts

# ---------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------


def _affine(b: Builder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    return b.add(b.mul(x, b.scalar(alpha, x)), b.scalar(beta, x))


def _leaky_relu(b: Builder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    negative = b(ml.CmpOp("lt", x, b.scalar(0, x)))
    return b(ml.SelectOp(negative, b.mul(x, b.scalar(alpha, x)), x))


def _thresholded_relu(b: Builder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    above = b(ml.CmpOp("gt", x, b.scalar(alpha, x)))
    return b(ml.SelectOp(above, x, b.scalar(0, x)))


def _scaled_tanh(b: Builder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    return b.mul(b(ml.TanhOp(b.mul(x, b.scalar(beta, x)))), b.scalar(alpha, x))


def _hard_sigmoid(b: Builder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    low = b(ml.MaxOp(_affine(b, x, alpha, beta), b.scalar(0, x)))
    return b(ml.MinOp(low, b.scalar(1, x)))


def _elu(b: Builder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    negative = b(ml.CmpOp("lt", x, b.scalar(0, x)))
    exp_minus_one = b(ml.SubOp(b(ml.ExpOp(x)), b.scalar(1, x)))
    return b(ml.SelectOp(negative, b.mul(exp_minus_one, b.scalar(alpha, x)), x))


def _softsign(b: Builder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    return b(ml.DivOp(x, b.add(b(ml.AbsOp(x)), b.scalar(1, x))))


def _softplus(b: Builder, x: SSAValue, alpha: float, beta: float) -> SSAValue:
    """log(1 + exp(x)), as relu(x) + log(1 + exp(-|x|)) so that large x do not overflow."""
    tail = b(ml.ExpOp(b(ml.NegOp(b(ml.AbsOp(x))))))
    return b.add(b(ml.ReluOp(x)), b(ml.LogOp(b.add(tail, b.scalar(1, x)))))


def _unary(op: type[ml.UnaryOp]) -> Callable[[Builder, SSAValue, float, float], SSAValue]:
    return lambda b, x, alpha, beta: b(op(x))


# name (lower case) -> the function, and its default alpha and beta (None: takes none)
ACTIVATIONS: dict[
    str, tuple[Callable[[Builder, SSAValue, float, float], SSAValue], float | None, float | None]
] = {
    "relu": (_unary(ml.ReluOp), None, None),
    "tanh": (_unary(ml.TanhOp), None, None),
    "sigmoid": (_unary(ml.SigmoidOp), None, None),
    "affine": (_affine, 1.0, 0.0),
    "leakyrelu": (_leaky_relu, 0.01, None),
    "thresholdedrelu": (_thresholded_relu, 1.0, None),
    "scaledtanh": (_scaled_tanh, 1.0, 1.0),
    "hardsigmoid": (_hard_sigmoid, 0.2, 0.5),
    "elu": (_elu, 1.0, None),
    "softsign": (_softsign, None, None),
    "softplus": (_softplus, None, None),
}


@dataclass(frozen=True)
class Activation:
    """One of the activation functions ONNX's recurrent ops name, with its parameters."""

    name: str  # lower case, a key of ACTIVATIONS
    alpha: float = 0.0
    beta: float = 0.0

    def __call__(self, b: Builder, x: SSAValue) -> SSAValue:
        return ACTIVATIONS[self.name][0](b, x, self.alpha, self.beta)


def activations(node: Node, defaults: Sequence[str], directions: int) -> list[list[Activation]]:
    """
    The activations of each direction: the `activations` attribute or `defaults`. A list
    of one direction's functions serves both directions, and one of two directions' the
    first (as onnxruntime reads them).

    `activation_alpha` and `activation_beta` are consumed in order by the functions that
    take them (as onnxruntime reads them; onnx's reference RNN gives function i the i-th
    values instead). A function left without a value takes the default of the ONNX
    operator of its name.
    """
    per = len(defaults)
    names = [n.decode() if isinstance(n, bytes) else n for n in node.attr("activations", [])]
    names = names or list(defaults) * directions
    if len(names) == per * (3 - directions):
        names = (names * 2)[: per * directions]
    if len(names) != per * directions:
        raise NodeError(
            f"expected {per * directions} activations ({per} per direction), got {len(names)}"
        )
    alphas = list(node.attr("activation_alpha", []))
    betas = list(node.attr("activation_beta", []))
    found: list[Activation] = []
    for name in names:
        key = name.lower()
        if key not in ACTIVATIONS:
            raise NodeError(f"unsupported activation '{name}'")
        _, alpha, beta = ACTIVATIONS[key]
        alpha = alphas.pop(0) if alpha is not None and alphas else alpha
        beta = betas.pop(0) if beta is not None and betas else beta
        found.append(Activation(key, alpha or 0.0, beta or 0.0))
    return [found[d * per : (d + 1) * per] for d in range(directions)]


# ---------------------------------------------------------------------------
# The cells and the converters
# ---------------------------------------------------------------------------


def lstm_cell(
    rec: Recurrence,
    acts: list[Activation],
    rt: SSAValue,  # `Recurrence.recurrent_weight`
    peepholes: list[SSAValue] | None,
    input_forget: bool,
) -> Cell:
    """One LSTM step (gates i, o, f, c): `[h, c] -> [h', c']`."""
    f, g, h = acts
    hidden = rec.hidden

    def step(b: Builder, xt: SSAValue, states: list[SSAValue]) -> list[SSAValue]:
        h_prev, c_prev = states
        z = b.add(xt, rec.recurrent(b, h_prev, rt))
        i_in, o_in, f_in, c_in = (b.gate(z, k, hidden) for k in range(4))
        if peepholes is not None:
            i_in = b.add(i_in, b.mul(c_prev, peepholes[0]))
            f_in = b.add(f_in, b.mul(c_prev, peepholes[2]))
        i = f(b, rec.clipped(b, i_in))
        forget = b.one_minus(i) if input_forget else f(b, rec.clipped(b, f_in))
        c = b.add(b.mul(forget, c_prev), b.mul(i, g(b, rec.clipped(b, c_in))))
        if peepholes is not None:
            o_in = b.add(o_in, b.mul(c, peepholes[1]))
        o = f(b, rec.clipped(b, o_in))
        return [b.mul(o, h(b, c)), c]

    return step


def gru_cell(rec: Recurrence, acts: list[Activation], d: int, reset_bias: SSAValue | None) -> Cell:
    """
    One GRU step (gates z, r, h): `[h] -> [h']`. With `reset_bias` (linear_before_reset),
    the reset gate scales `h @ Rh^T + Rbh`; without it, `(r * h) @ Rh^T` is a second matmul.
    """
    f, g = acts
    hidden = rec.hidden
    if reset_bias is None:  # the z and r gates' weights, then the h gate's
        rt_zr, rt_h = rec.recurrent_weight(d, 0, 2), rec.recurrent_weight(d, 2, 3)
    else:
        rt = rec.recurrent_weight(d, 0, 3)

    def step(b: Builder, xt: SSAValue, states: list[SSAValue]) -> list[SSAValue]:
        (h_prev,) = states
        hr = rec.recurrent(b, h_prev, rt if reset_bias is not None else rt_zr)
        z = f(b, rec.clipped(b, b.add(b.gate(xt, 0, hidden), b.gate(hr, 0, hidden))))
        r = f(b, rec.clipped(b, b.add(b.gate(xt, 1, hidden), b.gate(hr, 1, hidden))))
        if reset_bias is not None:
            recurrent = b.mul(r, b.add(b.gate(hr, 2, hidden), reset_bias))
        else:
            recurrent = rec.recurrent(b, b.mul(r, h_prev), rt_h)
        candidate = g(b, rec.clipped(b, b.add(b.gate(xt, 2, hidden), recurrent)))
        # (1 - z) * candidate + z * h_prev
        return [b.add(candidate, b.mul(z, b(ml.SubOp(h_prev, candidate))))]

    return step


def rnn_cell(rec: Recurrence, acts: list[Activation], rt: SSAValue) -> Cell:
    """One RNN step: `[h] -> [f(xt + h @ R^T)]`."""
    (f,) = acts

    def step(b: Builder, xt: SSAValue, states: list[SSAValue]) -> list[SSAValue]:
        return [f(b, rec.clipped(b, b.add(xt, rec.recurrent(b, states[0], rt))))]

    return step


def biases(node: Node, d: int, width: int) -> tuple[Value, Value] | None:
    """Direction `d`'s input and recurrent biases (Wb, Rb), if B is given."""
    if not node.has(3):
        return None
    both = direction_of(node, 3, d)
    return columns(node, both, 0, width), columns(node, both, width, 2 * width)


@converts("LSTM", since=7)
def lstm(node: Node) -> Sequence[Value | None]:
    rec = Recurrence.of(node, gates=4)
    acts = activations(node, ["Sigmoid", "Tanh", "Tanh"], rec.directions)
    hidden = rec.hidden

    def bias_of(d: int) -> Value | None:
        found = biases(node, d, 4 * hidden)
        return None if found is None else add_values(node, *found)

    def cell_of(d: int) -> Cell:
        peepholes = None
        if node.has(7):
            p = direction_of(node, 7, d)
            peepholes = [
                as_ssa(node, columns(node, p, k * hidden, (k + 1) * hidden), rec.x, [hidden])
                for k in range(3)
            ]
        forget = bool(node.attr("input_forget", 0))
        return lstm_cell(rec, acts[d], rec.recurrent_weight(d, 0, rec.gates), peepholes, forget)

    return rec.run(cell_of, bias_of, states=2)


@converts("GRU", since=7)
def gru(node: Node) -> Sequence[Value | None]:
    rec = Recurrence.of(node, gates=3)
    acts = activations(node, ["Sigmoid", "Tanh"], rec.directions)
    hidden = rec.hidden
    before_reset = bool(node.attr("linear_before_reset", 0))

    def bias_of(d: int) -> Value | None:
        found = biases(node, d, 3 * hidden)
        if found is None:
            return None
        wb, rb = found
        if not before_reset:  # Rbh adds to the h gate's input like Wbh
            return add_values(node, wb, rb)
        zr = add_values(node, columns(node, wb, 0, 2 * hidden), columns(node, rb, 0, 2 * hidden))
        return concat_values(node, [zr, columns(node, wb, 2 * hidden, 3 * hidden)])

    def cell_of(d: int) -> Cell:
        reset_bias = None
        if before_reset:
            found = biases(node, d, 3 * hidden)
            zeros = np.zeros(hidden, dtype(rec.x))
            rbh = zeros if found is None else columns(node, found[1], 2 * hidden, 3 * hidden)
            reset_bias = as_ssa(node, rbh, rec.x, [hidden])
        return gru_cell(rec, acts[d], d, reset_bias)

    return rec.run(cell_of, bias_of, states=1)


@converts("RNN", since=7)
def rnn(node: Node) -> Sequence[Value | None]:
    rec = Recurrence.of(node, gates=1)
    acts = activations(node, ["Tanh"], rec.directions)

    def bias_of(d: int) -> Value | None:
        found = biases(node, d, rec.hidden)
        return None if found is None else add_values(node, *found)

    def cell_of(d: int) -> Cell:
        return rnn_cell(rec, acts[d], rec.recurrent_weight(d, 0, rec.gates))

    return rec.run(cell_of, bias_of, states=1)
