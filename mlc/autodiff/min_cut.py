"""
Which forward values a backward program keeps, and which it recomputes: a minimum s-t
cut over the joint forward/backward graph, as functorch's min-cut rematerialisation
partitioner finds it.

Every forward value `v` is an edge `v.in -> v.out` whose capacity is the bytes it would
take to save it (`cost_model.residual_bytes`); an op joins its operands' `out` nodes to
its results' `in` nodes with uncut edges. The source feeds the primal arguments and every
forward op that may not be recomputed (`cost_model.recompute_refusal`: a matmul, a
convolution, a large reduction, a loop, an op with side effects) where the forward needs
it anyway; the backward ops (those that read a cotangent) drain into the sink. A cut
separating them is a set of values to save from which the backward recomputes the rest;
the minimum cut saves the fewest bytes:

    x ──► exp ──► tanh ──► mul ──► (backward reads all three)
    saving x costs |x|: the backward recomputes exp and tanh from it, where saving what
    it reads would cost 3 |x|.

Recomputing is capped in FLOPs (`cost_model.flops`): the ops the backward recomputes
never cost more than `max_recompute` times the forward's own FLOPs. While a cut exceeds
the cap, its costliest recomputed op is refused (saved from instead) and the cut is
found again, as functorch bans ops from recomputation.

A forward op the forward's own results do not need (a transpose only a backward rule
made, the taping copy of a loop) goes to the backward side when its inputs are cheaper
to keep than its results: it runs once either way.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xdsl.ir import Operation, SSAValue
from xdsl.traits import is_side_effect_free

from mlc import cost_model

if TYPE_CHECKING:
    import networkx as nx


def nested_operands(op: Operation) -> list[SSAValue]:
    """The values `op` and the ops in its regions read from outside `op`."""
    if not op.regions:
        return list(op.operands)
    inside = {r for inner in op.walk() for r in inner.results} | {
        a for region in op.regions for block in region.blocks for a in block.args
    }
    return [v for inner in op.walk() for v in inner.operands if v not in inside]


@dataclass
class Cut:
    """The split of one joint function's ops (each list in program order)."""

    saved: list[SSAValue]
    """The values the forward returns for the backward (residuals)."""
    forward: list[Operation]
    """The ops of the forward function."""
    backward: list[Operation]
    """The ops of the backward function."""
    refusals: dict[Operation, str] = field(default_factory=dict[Operation, str])
    """Why each op the cut could not recompute was not."""
    read: list[SSAValue] = field(default_factory=list[SSAValue])
    """The forward values the backward ops read directly (what saving all would keep)."""
    capped: dict[Operation, str] = field(default_factory=dict[Operation, str])
    """The ops the FLOP cap kept from being recomputed, and why."""

    @property
    def recomputed(self) -> list[Operation]:
        forward = set(self.forward)
        return [op for op in self.backward if op in forward]

    @property
    def saved_bytes(self) -> int:
        return sum(cost_model.residual_bytes(v) or 0 for v in self.saved)

    @property
    def read_bytes(self) -> int:
        return sum(cost_model.residual_bytes(v) or 0 for v in self.read)


class Unsplittable(Exception):
    """The backward needs a value that can be neither saved nor recomputed."""

    def __init__(self, value: SSAValue):
        super().__init__(str(value.type))
        self.value = value


def backward_ops(ops: Sequence[Operation], cotangents: Sequence[SSAValue]) -> set[Operation]:
    """The ops that read a cotangent, directly or through other such ops."""
    tainted = set(cotangents)
    found: set[Operation] = set()
    for op in ops:
        if any(v in tainted for v in nested_operands(op)):
            found.add(op)
            tainted.update(op.results)
    return found


def ancestors(
    ops: Sequence[Operation], roots: Sequence[SSAValue], stop: set[SSAValue]
) -> list[Operation]:
    """The ops `roots` are computed from, not looking through `stop`, in program order."""
    needed = {v for v in roots if v not in stop}
    chosen: list[Operation] = []
    for op in reversed(ops):
        if any(r in needed for r in op.results):
            chosen.append(op)
            needed.update(v for v in nested_operands(op) if v not in stop)
    return chosen[::-1]


DEFAULT_MAX_RECOMPUTE = 1.0  # of the forward's FLOPs: recomputing the whole forward at most


def _flops(ops: Sequence[Operation]) -> int:
    return sum(cost_model.flops(op) or 0 for op in ops)


def min_cut(
    ops: Sequence[Operation],
    primals: Sequence[SSAValue],
    cotangents: Sequence[SSAValue],
    values: Sequence[SSAValue],
    grads: Sequence[SSAValue],
    max_recompute: float = DEFAULT_MAX_RECOMPUTE,
) -> Cut:
    """
    The cut of the joint program `ops` (one block, without its terminator) that returns
    `values` (forward) and `grads` (backward) from `primals` and `cotangents`, its
    recomputed ops costing at most `max_recompute` times the forward's FLOPs.
    """
    backward = backward_ops(ops, cotangents)
    forward_flops = _flops([op for op in ops if op not in backward])
    cap = max_recompute * forward_flops
    banned: dict[Operation, str] = {}
    while True:
        cut = _cut_once(ops, primals, cotangents, values, grads, backward, banned)
        recomputed = [op for op in cut.recomputed if (cost_model.flops(op) or 0) > 0]
        spent = _flops(recomputed)
        if spent <= cap or not recomputed:
            cut.capped = dict(banned)
            return cut
        costliest = max(recomputed, key=lambda op: cost_model.flops(op) or 0)
        banned[costliest] = (
            f"recomputing it would bring the backward's recomputation to {spent} FLOPs, "
            f"over the cap of {cap:g} ({max_recompute:g} of the forward's {forward_flops})"
        )


def _cut_once(
    ops: Sequence[Operation],
    primals: Sequence[SSAValue],
    cotangents: Sequence[SSAValue],
    values: Sequence[SSAValue],
    grads: Sequence[SSAValue],
    backward: set[Operation],
    banned: dict[Operation, str],
) -> Cut:
    scale = len(primals) + sum(len(op.results) for op in ops) + 1
    flow = _FlowGraph(backward, set(primals), set(cotangents), scale)
    for a in primals:
        flow.graph.add_edge("source", ("in", a))
        flow.value_edge(a)
    required = set(ancestors(ops, values, set()))
    for op in ops:
        flow.add(op, op in required, banned.get(op))
    for g in grads:  # a gradient the cotangents do not reach (zeros) is the backward's too
        flow.drain(g)
    saved: list[SSAValue] = []
    if "sink" in flow.graph:
        import networkx as nx  # imported when a function is split: it costs `import mlc` 0.1 s

        try:
            size, (source_side, _) = nx.minimum_cut(flow.graph, "source", "sink")
        except nx.NetworkXUnbounded:
            size, source_side = math.inf, set[object]()
        if size == math.inf:
            raise Unsplittable(_unsaveable(flow.graph))
        candidates = [*primals, *(r for op in ops for r in op.results)]
        saved = [v for v in candidates if _cut(v, source_side)]
    forward_ops = [op for op in ops if op not in backward]
    chosen = set(ancestors(forward_ops, [*values, *saved], set()))
    forward = [op for op in forward_ops if op in chosen or not is_side_effect_free(op)]
    backward_list = ancestors(ops, list(grads), {*saved, *cotangents})
    return Cut(saved, forward, backward_list, flow.refusals, list(flow.read))


class _FlowGraph:
    """The flow network of the module docstring, built op by op."""

    def __init__(
        self, backward: set[Operation], primals: set[SSAValue], cts: set[SSAValue], scale: int
    ):
        import networkx as nx

        self.graph = nx.DiGraph()
        self.backward, self.primals, self.cotangents = backward, primals, cts
        self.scale = scale
        self.refusals: dict[Operation, str] = {}
        self.read: dict[SSAValue, None] = {}

    def value_edge(self, v: SSAValue) -> None:
        size = cost_model.residual_bytes(v)
        if size is None:  # no capacity: infinite
            self.graph.add_edge(("in", v), ("out", v))
            return
        # Between cuts of equal bytes, the one of fewer values, and of arguments rather
        # than values computed from them (the caller holds its arguments anyway): the
        # scale keeps every cut of fewer bytes cheaper than any of more.
        tie = 0 if v in self.primals else 1
        self.graph.add_edge(("in", v), ("out", v), capacity=size * self.scale + tie)

    def drain(self, v: SSAValue) -> None:
        """If `v` is a forward value, the backward reads it."""
        if v in self.cotangents or (v not in self.primals and v.owner in self.backward):
            return
        self.graph.add_edge(("out", v), "sink")
        self.read[v] = None

    def add(self, op: Operation, required: bool, banned: str | None = None) -> None:
        if op in self.backward:
            for v in nested_operands(op):
                self.drain(v)
            return
        for v in nested_operands(op):
            self.graph.add_edge(("out", v), ("op", op))
        for r in op.results:
            self.graph.add_edge(("op", op), ("in", r))
            self.value_edge(r)
        refusal = cost_model.recompute_refusal(op) or banned
        if refusal is None:
            return
        self.refusals[op] = refusal
        # The forward runs it (or, banned, must run it for the backward): keep its results.
        if required or banned is not None or not is_side_effect_free(op):
            self.graph.add_edge("source", ("op", op))


def _cut(v: SSAValue, source_side: set[object]) -> bool:
    return ("in", v) in source_side and ("out", v) not in source_side


def _unsaveable(graph: "nx.DiGraph") -> SSAValue:
    """A value with no capacity (not a tensor) on a path from the source to the sink."""
    import networkx as nx

    residual = nx.DiGraph(
        (u, v) for u, v, attrs in graph.edges(data=True) if "capacity" not in attrs
    )
    path = nx.shortest_path(residual, "source", "sink")
    return next(node[1] for node in reversed(path) if isinstance(node, tuple) and node[0] == "out")
