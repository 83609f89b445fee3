"""
Constant folding of `ml` ops, and folding of shape arithmetic.

An elementwise, data-movement or reduction op whose operands are all small
`arith.constant` tensors becomes one constant, its value computed by
`mlc.lowering.graph.patterns.evaluate` with the semantics of the lowering:

    %a = arith.constant dense<[1, 7]> : tensor<2xi32>
    %b = arith.constant dense<2> : tensor<2xi32>
    %q = ml.div %a, %b : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>
    // becomes
    %q = arith.constant dense<[0, 3]> : tensor<2xi32>

"Small" is `MAX_FOLD_ELEMENTS`, for every operand and the result: a folded constant
is materialised in the binary, so folding a broadcast into a megabyte constant would
trade a loop for a global. An `ml.reshape` or `ml.broadcast_to` whose shape operand
is a constant becomes the static form of the op (with a `tensor.cast` back to the
written type where that was less static, which `shape-inference` then refines);
`tensor.dim` of a static dim becomes an index constant, and `memref.dim` of a
`memref.alloc` its size (bufferization leaves buffers that only give their sizes to
the next: once no dim reads them, xDSL's canonicalizer elides the alloc and dealloc).

`explain_unfolded` remarks on the ops that had only constant operands and were not
folded, and why (too large, undefined behaviour, unsigned types); `canonicalize` calls it once
at the end rather than at every match, so each op is explained once.
"""

from collections.abc import Sequence
from math import prod

import numpy as np
from xdsl.dialects import arith, memref, tensor
from xdsl.dialects.builtin import (
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.traits import HasCanonicalizationPatternsTrait

from mlc import resources, shapes
from mlc.diagnostics import op_remark
from mlc.dialects import ml
from mlc.dtypes import is_floating
from mlc.lowering.graph.patterns.evaluate import Array, NotFoldable, evaluate, numpy_dtype
from mlc.lowering.graph.patterns.ml import FoldBroadcastOperand

# The most elements an operand or a result of a folded op may have.
MAX_FOLD_ELEMENTS = 1024

FOLDABLE = (
    ml.BinaryOp,
    ml.UnaryOp,
    ml.CmpOp,
    ml.SelectOp,
    ml.CastOp,
    ml.ReduceOp,
    ml.TransposeOp,
    ml.ReshapeOp,
    ml.BroadcastToOp,
    ml.ConcatOp,
    ml.SliceOp,
    ml.GatherOp,
)


# ---------------------------------------------------------------------------
# Constants as arrays and back
# ---------------------------------------------------------------------------


def dense_constant(value: SSAValue) -> DenseIntOrFPElementsAttr | None:
    """The dense value of an `arith.constant` tensor, or None."""
    op = value.owner
    if isinstance(op, arith.ConstantOp) and isinstance(op.value, DenseIntOrFPElementsAttr):
        return op.value
    return None


def constant_array(value: SSAValue) -> np.ndarray | None:
    """The value of an `arith.constant` tensor, dense or a `dense_resource` this process
    holds (large weights: `mlc.resources`), or None."""
    op = value.owner
    if not isinstance(op, arith.ConstantOp):
        return None
    match op.value:
        case DenseIntOrFPElementsAttr():
            return to_array(op.value)
        case DenseResourceAttr():
            return resources.lookup(op.value.resource_handle.data)
        case _:
            return None


def element_count(t: Attribute) -> int | None:
    """The number of elements of a statically shaped tensor type, or None."""
    return shapes.num_elements(t.get_shape()) if isinstance(t, TensorType) else None


def to_array(attr: DenseIntOrFPElementsAttr) -> Array | None:
    """The elements of `attr` as an array (splats expanded), or None for unsigned and index."""
    element = attr.get_element_type()
    dtype = numpy_dtype(element)
    if dtype is None:
        return None
    shape = attr.get_shape()
    storage = np.int8 if dtype == np.bool_ else dtype  # i1 is stored as 0 / -1
    flat = np.frombuffer(attr.data.data, np.dtype(storage).newbyteorder("<"))
    if flat.size == 1:
        flat = np.repeat(flat, prod(shape))  # a splat stores one element
    return flat.reshape(shape).astype(dtype)


def to_attr(array: Array, result_type: TensorType[Attribute]) -> DenseIntOrFPElementsAttr:
    data = np.ascontiguousarray(array)
    if data.dtype == np.bool_:
        data = -data.astype(np.int8)  # i1 true is stored as -1, as xDSL's parser does
    raw = data.astype(data.dtype.newbyteorder("<")).tobytes()
    return DenseIntOrFPElementsAttr(result_type, BytesAttr(raw))


def replace_with_value(
    op: Operation, rewriter: PatternRewriter, new: Operation, value: SSAValue
) -> None:
    """Replace `op` by `value` of `new`, cast back to `op`'s type if that differs."""
    new_ops = [new]
    declared = op.results[0].type
    if value.type != declared:
        cast = tensor.CastOp(value, declared)  # pyright: ignore[reportArgumentType]
        new_ops.append(cast)
        value = cast.dest
    for created in new_ops:
        created.location = op.location
    rewriter.replace(op, new_ops, [value])


# ---------------------------------------------------------------------------
# Folding an op
# ---------------------------------------------------------------------------


def operand_values(op: Operation) -> list[DenseIntOrFPElementsAttr] | None:
    """The constant value of every operand of `op`, or None if one is not constant."""
    values = [dense_constant(v) for v in op.operands]
    if not values or any(v is None for v in values):
        return None
    return [v for v in values if v is not None]


def fold_value(op: ml.MLOp) -> Array | str | None:
    """
    The folded value of `op`, the reason it is not folded, or None if it has a
    non-constant operand (nothing to fold, nothing to explain).
    """
    if not isinstance(op, FOLDABLE) or (constants := operand_values(op)) is None:
        return None
    if isinstance(op, ml.ReshapeOp | ml.BroadcastToOp) and op.shape is not None:
        return None  # FoldConstantShape makes it static first
    inferred = op.infer_result_type()
    counts = [element_count(c.type) for c in constants] + [element_count(inferred)]
    if any(n is None for n in counts):
        return None
    largest = max(n for n in counts if n is not None)
    if largest > MAX_FOLD_ELEMENTS:
        return f"constant too large to fold ({largest} elements > {MAX_FOLD_ELEMENTS})"
    arrays = [to_array(c) for c in constants]
    if any(a is None for a in arrays):
        return f"element type {constants[0].get_element_type()} is not folded"
    try:
        value = evaluate(op, [a for a in arrays if a is not None])
    except NotFoldable as reason:
        return str(reason)
    if is_floating(value.dtype) and not np.all(np.isfinite(value)):
        # xDSL prints NaN and inf as hex bit patterns that its parser reads back as
        # integers, so a non-finite constant would not survive the text form.
        return "the result is not finite"
    return value


class FoldConstant(RewritePattern):
    """An `ml` op on small constants -> the constant it computes."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, ml.MLOp) or not isinstance(value := fold_value(op), np.ndarray):
            return
        inferred = op.infer_result_type()
        constant = arith.ConstantOp(to_attr(value, inferred), inferred)
        replace_with_value(op, rewriter, constant, constant.result)


def explain_unfolded(module: ModuleOp) -> None:
    """Remark on every op with only constant operands that stays unfolded, and why."""
    for op in module.walk():
        if isinstance(op, ml.MLOp) and isinstance(reason := fold_value(op), str):
            op_remark(op, f"not folded: {reason}")


# ---------------------------------------------------------------------------
# Shape arithmetic
# ---------------------------------------------------------------------------


def constant_shape(value: SSAValue | None) -> tuple[int, ...] | None:
    if value is None or (attr := dense_constant(value)) is None:
        return None
    if (array := to_array(attr)) is None or array.ndim != 1:
        return None
    return tuple(int(d) for d in array)


def static_target(op: ml.ReshapeOp | ml.BroadcastToOp, sizes: Sequence[int]) -> Attribute | None:
    """The static result type the shape `sizes` gives `op`, or None if it gives none."""
    source = ml.base.shape_of(op.x)
    declared = ml.base.tensor_type(op.result)
    try:
        if isinstance(op, ml.ReshapeOp):
            target = shapes.reshape(source, sizes)
        else:
            target = shapes.broadcast_to(source, sizes) if min(sizes, default=0) >= 0 else None
    except shapes.ShapeError:
        return None  # a run-time error; leave it to the run time
    if target is None or not all(shapes.is_static(d) for d in target):
        return None
    if not shapes.compatible(declared.get_shape(), target):
        return None
    return TensorType(declared.element_type, target)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]


class FoldConstantShape(RewritePattern):
    """reshape / broadcast_to with a constant shape operand -> the static op."""

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: ml.ReshapeOp | ml.BroadcastToOp, rewriter: PatternRewriter, /
    ) -> None:
        sizes = constant_shape(op.shape)
        if sizes is None or (target := static_target(op, sizes)) is None:
            return
        if isinstance(op, ml.ReshapeOp):
            new = ml.ReshapeOp(op.x, result_type=target)
        else:
            new = ml.BroadcastToOp(op.x, target)
        replace_with_value(op, rewriter, new, new.result)


def uncast(value: SSAValue) -> SSAValue:
    """`value` before any `tensor.cast`s: the same tensor, perhaps more statically typed."""
    while isinstance(value.owner, tensor.CastOp):
        value = value.owner.source
    return value


def _dim_axis(index: SSAValue, rank: int) -> int | None:
    """The axis a `tensor.dim`/`memref.dim` reads, when it is a constant within `rank`."""
    constant = index.owner
    if not isinstance(constant, arith.ConstantOp) or not isinstance(constant.value, IntegerAttr):
        return None
    axis = constant.value.value.data
    return axis if 0 <= axis < rank else None


def _replace_by_size(rewriter: PatternRewriter, op: Operation, size: int) -> None:
    constant = arith.ConstantOp(IntegerAttr(size, IndexType()))
    constant.location = op.location
    rewriter.replace(op, [constant], [constant.result])


class FoldStaticDim(RewritePattern):
    """tensor.dim of a static dim (of the value, or of what it was cast from) -> a constant."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tensor.DimOp, rewriter: PatternRewriter, /) -> None:
        source = uncast(op.source).type
        if not isinstance(source, TensorType):
            return
        shape = source.get_shape()
        axis = _dim_axis(op.index, len(shape))
        if axis is not None and shapes.is_static(shape[axis]):
            _replace_by_size(rewriter, op, shape[axis])


class FoldIdentityCast(RewritePattern):
    """tensor.cast to the operand's own type -> the operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: tensor.CastOp, rewriter: PatternRewriter, /) -> None:
        if op.source.type == op.dest.type:
            rewriter.replace(op, [], [op.source])


# Patterns for ops that are not mlc's, applied by mlc's `canonicalize`.
class FoldDimOfAlloc(RewritePattern):
    """memref.dim of a memref.alloc -> the size the alloc was given (or its static size)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DimOp, rewriter: PatternRewriter, /) -> None:
        alloc = op.source.owner
        if not isinstance(alloc, memref.AllocOp):
            return
        shape = alloc.memref.type.get_shape()
        if (axis := _dim_axis(op.index, len(shape))) is None:
            return
        if shapes.is_static(shape[axis]):
            _replace_by_size(rewriter, op, shape[axis])
            return
        dynamic = sum(1 for d in shape[:axis] if not shapes.is_static(d))
        rewriter.replace(op, [], [alloc.dynamic_sizes[dynamic]])


TENSOR_PATTERNS: tuple[RewritePattern, ...] = (
    FoldStaticDim(),
    FoldIdentityCast(),
    FoldDimOfAlloc(),
)


class ConstantFolding(HasCanonicalizationPatternsTrait):
    """Attached to every `ml` op by `MLOp`'s traits (with the broadcast bypass)."""

    @classmethod
    def get_canonicalization_patterns(cls) -> tuple[RewritePattern, ...]:
        return (FoldConstant(), FoldConstantShape(), FoldBroadcastOperand())
