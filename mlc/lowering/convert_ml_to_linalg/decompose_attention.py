"""
decompose-attention: `ml.attention` becomes a blocked loop with an online softmax.

FlashAttention's schedule on tensors: an `scf.for` over blocks of `block-q` query rows,
inside it an `scf.for` over blocks of `block-k` keys that carries the running row max
`m`, the running sum `l` of `exp(s - m)` and the unnormalised output `acc`:

    for i0 in 0..Sq step BQ:                        q_blk = q[.., i0:i0+rows, :] * scale
      m, l, acc = -inf, 0, 0
      for j0 in 0..kend step BK:                    k_blk, v_blk = k, v[.., j0:j0+cols, :]
        s = q_blk @ k_blkᵀ (+ mask | select(mask, s, -inf)) (causal: -inf past the band)
        m' = max(m, rowmax(s));  m* = m' == -inf ? 0 : m'
        p = exp(s - m*);  a = exp(m - m*)
        l = l * a + rowsum(p);  acc = acc * a + p @ v_blk;  m = m'
      out[.., i0:i0+rows, :] = acc / l

so the scores of one block pair, `(batch..., H, BQ, BK)`, are the largest temporary:
extra memory is O(Sq + Sk) per head, never `Sq * Sk`. With `causal`, key blocks past
the band of the query block are skipped (`kend = min(Sk, i0 + rows + Sk - Sq)`). Every
block has a static size where its length is static: the last block starts at `S - B`
rather than running short, so it overlaps its predecessor (query rows are computed
twice, the same; keys already seen are masked out); a dynamic length gives a last
block of run-time size. Every step is `linalg.generic`s (`attention_step`): the two
contractions, the mask and causal band, the online statistics. f16 and bf16 inputs are
computed in f32 and the result rounded once. Grouped K/V heads are gathered to the query
heads (`h // G`) first: by constant indices where both head counts are static, by
indices computed at run time where either is dynamic (two `?` counts may still differ,
so K and V are gathered even where they turn out equal). A row whose every score is
masked out is NaN (`0 / 0`), as the unfused softmax of a row of -inf is. A mask with a
dynamic dim (maybe 1 at run time) is broadcast to the scores' size first.

Runs at the head of the `linalg` stage, before `convert-ml-to-linalg`.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float16Type,
    Float32Type,
    IndexType,
    ModuleOp,
    TensorType,
    i64,
)
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from mlc import shapes
from mlc.dialects import ml
from mlc.dialects.ml.base import is_bool
from mlc.lowering.convert_ml_to_linalg.attention_step import (
    Emit,
    contraction,
    filled,
    masked,
    normalised,
    online_step,
    static,
)
from mlc.lowering.convert_ml_to_linalg.common import tensor_type
from mlc.lowering.support.index_calc import Index


def extract(e: Emit, x: SSAValue, axis: int, offset: SSAValue, size: Index) -> SSAValue:
    """`x[..., offset:offset+size, ...]` along `axis`."""
    sizes = e.sizes(x)
    sizes[axis] = size
    offsets: list[SSAValue | int] = [0] * len(sizes)
    offsets[axis] = offset
    type_ = TensorType(tensor_type(x).element_type, static(sizes))
    return e(tensor.ExtractSliceOp(x, offsets, sizes, [1] * len(sizes), type_))


def for_loop(
    e: Emit,
    bounds: tuple[Index, Index, Index],
    init: Sequence[SSAValue],
    body: Callable[[Emit, SSAValue, Sequence[SSAValue]], Sequence[SSAValue]],
) -> Sequence[SSAValue]:
    """`scf.for` carrying `init`; `body(emit, iv, carried)` returns what it yields."""
    block = Block(arg_types=[IndexType(), *(v.type for v in init)])
    inner = Emit(InsertPoint.at_end(block), e.location)
    inner.op(scf.YieldOp(*body(inner, block.args[0], block.args[1:])))
    lb, ub, step = (e.index(b) for b in bounds)
    return e.op(scf.ForOp(lb, ub, step, list(init), block)).results


@dataclass(frozen=True)
class Span:
    """One block of `[0, size)`: it starts at `start` and holds `size` indices."""

    start: SSAValue
    size: Index
    seen: Index  # how many of its first indices an earlier block already covered


# One block of a blocked loop: (emit, block, carried) -> the carried values after it.
Step = Callable[[Emit, Span, Sequence[SSAValue]], Sequence[SSAValue]]


def block_at(e: Emit, iv: SSAValue, block: int, size: Index) -> Span:
    """
    The block of the loop step at `iv`. A static `size` gives static blocks: the last one
    starts at `size - block` instead of running short, overlapping its predecessor by
    `iv - start` indices (`seen`): rows computed twice, keys masked out the second time.
    A dynamic `size` gives a last block of `size - iv` indices.
    """
    if not isinstance(size, int):
        return Span(iv, e.calc.min(block, e.calc.sub(size, iv)), 0)
    if size <= block:
        return Span(iv, size, 0)
    if size % block == 0:
        return Span(iv, block, 0)
    start = e.calc.min(iv, size - block)
    assert isinstance(start, SSAValue)
    return Span(start, block, e.calc.sub(iv, start))


def blocked_loop(
    e: Emit, size: Index, end: Index, block: int, init: Sequence[SSAValue], step: Step
) -> Sequence[SSAValue]:
    """`scf.for` over the blocks of `[0, size)` that start before `end`, carrying `init`."""
    return for_loop(
        e, (0, end, block), init, lambda e, iv, c: step(e, block_at(e, iv, block, size), c)
    )


@dataclass(frozen=True)
class Blocking:
    """What every block step reads: the operands prepared once, and the sizes."""

    op: ml.AttentionOp
    q: SSAValue  # scaled, in the compute type
    k: SSAValue  # with the query heads
    v: SSAValue
    mask: SSAValue | None
    seq_q: Index
    seq_k: Index
    block_q: int
    block_k: int


def mask_block(
    e: Emit, mask: SSAValue, axis_from_end: int, offset: SSAValue, size: Index
) -> SSAValue:
    """The mask's rows (2) or columns (1) of a block, unless it broadcasts along them."""
    shape = tensor_type(mask).get_shape()
    axis = len(shape) - axis_from_end
    if axis < 0 or shape[axis] == 1:
        return mask
    return extract(e, mask, axis, offset, size)


def key_step(b: Blocking, q_blk: SSAValue, mask_rows: SSAValue | None, i0: SSAValue) -> Step:
    """One key block of the online softmax: (m, l, acc) -> (m', l', acc')."""
    rank = tensor_type(b.q).get_num_dims()
    element = tensor_type(b.q).element_type

    def step(e: Emit, keys: Span, carried: Sequence[SSAValue]) -> Sequence[SSAValue]:
        j0, cols = keys.start, keys.size
        k_blk = extract(e, b.k, rank - 2, j0, cols)
        v_blk = extract(e, b.v, rank - 2, j0, cols)
        perm = [*range(rank - 2), rank - 1, rank - 2]
        sizes = [*e.sizes(q_blk)[:-1], cols]
        zero = filled(e, sizes, 0.0, element)
        s = contraction(e, q_blk, e(ml.TransposeOp(k_blk, perm)), zero)
        mask = None if mask_rows is None else mask_block(e, mask_rows, 1, j0, cols)
        diagonal = None
        if b.op.is_causal:
            diagonal = e.calc.sub(e.calc.add(i0, e.calc.sub(b.seq_k, b.seq_q)), j0)
        return online_step(e, masked(e, s, mask, keys.seen, diagonal), v_blk, carried)

    return step


def query_step(b: Blocking) -> Step:
    """One query block: run the key loop, normalise, insert the rows into the output."""
    rank = tensor_type(b.q).get_num_dims()
    element = tensor_type(b.q).element_type
    result_type = tensor_type(b.op.result)

    def step(e: Emit, queries: Span, carried: Sequence[SSAValue]) -> Sequence[SSAValue]:
        (out,) = carried
        i0, rows = queries.start, queries.size
        q_blk = extract(e, b.q, rank - 2, i0, rows)
        mask_rows = None if b.mask is None else mask_block(e, b.mask, 2, i0, rows)
        batch = e.sizes(q_blk)[:-1]
        head_dim_v = e.sizes(b.v)[-1]
        init = [
            filled(e, [*batch, 1], -math.inf, element),
            filled(e, [*batch, 1], 0.0, element),
            filled(e, [*batch, head_dim_v], 0.0, element),
        ]
        end: Index = b.seq_k
        if b.op.is_causal:
            band_end = e.calc.add(e.calc.add(i0, rows), e.calc.sub(b.seq_k, b.seq_q))
            end = e.calc.max(e.calc.min(b.seq_k, band_end), 0)
        step = key_step(b, q_blk, mask_rows, i0)
        _, total, acc = blocked_loop(e, b.seq_k, end, b.block_k, init, step)
        rows_out = normalised(e, acc, total, result_type.element_type)
        sizes = e.sizes(rows_out)
        offsets = [0] * rank
        offsets[rank - 2] = DYNAMIC_INDEX
        insert = tensor.InsertSliceOp.get(
            rows_out,
            out,
            static(sizes),
            offsets,
            offsets=[i0],
            sizes=[v for v in sizes if isinstance(v, SSAValue)],
        )
        return [e(insert)]

    return step


def in_compute_type(e: Emit, x: SSAValue) -> SSAValue:
    """`x` in f32 if it is f16 or bf16 (the softmax statistics need the range)."""
    type_ = tensor_type(x)
    if not isinstance(type_.element_type, Float16Type | BFloat16Type):
        return x
    return e(ml.CastOp(x, TensorType(Float32Type(), type_.get_shape())))


def query_heads(e: Emit, x: SSAValue, heads: int) -> SSAValue:
    """K or V with one head per query head: head `h` is K/V head `h // (heads / kv_heads)`."""
    rank = tensor_type(x).get_num_dims()
    group = heads // tensor_type(x).get_shape()[-3]
    indices_type = TensorType(i64, [heads])
    indices = DenseIntOrFPElementsAttr.from_list(indices_type, [h // group for h in range(heads)])
    return e(ml.GatherOp(x, e(arith.ConstantOp(indices)), rank - 3))


def head_count(e: Emit, x: SSAValue) -> Index:
    """The head count of `x` (its dim -3), read at run time where it is dynamic."""
    axis = tensor_type(x).get_num_dims() - 3
    count = tensor_type(x).get_shape()[axis]
    return count if shapes.is_static(count) else e(tensor.DimOp(x, e.index(axis)))


def run_time_head_indices(e: Emit, heads: Index, kv_heads: Index) -> SSAValue:
    """The K/V head of each query head, `h // (heads / kv_heads)`, computed at run time
    (where a head count is dynamic); an index out of range, where `heads` is no multiple
    of `kv_heads`, is the gather's run-time check to report."""
    count, kv = (e(arith.IndexCastOp(e.index(v), i64)) for v in (heads, kv_heads))
    group = e(tensor.FromElementsOp(e(arith.DivSIOp(count, kv)), result_type=TensorType(i64, [])))
    shape = e(tensor.FromElementsOp(count, result_type=TensorType(i64, [1])))
    ones = e(ml.BroadcastToOp(e.splat(1, i64), TensorType(i64, static([heads])), shape))
    positions = e(ml.CumSumOp(ones, 0, exclusive=True))
    return e(ml.DivOp(positions, group))


def full_mask(e: Emit, mask: SSAValue, sizes: Sequence[Index]) -> SSAValue:
    """
    A mask with dynamic dims broadcast to the scores' sizes: a dynamic dim may be 1 at
    run time, which the blocks' fixed indexing maps cannot read (this costs a mask of
    the scores' size; a static mask is read as it is).
    """
    values = [e(arith.IndexCastOp(e.index(v), i64)) for v in sizes]
    shape = e(tensor.FromElementsOp(*values, result_type=TensorType(i64, [len(sizes)])))
    type_ = TensorType(tensor_type(mask).element_type, static(sizes))
    return e(ml.BroadcastToOp(mask, type_, shape))


class DecomposeAttention(RewritePattern):
    """`ml.attention` to the blocked loop of the module docstring."""

    def __init__(self, block_q: int, block_k: int):
        self.block_q, self.block_k = block_q, block_k

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ml.AttentionOp, rewriter: PatternRewriter, /) -> None:
        heads, kv_heads = (tensor_type(x).get_shape()[-3] for x in (op.q, op.k))
        e = Emit(InsertPoint.before(op), op.location)
        q, k, v = (in_compute_type(e, x) for x in (op.q, op.k, op.v))
        mask = op.mask
        if mask is not None and not is_bool(tensor_type(mask).element_type):
            mask = in_compute_type(e, mask)
        q = e(ml.MulOp(q, e.splat(op.scale.value.data, tensor_type(q).element_type)))
        if not (shapes.is_static(heads) and shapes.is_static(kv_heads)):
            axis = tensor_type(k).get_num_dims() - 3
            indices = run_time_head_indices(e, head_count(e, op.q), head_count(e, op.k))
            k, v = (e(ml.GatherOp(x, indices, axis)) for x in (k, v))
        elif heads != kv_heads:
            k, v = query_heads(e, k, heads), query_heads(e, v, heads)
        seq_q, seq_k = e.sizes(q)[-2], e.sizes(k)[-2]
        if mask is not None and not all(map(shapes.is_static, tensor_type(mask).get_shape())):
            mask = full_mask(e, mask, [*e.sizes(q)[:-1], seq_k])
        blocking = Blocking(op, q, k, v, mask, seq_q, seq_k, self.block_q, self.block_k)
        result_type = tensor_type(op.result)
        # The result's type may know a dim the operands leave `?` (a mask's head count).
        sizes = e.sizes(op.q)[:-1] + e.sizes(op.v)[-1:]
        dynamic = [e.index(s) for s, d in zip(sizes, result_type.get_shape()) if d == DYNAMIC_INDEX]
        out = e(tensor.EmptyOp(dynamic, result_type))
        (result,) = blocked_loop(e, seq_q, seq_q, self.block_q, [out], query_step(blocking))
        rewriter.replace(op, (), (result,))


@dataclass(frozen=True)
class DecomposeAttentionPass(ModulePass):
    """Lower `ml.attention` to a blocked loop with an online softmax (see the module docstring)."""

    name = "decompose-attention"

    block_q: int = 64
    """Query rows per block (the outer loop's step)."""

    block_k: int = 64
    """Keys per block (the inner loop's step): the scores of a step are block_q x block_k."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        if self.block_q < 1 or self.block_k < 1:
            raise ValueError(f"block sizes must be positive, got {self.block_q}, {self.block_k}")
        pattern = DecomposeAttention(self.block_q, self.block_k)
        PatternRewriteWalker(pattern, apply_recursively=False).rewrite_module(op)
