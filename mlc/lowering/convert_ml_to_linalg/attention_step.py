"""
One key block of `decompose-attention`'s online softmax, as `linalg.generic`s on tensors.

With `n` loops `(batch..., i, j)` over the scores of a block (rows `i`, keys `j`) and the
statistics `m`, `l` of shape `(batch..., i, 1)`:

    s     = q_blk @ k_blkᵀ                      contraction (batch..., i, k, j), zero start
    s     = mask / band (s)                     elementwise, the mask read broadcast
    m'    = max(m, max_j s)                     reduction over j, started at m
    p     = exp(s - safe(m'))                   elementwise, m' read per row
    a     = exp(m - safe(m'))                   per row
    l'    = l * a + sum_j p                     reduction over j, started at l * a
    acc'  = acc * a + p @ v_blk                 contraction, started at acc * a

where `safe(x)` is 0 for a row max of -inf (a row with no key yet: `exp(-inf - 0) = 0`).
Every operand is read through an explicit indexing map, so no size needs a run-time
broadcast check; the contractions are plain `(batch..., i, k, j)` generics that
`linalg-tile` (CPU) and `convert-contractions-to-gpu` recognise.
"""

import math
from collections.abc import Callable, Sequence

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, tensor
from xdsl.dialects import math as xmath
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    AffineMapAttr,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    TensorType,
)
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.rewriter import InsertPoint

from mlc import shapes
from mlc.dialects.ml.base import is_bool
from mlc.lowering.convert_ml_to_linalg.common import (
    REDUCTION,
    allow_reassociation,
    broadcast_map,
    iterator_types,
    tensor_type,
)
from mlc.lowering.support.index_calc import Index, IndexCalc
from mlc.lowering.support.locations import located_builder
from mlc.lowering.support.loop_builder import scalar_constant


class Emit:
    """Inserts ops at a point, each at the attention's location; returns the first result."""

    def __init__(self, point: InsertPoint, location: Attribute):
        self.location = location
        self.builder = located_builder(point, location)

    def __call__(self, op: Operation) -> SSAValue:
        self.builder.insert(op)
        return op.results[0]

    def op(self, op: Operation) -> Operation:
        self.builder.insert(op)
        return op

    def index(self, value: Index) -> SSAValue:
        if isinstance(value, SSAValue):
            return value
        return self(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def splat(self, value: float, element: Attribute) -> SSAValue:
        """A rank-0 tensor constant, which `ml` ops broadcast."""
        type_ = TensorType(element, [])
        return self(arith.ConstantOp(DenseIntOrFPElementsAttr.from_list(type_, [value])))  # pyright: ignore[reportArgumentType]

    def sizes(self, x: SSAValue) -> list[Index]:
        return [
            d if shapes.is_static(d) else self(tensor.DimOp(x, self.index(i)))
            for i, d in enumerate(tensor_type(x).get_shape())
        ]

    @property
    def calc(self) -> IndexCalc:
        return IndexCalc(self.op)


def static(sizes: Sequence[Index]) -> list[int]:
    return [s if isinstance(s, int) else DYNAMIC_INDEX for s in sizes]


def empty(e: Emit, sizes: Sequence[Index], element: Attribute) -> SSAValue:
    dynamic = [s for s in sizes if isinstance(s, SSAValue)]
    return e(tensor.EmptyOp(dynamic, TensorType(element, static(sizes))))


def generic(
    e: Emit,
    inputs: Sequence[tuple[SSAValue, AffineMap]],
    init: tuple[SSAValue, AffineMap],
    iterators: Sequence[Attribute],
    body: Callable[[Sequence[SSAValue]], SSAValue],
) -> SSAValue:
    """A `linalg.generic` with one output; `body` gets the block arguments."""
    values = [v for v, _ in (*inputs, init)]
    block = Block(
        arg_types=[t.element_type if isinstance(t := v.type, TensorType) else t for v in values]  # pyright: ignore[reportUnknownMemberType]
    )
    with ImplicitBuilder(block):
        YieldOp(body(block.args))
    if REDUCTION in iterators:
        allow_reassociation(block)
    maps = [AffineMapAttr(m) for _, m in (*inputs, init)]
    op = GenericOp(values[:-1], [init[0]], Region(block), maps, iterators, [init[0].type])
    return e(op)


def filled(e: Emit, sizes: Sequence[Index], value: float, element: Attribute) -> SSAValue:
    """A tensor of `sizes` holding `value`."""
    identity = AffineMap.identity(len(sizes))
    init = (empty(e, sizes, element), identity)
    return generic(
        e, [], init, iterator_types(len(sizes)), lambda _: scalar_constant(value, element)
    )


def contraction(e: Emit, a: SSAValue, b: SSAValue, init: SSAValue) -> SSAValue:
    """`init + a @ b` over the batch dims of `a` (b has the same ones)."""
    nb = tensor_type(a).get_num_dims() - 2
    batch = [AffineExpr.dimension(d) for d in range(nb)]
    i, k, j = (AffineExpr.dimension(nb + d) for d in range(3))
    maps = [AffineMap(nb + 3, 0, (*batch, *pair)) for pair in ((i, k), (k, j), (i, j))]
    return generic(
        e,
        [(a, maps[0]), (b, maps[1])],
        (init, maps[2]),
        iterator_types(nb + 3, reduced=[nb + 1]),
        lambda x: arith.AddfOp(x[2], arith.MulfOp(x[0], x[1])).result,
    )


def row_map(rank: int) -> AffineMap:
    """Reads a `(batch..., i, 1)` statistic inside loops `(batch..., i, j)`."""
    dims = [AffineExpr.dimension(d) for d in range(rank - 1)]
    return AffineMap(rank, 0, (*dims, AffineExpr.constant(0)))


def safe(m: SSAValue) -> SSAValue:
    """0 where the row max is -inf (no key yet), else the max (in a generic body)."""
    minus_inf = scalar_constant(-math.inf, m.type)
    none_yet = arith.CmpfOp(m, minus_inf, "oeq").result
    return arith.SelectOp(none_yet, scalar_constant(0.0, m.type), m).result


def masked(
    e: Emit, s: SSAValue, mask: SSAValue | None, seen: Index, diagonal: Index | None
) -> SSAValue:
    """
    The scores with -inf where the bool mask is false (an additive mask added), at key
    columns `j < seen`, and, with a `diagonal`, where `j > i + diagonal`.
    """
    if mask is None and diagonal is None and seen == 0:
        return s
    type_ = tensor_type(s)
    rank, element = type_.get_num_dims(), type_.element_type
    identity = AffineMap.identity(rank)
    scalar = AffineMap(rank, 0, ())
    inputs = [(e.index(seen), scalar), (e.index(diagonal or 0), scalar), (s, identity)]
    if mask is not None:
        inputs.append((mask, broadcast_map(tensor_type(mask).get_shape(), type_.get_shape())))

    def body(x: Sequence[SSAValue]) -> SSAValue:
        value = x[2]
        minus_inf = scalar_constant(-math.inf, element)
        col = IndexOp(rank - 1).result
        keep = arith.CmpiOp(col, x[0], "sge").result
        if diagonal is not None:
            last = arith.AddiOp(IndexOp(rank - 2).result, x[1]).result
            keep = arith.AndIOp(keep, arith.CmpiOp(col, last, "sle")).result
        if mask is not None and is_bool(tensor_type(mask).element_type):
            keep = arith.AndIOp(keep, x[3]).result
        elif mask is not None:
            value = arith.AddfOp(value, x[3]).result
        return arith.SelectOp(keep, value, minus_inf).result

    return generic(e, inputs, (empty(e, e.sizes(s), element), identity), iterator_types(rank), body)


def online_step(
    e: Emit,
    s: SSAValue,
    v_blk: SSAValue,
    carried: Sequence[SSAValue],
) -> list[SSAValue]:
    """(m, l, acc) after the key block of masked scores `s` and values `v_blk`."""
    m, total, acc = carried
    type_ = tensor_type(s)
    rank, element = type_.get_num_dims(), type_.element_type
    full, row, per_row = AffineMap.identity(rank), row_map(rank), AffineMap.identity(rank)
    keys = iterator_types(rank, reduced=[rank - 1])
    m_new = generic(e, [(s, full)], (m, row), keys, lambda x: arith.MaximumfOp(x[0], x[1]).result)
    p = generic(
        e,
        [(s, full), (m_new, row)],
        (empty(e, e.sizes(s), element), full),
        iterator_types(rank),
        lambda x: xmath.ExpOp(arith.SubfOp(x[0], safe(x[1]))).result,
    )
    stats = (empty(e, e.sizes(m), element), per_row)
    alpha = generic(
        e,
        [(m, per_row), (m_new, per_row)],
        stats,
        iterator_types(rank),
        lambda x: xmath.ExpOp(arith.SubfOp(x[0], safe(x[1]))).result,
    )
    scaled = generic(
        e,
        [(total, per_row), (alpha, per_row)],
        (empty(e, e.sizes(m), element), per_row),
        iterator_types(rank),
        lambda x: arith.MulfOp(x[0], x[1]).result,
    )
    total_new = generic(
        e, [(p, full)], (scaled, row), keys, lambda x: arith.AddfOp(x[1], x[0]).result
    )
    acc_scaled = generic(
        e,
        [(acc, full), (alpha, row)],
        (empty(e, e.sizes(acc), element), full),
        iterator_types(rank),
        lambda x: arith.MulfOp(x[0], x[1]).result,
    )
    return [m_new, total_new, contraction(e, p, v_blk, acc_scaled)]


def normalised(e: Emit, acc: SSAValue, total: SSAValue, element: Attribute) -> SSAValue:
    """`acc / l`, rounded to `element`."""
    rank = tensor_type(acc).get_num_dims()
    full = AffineMap.identity(rank)

    def body(x: Sequence[SSAValue]) -> SSAValue:
        quotient = arith.DivfOp(x[0], x[1]).result
        if quotient.type == element:
            return quotient
        return arith.TruncFOp(quotient, element).result

    init = (empty(e, e.sizes(acc), element), full)
    return generic(e, [(acc, full), (total, row_map(rank))], init, iterator_types(rank), body)
