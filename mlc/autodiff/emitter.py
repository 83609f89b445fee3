"""
What the VJP rules build with: an emitter that inserts `ml` ops at the end of the backward
graph, each at the location of the forward op being differentiated, and the few shape
helpers every family needs (constants, sums over broadcast dims, reshapes, transposes).

Rules never build ops directly: they call `em(op)` (or a helper here), so every backward
op carries the forward op's location, as `mlc.lowering.support.locations.located_builder`
gives a lowering.
"""

from collections.abc import Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    UnknownLoc,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint

from mlc import shapes
from mlc.dialects import ml
from mlc.lowering.support.locations import located_builder


class Emitter:
    """Inserts ops at `point`, each at `location` (the forward op's, set per rule)."""

    def __init__(self, point: InsertPoint):
        self.point = point
        self.location: Attribute = UnknownLoc()

    def __call__(self, op: Operation) -> SSAValue:
        located_builder(self.point, self.location).insert(op)
        return op.results[0]

    # -- constants ----------------------------------------------------------------

    def scalar(self, value: float, like: SSAValue | Attribute) -> SSAValue:
        """A rank-0 constant of `like`'s element type (it broadcasts against anything)."""
        element = element_type(like)
        number = int(value) if isinstance(element, IntegerType) else value
        return self.full(number, TensorType(element, []))

    def full(self, value: float, type_: TensorType[Attribute]) -> SSAValue:
        """A constant tensor of static type `type_` filled with `value`."""
        count = shapes.num_elements(type_.get_shape())
        assert count is not None, "full() takes a static type"
        attr = DenseIntOrFPElementsAttr.from_list(type_, [value] * count)  # pyright: ignore[reportArgumentType]
        return self(arith.ConstantOp(attr))

    def array(self, values: Sequence[float | int], type_: TensorType[Attribute]) -> SSAValue:
        attr = DenseIntOrFPElementsAttr.from_list(type_, list(values))  # pyright: ignore[reportArgumentType]
        return self(arith.ConstantOp(attr))

    def zeros_like(self, value: SSAValue) -> SSAValue:
        """Zeros of `value`'s type: a constant if static, else a zero broadcast to the
        dims read from `value` (not `value * 0`, which is NaN where `value` is inf)."""
        t = tensor_type(value)
        if all(shapes.is_static(d) for d in t.get_shape()):
            return self.full(0.0, t)
        return self(ml.BroadcastToOp(self.scalar(0.0, value), t, self.shape(value)))

    def shape(self, value: SSAValue) -> SSAValue:
        """The shape of `value` as a 1-D i64 tensor, its dynamic dims read at run time."""
        dims = [self.dim(value, d) for d in range(tensor_type(value).get_num_dims())]
        return self(tensor.FromElementsOp(*dims, result_type=TensorType(i64, [len(dims)])))

    def size(self, value: SSAValue, dims: Sequence[int]) -> SSAValue:
        """The number of elements of `value` along `dims`, read at run time, as a rank-0
        tensor of `value`'s element type (a mean's divisor over dynamic dims)."""
        total = self(arith.ConstantOp(IntegerAttr(1, i64)))
        for d in dims:
            total = self(arith.MuliOp(total, self.dim(value, d)))
        count = self(tensor.FromElementsOp(total, result_type=TensorType(i64, [])))
        return self(ml.CastOp(count, TensorType(element_type(value), [])))

    def dim(self, value: SSAValue, d: int) -> SSAValue:
        """Dim `d` of `value` as an i64: a constant if static, else read at run time."""
        size = tensor_type(value).get_shape()[d]
        if shapes.is_static(size):
            return self(arith.ConstantOp(IntegerAttr(size, i64)))
        index = self(arith.ConstantOp(IntegerAttr(d, IndexType())))
        return self(arith.IndexCastOp(self(tensor.DimOp(value, index)), i64))

    # -- arithmetic -----------------------------------------------------------------

    def add(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(ml.AddOp(a, b))

    def sub(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(ml.SubOp(a, b))

    def mul(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(ml.MulOp(a, b))

    def div(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(ml.DivOp(a, b))

    def neg(self, a: SSAValue) -> SSAValue:
        return self(ml.NegOp(a))

    def scale(self, a: SSAValue, factor: float) -> SSAValue:
        return self.mul(a, self.scalar(factor, a))

    def cmp(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(ml.CmpOp(predicate, a, b))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(ml.SelectOp(cond, a, b))

    def as_float(self, mask: SSAValue, like: SSAValue) -> SSAValue:
        """An i1 tensor as 0.0 and 1.0 in `like`'s element type."""
        return self(ml.CastOp(mask, TensorType(element_type(like), shape_of(mask))))

    # -- shapes ---------------------------------------------------------------------

    def sum(self, x: SSAValue, axes: Sequence[int], keepdims: bool) -> SSAValue:
        return self(ml.ReduceSumOp(x, list(axes), keepdims)) if axes else x

    def unbroadcast(self, ct: SSAValue, shape: shapes.Shape) -> SSAValue:
        """
        The cotangent of an operand of `shape` that was broadcast to `ct`'s shape: `ct`
        summed over the dims broadcasting added (dropped) and stretched (kept as 1).
        """
        have = shape_of(ct)
        lead = len(have) - len(shape)
        ct = self.sum(ct, range(lead), keepdims=False)
        stretched = [i for i, d in enumerate(shape) if d == 1 and have[lead + i] != 1]
        return self.sum(ct, stretched, keepdims=True)

    def reshape(self, x: SSAValue, shape: shapes.Shape) -> SSAValue:
        """`x` reshaped to `shape`, which may hold one dynamic dim (given by the others)."""
        if tuple(shape) == shape_of(x):
            return x
        dynamic = [i for i, d in enumerate(shape) if not shapes.is_static(d)]
        if not dynamic:
            return self(ml.ReshapeOp(x, list(shape)))
        target = [-1 if not shapes.is_static(d) else d for d in shape]
        if len(dynamic) > 1:
            raise shapes.ShapeError(
                f"cannot reshape to ({shapes.format_shape(shape)}): more than one dynamic dim"
            )
        size = self.array(target, TensorType(i64, [len(shape)]))
        result = TensorType(element_type(x), list(shape))
        return self(ml.ReshapeOp(x, shape=size, result_type=result))

    def broadcast_to(self, x: SSAValue, type_: TensorType[Attribute]) -> SSAValue:
        """`x` broadcast to the shape of `type_` (static, or dynamic where `x` is)."""
        if shape_of(x) == type_.get_shape():
            return x
        return self(ml.BroadcastToOp(x, TensorType(element_type(x), type_.get_shape())))

    def broadcast_like(self, x: SSAValue, like: SSAValue) -> SSAValue:
        """`x` broadcast to `like`'s shape, its dynamic dims read from `like` at run time."""
        have, want = shape_of(x), shape_of(like)
        if all(shapes.is_static(w) or h == w for h, w in zip(have, want, strict=False)):
            return self.broadcast_to(x, tensor_type(like))
        result = TensorType(element_type(x), want)
        return self(ml.BroadcastToOp(x, result, self.shape(like)))

    def transpose(self, x: SSAValue, perm: Sequence[int]) -> SSAValue:
        if list(perm) == list(range(len(perm))):
            return x
        return self(ml.TransposeOp(x, list(perm)))

    def swap_last(self, x: SSAValue) -> SSAValue:
        """The matrix transpose of each of `x`'s (batched) matrices."""
        rank = len(shape_of(x))
        return self.transpose(x, [*range(rank - 2), rank - 1, rank - 2])


def tensor_type(value: SSAValue) -> TensorType[Attribute]:
    assert isinstance(value.type, TensorType)
    return value.type  # pyright: ignore[reportUnknownVariableType]


def shape_of(value: SSAValue) -> shapes.Shape:
    return tensor_type(value).get_shape()


def element_type(like: SSAValue | Attribute) -> Attribute:
    t = like.type if isinstance(like, SSAValue) else like
    return t.element_type if isinstance(t, TensorType) else t  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
