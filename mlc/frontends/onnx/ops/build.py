"""Small building blocks the converters share: casts, reshapes, constants, folds, sizes."""

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import IndexType, IntegerAttr, TensorType, i64
from xdsl.ir import Attribute, Operation, SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx import types
from mlc.frontends.onnx.node import Node, NodeError
from mlc.lowering.support.index_calc import IndexCalc
from mlc.shapes import DYNAMIC, format_shape


def tensor_of(value: SSAValue) -> TensorType[Attribute]:
    assert isinstance(value.type, TensorType)
    return value.type  # pyright: ignore[reportUnknownVariableType]


def shape_of(value: SSAValue) -> tuple[int, ...]:
    return tuple(tensor_of(value).get_shape())


def element_of(value: SSAValue) -> Attribute:
    return tensor_of(value).element_type  # pyright: ignore[reportUnknownMemberType]


def cast(node: Node, x: SSAValue, element: Attribute) -> SSAValue:
    """`x` converted to `element` (itself if it has that type already)."""
    if element_of(x) == element:
        return x
    return node.emit(ml.CastOp(x, TensorType(element, shape_of(x))))


def reshape(node: Node, x: SSAValue, shape: Sequence[int]) -> SSAValue:
    """`x` reshaped to a static `shape` (one -1 allowed); itself if nothing changes."""
    if tuple(shape) == shape_of(x):
        return x
    return node.emit(ml.ReshapeOp(x, list(shape)))


def fold(node: Node, op: type[ml.BinaryOp], values: Sequence[SSAValue]) -> SSAValue:
    """`values[0] op values[1] op ...`, left to right."""
    result = values[0]
    for value in values[1:]:
        result = node.emit(op(result, value))
    return result


def int_list(array: np.ndarray | Sequence[int]) -> list[int]:
    return [int(v) for v in np.asarray(array).reshape(-1)]


def require_static(node: Node, value: SSAValue, what: str) -> tuple[int, ...]:
    """The static shape of `value`; an error naming `what` if a dim is dynamic."""
    shape = shape_of(value)
    if any(d < 0 for d in shape):
        raise NodeError(f"{what} needs a static shape, got {types_text(value)}")
    return shape


def types_text(value: SSAValue) -> str:
    dims = "x".join("?" if d < 0 else str(d) for d in shape_of(value))
    return f"tensor<{dims + 'x' if dims else ''}{element_of(value)}>"


def is_float(value: SSAValue) -> bool:
    return ml.base.is_float(element_of(value))


def dtype(value: SSAValue) -> np.dtype:
    try:
        return types.dtype_of(element_of(value))
    except types.UnsupportedType as error:
        raise NodeError(str(error)) from None


# ---------------------------------------------------------------------------
# Sizes known at run time
# ---------------------------------------------------------------------------

Size = int | SSAValue  # a static size, or an i64 scalar computed at run time


def sizes(node: Node, x: SSAValue) -> list[Size]:
    """The dims of `x`: static ones as ints, dynamic ones read at run time (`tensor.dim`)."""
    return [size_along(node, x, axis) for axis in range(len(shape_of(x)))]


def size_along(node: Node, x: SSAValue, axis: int) -> Size:
    """Dim `axis` of `x`: an int if static, else an i64 read at run time."""
    size = shape_of(x)[axis]
    if size >= 0:
        return size
    index = node.emit(arith.ConstantOp(IntegerAttr(axis, IndexType())))
    dim = node.emit(tensor.DimOp(x, index))
    return node.emit(arith.IndexCastOp(dim, i64))


def product(node: Node, factors: Sequence[Size]) -> Size:
    """The product of sizes, folded where static."""
    static = int(np.prod([f for f in factors if isinstance(f, int)], dtype=np.int64))
    result: Size = static
    for factor in factors:
        if isinstance(factor, SSAValue):
            result = (
                factor if result == 1 else node.emit(arith.MuliOp(_scalar(node, result), factor))
            )
    return result


class SizeCalc(IndexCalc):
    """
    `IndexCalc`'s arithmetic on `Size`s: ints fold, i64 scalars get `arith` ops at `node`.

    Sizes that depend on dynamic dims (pads, split points) are thus written once, as
    formulas, for the static and the dynamic case alike.
    """

    def __init__(self, node: Node):
        def insert(op: Operation) -> Operation:
            node.emit(op)
            return op

        super().__init__(insert)
        self.node = node

    def value(self, x: Size) -> SSAValue:
        return _scalar(self.node, x)


def _scalar(node: Node, size: Size) -> SSAValue:
    if isinstance(size, SSAValue):
        return size
    return node.emit(arith.ConstantOp(IntegerAttr(size, i64)))


def element(node: Node, values: SSAValue, k: int) -> SSAValue:
    """Element `k` of the 1-D integer tensor `values`, read at run time as an i64."""
    at = node.emit(arith.ConstantOp(IntegerAttr(k, IndexType())))
    value = node.emit(tensor.ExtractOp(values, [at], element_of(values)))
    if element_of(values) != i64:
        value = node.emit(arith.ExtSIOp(value, i64))
    return value


def shape_tensor(node: Node, dims: Sequence[Size]) -> SSAValue:
    """A `tensor<Nxi64>` of sizes (a constant when all are static)."""
    if all(isinstance(d, int) for d in dims):
        return node.constant(np.array(dims, dtype=np.int64))
    elements = [_scalar(node, d) for d in dims]
    return node.emit(tensor.FromElementsOp(*elements, result_type=TensorType(i64, [len(dims)])))


def static_or_dynamic(dims: Sequence[Size]) -> list[int]:
    """Sizes as a type's shape: the static ones, `?` for those known at run time."""
    return [d if isinstance(d, int) else DYNAMIC for d in dims]


def reshape_to(node: Node, x: SSAValue, dims: Sequence[Size]) -> SSAValue:
    """
    `x` reshaped to `dims`: static sizes, sizes computed at run time, and at most one
    `?` whose size follows from the element count (-1 in the run-time shape).
    """
    dims = list(dims)
    if all(isinstance(d, int) for d in dims) and tuple(dims) == shape_of(x):
        return x
    static = [d if isinstance(d, int) else DYNAMIC for d in dims]
    result = TensorType(element_of(x), static)
    if DYNAMIC not in static:
        return node.emit(ml.ReshapeOp(x, result_type=result))
    if sum(d == DYNAMIC for d in dims if isinstance(d, int)) > 1:
        raise NodeError(
            f"reshaping to {format_shape(static)} needs the sizes of several dynamic dims"
        )
    shape = shape_tensor(node, [-1 if isinstance(d, int) and d == DYNAMIC else d for d in dims])
    return node.emit(ml.ReshapeOp(x, shape=shape, result_type=result))


class Arithmetic:
    """
    Elementwise `ml` arithmetic emitted at `node`, where Python numbers stand for rank-0
    constants of `dtype`: the coordinate formulas of Resize's dynamic taps and of
    GridSample read as the reference implementations write them.
    """

    def __init__(self, node: Node, dtype: type[np.floating]):
        self.node = node
        self.dtype = dtype

    def c(self, value: float) -> SSAValue:
        return self.node.constant(np.array(value, self.dtype))

    def operand(self, x: SSAValue | float) -> SSAValue:
        return self.c(x) if isinstance(x, float | int) else x

    def op(self, kind: type[ml.BinaryOp], a: SSAValue | float, b: SSAValue | float) -> SSAValue:
        return self.node.emit(kind(self.operand(a), self.operand(b)))

    def add(self, a: SSAValue | float, b: SSAValue | float) -> SSAValue:
        return self.op(ml.AddOp, a, b)

    def sub(self, a: SSAValue | float, b: SSAValue | float) -> SSAValue:
        return self.op(ml.SubOp, a, b)

    def mul(self, a: SSAValue | float, b: SSAValue | float) -> SSAValue:
        return self.op(ml.MulOp, a, b)

    def div(self, a: SSAValue | float, b: SSAValue | float) -> SSAValue:
        return self.op(ml.DivOp, a, b)

    def cmp(self, predicate: str, a: SSAValue, b: SSAValue | float) -> SSAValue:
        return self.node.emit(ml.CmpOp(predicate, a, self.operand(b)))

    def where(self, cond: SSAValue, a: SSAValue | float, b: SSAValue | float) -> SSAValue:
        return self.node.emit(ml.SelectOp(cond, self.operand(a), self.operand(b)))

    def floor(self, a: SSAValue) -> SSAValue:
        return self.node.emit(ml.FloorOp(a))

    def clamp(self, a: SSAValue, low: SSAValue | float, high: SSAValue | float) -> SSAValue:
        return self.op(ml.MinOp, self.op(ml.MaxOp, a, low), high)
