"""
The stand-in generic that carries `ml.attention` from tensors to memrefs.

`bufferize` knows `linalg.generic`s, not `ml` ops or launches, so the first phase of
`convert-attention-to-gpu` replaces each attention it can compile by a generic that
only names its operands and result, `library_call = "mlc.attention"`, its scale and
causality in `doc` (`"scale=<float> causal=<0|1>"`). Its body yields the output
unchanged: the body is not the meaning, the second phase (after `bufferize`) replaces
the generic by the kernel, and fails on any stand-in it cannot take.

Loops `(batch..., h, i, e, j, d)` (`e` the value dim, `j` the keys, `d` the head dim),
`j` and `d` reductions, `d` innermost: maps q `(batch, h, i, d)`, k `(batch, h floordiv G,
j, d)`, v `(batch, h floordiv G, j, e)`, a mask aligned right to `(batch, h, i, j)`
(static size-1 dims read at 0), out `(batch, h, i, e)`. So `linalg-fuse-elementwise`
leaves it alone: every input is read more than once per element (a contraction's
operands are not fused into it), its innermost loop reduces (no epilogue is fused), and
its body is no multiply-add (no transpose is folded).

An operand may be stored `(batch..., S, H, D)` instead, its map's head and sequence
results swapped: the head split and merge transposes around the attention folded into
it (`head_layout`); `Attention.index` addresses each operand in its own order.
"""

import re
from dataclasses import dataclass

from xdsl.dialects import tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    BFloat16Type,
    Float16Type,
    Float32Type,
    MemRefType,
    StringAttr,
    TensorType,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineExpr, AffineMap

from mlc.dialects import ml
from mlc.lowering.gpu.attention.head_layout import OPERANDS, Folded, stored_dim
from mlc.lowering.support.locations import LocatedEmitter

LIBRARY_CALL = "mlc.attention"
MAX_HEAD_DIM = 128  # q·k and the accumulator of a row live in one thread's registers
_DOC = re.compile(r"scale=(\S+) causal=([01])")
ELEMENTS = (Float32Type, Float16Type, BFloat16Type)


@dataclass(frozen=True)
class Attention:
    """A stand-in generic read back: its operands and what the kernel needs to know."""

    op: GenericOp
    q: SSAValue
    k: SSAValue
    v: SSAValue
    mask: SSAValue | None
    out: SSAValue
    scale: float
    causal: bool
    sequence_major: frozenset[str] = frozenset()  # of OPERANDS: stored (batch..., S, H, D)

    @property
    def batch_rank(self) -> int:
        return len(shape(self.q)) - 3

    @property
    def groups(self) -> int:
        """Query heads per K/V head (static)."""
        return self.size("q", self.batch_rank) // self.size("k", self.batch_rank)

    def stored(self, name: str, position: int) -> int:
        """The dim of operand `name` (of OPERANDS) holding logical dim `position` of
        `(batch..., H, S, D)`."""
        return stored_dim(position, self.batch_rank + 3, name in self.sequence_major)

    def size(self, name: str, position: int) -> int:
        """Operand `name`'s static size of logical dim `position` (-1: dynamic)."""
        value = dict(zip(OPERANDS, (self.q, self.k, self.v, self.out), strict=True))[name]
        return shape(value)[self.stored(name, position)]

    def index(
        self, name: str, batch: list[SSAValue], head: SSAValue, row: SSAValue, column: SSAValue
    ) -> list[SSAValue]:
        """The indices of (batch..., head, row, column) into operand `name`."""
        if name in self.sequence_major:
            return [*batch, row, head, column]
        return [*batch, head, row, column]


def shape(value: SSAValue) -> tuple[int, ...]:
    type_ = value.type
    assert isinstance(type_, TensorType | MemRefType)
    return tuple(type_.get_shape())


def element(value: SSAValue) -> Attribute:
    type_ = value.type
    assert isinstance(type_, TensorType | MemRefType)
    return type_.element_type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]


def declined(op: ml.AttentionOp) -> str | None:
    """Why the kernel cannot take `op`, or None when it can."""
    if not isinstance(element(op.q), ELEMENTS):
        return f"element type {element(op.q)} (the kernel takes f32, f16, bf16)"
    q, k, v = shape(op.q), shape(op.k), shape(op.v)
    for name, size in (("head dim", q[-1]), ("value dim", v[-1])):
        if not 2 <= size <= MAX_HEAD_DIM:
            return f"{name} {'dynamic' if size < 0 else size} (the kernel takes 2 to 128, static)"
    if q[-3] < 0 or k[-3] < 0:
        return "dynamic head count"
    return None


def _map(dims: int, results: list[AffineExpr]) -> AffineMapAttr:
    return AffineMapAttr(AffineMap(dims, 0, tuple(results)))


def _ordered(results: list[AffineExpr], sequence_major: bool) -> list[AffineExpr]:
    """`(batch..., head, row, column)` results in an operand's stored order."""
    if not sequence_major:
        return results
    return [*results[:-3], results[-2], results[-3], results[-1]]


def stand_in(e: LocatedEmitter, op: ml.AttentionOp, folded: Folded) -> SSAValue:
    """
    Build the stand-in generic of `op` at `e`, reading and writing through the
    transposes `folded` names; its result replaces `op`'s, or the folded output
    transpose's.
    """
    q_shape, k_shape = shape(op.q), shape(op.k)
    nb = len(q_shape) - 3
    groups = q_shape[-3] // k_shape[-3]
    dims = nb + 5
    d = [AffineDimExpr(i) for i in range(dims)]
    batch, h, i, ev, j, dd = d[:nb], d[nb], d[nb + 1], d[nb + 2], d[nb + 3], d[nb + 4]
    kv_head = h if groups == 1 else h // groups
    major = folded.sequence_major
    maps = [
        _map(dims, _ordered([*batch, h, i, dd], "q" in major)),
        _map(dims, _ordered([*batch, kv_head, j, dd], "k" in major)),
        _map(dims, _ordered([*batch, kv_head, j, ev], "v" in major)),
    ]
    inputs = [folded.source(name, x) for name, x in zip(OPERANDS, (op.q, op.k, op.v), strict=False)]
    if op.mask is not None:
        full = [*batch, h, i, j]
        mask_shape = shape(op.mask)
        first = len(full) - len(mask_shape)
        maps.append(
            _map(
                dims,
                [
                    AffineConstantExpr(0) if size == 1 else full[first + n]
                    for n, size in enumerate(mask_shape)
                ],
            )
        )
        inputs.append(op.mask)
    maps.append(_map(dims, _ordered([*batch, h, i, ev], "out" in major)))
    result = (folded.output or op).result.type
    assert isinstance(result, TensorType)
    out_shape = result.get_shape()
    rank = len(out_shape)
    dynamic = []
    for n, size in enumerate(out_shape):
        if size >= 0:
            continue
        position = stored_dim(n, rank, "out" in major)
        name = "q" if position < rank - 1 else "v"
        source = inputs[OPERANDS.index(name)]
        at = stored_dim(position, rank, name in major)
        dynamic.append(e(tensor.DimOp(source, e.index(at))))
    init = e(tensor.EmptyOp(dynamic, result))
    block = Block(arg_types=[element(x) for x in inputs] + [element(op.q)])
    block.add_op(YieldOp(block.args[-1]))
    par, red = IteratorTypeAttr.parallel(), IteratorTypeAttr.reduction()
    causal = int(op.is_causal)
    return e(
        GenericOp(
            inputs,
            [init],
            Region(block),
            maps,
            [par] * (nb + 3) + [red, red],
            [result],
            doc=StringAttr(f"scale={op.scale.value.data!r} causal={causal}"),
            library_call=StringAttr(LIBRARY_CALL),
        )
    )


def read(op: GenericOp) -> Attention | None:
    """The attention a stand-in generic on memrefs stands for, or None if `op` is none."""
    if op.library_call is None or op.library_call.data != LIBRARY_CALL:
        return None
    found = _DOC.fullmatch(op.doc.data) if op.doc is not None else None
    if found is None or len(op.outputs) != 1 or len(op.inputs) not in (3, 4):
        return None
    mask = op.inputs[3] if len(op.inputs) == 4 else None
    q, k, v = op.inputs[:3]
    scale, causal = float(found.group(1)), found.group(2) == "1"
    return Attention(op, q, k, v, mask, op.outputs[0], scale, causal, _sequence_major(op))


def _sequence_major(op: GenericOp) -> frozenset[str]:
    """The operands whose map puts the sequence loop (`i` for q and out, `j` for k and
    v) before the head's: stored `(batch..., S, H, D)`."""
    maps = [m.data for m in op.indexing_maps]
    nb = maps[0].num_dims - 5
    sequence = {"q": nb + 1, "k": nb + 3, "v": nb + 3, "out": nb + 1}
    chosen = [maps[0], maps[1], maps[2], maps[-1]]
    return frozenset(
        name
        for name, map_ in zip(OPERANDS, chosen, strict=True)
        if map_.results[nb] == AffineDimExpr(sequence[name])
    )
