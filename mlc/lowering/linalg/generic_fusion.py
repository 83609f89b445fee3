"""
The mechanics of fusing `linalg.generic`s on tensors, for `linalg-fuse-elementwise`
(`mlc.lowering.linalg.linalg_fuse_elementwise` decides what to fuse and when): the maps
through which a consumer sees a producer's loops, and the fused generic built from
both, its inputs deduplicated and the bodies merged into one block.

- `fuse_producer`: a producer inlined where a consumer read it, its inputs read through
  `map_j o inv(out_map) o consumer_map`, its `linalg.index` renamed to consumer loops;
  with `keep`, the fused generic also writes the producer's result, as one more output,
  for its other users (MLIR's multi-result producer-consumer fusion);
- `fuse_epilogue`: an elementwise epilogue applied, under an `scf.if`, on the last
  iteration of every reduction loop of the contraction it finishes (the loop indices
  it reads are read in the contraction's block: `linalg.index` verifies only there);
- `fold_transpose`: a consumer reading a transpose's input through the composed map.

The fused generic's location fuses those of the generics it joins, the one it is
named after first (the consumer, or the contraction an epilogue joins), so remarks on
it point there; the ops cloned from the bodies keep their own (`replace_generic`).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    IndexType,
    IntegerAttr,
    TensorType,
    UnknownLoc,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap
from xdsl.rewriter import Rewriter

from mlc.lowering.support.locations import fused_location

PARALLEL = IteratorTypeAttr.parallel()


def maps_of(op: GenericOp) -> list[AffineMap]:
    """The indexing maps of `op`, inputs then outputs."""
    return [m.data for m in op.indexing_maps.data]


def arg_type(value: SSAValue):
    """The type a generic's block argument for `value` takes: a tensor's element type."""
    type_ = value.type
    return type_.element_type if isinstance(type_, TensorType) else type_  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def loop_size(op: GenericOp, loop: int) -> int | None:
    """The static trip count of a loop, from an operand dim that it walks alone."""
    for value, map_ in zip(op.operands, maps_of(op)):
        if not isinstance(value.type, TensorType):
            continue
        for dim, expr in enumerate(map_.results):
            if isinstance(expr, AffineDimExpr) and expr.position == loop:
                size = value.type.get_shape()[dim]
                return size if size >= 0 else None
    return None


def reduction_loops(op: GenericOp) -> list[int]:
    """The loops of `op` that are not parallel."""
    return [i for i, it in enumerate(op.iterator_types.data) if it != PARALLEL]


def loops_seen(producer: GenericOp, consumer: GenericOp, index: int) -> AffineMap | None:
    """
    The producer's loops as seen from the consumer's, when it reads input `index`.

    None when a producer loop is not a plain consumer loop or a constant.
    """
    inverse = maps_of(producer)[-1].inverse_permutation()
    assert inverse is not None
    seen = inverse.compose(maps_of(consumer)[index])
    if any(not isinstance(e, AffineDimExpr | AffineConstantExpr) for e in seen.results):
        return None
    return seen


def forward_dims(producer: GenericOp) -> None:
    """Let `tensor.dim`s of the producer's result read its init, which has the same shape."""
    init = producer.outputs[0]
    for use in list(producer.res[0].uses):
        if isinstance(use.operation, tensor.DimOp):
            use.operation.operands = (init, use.operation.index)


@dataclass
class FusedOperands:
    """The inputs of a generic being built, deduplicated by (value, map)."""

    values: list[SSAValue]
    maps: list[AffineMap]

    def add(self, value: SSAValue, map_: AffineMap) -> int:
        for i, (v, m) in enumerate(zip(self.values, self.maps)):
            if v is value and m == map_:
                return i
        self.values.append(value)
        self.maps.append(map_)
        return len(self.values) - 1


def index_value(dim: int, loops: AffineMap | None) -> Operation:
    """The op giving loop `dim` of a cloned body in the fused generic's loops `loops`
    (None: the same loops): a `linalg.index`, or a constant where the loop is fixed."""
    expr = AffineDimExpr(dim) if loops is None else loops.results[dim]
    if isinstance(expr, AffineDimExpr):
        return IndexOp(expr.position)
    assert isinstance(expr, AffineConstantExpr)
    return arith.ConstantOp(IntegerAttr(expr.value, IndexType()))


def clone_body(
    source: Block,
    target: Block,
    mapping: dict[SSAValue, SSAValue],
    loops: AffineMap | None,
    indices: Block | None = None,
) -> Sequence[SSAValue]:
    """
    Clone `source`'s ops into `target`, renaming through `mapping`; return the yielded values.

    `linalg.index d` (only ever directly in `source`, a generic's body) becomes the
    expression of loop `d` in the fused generic's loops `loops` (None: the same loops),
    made once per loop at the end of `indices` (default `target`), which must be the
    fused generic's body: `linalg.index` verifies only directly inside a generic, so a
    body cloned into an `scf.if` (an epilogue) reads the loops from the generic's block.
    """
    at = target if indices is None else indices
    made: dict[int, SSAValue] = {}
    for op in source.ops:
        if isinstance(op, IndexOp) and (dim := op.dim.value.data) not in made:
            new = index_value(dim, loops)
            at.add_op(new)
            made[dim] = new.results[0]
    yielded: Sequence[SSAValue] = ()
    for op in source.ops:
        if isinstance(op, YieldOp):
            yielded = [mapping.get(v, v) for v in op.operands]
        elif isinstance(op, IndexOp):
            mapping[op.results[0]] = made[op.dim.value.data]
        else:
            target.add_op(op.clone(value_mapper=mapping))
    return yielded


def replace_generic(
    old: GenericOp,
    operands: FusedOperands,
    block: Block,
    out_maps: Sequence[AffineMap],
    iterators: Sequence[IteratorTypeAttr],
    outputs: Sequence[SSAValue] | None = None,
    location: Attribute | None = None,
) -> GenericOp:
    """Put a generic with `block` as body in `old`'s place, at `location` (default:
    `old`'s); body ops cloned from the fused generics keep their own."""
    outs = list(old.outputs) if outputs is None else list(outputs)
    new = GenericOp(
        operands.values,
        outs,
        Region(block),
        [AffineMapAttr(m) for m in (*operands.maps, *out_maps)],
        iterators,
        [v.type for v in outs],
    )
    location = old.location if location is None else location
    for op in new.walk():
        if op is new or isinstance(op.location, UnknownLoc):
            op.location = location
    Rewriter.replace_op(old, new, new_results=list(new.res[: len(old.res)]))
    return new


def fuse_producer(
    producer: GenericOp, consumer: GenericOp, index: int, seen: AffineMap, keep: bool = False
) -> GenericOp:
    """
    Replace `consumer` by a generic (returned) that computes `producer` where it read
    input `index`. With `keep` (`seen` a permutation: the consumer reads each producer
    element once), it also writes the producer's result, as its last output, and the
    producer's other users read that one; they must all come after `consumer`.
    """
    consumer_maps = maps_of(consumer)
    n_in = len(consumer.inputs)
    operands = FusedOperands([], [])
    slots: dict[int, int] = {}  # consumer input -> fused input
    producer_slots: list[int] = []  # the producer's inputs take the place of its result
    for i, value in enumerate(consumer.inputs):
        if i != index:
            slots[i] = operands.add(value, consumer_maps[i])
            continue
        producer_slots = [
            operands.add(v, m.compose(seen)) for v, m in zip(producer.inputs, maps_of(producer))
        ]
    outputs = [*consumer.outputs, *(producer.outputs if keep else [])]
    block = Block(arg_types=[*(arg_type(v) for v in operands.values)])
    for out in outputs:
        block.insert_arg(arg_type(out), len(block.args))
    args = list(block.args)
    p_block, c_block = producer.body.block, consumer.body.block
    p_map = {a: args[s] for a, s in zip(p_block.args, producer_slots)}
    (value,) = clone_body(p_block, block, p_map, seen)
    c_map = {c_block.args[i]: args[s] for i, s in slots.items()}
    c_map[c_block.args[index]] = value
    for k in range(len(consumer.outputs)):
        c_map[c_block.args[n_in + k]] = args[len(operands.values) + k]
    yielded = clone_body(c_block, block, c_map, None)
    block.add_op(YieldOp(*yielded, *([value] if keep else [])))
    out_maps = consumer_maps[n_in:] + ([maps_of(producer)[-1].compose(seen)] if keep else [])
    location = fused_location([consumer, producer])
    iterators = list(consumer.iterator_types.data)
    fused = replace_generic(consumer, operands, block, out_maps, iterators, outputs, location)
    if keep:
        producer.res[0].replace_all_uses_with(fused.res[-1])
    return fused


def last_iteration(contraction: GenericOp, block: Block) -> SSAValue:
    """Append to `block` an `i1` that is true on the last iteration of every reduction loop."""
    condition: SSAValue | None = None
    for loop in reduction_loops(contraction):
        size = loop_size(contraction, loop)
        assert size is not None
        last = arith.ConstantOp(IntegerAttr(size - 1, IndexType()))
        index = IndexOp(loop)
        is_last = arith.CmpiOp(index.result, last.result, "eq")
        block.add_ops([last, index, is_last])
        if condition is not None:
            is_last = arith.AndIOp(condition, is_last.result)
            block.add_op(is_last)
        condition = is_last.results[0]
    assert condition is not None
    return condition


def fuse_epilogue(contraction: GenericOp, epilogue: GenericOp, index: int) -> None:
    """Replace `epilogue` by `contraction` applying it on the last reduction iteration."""
    k_maps, e_maps = maps_of(contraction), maps_of(epilogue)
    inverse = e_maps[index].inverse_permutation()
    assert inverse is not None
    seen = inverse.compose(k_maps[-1])  # epilogue loops in contraction loops
    operands = FusedOperands([], [])
    k_slots = [operands.add(v, m) for v, m in zip(contraction.inputs, k_maps)]
    e_slots = {
        i: operands.add(v, e_maps[i].compose(seen))
        for i, v in enumerate(epilogue.inputs)
        if i != index
    }
    out = contraction.outputs[0]
    block = Block(arg_types=[*(arg_type(v) for v in operands.values), arg_type(out)])
    args = list(block.args)
    k_block, e_block = contraction.body.block, epilogue.body.block
    k_map = {a: args[s] for a, s in zip(k_block.args, k_slots)}
    k_map[k_block.args[-1]] = args[-1]
    (accumulated,) = clone_body(k_block, block, k_map, None)
    condition = last_iteration(contraction, block)
    then_block = Block()
    e_map = {e_block.args[i]: args[s] for i, s in e_slots.items()}
    e_map[e_block.args[index]] = accumulated
    (finished,) = clone_body(e_block, then_block, e_map, seen, indices=block)
    then_block.add_op(scf.YieldOp(finished))
    else_block = Block([scf.YieldOp(accumulated)])
    branch = scf.IfOp(condition, [accumulated.type], [then_block], [else_block])
    block.add_ops([branch, YieldOp(branch.results[0])])
    replace_generic(
        epilogue,
        operands,
        block,
        k_maps[-1:],
        list(contraction.iterator_types.data),
        contraction.outputs,
        location=fused_location([contraction, epilogue]),  # remarks name the contraction
    )
    Rewriter.erase_op(contraction)


def fold_transpose(producer: GenericOp, consumer: GenericOp, index: int) -> None:
    """Let `consumer` read the producer's input through the composed map instead."""
    seen = loops_seen(producer, consumer, index)
    assert seen is not None  # plain consumer maps see plain producer loops
    maps = maps_of(consumer)
    maps[index] = maps_of(producer)[0].compose(seen)
    consumer.operands = [
        producer.inputs[0] if n == index else v for n, v in enumerate(consumer.operands)
    ]
    consumer.properties["indexing_maps"] = ArrayAttr(AffineMapAttr(m) for m in maps)
