"""
Helpers shared by the `convert-ml-to-linalg` patterns.

Every pattern builds its replacement the same way: sizes of dynamic dims come from
`tensor.dim`, outputs start as a `tensor.empty` (or a fill generic for reductions),
and the computation is one `linalg.generic` per stage whose body a Python callback
writes. Broadcasting is expressed in indexing maps, never by materialising a copy.

Ops are inserted through the pattern's rewriter, before the matched `ml` op; inside
`keep_location` every inserted op (and every op nested in it) takes the `ml` op's
location, since xDSL's rewriter does not copy locations.
"""

from collections.abc import Callable, Sequence

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
)
from xdsl.dialects.linalg.attrs import IteratorTypeAttr
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter

from mlc import shapes
from mlc.diagnostics import op_error
from mlc.lowering.support.index_calc import Index, IndexCalc
from mlc.lowering.support.loop_builder import scalar_constant

PARALLEL = IteratorTypeAttr.parallel()
REDUCTION = IteratorTypeAttr.reduction()

# A generic's body: receives the block arguments (one scalar per input, then one per
# output) and returns the values to yield. Ops it creates land in the body.
BodyFn = Callable[[Sequence[BlockArgument]], Sequence[SSAValue] | SSAValue]


# ---------------------------------------------------------------------------
# Locations and element types
# ---------------------------------------------------------------------------


def tensor_type(value: SSAValue) -> TensorType[Attribute]:
    """The type of a value the `ml` verifier has already checked to be a ranked tensor."""
    assert isinstance(value.type, TensorType)
    return value.type  # pyright: ignore[reportUnknownVariableType]


def element_type(value: SSAValue) -> Attribute:
    """The element type of a tensor value, or the type of a scalar."""
    if isinstance(value.type, TensorType):
        return value.type.element_type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    return value.type


def check_signless(op: Operation, element: Attribute) -> None:
    """For lowerings without unsigned forms: stop with an error on `ui8` and friends."""
    if isinstance(element, IntegerType) and element.signedness.data != Signedness.SIGNLESS:
        op_error(op, f"convert-ml-to-linalg: element type {element} is not supported yet")


def is_unsigned(type_: Attribute) -> bool:
    return isinstance(type_, IntegerType) and type_.signedness.data == Signedness.UNSIGNED


def signless(type_: Attribute) -> Attribute:
    """
    `type_` with signless integers: `arith` computes on those, and the op, not the
    type, says how (`divui`, `cmpi ult`, `extui`, ...). Tensors are retyped element-wise.
    """
    if isinstance(type_, IntegerType) and type_.signedness.data != Signedness.SIGNLESS:
        return IntegerType(type_.width.data)
    if isinstance(type_, TensorType) and is_unsigned(type_.element_type):  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        element = signless(type_.element_type)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        return TensorType(element, type_.get_shape(), type_.encoding)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
    return type_


# ---------------------------------------------------------------------------
# Sizes and outputs
# ---------------------------------------------------------------------------


def index_constant(rewriter: PatternRewriter, value: int) -> SSAValue:
    return rewriter.insert(arith.ConstantOp(IntegerAttr(value, IndexType()))).result


def dim_value(rewriter: PatternRewriter, value: SSAValue, axis: int) -> SSAValue:
    """The size of dim `axis` of `value` as an index: a constant if static, else `tensor.dim`."""
    size = tensor_type(value).get_shape()[axis]
    if shapes.is_static(size):
        return index_constant(rewriter, size)
    if (existing := existing_dim(rewriter, value, axis)) is not None:
        return existing
    axis_value = index_constant(rewriter, axis)
    return rewriter.insert(tensor.DimOp(value, axis_value)).result


def existing_dim(rewriter: PatternRewriter, value: SSAValue, axis: int) -> SSAValue | None:
    """A `tensor.dim` of `value` at `axis` that the insertion point already sees, if any."""
    point = rewriter.insertion_point
    for use in value.uses:
        dim = use.operation
        if not isinstance(dim, tensor.DimOp) or dim.parent_block() is not point.block:
            continue
        if point.insert_before is not None and not dim.is_before_in_block(point.insert_before):
            continue
        index = dim.index.owner
        if isinstance(index, arith.ConstantOp) and index.value == IntegerAttr(axis, IndexType()):
            return dim.result
    return None


def size_of(rewriter: PatternRewriter, value: SSAValue, axis: int) -> Index:
    """Dim `axis` of `value`: an int if static, else a `tensor.dim`."""
    size = tensor_type(value).get_shape()[axis]
    return size if shapes.is_static(size) else dim_value(rewriter, value, axis)


def dynamic_dims(rewriter: PatternRewriter, value: SSAValue) -> list[SSAValue | None]:
    """One entry per dim of `value`: its `tensor.dim` where dynamic, None where static."""
    shape = tensor_type(value).get_shape()
    return [
        None if shapes.is_static(d) else dim_value(rewriter, value, i) for i, d in enumerate(shape)
    ]


def empty_like_result(
    rewriter: PatternRewriter, result_type: Attribute, dims: Sequence[SSAValue | None]
) -> SSAValue:
    """
    A `tensor.empty` of `result_type`; `dims` has one entry per result dim.

    Only the entries at the dynamic dims of `result_type` are read (they must be set);
    the others may be None.
    """
    assert isinstance(result_type, TensorType)
    shape = result_type.get_shape()
    sizes = [dims[i] for i, d in enumerate(shape) if not shapes.is_static(d)]
    assert all(s is not None for s in sizes), "a dynamic result dim has no size"
    return rewriter.insert(tensor.EmptyOp([s for s in sizes if s is not None], result_type)).tensor


def type_dims(
    rewriter: PatternRewriter, result_type: Attribute, sizes: Sequence[Index]
) -> list[SSAValue | None]:
    """`sizes` (every dim) as `empty_like_result` and `fill` take them: values where dynamic."""
    assert isinstance(result_type, TensorType)
    calc = IndexCalc(rewriter.insert)
    return [
        None if shapes.is_static(d) else calc.value(s)
        for d, s in zip(result_type.get_shape(), sizes, strict=True)
    ]


def empty_of(rewriter: PatternRewriter, result_type: Attribute, sizes: Sequence[Index]) -> SSAValue:
    """A `tensor.empty` of `result_type`; `sizes` gives every dim, read where dynamic."""
    return empty_like_result(rewriter, result_type, type_dims(rewriter, result_type, sizes))


# ---------------------------------------------------------------------------
# Indexing maps and iterators
# ---------------------------------------------------------------------------


def broadcast_map(
    operand_shape: Sequence[int], output_shape: Sequence[int], num_loops: int | None = None
) -> AffineMap:
    """
    The indexing map that reads an operand broadcast (numpy rules) to `output_shape`.

    Loop `d_i` walks output dim `i`; `num_loops` (default: the output rank) may add
    loops past the output's. The operand aligns with the trailing output dims, so its
    missing leading dims are dropped; a static size-1 dim facing an output dim that is
    not statically 1 reads index 0; any other dim, dynamic ones included, is assumed
    to equal the output dim it faces.
    """
    offset = len(output_shape) - len(operand_shape)
    assert offset >= 0, "an operand cannot have a higher rank than the broadcast"
    results = [
        AffineExpr.constant(0)
        if size == 1 and output_shape[offset + i] != 1
        else AffineExpr.dimension(offset + i)
        for i, size in enumerate(operand_shape)
    ]
    return AffineMap(len(output_shape) if num_loops is None else num_loops, 0, tuple(results))


def iterator_types(num_loops: int, reduced: Sequence[int] = ()) -> list[Attribute]:
    """`parallel` for every loop except those in `reduced`, which are `reduction`."""
    return [REDUCTION if i in reduced else PARALLEL for i in range(num_loops)]


# ---------------------------------------------------------------------------
# Generics
# ---------------------------------------------------------------------------


def build_generic(
    rewriter: PatternRewriter,
    inputs: Sequence[SSAValue],
    inits: Sequence[SSAValue],
    maps: Sequence[AffineMap],
    iterators: Sequence[Attribute],
    body: BodyFn,
) -> tuple[SSAValue, ...]:
    """
    Insert a `linalg.generic` over tensors and return its results.

    `maps` holds one indexing map per input, then one per init (output). The body
    callback runs inside the new block, so the ops it creates land there; the yield
    is added for it. Scalar inputs (not tensors) take a map with no results.
    """
    block = Block(arg_types=[signless(element_type(v)) for v in (*inputs, *inits)])
    with ImplicitBuilder(block):
        yielded = body(block.args)
        YieldOp(*([yielded] if isinstance(yielded, SSAValue) else yielded))
    if REDUCTION in iterators:
        allow_reassociation(block)
    generic = GenericOp(
        inputs,
        inits,
        Region(block),
        [AffineMapAttr(m) for m in maps],
        iterators,
        [v.type for v in inits],
    )
    return tuple(rewriter.insert(generic).res)


# Float ops whose order a reduction may change: LLVM vectorises a float sum only if it
# may reassociate it, and contracts `acc + a * b` into an FMA only if allowed to.
REASSOCIABLE = (arith.AddfOp, arith.SubfOp, arith.MulfOp)
REDUCTION_FASTMATH = arith.FastMathFlagsAttr([FastMathFlag.REASSOC, FastMathFlag.ALLOW_CONTRACT])


def allow_reassociation(body: Block) -> None:
    """
    Mark the float add, sub and mul ops of a reduction body `reassoc` and `contract`.

    Only these two flags: results may round differently (as any vectorised or
    parallel sum does), but NaN, infinities and signed zeros keep their meaning.
    """
    for op in body.ops:
        if isinstance(op, REASSOCIABLE):
            op.fastmath = REDUCTION_FASTMATH


def fill(
    rewriter: PatternRewriter,
    result_type: Attribute,
    dims: Sequence[SSAValue | None],
    value: float | int,
) -> SSAValue:
    """A tensor of `result_type` holding `value` everywhere: a generic with no inputs."""
    assert isinstance(result_type, TensorType)
    rank = result_type.get_num_dims()
    element = result_type.element_type  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
    empty = empty_like_result(rewriter, result_type, dims)
    (filled,) = build_generic(
        rewriter,
        [],
        [empty],
        [AffineMap.identity(rank)],
        iterator_types(rank),
        lambda _: scalar_constant(value, element),  # pyright: ignore[reportUnknownArgumentType]
    )
    return filled


# ---------------------------------------------------------------------------
# Scalars (inside generic bodies)
# ---------------------------------------------------------------------------


def int_min(type_: IntegerType) -> int:
    return 0 if is_unsigned(type_) else -(2 ** (type_.width.data - 1))


def int_max(type_: IntegerType) -> int:
    return 2**type_.width.data - 1 if is_unsigned(type_) else 2 ** (type_.width.data - 1) - 1
