"""
What the control-flow converters (`control_flow`, `scan`) share: conditions and counters
as scalars, the types of loop-carried values, and the tensors a loop stacks the outputs
of its steps into.

A loop-carried value keeps one type through an `scf` loop, where ONNX lets its shape
change from step to step (a tensor that grows). `joined_types` gives the type that holds
both the initial value and what the body gives back: equal dims stay, others become `?`;
the converters convert the body again with those types until they hold.
"""

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, scf, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from mlc.dialects import ml
from mlc.frontends.onnx.node import Node, NodeError
from mlc.frontends.onnx.ops.build import (
    Size,
    cast,
    dtype,
    element_of,
    reshape_to,
    shape_of,
    shape_tensor,
    size_along,
    sizes,
    tensor_of,
    types_text,
)
from mlc.shapes import DYNAMIC

# A row count: static, or an `index` known at run time.
Rows = int | SSAValue


def place(node: Node, op: Operation) -> None:
    """Append `op`, which may have no result (a terminator), at the node's location."""
    op.location = node.location
    node.graph.block.add_op(op)


def index(node: Node, number: int) -> SSAValue:
    return node.emit(arith.ConstantOp(IntegerAttr(number, IndexType())))


def one_value(node: Node, value: SSAValue, what: str) -> SSAValue:
    """The single element of `value` (any shape of one element) as a scalar."""
    shape = shape_of(value)
    if any(d != 1 for d in shape):
        raise NodeError(f"the {what} must hold one value, got {types_text(value)}")
    zeros = [index(node, 0) for _ in shape]
    return node.emit(tensor.ExtractOp(value, zeros, element_of(value)))


def flag(node: Node, value: SSAValue, what: str) -> SSAValue:
    """An `i1` from a boolean tensor of one element."""
    return one_value(node, cast(node, value, i1), what)


def index_of(node: Node, value: SSAValue, what: str) -> SSAValue:
    """An `index` from an integer tensor of one element."""
    scalar = one_value(node, cast(node, value, i64), what)
    return node.emit(arith.IndexCastOp(scalar, IndexType()))


def scalar_tensor(node: Node, scalar: SSAValue, element: Attribute) -> SSAValue:
    """A rank-0 tensor of `element` holding `scalar` (an `index` becomes an integer)."""
    if isinstance(scalar.type, IndexType):
        scalar = node.emit(arith.IndexCastOp(scalar, element))
    return node.emit(tensor.FromElementsOp(scalar, result_type=TensorType(element, [])))


def join(a: TensorType[Attribute], b: TensorType[Attribute]) -> TensorType[Attribute] | None:
    """The type that holds tensors of both types (None if element types or ranks differ)."""
    if a.element_type != b.element_type or a.get_num_dims() != b.get_num_dims():
        return None
    dims = [x if x == y else DYNAMIC for x, y in zip(a.get_shape(), b.get_shape(), strict=True)]
    return TensorType(a.element_type, dims)


def joined_types(
    what: str,
    names: Sequence[str],
    types: Sequence[TensorType[Attribute]],
    outputs: Sequence[SSAValue],
) -> list[TensorType[Attribute]]:
    """The types of the carried values `names` that hold `types` and the body's `outputs`."""
    joined: list[TensorType[Attribute]] = []
    for name, type_, out in zip(names, types, outputs, strict=True):
        both = join(type_, tensor_of(out))
        if both is None:
            raise NodeError(
                f"{what} '{name}' changes from {_text(type_)} to {types_text(out)} in the body; "
                "a loop-carried value keeps its element type and rank"
            )
        joined.append(both)
    return joined


def conform(node: Node, value: SSAValue, type_: TensorType[Attribute]) -> SSAValue:
    """`value` as `type_`, which holds it (`tensor.cast` where dims become `?`)."""
    if value.type == type_:
        return value
    return node.emit(tensor.CastOp(value, type_))


def _text(type_: TensorType[Attribute]) -> str:
    dims = "x".join("?" if d < 0 else str(d) for d in type_.get_shape())
    return f"tensor<{dims + 'x' if dims else ''}{type_.element_type}>"


# ---------------------------------------------------------------------------
# Stacking a step's output, slicing a step's input
# ---------------------------------------------------------------------------


def stacked_type(y: SSAValue, rows: Rows, axis: int) -> TensorType[Attribute]:
    """The type of `rows` outputs like `y` stacked along a new axis `axis`."""
    shape = list(shape_of(y))
    shape.insert(axis, rows if isinstance(rows, int) else DYNAMIC)
    return TensorType(element_of(y), shape)


def stack_zeros(
    node: Node, y: SSAValue, rows: Rows, axis: int, row_dims: Sequence[Size]
) -> SSAValue:
    """Zeros to stack `rows` outputs of sizes `row_dims` like `y` into, along axis `axis`."""
    result = stacked_type(y, rows, axis)
    zero = node.constant(np.zeros((), dtype(y)))
    dims: list[Size] = list(row_dims)
    dims.insert(axis, rows if isinstance(rows, int) else node.emit(arith.IndexCastOp(rows, i64)))
    if all(isinstance(d, int) for d in dims) and DYNAMIC not in result.get_shape():
        return node.emit(ml.BroadcastToOp(zero, result))
    return node.emit(ml.BroadcastToOp(zero, result, shape_tensor(node, dims)))


def stack_init(node: Node, y: SSAValue, rows: Rows, axis: int) -> SSAValue:
    """The stack a loop starts with: zeros, a dim of `y` known only at run time 0 (the
    first step makes the stack again with `y`'s sizes: `stack_update`)."""
    return stack_zeros(node, y, rows, axis, [max(d, 0) for d in shape_of(y)])


def stack_update(
    node: Node, y: SSAValue, stacked: SSAValue, at: SSAValue, first: SSAValue, axis: int
) -> SSAValue:
    """`stacked` with this step's `y` at `at` along `axis`. Where `y` has dims known only
    at run time, the `first` step (an `i1`) makes a stack of its sizes first."""
    if any(d < 0 for d in shape_of(y)):
        rows = node.emit(tensor.DimOp(stacked, index(node, axis)))
        fresh = Block()
        inner = node.within(node.graph.nested(fresh, node.graph.scope))
        place(inner, scf.YieldOp(stack_zeros(inner, y, rows, axis, sizes(inner, y))))
        kept = Block()
        place(node.within(node.graph.nested(kept, node.graph.scope)), scf.YieldOp(stacked))
        op = scf.IfOp(first, [stacked.type], Region(fresh), Region(kept))
        place(node, op)
        stacked = op.results[0]
    return insert_row(node, y, stacked, at, axis)


def grow_stack(node: Node, y: SSAValue, stacked: SSAValue, first: SSAValue) -> SSAValue:
    """`stacked` (of type `tensor<?x...>`) with `y` appended as a row along a new axis 0:
    `y` alone at the `first` step (an `i1`), else a concatenation (a copy per step)."""
    dims = sizes(node, y)
    row = reshape_to(node, y, [1, *dims])
    alone, appended = Block(), Block()
    inner = node.within(node.graph.nested(alone, node.graph.scope))
    place(inner, scf.YieldOp(conform(inner, row, tensor_of(stacked))))
    inner = node.within(node.graph.nested(appended, node.graph.scope))
    place(inner, scf.YieldOp(inner.emit(ml.ConcatOp([stacked, row], 0, stacked.type))))
    op = scf.IfOp(first, [stacked.type], Region(alone), Region(appended))
    place(node, op)
    return op.results[0]


def insert_row(node: Node, y: SSAValue, stacked: SSAValue, at: SSAValue, axis: int) -> SSAValue:
    """`stacked` with `y` at position `at` (an `index`) of axis `axis`."""
    dims = sizes(node, y)
    dims.insert(axis, 1)
    row = reshape_to(node, y, dims)
    offsets: list[SSAValue | int] = [0] * len(dims)
    offsets[axis] = at
    lengths = [_as_index(node, d) for d in dims]
    op = tensor.InsertSliceOp.build(
        operands=[row, stacked, *_dynamic(offsets), *_dynamic(lengths), []],
        result_types=[stacked.type],
        properties=_properties(offsets, lengths),
    )
    return node.emit(op)


def _as_index(node: Node, size: Size) -> SSAValue | int:
    return size if isinstance(size, int) else node.emit(arith.IndexCastOp(size, IndexType()))


def take_row(node: Node, x: SSAValue, at: SSAValue, axis: int) -> SSAValue:
    """`x[..., at, ...]` for an `index` `at` along `axis`, without that axis."""
    shape = shape_of(x)
    dims = [1 if k == axis else size_along(node, x, k) for k in range(len(shape))]
    offsets: list[SSAValue | int] = [0] * len(shape)
    offsets[axis] = at
    lengths = [_as_index(node, d) for d in dims]
    lengths[axis] = 1
    piece_shape = [*shape[:axis], 1, *shape[axis + 1 :]]
    extract = tensor.ExtractSliceOp(
        x, offsets, lengths, [1] * len(shape), TensorType(element_of(x), piece_shape)
    )
    piece = node.emit(extract)
    return reshape_to(node, piece, dims[:axis] + dims[axis + 1 :])


def _dynamic(offsets: Sequence[SSAValue | int]) -> list[list[SSAValue]]:
    return [[o for o in offsets if isinstance(o, SSAValue)]]


def _properties(
    offsets: Sequence[SSAValue | int], lengths: Sequence[SSAValue | int]
) -> dict[str, Attribute]:
    def static(values: Sequence[SSAValue | int]) -> list[int]:
        return [DYNAMIC_INDEX if isinstance(v, SSAValue) else v for v in values]

    return {
        "static_offsets": DenseArrayBase.from_list(i64, static(offsets)),
        "static_sizes": DenseArrayBase.from_list(i64, static(lengths)),
        "static_strides": DenseArrayBase.from_list(i64, [1] * len(lengths)),
    }
