"""
`vector` -> `llvm`: the few 1-D vector ops that `linalg-tile`'s kernels use.

    %v = vector.load %m[%i, %j] : memref<?x?xf32>, vector<8xf32>
==>
    %p = llvm.getelementptr inbounds ...               // the address of %m[%i, %j]
    %v = llvm.load %p {alignment = 4} : !llvm.ptr -> vector<8xf32>

`vector.load`/`store` read and write consecutive elements along the last dimension
(which must have unit stride: the kernels only emit them there), aligned as one element
is, since a row of a matrix starts anywhere, unless the op's `alignment` attribute (bytes,
as MLIR's) promises more (GPU shared-memory tiles and checked-aligned rows allow 16
bytes); `vector.broadcast` of a scalar is an `insertelement` into lane 0 and a
zero-mask `shufflevector`; `vector.fma` is `llvm.intr.fma`; `vector.extract` of one
element at a static position of a 1-D vector is a one-lane `shufflevector` bitcast to
the scalar (xDSL has no `extractelement`; LLVM folds the pair into one), and
`vector.insert` of one is an `insertelement`, `vector.shuffle` of 1-D vectors a
`shufflevector`; `vector.reduction <add>` of floats is
`llvm.vector.reduce.fadd` (in order: the kernels reduce once per row, outside their
hot loop). A 1-D `vector.create_mask %n` compares the lane numbers `<0, 1, ...>` with a
splat of `%n`; `vector.maskedload`/`maskedstore` are `llvm.masked.load`/`store` (AVX2's
`vmaskmovps`), aligned as `vector.load`/`store` are: the matmul kernel writes the
columns of its last panel below N with them. Their start address is a plain
`getelementptr` (not `inbounds`): the depthwise kernel's rows start up to `pad`
elements before the image or end past it, those lanes masked off.
"""

from functools import lru_cache

from xdsl.dialects import llvm, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FixedBitwidthType,
    IntegerAttr,
    IntegerType,
    VectorType,
    i32,
    i64,
)
from xdsl.dialects.llvm import ICmpPredicateFlag
from xdsl.ir import Attribute, Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from mlc.lowering.convert_to_llvm import llvm_ops
from mlc.lowering.convert_to_llvm.common import (
    Builder,
    Descriptor,
    TypeRecord,
    converted_type,
    replace,
)

SUPPORTED: tuple[type[Operation], ...] = (
    vector.LoadOp,
    vector.StoreOp,
    vector.BroadcastOp,
    vector.FMAOp,
    vector.ReductionOp,
    vector.ExtractOp,
    vector.InsertOp,
    vector.CreateMaskOp,
    vector.MaskedLoadOp,
    vector.MaskedStoreOp,
    vector.ShuffleOp,
)


def unsupported_vector_op_reason(op: Operation) -> str | None:
    """Why a vector op cannot be lowered, or None when it can."""
    if isinstance(op, vector.BroadcastOp) and isinstance(op.source.type, VectorType):
        return "of a vector is not supported by convert-to-llvm (only of a scalar)"
    if isinstance(op, vector.ReductionOp) and op.kind.data.value != "add":
        return "is supported by convert-to-llvm for kind <add> only"
    if isinstance(op, vector.ReductionOp) and op.acc is None:
        return "needs an accumulator operand in convert-to-llvm"
    if isinstance(op, vector.ReductionOp) and not isinstance(op.dest.type, AnyFloat):
        return "is supported by convert-to-llvm for floats only"
    if isinstance(op, vector.ExtractOp) and (
        op.dynamic_position
        or len(op.static_position.get_values()) != 1
        or isinstance(op.result.type, VectorType)
    ):
        return "is supported by convert-to-llvm for one element at a static position only"
    if isinstance(op, vector.InsertOp) and (
        op.dynamic_position
        or len(op.static_position.get_values()) != 1
        or isinstance(op.source.type, VectorType)
    ):
        return "is supported by convert-to-llvm for one element at a static position only"
    if isinstance(op, vector.CreateMaskOp) and len(op.mask_dim_sizes) != 1:
        return "is supported by convert-to-llvm for 1-D masks only"
    if isinstance(op, vector.MaskedLoadOp | vector.MaskedStoreOp):
        type_ = op.result.type if isinstance(op, vector.MaskedLoadOp) else op.value_to_store.type
        if not isinstance(type_, VectorType) or not isinstance(type_.element_type, AnyFloat):
            return "is supported by convert-to-llvm for float vectors only"
    return None


def _masked_name(name: str, type_: VectorType) -> str:
    """`llvm.masked.<name>` mangled for `type_`: `llvm.masked.store.v8f32.p0`."""
    element = type_.element_type
    if isinstance(element, BFloat16Type | IntegerType):
        mangled = "i16"  # bf16's bits (`mlc.lowering.convert_to_llvm.bf16`)
    else:
        assert isinstance(element, AnyFloat)
        mangled = f"f{element.bitwidth}"
    return f"llvm.masked.{name}.v{type_.get_shape()[0]}{mangled}.p0"


def _create_mask(b: Builder, op: vector.CreateMaskOp) -> None:
    """`<0, 1, ..., VL-1> < splat(n)`: the lanes below `n` set."""
    type_ = op.mask_vector.type
    assert isinstance(type_, VectorType)
    lanes = type_.get_shape()[0]
    wide = VectorType(i64, [lanes])
    undef = b.emit(llvm.UndefOp(wide))
    first = b.emit(llvm.InsertElementOp(undef, op.mask_dim_sizes[0], b.constant(0, i32)))
    mask = DenseArrayBase.from_list(i32, [0] * lanes)
    splat = b.emit(llvm.ShuffleVectorOp(first, undef, mask, wide))
    numbers = DenseIntOrFPElementsAttr.from_list(wide, list(range(lanes)))
    lane = b.emit(llvm.ConstantOp(numbers, wide))
    b.emit(llvm.ICmpOp(lane, splat, IntegerAttr(ICmpPredicateFlag.SLT.to_int(), i64)))


def _shuffled(b: Builder, op: vector.ExtractOp | vector.ShuffleOp) -> None:
    """A `shufflevector`: of one lane bitcast to the scalar (`extract`), or the shuffle's."""
    if isinstance(op, vector.ShuffleOp):
        lanes = DenseArrayBase.from_list(i32, list(op.mask.get_values()))
        result = converted_type(op.result.type)
        b.emit(llvm.ShuffleVectorOp(op.v1, op.v2, lanes, result))  # pyright: ignore[reportArgumentType]
        return
    (position,) = op.static_position.get_values()
    source = converted_type(op.vector.type)
    assert isinstance(source, VectorType)
    lane, mask = _one_lane(source.element_type, position)
    one = b.emit(llvm.ShuffleVectorOp(op.vector, op.vector, mask, lane))
    b.emit(llvm.BitcastOp(one, converted_type(op.result.type)))


@lru_cache(maxsize=1024)  # bounded: a long-running process compiles many programs
def _one_lane(element: Attribute, position: int) -> tuple[VectorType, DenseArrayBase]:
    """The one-lane vector type and shuffle mask that pick lane `position`: attributes
    are values, made once for the thousands of extracts of an unrolled GPU tile."""
    return VectorType(element, [1]), DenseArrayBase.from_list(i32, [position])


def _masked_access(
    b: Builder, op: vector.MaskedLoadOp | vector.MaskedStoreOp, memref: Descriptor
) -> None:
    """`llvm.masked.load`/`store` at the op's indices of `memref`, the address computed
    without `inbounds`: the first lanes may be masked off because they lie before the
    buffer (a depthwise row's left padding), and a pointer there would be poison."""
    pointer = memref.element_pointer(b, op.indices, inbounds=False)
    if isinstance(op, vector.MaskedLoadOp):
        type_ = op.result.type
        assert isinstance(type_, VectorType)
        align = b.constant(_alignment(op, type_), i32)
        arguments = [pointer, align, op.mask, op.pass_thru]
        result = converted_type(type_)
        b.emit(llvm_ops.call_intrinsic(_masked_name("load", type_), arguments, result))
        return
    type_ = op.value_to_store.type
    assert isinstance(type_, VectorType)
    align = b.constant(_alignment(op, type_), i32)
    arguments = [op.value_to_store, pointer, align, op.mask]
    b.ops.append(llvm_ops.call_intrinsic(_masked_name("store", type_), arguments, None))


def _alignment(op: Operation, type_: VectorType) -> int:
    promised = op.attributes.get("alignment")
    if isinstance(promised, IntegerAttr):
        return promised.value.data
    element = type_.element_type
    return element.size if isinstance(element, FixedBitwidthType) else 1


class ConvertVector(RewritePattern):
    """The vector ops of `SUPPORTED` (see the module docstring)."""

    def __init__(self, record: TypeRecord):
        self.record = record

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        b = self.record.builder(op)
        if isinstance(op, vector.LoadOp):
            type_ = op.result.type
            assert isinstance(type_, VectorType)
            pointer = self.record.descriptor(op, 0).element_pointer(b, op.indices)
            loaded = converted_type(type_)
            b.emit(llvm.LoadOp(pointer, loaded, alignment=_alignment(op, type_)))
        elif isinstance(op, vector.StoreOp):
            type_ = op.vector.type
            assert isinstance(type_, VectorType)
            pointer = self.record.descriptor(op, 1).element_pointer(b, op.indices)
            b.ops.append(llvm.StoreOp(op.vector, pointer, alignment=_alignment(op, type_)))
            replace(rewriter, op, b.ops, [])
            return
        elif isinstance(op, vector.BroadcastOp):
            type_ = converted_type(op.vector.type)
            assert isinstance(type_, VectorType)
            lanes = type_.get_shape()[0]
            undef = b.emit(llvm.UndefOp(type_))
            first = b.emit(llvm.InsertElementOp(undef, op.source, b.constant(0, i32)))
            mask = DenseArrayBase.from_list(i32, [0] * lanes)
            b.emit(llvm.ShuffleVectorOp(first, undef, mask, type_))
        elif isinstance(op, vector.FMAOp):
            b.emit(llvm_ops.fma(op.lhs, op.rhs, op.acc))
        elif isinstance(op, vector.ExtractOp | vector.ShuffleOp):
            _shuffled(b, op)
        elif isinstance(op, vector.InsertOp):
            (position,) = op.static_position.get_values()
            b.emit(llvm.InsertElementOp(op.dest, op.source, b.constant(position, i32)))
        elif isinstance(op, vector.CreateMaskOp):
            _create_mask(b, op)
        elif isinstance(op, vector.MaskedLoadOp | vector.MaskedStoreOp):
            _masked_access(b, op, self.record.descriptor(op, 0))
            replace(rewriter, op, b.ops, [] if isinstance(op, vector.MaskedStoreOp) else None)
            return
        elif isinstance(op, vector.ReductionOp):
            assert op.acc is not None, "checked before rewriting"
            b.emit(llvm.VectorReduceFAddOp(op.acc, op.vector))
        else:
            return
        replace(rewriter, op, b.ops)
