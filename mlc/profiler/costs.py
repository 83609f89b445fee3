"""
The work of each layer of a profiled program, priced by `mlc.cost_model` on the `ml` ops.

A layer is the kernels that share one list of source ops (`conv1, relu1` for a
convolution fused with its ReLU; a softmax's several passes). Each `ml` op of the
program after the graph passes, found by the sources its location names, is priced
once, on the layer whose sources include all of its own and are the most (the fused
convolution rather than its padding copy, which names `conv1` alone): its FLOPs
(`cost_model.flops`) and its bytes moved (`cost_model.bytes_moved`), less the tensors
that pass between two ops of the same layer, which a fused kernel never stores.
A layer no op is priced on (a padding copy) has no cost; one whose ops have dynamic
shapes has an unknown cost (None), as the cost model says.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from mlc import cost_model
from mlc.dialects.ml import MLOp
from mlc.lowering.support.kernel_sources import source_names


@dataclass
class Cost:
    """FLOPs and bytes moved of a layer (None: some dimension is dynamic)."""

    flops: int | None = 0
    bytes: int | None = 0
    ops: tuple[str, ...] = ()  # the `ml` ops priced here, by name


def _add(total: int | None, part: int | None) -> int | None:
    return None if total is None or part is None else total + part


def owner(sources: tuple[str, ...], layers: Sequence[tuple[str, ...]]) -> int | None:
    """The layer an op of `sources` is priced on: the first of the most sources that
    include all of its own."""
    best: int | None = None
    for index, layer in enumerate(layers):
        if set(sources) <= set(layer) and (best is None or len(layer) > len(layers[best])):
            best = index
    return best


def _internal_bytes(op: Operation, members: set[Operation]) -> int | None:
    """Bytes of `op`'s results that stay inside its layer: the reads by ops of the
    layer, and the write when no op outside reads them."""
    saved: int | None = 0
    for result in op.results:
        readers = [use.operation for use in result.uses]
        inside = sum(1 for reader in readers if reader in members)
        if not inside:
            continue
        size = cost_model.tensor_bytes(result)
        stored = 0 if inside == len(readers) else 1
        saved = _add(saved, None if size is None else size * (inside + 1 - stored))
    return saved


def layer_costs(module: ModuleOp, layers: Sequence[tuple[str, ...]]) -> list[Cost]:
    """The cost of each layer (by its sources) of `module`, an `ml` program."""
    members: list[list[Operation]] = [[] for _ in layers]
    for op in module.walk():
        if isinstance(op, MLOp) and (sources := tuple(source_names(op.location))):
            if (index := owner(sources, layers)) is not None:
                members[index].append(op)
    costs: list[Cost] = []
    for ops in members:
        inside = set(ops)
        cost = Cost(ops=tuple(op.name for op in ops))
        for op in ops:
            cost.flops = _add(cost.flops, cost_model.flops(op))
            moved = cost_model.bytes_moved(op)
            saved = _internal_bytes(op, inside)
            cost.bytes = _add(cost.bytes, None if moved is None or saved is None else moved - saved)
        costs.append(cost)
    return costs
