"""
Fuse elementwise `linalg.generic`s into their consumers, and epilogues into contractions.

Level 2 (linalg on tensors), after `convert-ml-to-linalg`. Two rewrites, as in MLIR's
`ElementwiseOpFusion`, after a third that folds transposes into matmuls:

**Producer into consumer.** A generic whose iterators are all parallel and whose one
output map is a permutation (an elementwise op, broadcasts included) is inlined into
a generic that reads its result as an input. The consumer's loops `c` see producer
loop `p` at `inv(out_map) o consumer_map`, so each producer input `j` is read through
`map_j o inv(out_map) o consumer_map`, and `linalg.index` in the producer's body
becomes the consumer loop (or constant) that its loop maps to. The consumer may have
reduction iterators (`sum(exp(x))`). Its output, iterators and loop order are kept.

    %t = generic ins(%a, %b) { mulf }          %r = generic ins(%a, %b, %c) {
    %r = generic ins(%t, %c) { addf }    ==>         %t = mulf ; addf %t, %c }

A producer read by one consumer, element for element, is always fused and erased.
Otherwise (several users, or a broadcasting read that repeats it) the cost model
(`mlc.cost_model.recompute_is_cheaper`) weighs recomputing it in every consumer
against materialising it once, and `--remarks` says which it chose and why.

**Epilogue into a contraction.** An elementwise generic that is the only user of a
generic with reduction iterators (matmul, conv) becomes a "reduce, then map" body of
the contraction: the accumulation runs as before, and on the last iteration of every
reduction loop an `scf.if` applies the epilogue to the finished value before it is
stored. The epilogue's other inputs become inputs of the contraction, read through
its output map.

    acc' = acc + a * b
    out  = scf.if (k == K-1) { relu(acc' + bias) } else { acc' }

It stays one `linalg.generic`, so bufferize, `convert-linalg-to-loops` and
`convert-to-llvm` need nothing new. It is done only where the innermost loop is
parallel (matmul's `(i, k, j)`, conv's `(..., kw, ow)`): the condition is then
invariant in the innermost loop, LLVM unswitches it, and the hot loop stays the plain
vectorised accumulation. The epilogue must keep the element type.

**Transposes into matmuls.** First of all, a copy through a permutation (what
`ml.transpose` lowers to: ONNX Gemm's transA/transB, `x @ w.T`, attention's heads)
read as a factor of a matmul-like contraction (one reduction loop, `c + a * b`, plain
maps) is folded into that operand's map, `in_map o inv(out_map) o consumer_map`, and
erased once unread: linalg-tile's kernel packs its operands anyway and absorbs the
layout there (`mlc.lowering.linalg.contraction`), so no transposed copy is materialised.

    %t = generic ins(%w) (d0, d1) -> (d1, d0)      %m = generic ins(%x, %w)
    %m = generic ins(%x, %t) (k, j)          ==>         (i, k, j) -> (j, k) for %w

Both rewrites only touch generics in the same block, with tensor results, whose
outputs' block arguments the producer does not read, and only where every loop of the
fused generic is still read on its own (a plain `d_i`) by some operand: a producer
without inputs (a flip, read through `tensor.extract`) may be all that gives a conv's
kernel loops their size. Unsupported IR is left alone.

This module decides what is fused and when; building the fused generics (their maps,
inputs and merged bodies) is `mlc.lowering.linalg.generic_fusion`.
"""

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import AnyFloat, ModuleOp, TensorType
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Block, Operation
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from mlc import cost_model
from mlc.diagnostics import op_remark
from mlc.lowering.linalg.contraction import multiply_add
from mlc.lowering.linalg.generic_fusion import (
    PARALLEL,
    arg_type,
    fold_transpose,
    forward_dims,
    fuse_epilogue,
    fuse_producer,
    loop_size,
    loops_seen,
    maps_of,
    reduction_loops,
)


def is_elementwise(op: GenericOp) -> bool:
    """All-parallel, one tensor result through a permutation, its output value unread."""
    if len(op.res) != 1 or len(op.outputs) != 1 or not isinstance(op.res[0].type, TensorType):
        return False
    if any(it != PARALLEL for it in op.iterator_types.data):
        return False
    out_map = maps_of(op)[-1]
    if out_map.num_symbols or out_map.inverse_permutation() is None:
        return False
    return not op.body.block.args[-1].uses


def repeats(consumer: GenericOp, seen: AffineMap) -> int | None:
    """How often the consumer reads each producer element: its loops `seen` misses."""
    used = {e.position for e in seen.results if isinstance(e, AffineDimExpr)}
    count = 1
    for loop in set(range(seen.num_dims)) - used:
        size = loop_size(consumer, loop)
        if size is None:
            return None
        count *= size
    return count


@dataclass
class Use:
    consumer: GenericOp
    index: int
    seen: AffineMap


def fusable_uses(producer: GenericOp) -> tuple[list[Use], int]:
    """The uses of `producer` it can be fused into, and the number of all its uses."""
    uses: list[Use] = []
    result = producer.res[0]
    for use in result.uses:
        consumer = use.operation
        if (
            isinstance(consumer, GenericOp)
            and consumer.parent_block() is producer.parent_block()
            and consumer.res
            and use.index < len(consumer.inputs)
            and (seen := loops_seen(producer, consumer, use.index)) is not None
            and keeps_loop_sizes(producer, consumer, use.index, seen)
            and not feeds_contraction(consumer, seen)
        ):
            uses.append(Use(consumer, use.index, seen))
    return uses, result.uses.get_length()


def feeds_contraction(consumer: GenericOp, seen: AffineMap) -> bool:
    """
    Whether the consumer is a contraction (matmul, conv) reading each producer element
    more than once: its operands stay plain reads, which the contraction kernels pack
    once, instead of recomputing the producer for every output column. A contraction of
    narrow floats (bf16, f16) keeps them even when read once (a matrix-vector product):
    linalg-tile's kernel, the one that sums them in f32, takes only plain operands.
    """
    reduces = any(it != PARALLEL for it in consumer.iterator_types.data)
    return reduces and (repeats(consumer, seen) != 1 or narrow_contraction(consumer))


def narrow_contraction(op: GenericOp) -> bool:
    """Whether `op` multiplies and accumulates floats narrower than f32."""
    element = arg_type(op.res[0])
    return (
        isinstance(element, AnyFloat)
        and element.bitwidth < 32
        and any(isinstance(inner, arith.MulfOp) for inner in op.body.block.ops)
    )


def keeps_loop_sizes(producer: GenericOp, consumer: GenericOp, index: int, seen: AffineMap) -> bool:
    """
    Whether the fused generic still reads some operand along every loop on its own (a
    plain `d_i` of some map), which is where a loop's size comes from and what makes its
    maps invertible (a producer without inputs, reading through `tensor.extract`, may be
    the only operand that gives a reduction loop its size). A loop seen only inside a
    sum does not count: a convolution's `(oh + kh)` needs the weights' plain `kh`.
    """
    maps = maps_of(consumer)
    kept = [m for i, m in enumerate(maps) if i != index]
    kept += [m.compose(seen) for m in maps_of(producer)[: len(producer.inputs)]]
    plain = {e.position for m in kept for e in m.results if isinstance(e, AffineDimExpr)}
    return plain >= set(range(len(consumer.iterator_types.data)))


def body_flops(op: GenericOp) -> int:
    return sum(cost_model.scalar_op_flops(o) for o in op.body.block.ops)


def streamed_input_bytes(op: GenericOp) -> int:
    """Bytes read per element from inputs that vary with every loop (broadcasts stay cached)."""
    total = 0
    loops = set(range(len(op.iterator_types.data)))
    for value, map_ in zip(op.inputs, maps_of(op)):
        if map_.used_dims() == loops and (size := cost_model.element_bytes(arg_type(value))):
            total += size
    return total


def decide(producer: GenericOp, uses: list[Use], total_uses: int) -> bool:
    """Fuse `producer` into `uses`? Single plain uses always; others by the cost model."""
    reads = [repeats(u.consumer, u.seen) for u in uses]
    if total_uses == 1 and reads == [1]:
        return True
    flops = body_flops(producer)
    result_bytes = cost_model.element_bytes(arg_type(producer.res[0])) or 0
    kept = total_uses > len(uses)
    recompute = cost_model.recompute_is_cheaper(
        flops, streamed_input_bytes(producer), result_bytes, reads, kept
    )
    what = f"{total_uses} uses" if total_uses > 1 else "a broadcasting use"
    if recompute:
        where = "its consumer" if len(uses) == 1 else f"{len(uses)} consumers"
        op_remark(producer, f"recomputed in {where} ({what}, {flops} flops/element)")
    else:
        op_remark(producer, f"materialised: {what}, recomputing ({flops} flops/element) costs more")
    return recompute


def fuse_elementwise_once(block: Block, declined: set[GenericOp], settled: set[Operation]) -> bool:
    """Fuse the first producer of `block` that should be; True if something changed.
    `settled` holds the ops found with nothing to fuse since their consumers last
    changed: they are passed over without being weighed again (a model's block of
    thousands of ops was otherwise rescanned in full after each of its ~100 fusions)."""
    for op in block.ops:
        if op in settled or not isinstance(op, GenericOp) or op in declined:
            continue
        if not is_elementwise(op):
            settled.add(op)
            continue
        forward_dims(op)
        uses, total = fusable_uses(op)
        if not uses:
            settled.add(op)
            continue
        if not decide(op, uses, total):
            declined.add(op)
            continue
        # The producers whose consumers change: those of the fused generics' operands.
        for reader in [op, *(use.consumer for use in uses)]:
            settled.difference_update(value.owner for value in reader.operands)
        # One use at a time: a consumer that reads the producer twice is replaced
        # by the first fusion, and the new generic holds the second read.
        while uses:
            fuse_producer(op, uses[0].consumer, uses[0].index, uses[0].seen)
            uses, _ = fusable_uses(op)
        if not op.res[0].uses:
            Rewriter.erase_op(op)
        return True
    return False


def takes_epilogue(op: Operation) -> bool:
    """
    A one-result reduction generic, innermost loop parallel and wider than one element,
    static reductions of at least one element (an empty one never reaches the last
    iteration that applies the epilogue), no epilogue yet. A matrix-vector product
    (innermost loop of 1) keeps its epilogue apart: its dot-product kernel takes none,
    and the epilogue's own pass over one vector costs little.
    """
    if not isinstance(op, GenericOp) or len(op.res) != 1 or len(op.outputs) != 1:
        return False
    reduced = reduction_loops(op)
    innermost = len(op.iterator_types.data) - 1
    if not reduced or innermost in reduced or loop_size(op, innermost) == 1:
        return False
    if any(isinstance(o, scf.IfOp) for o in op.body.walk()):
        return False
    return all((size := loop_size(op, loop)) is not None and size > 0 for loop in reduced)


def epilogue_input(epilogue: GenericOp) -> int | None:
    """The input of `epilogue` that a contraction produces and that it alone reads, in step."""
    maps = maps_of(epilogue)
    for i, value in enumerate(epilogue.inputs):
        if not takes_epilogue(value.owner) or value.type != epilogue.res[0].type:
            continue
        forward_dims(value.owner)  # pyright: ignore[reportArgumentType]
        reads = [u for u in value.uses if u.operation is epilogue]
        if len(reads) == value.uses.get_length() and all(maps[u.index] == maps[-1] for u in reads):
            return i
    return None


def fuse_epilogue_once(block: Block) -> bool:
    """Fold the first elementwise generic of `block` that finishes a contraction into it."""
    for op in block.ops:
        if not isinstance(op, GenericOp) or not is_elementwise(op):
            continue
        if (index := epilogue_input(op)) is None:
            continue
        contraction = op.inputs[index].owner
        assert isinstance(contraction, GenericOp)
        if contraction.parent_block() is not block:
            continue
        fuse_epilogue(contraction, op, index)
        return True
    return False


def is_transpose(op: GenericOp) -> bool:
    """A copy of its one input through a permutation: what `ml.transpose` lowers to."""
    if not is_elementwise(op) or len(op.inputs) != 1:
        return False
    block = op.body.block
    only = block.first_op
    if not isinstance(only, YieldOp) or list(only.operands) != [block.args[0]]:
        return False
    in_map = maps_of(op)[0]
    return not in_map.num_symbols and in_map.inverse_permutation() is not None


def reads_transposed(consumer: GenericOp, index: int) -> bool:
    """
    Whether input `index` is a factor of a matmul-like contraction (one reduction loop,
    `c + a * b`, operands read at plain dims or constants), which can read it through a
    permuted map: the matmul kernels pack their operands, absorbing the layout there.
    """
    if index > 1 or not consumer.res or multiply_add(consumer.body.block) is None:
        return False
    if sum(it != PARALLEL for it in consumer.iterator_types.data) != 1:
        return False
    return all(
        isinstance(e, AffineDimExpr | AffineConstantExpr)
        for m in maps_of(consumer)
        for e in m.results
    )


def fold_transposes(block: Block) -> None:
    """Fold every transpose of `block` into the matmuls that read it (module docstring)."""
    for op in list(block.ops):
        if not isinstance(op, GenericOp) or not is_transpose(op):
            continue
        forward_dims(op)
        for use in list(op.res[0].uses):
            consumer = use.operation
            if isinstance(consumer, GenericOp) and reads_transposed(consumer, use.index):
                fold_transpose(op, consumer, use.index)
        if not op.res[0].uses:
            Rewriter.erase_op(op)


@dataclass(frozen=True)
class LinalgFuseElementwisePass(ModulePass):
    """Fuse elementwise generics into their consumers and into contractions (see the module)."""

    name = "linalg-fuse-elementwise"

    # Fuse epilogues into contractions. The CPU pipeline turns this off: `linalg-tile`'s
    # packed micro-kernel takes plain contractions only, so a matmul with a fused
    # epilogue would run as untiled loops.
    epilogues: bool = True

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        blocks = {g.parent_block(): None for g in op.walk() if isinstance(g, GenericOp)}
        for block in blocks:
            if block is None:
                continue
            fold_transposes(block)
            declined: set[GenericOp] = set()
            settled: set[Operation] = set()
            while fuse_elementwise_once(block, declined, settled):
                pass
            while self.epilogues and fuse_epilogue_once(block):
                pass
        # The outputs of the generics fused away, and the sizes that only they needed.
        for dead in reversed(
            [o for o in op.walk() if isinstance(o, tensor.EmptyOp | tensor.DimOp)]
        ):
            if not dead.results[0].uses:
                Rewriter.erase_op(dead)
