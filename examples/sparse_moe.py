"""
A Mixtral-style sparse mixture-of-experts layer, as ONNX and as a traced function.

A router scores each token against every expert, `TopK` keeps the k best, a softmax
over those k weighs them, and each expert's MLP (SiLU between two matmuls) runs only on
the tokens routed to it: their positions come from `NonZero`, their rows from `Gather`,
and the weighted results are added back at those rows by a scatter with reduction add.
How many tokens an expert gets is known only when the layer runs.

    sparse_moe(exporter)      the ONNX graph torch's exporter writes for the layer
                              (`bench/zoo.py`'s `moe_sparse`): "torchscript" (opset 17:
                              NonZero, Transpose, Split, Squeeze, Gather on flat
                              indices, ScatterElements add) or "dynamo" (opset 18:
                              NonZero, Transpose, Gather, GatherND, ScatterND add)
    reference(x, weights)     the layer in numpy
    routed(x, *weights)       the layer written with `mlc.ops` for `mlc.jit`

`python examples/sparse_moe.py` compiles both graphs and the traced layer and checks each
against numpy.
"""

import sys
from dataclasses import dataclass

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import mlc
from mlc import ops


@dataclass
class Weights:
    """Linear weights as torch stores them ([out, in])."""

    router: np.ndarray  # [experts, dim]
    up: list[np.ndarray]  # [hidden, dim] per expert
    down: list[np.ndarray]  # [dim, hidden] per expert


def random_weights(dim: int, hidden: int, experts: int, seed: int = 0) -> Weights:
    rng = np.random.default_rng(seed)

    def linear(out: int, fan_in: int) -> np.ndarray:
        bound = 1.0 / np.sqrt(fan_in)
        return rng.uniform(-bound, bound, (out, fan_in)).astype(np.float32)

    return Weights(
        linear(experts, dim),
        [linear(hidden, dim) for _ in range(experts)],
        [linear(dim, hidden) for _ in range(experts)],
    )


def reference(x: np.ndarray, w: Weights, k: int = 2, capacity: int | None = None) -> np.ndarray:
    """
    The layer in numpy, in float64: every token through its k experts. With a
    `capacity`, an expert takes the first `capacity` of its (token, choice) pairs in
    token order and drops the rest, as `routed` does.
    """
    tokens = x.reshape(-1, x.shape[-1]).astype(np.float64)
    logits = tokens @ w.router.T
    chosen = np.argsort(-logits, axis=-1, kind="stable")[:, :k]
    top = np.take_along_axis(logits, chosen, -1)
    gate = np.exp(top - top.max(-1, keepdims=True))
    gate /= gate.sum(-1, keepdims=True)
    out = np.zeros_like(tokens)
    for e, (up, down) in enumerate(zip(w.up, w.down, strict=True)):
        token, slot = np.nonzero(chosen == e)
        if capacity is not None:
            token, slot = token[:capacity], slot[:capacity]
        u = tokens[token] @ up.T
        np.add.at(out, token, (u / (1 + np.exp(-u))) @ down.T * gate[token, slot, None])
    return out.reshape(x.shape).astype(np.float32)


def routed(x, router, up, down, k: int = 2, capacity: int | None = None):
    """
    The layer on `x` [tokens, dim] in `mlc.ops` (`router` [dim, experts], `up`
    [experts, dim, hidden], `down` [experts, hidden, dim]), with static shapes: each
    expert gets `capacity` slots (every token by default, so none is dropped; fewer, as
    Switch and GShard do, and the experts' matmuls shrink to `experts * capacity` rows
    while the tokens past an expert's capacity are dropped). A (token, choice) pair's
    slot is its rank among its expert's pairs (an exclusive `cumsum` of the one-hot
    choices), the tokens are gathered into `[experts, capacity, dim]` (`take` of a
    slot-to-token table written by `put_along_axis`), the experts run as one batched
    matmul, and the gated rows are added back (`scatter_add`).
    """
    n, dim = x.shape
    experts = router.shape[1]
    capacity = n if capacity is None else capacity
    top, chosen = ops.top_k(x @ router, k)
    gate = ops.softmax(top).reshape(n * k)
    expert = chosen.reshape(n * k, 1)
    onehot = ops.cast(ops.equal(expert, np.arange(experts)), np.int64)
    rank = ops.sum((ops.cumsum(onehot, axis=0) - onehot) * onehot, axis=1)
    kept = rank < capacity
    spare = experts * capacity  # one slot past the end takes the dropped pairs
    slot = ops.where(kept, expert.reshape(n * k) * capacity + rank, spare)
    token = np.repeat(np.arange(n), k)
    table = ops.put_along_axis(np.full(spare + 1, n), slot, token, axis=0)[:spare]
    padded = ops.concatenate([x, np.zeros((1, dim), x.dtype)], axis=0)  # row n: zeros
    rows = ops.take(padded, table, axis=0).reshape(experts, capacity, dim)
    u = rows @ up
    h = (u * ops.sigmoid(u)) @ down
    weight = ops.put_along_axis(np.zeros(spare + 1, np.float32), slot, gate, axis=0)[:spare]
    h = h.reshape(spare, dim) * weight.reshape(spare, 1)
    at = ops.take(table.reshape(spare, 1), np.zeros(dim, np.int64), axis=1)
    out = ops.scatter_add(np.zeros((n + 1, dim), np.float32), at, h, axis=0)
    return out[:n]


def stacked(w: Weights) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`routed`'s weight arguments: router [dim, experts], up and down per expert."""
    up = np.stack([u.T for u in w.up])
    down = np.stack([d.T for d in w.down])
    return np.ascontiguousarray(w.router.T), up, down


class _Graph:
    def __init__(self) -> None:
        self.nodes: list[onnx.NodeProto] = []
        self.initializers: list[onnx.TensorProto] = []

    def const(self, name: str, data: np.ndarray) -> str:
        self.initializers.append(numpy_helper.from_array(data, name))
        return name

    def node(self, op: str, inputs: list[str], name: str, outputs: int = 1, **attrs) -> str:
        names = [name] if outputs == 1 else [f"{name}:{i}" for i in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, names, name=name, **attrs))
        return names[0]


def sparse_moe(exporter: str, w: Weights | None = None, k: int = 2) -> onnx.ModelProto:
    """The layer on `x` [batch, sequence, dim] (both dynamic) as `exporter` writes it."""
    w = w or random_weights(16, 32, 4)
    experts, dim = w.router.shape
    dynamo = exporter == "dynamo"
    g = _Graph()
    tokens = g.node("Reshape", ["x", g.const("flat_shape", np.array([-1, dim]))], "tokens")
    if dynamo:
        router = g.node("Transpose", [g.const("router.weight", w.router)], "router.t")
    else:
        router = g.const("router.weight.t", np.ascontiguousarray(w.router.T))
    logits = g.node("MatMul", [tokens, router], "router")
    top = g.node("TopK", [logits, g.const("k", np.array([k]))], "topk", outputs=2, axis=-1)
    chosen = "topk:1"
    gate = g.node("Softmax", [top], "gate", axis=-1)
    out = g.node(
        "ConstantOfShape",
        [g.node("Shape", [tokens], "tokens.shape")],
        "zeros",
        value=numpy_helper.from_array(np.zeros(1, np.float32)),
    )
    flat_gate = g.node("Reshape", [gate, g.const("minus_one", np.array([-1]))], "gate.flat")
    for e in range(experts):
        p = f"experts.{e}"
        mask = g.node("Equal", [chosen, g.const(f"{p}.id", np.array(e))], f"{p}.mask")
        where = g.node("Transpose", [g.node("NonZero", [mask], f"{p}.nonzero")], f"{p}.t")
        if dynamo:
            token = g.node("Gather", [where, g.const(f"{p}.c0", np.array(0))], f"{p}.token", axis=1)
            slot = g.node("Gather", [where, g.const(f"{p}.c1", np.array(1))], f"{p}.slot", axis=1)
        else:
            g.node(
                "Split", [where, g.const(f"{p}.split", np.array([1, 1]))], f"{p}.split", 2, axis=1
            )
            one = g.const(f"{p}.axis", np.array([1]))
            token = g.node("Squeeze", [f"{p}.split:0", one], f"{p}.token")
            slot = g.node("Squeeze", [f"{p}.split:1", one], f"{p}.slot")
        rows = g.node("Gather", [tokens, token], f"{p}.rows", axis=0)
        h = _expert_mlp(g, rows, w, e, dynamo)
        last = g.const(f"{p}.last", np.array([-1]))
        if dynamo:  # weights[token, slot]: GatherND on the stacked pair
            pair = [g.node("Unsqueeze", [i, last], f"{i}.pair") for i in (token, slot)]
            pairs = g.node("Concat", pair, f"{p}.pairs", axis=-1)
            weight = g.node("GatherND", [gate, pairs], f"{p}.weight")
        else:  # weights[token, slot]: Gather on the flat index token * k + slot
            flat = g.node("Mul", [token, g.const(f"{p}.k", np.array(k))], f"{p}.flat")
            flat = g.node("Add", [flat, slot], f"{p}.index")
            weight = g.node("Gather", [flat_gate, flat], f"{p}.weight", axis=0)
        weighted = g.node("Mul", [h, g.node("Unsqueeze", [weight, last], f"{p}.w")], f"{p}.out")
        at = g.node("Unsqueeze", [token, last], f"{p}.at")
        if dynamo:  # index_add_ as index_put(accumulate=True)
            out = g.node("ScatterND", [out, at, weighted], f"{p}.add", reduction="add")
        else:  # index_add_: the index expanded to the source's shape
            shape = g.node("Shape", [weighted], f"{p}.shape")
            at = g.node("Expand", [at, shape], f"{p}.expand")
            out = g.node(
                "ScatterElements", [out, at, weighted], f"{p}.add", axis=0, reduction="add"
            )
    y = g.node("Reshape", [out, g.node("Shape", ["x"], "x.shape")], "y")
    graph = helper.make_graph(
        g.nodes,
        f"sparse_moe_{exporter}",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", dim])],
        [helper.make_tensor_value_info(y, TensorProto.FLOAT, ["batch", "sequence", dim])],
        g.initializers,
    )
    opset = 18 if dynamo else 17
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def _expert_mlp(g: _Graph, rows: str, w: Weights, e: int, dynamo: bool) -> str:
    """down(silu(up(rows))), the weights transposed as the exporter leaves them."""
    p = f"experts.{e}"
    matrices = []
    for part, value in (("up", w.up[e]), ("down", w.down[e])):
        if dynamo:
            name = g.const(f"{p}.{part}.weight", value)
            matrices.append(g.node("Transpose", [name], f"{p}.{part}.t"))
        else:
            matrices.append(g.const(f"{p}.{part}.weight.t", np.ascontiguousarray(value.T)))
    u = g.node("MatMul", [rows, matrices[0]], f"{p}.up")
    silu = g.node("Mul", [u, g.node("Sigmoid", [u], f"{p}.sigmoid")], f"{p}.silu")
    return g.node("MatMul", [silu, matrices[1]], f"{p}.down")


def main() -> int:
    rng = np.random.default_rng(0)
    w = random_weights(16, 32, 4)
    x = rng.standard_normal((2, 7, 16)).astype(np.float32)
    want = reference(x, w)
    for exporter in ("torchscript", "dynamo"):
        got = mlc.compile(sparse_moe(exporter, w))(x)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
        print(f"sparse MoE, {exporter} graph: matches numpy")
    tokens = x.reshape(14, 16)
    for capacity in (None, 4):
        layer = mlc.jit(lambda x, r, u, d, c=capacity: routed(x, r, u, d, capacity=c))
        got = layer(tokens, *stacked(w))
        np.testing.assert_allclose(
            got, reference(tokens, w, capacity=capacity), rtol=1e-4, atol=1e-5
        )
        print(f"sparse MoE, traced, capacity {capacity or 'all'}: matches numpy")
    return 0


if __name__ == "__main__":
    sys.exit(main())
