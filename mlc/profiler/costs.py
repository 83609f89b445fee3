"""
The work of each layer of a profiled program, priced by `mlc.cost_model` on the `ml` ops.

A layer is the kernels that share one list of source ops (`conv1, relu1` for a
convolution fused with its ReLU; a softmax's several passes). Each `ml` op of the
program after the graph passes is priced once: its FLOPs (`cost_model.flops`) and its
bytes moved (`cost_model.bytes_moved`), less the tensors that pass between two ops of
the same layer, which a fused kernel never stores. A layer no op is priced on (a
padding copy) has no cost; one whose ops have dynamic shapes has an unknown cost
(None), as the cost model says.

Which layer an op is priced on is found by lowering it: each op of a copy of the
program is tagged with a location of its own (`TAG`, beside its sources), the copy
goes through the target's `linalg` stage, and the ops there say which `ml` ops each
fused kernel came from (its tags) and which layer it is (its other sources). Source
names alone cannot tell: in traced code a line's forward matmul and the two matmuls
of its gradient share `file:line`, and a backward kernel fused with an optimiser's
update names both lines. An op is priced on the layer, among those of its kernels,
with the most sources (the fused convolution rather than its padding copy, which
names `conv1` alone); an op none of whose kernels is found (a view, or a program that
does not lower here) on the first layer of the most sources that include all of its
own.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import (
    FunctionType,
    FusedLoc,
    ModuleOp,
    NameLoc,
    NoneAttr,
    StringAttr,
    TensorType,
    UnknownLoc,
)
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation
from xdsl.rewriter import Rewriter

from mlc import cost_model, pipeline
from mlc.diagnostics import DiagnosticError
from mlc.dialects.ml import MLOp
from mlc.lowering.graph.shape_inference import refine_functions
from mlc.lowering.support.kernel_sources import source_names

TAG = "mlc.profiler.op#"  # prefix of the location naming the n-th `ml` op in the copy


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


def _tagged(sources: Sequence[str]) -> tuple[set[int], tuple[str, ...]]:
    """The op numbers a list of sources tags, and the sources that are not tags."""
    tags = {int(name[len(TAG) :]) for name in sources if name.startswith(TAG)}
    return tags, tuple(name for name in sources if not name.startswith(TAG))


def _plain(location: object) -> bool:
    """A fusion of locations without metadata (flattened when fused again)."""
    return isinstance(location, FusedLoc) and isinstance(location.metadata, NoneAttr)


def _lowered_ops(op: Operation) -> Iterator[Operation]:
    """The ops of a lowered program that stand for work or data: not the scalar ops of
    a generic's body, which share its location."""
    for region in op.regions:
        for block in region.blocks:
            for inner in block.ops:
                yield inner
                if not isinstance(inner, GenericOp):
                    yield from _lowered_ops(inner)


def kernel_layers(
    module: ModuleOp, ops: Sequence[Operation], layers: Sequence[tuple[str, ...]], target: str
) -> list[set[int]]:
    """
    For each of `ops` (the `ml` ops of `module`), the layers the ops lowered from it
    land in: a tagged copy of `module` through `target`'s `linalg` stage (module
    docstring). A lowered op whose sources are a layer's is in that layer, else in the
    layer of the most sources that include them (a row block fused later). Empty sets
    where the copy does not lower (the fallback then decides).
    """
    found: list[set[int]] = [set() for _ in ops]
    index = {op: n for n, op in enumerate(ops)}
    copy = module.clone()
    for original, twin in zip(module.walk(), copy.walk(), strict=True):
        if original in index:
            parts = twin.location.locations.data if _plain(twin.location) else [twin.location]
            tag = NameLoc(StringAttr(f"{TAG}{index[original]}"), UnknownLoc())
            twin.location = FusedLoc([*parts, tag], NoneAttr())
    try:
        pipeline.run_stage(copy, "linalg", verify=False, target=target)
    except DiagnosticError:
        return found
    # A kernel lists its sources in the order its nested ops give them: match as sets.
    exact = {frozenset(layer): n for n, layer in reversed(list(enumerate(layers)))}
    for lowered in _lowered_ops(copy):
        tags, sources = _tagged(source_names(lowered.location))
        if not tags or not sources:
            continue
        layer = exact.get(frozenset(sources))
        if layer is None:
            layer = owner(sources, layers)
        if layer is not None:
            for tag in tags:
                found[tag].add(layer)
    return found


def at_call_shapes(module: ModuleOp, function: str, args: Sequence[object]) -> ModuleOp:
    """
    A copy of `module` whose `function` takes tensors of `args`' shapes, its dims refined
    through every op (`refine_functions`), so that a program compiled with dynamic dims
    (a model's batch) is priced at the sizes it ran with. `module` where nothing is
    dynamic or the arguments do not fit the signature.
    """
    copy = module.clone()
    entry = next(
        (f for f in copy.walk() if isinstance(f, func.FuncOp) and f.sym_name.data == function),
        None,
    )
    if entry is None or len(entry.args) != len(args):
        return module
    changed = False
    for arg, value in zip(entry.args, args, strict=True):
        shape = tuple(getattr(value, "shape", ()))
        type_ = arg.type
        if not isinstance(type_, TensorType) or type_.get_shape() == shape:
            continue
        declared = type_.get_shape()
        if len(declared) != len(shape) or any(d >= 0 and d != s for d, s in zip(declared, shape)):
            return module  # not a call this signature takes
        Rewriter.replace_value_with_new_type(arg, TensorType(type_.element_type, shape))
        changed = True
    if not changed:
        return module
    outputs = entry.function_type.outputs.data
    entry.function_type = FunctionType.from_lists([a.type for a in entry.args], list(outputs))
    refine_functions(copy)
    return copy


def layer_costs(
    module: ModuleOp, layers: Sequence[tuple[str, ...]], target: str = "cpu"
) -> list[Cost]:
    """The cost of each layer (by its sources) of `module`, an `ml` program for `target`."""
    ops = [op for op in module.walk() if isinstance(op, MLOp)]
    lowered = kernel_layers(module, ops, layers, target)
    members: list[list[Operation]] = [[] for _ in layers]
    for op, candidates in zip(ops, lowered, strict=True):
        if candidates:
            index = max(sorted(candidates), key=lambda n: len(layers[n]))
        elif sources := tuple(source_names(op.location)):
            index = owner(sources, layers)
        else:
            index = None
        if index is not None:
            members[index].append(op)
    costs: list[Cost] = []
    for ops_of_layer in members:
        inside = set(ops_of_layer)
        cost = Cost(ops=tuple(op.name for op in ops_of_layer))
        for op in ops_of_layer:
            cost.flops = _add(cost.flops, cost_model.flops(op))
            moved = cost_model.bytes_moved(op)
            saved = _internal_bytes(op, inside)
            cost.bytes = _add(cost.bytes, None if moved is None or saved is None else moved - saved)
        costs.append(cost)
    return costs
