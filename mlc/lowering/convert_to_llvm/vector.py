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
`vector.insert` of one is an `insertelement`; `vector.reduction <add>` of floats is
`llvm.vector.reduce.fadd` (in order: the kernels reduce once per row, outside their
hot loop).
"""

from xdsl.dialects import llvm, vector
from xdsl.dialects.builtin import (
    AnyFloat,
    DenseArrayBase,
    FixedBitwidthType,
    IntegerAttr,
    VectorType,
    i32,
)
from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from mlc.lowering.convert_to_llvm.common import (
    Builder,
    TypeRecord,
    constant,
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
    return None


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
        b = Builder()
        if isinstance(op, vector.LoadOp):
            type_ = op.result.type
            assert isinstance(type_, VectorType)
            pointer = self.record.descriptor(op, 0).element_pointer(b, op.indices)
            b.emit(llvm.LoadOp(pointer, type_, alignment=_alignment(op, type_)))
        elif isinstance(op, vector.StoreOp):
            type_ = op.vector.type
            assert isinstance(type_, VectorType)
            pointer = self.record.descriptor(op, 1).element_pointer(b, op.indices)
            b.ops.append(llvm.StoreOp(op.vector, pointer, alignment=_alignment(op, type_)))
            replace(rewriter, op, b.ops, [])
            return
        elif isinstance(op, vector.BroadcastOp):
            type_ = op.vector.type
            assert isinstance(type_, VectorType)
            lanes = type_.get_shape()[0]
            undef = b.emit(llvm.UndefOp(type_))
            first = b.emit(llvm.InsertElementOp(undef, op.source, b.emit(constant(0, i32))))
            mask = DenseArrayBase.from_list(i32, [0] * lanes)
            b.emit(llvm.ShuffleVectorOp(first, undef, mask, type_))
        elif isinstance(op, vector.FMAOp):
            b.emit(llvm.FMAOp(op.lhs, op.rhs, op.acc))
        elif isinstance(op, vector.ExtractOp):
            (position,) = op.static_position.get_values()
            source = op.vector.type
            assert isinstance(source, VectorType)
            lane = VectorType(source.element_type, [1])
            mask = DenseArrayBase.from_list(i32, [position])
            one = b.emit(llvm.ShuffleVectorOp(op.vector, op.vector, mask, lane))
            b.emit(llvm.BitcastOp(one, op.result.type))
        elif isinstance(op, vector.InsertOp):
            (position,) = op.static_position.get_values()
            b.emit(llvm.InsertElementOp(op.dest, op.source, b.emit(constant(position, i32))))
        elif isinstance(op, vector.ReductionOp):
            assert op.acc is not None, "checked before rewriting"
            b.emit(llvm.VectorReduceFAddOp(op.acc, op.vector))
        else:
            return
        replace(rewriter, op, b.ops)
