"""
Types and small IR-building helpers shared by the convert-to-llvm patterns.

A memref becomes MLIR's descriptor struct (allocated pointer, aligned pointer, offset,
sizes, strides; counts in elements), a scalar keeps its type and `index` becomes `i64`.
The helpers here take no rewriter: they return lists of new ops, and the patterns insert
them, so each helper can be read (and tested) on its own.
"""

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import cache

from xdsl.dialects import llvm
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    MemRefType,
    NoneAttr,
    StridedLayoutAttr,
    VectorType,
    i16,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from mlc.lowering.convert_to_llvm import llvm_ops
from mlc.lowering.convert_to_llvm.constants import ConstantPool, FunctionConstants
from mlc.lowering.convert_to_llvm.llvm_ops import constant, integer_attr

PTR = llvm.LLVMPointerType()

# Descriptor field positions, as in MLIR's MemRefDescriptor.
ALLOCATED, ALIGNED, OFFSET, SIZES, STRIDES = range(5)


def llvm_type(type_: Attribute) -> Attribute | None:
    """The LLVM-dialect type of a scalar type (`index` is `i64`), or None if not scalar."""
    if isinstance(type_, IndexType):
        return i64
    if isinstance(type_, BFloat16Type):
        return i16  # its bits: llvmlite has no bfloat (`mlc.lowering.convert_to_llvm.bf16`)
    if isinstance(type_, IntegerType | AnyFloat):
        return type_
    if isinstance(type_, VectorType) and type_.get_num_dims() == 1:
        element = type_.element_type
        if isinstance(element, BFloat16Type):
            return VectorType(i16, type_.get_shape())
        if isinstance(element, IntegerType | AnyFloat):
            return type_  # 1-D vectors of scalars are LLVM vectors as they are
    return None


def element_size(type_: Attribute) -> int:
    """Bytes one element of a memref takes in memory (`i1` is a byte, as in numpy)."""
    if isinstance(type_, IndexType):
        return 8
    if isinstance(type_, IntegerType):
        return max(1, (type_.width.data + 7) // 8)
    sizes = {BFloat16Type: 2, Float16Type: 2, Float32Type: 4, Float64Type: 8}
    return sizes[type(type_)]


def descriptor_type(rank: int) -> llvm.LLVMStructType:
    """`!llvm.struct<(ptr, ptr, i64, array<R x i64>, array<R x i64>)>`; rank 0 has no arrays."""
    if rank == 0:
        return llvm.LLVMStructType.from_type_list([PTR, PTR, i64])
    array = llvm.LLVMArrayType(rank, i64)
    return llvm.LLVMStructType.from_type_list([PTR, PTR, i64, array, array])


def converted_type(type_: Attribute) -> Attribute | None:
    """The LLVM type of a scalar or memref type, or None if convert-to-llvm has none."""
    if isinstance(type_, MemRefType):
        return descriptor_type(type_.get_num_dims())
    return llvm_type(type_)


def unsupported_memref_reason(type_: MemRefType) -> str | None:
    """Why a memref type has no descriptor lowering, or None when it has one."""
    element = type_.element_type
    if llvm_type(element) is None:
        return f"on type {type_} is not supported: no LLVM type for element type {element}"
    if not isinstance(type_.memory_space, NoneAttr):
        return f"on type {type_} is not supported: memory spaces are not lowered"
    if not isinstance(type_.layout, NoneAttr | StridedLayoutAttr):
        return f"on type {type_} is not supported: only identity and strided layouts are"
    return None


def static_strides(type_: MemRefType) -> list[int | None]:
    """Each dim's stride in elements when the type fixes it, else None (read at run time)."""
    if isinstance(type_.layout, NoneAttr):
        strides: list[int | None] = []
        running: int | None = 1
        for size in reversed(type_.get_shape()):
            strides.append(running)
            running = None if running is None or size < 0 else running * size
        return strides[::-1]
    return list(type_.get_strides() or [None] * type_.get_num_dims())


def static_offset(type_: MemRefType) -> int | None:
    """The type's offset in elements when static, else None."""
    return type_.get_offset()


def static_sizes(type_: MemRefType) -> list[int | None]:
    """Each dim's size when static, else None."""
    return [None if size < 0 else size for size in type_.get_shape()]


@cache  # attributes are immutable; descriptors need a few dozen distinct positions
def positions(*indices: int) -> DenseArrayBase:
    """The `[i, j]` position of an `llvm.extractvalue`/`insertvalue`."""
    return DenseArrayBase.from_list(i64, indices)


def replace(
    rewriter: PatternRewriter,
    op: Operation,
    new_ops: Sequence[Operation],
    results: Sequence[SSAValue] | None = None,
) -> None:
    """Replace `op` by `new_ops` (the last gives the results), keeping its location (R11)."""
    for new in new_ops:
        new.location = op.location
    rewriter.replace(op, list(new_ops), None if results is None else list(results))


@dataclass
class Builder:
    """
    Collects new ops in order and returns their results: straight-line IR building.

    `value(x)` makes an i64 constant for an int and passes an SSA value through, so
    index arithmetic can mix static and dynamic quantities; `add`/`mul` fold the
    trivial cases (x + 0, x * 1, constants) so static layouts give LLVM plain constants.
    With `constants`, the function's shared constants are used instead of new ones.
    """

    ops: list[Operation] = field(default_factory=list[Operation])
    constants: FunctionConstants | None = None

    def emit(self, op: Operation) -> SSAValue:
        self.ops.append(op)
        return op.results[0]

    def value(self, x: int | SSAValue) -> SSAValue:
        return self.constant(x) if isinstance(x, int) else x

    def constant(self, value: int, type_: Attribute = i64) -> SSAValue:
        """An integer constant: the function's shared one where there is a table."""
        if self.constants is None:
            return self.emit(constant(value, type_))
        return self.constants.get(integer_attr(value, type_), type_)

    def add(self, a: int | SSAValue, b: int | SSAValue) -> int | SSAValue:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if a == 0:
            return b
        if b == 0:
            return a
        return self.emit(llvm_ops.binary(llvm.AddOp, self.value(a), self.value(b)))

    def mul(self, a: int | SSAValue, b: int | SSAValue) -> int | SSAValue:
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if a == 1:
            return b
        if b == 1:
            return a
        if a == 0 or b == 0:
            return 0
        return self.emit(llvm_ops.binary(llvm.MulOp, self.value(a), self.value(b)))

    def extract(self, container: SSAValue, type_: Attribute, *indices: int) -> SSAValue:
        return self.emit(llvm_ops.extract_value(container, type_, positions(*indices)))

    def insert(self, container: SSAValue, value: SSAValue, *indices: int) -> SSAValue:
        return self.emit(llvm_ops.insert_value(container, value, positions(*indices)))

    def call(
        self, callee: str, args: Sequence[SSAValue], result: Attribute | None
    ) -> SSAValue | None:
        op = llvm_ops.call(callee, args, result)
        self.ops.append(op)
        return op.results[0] if op.results else None

    def intrinsic(self, name: str, args: Sequence[SSAValue], result: Attribute) -> SSAValue:
        return self.emit(llvm_ops.call_intrinsic(name, args, result))


@dataclass
class Descriptor:
    """
    Reads the fields of a memref descriptor value, preferring what its type makes static.

    `type_` is the memref type the value had before conversion (kept in `TypeRecord`,
    since the value itself may already carry the struct type).
    """

    value: SSAValue
    type_: MemRefType

    @property
    def rank(self) -> int:
        return self.type_.get_num_dims()

    def allocated(self, b: Builder) -> SSAValue:
        return b.extract(self.value, PTR, ALLOCATED)

    def aligned(self, b: Builder) -> SSAValue:
        return b.extract(self.value, PTR, ALIGNED)

    def offset(self, b: Builder) -> int | SSAValue:
        static = static_offset(self.type_)
        return static if static is not None else b.extract(self.value, i64, OFFSET)

    def size(self, b: Builder, dim: int) -> int | SSAValue:
        static = static_sizes(self.type_)[dim]
        return static if static is not None else b.extract(self.value, i64, SIZES, dim)

    def stride(self, b: Builder, dim: int) -> int | SSAValue:
        static = static_strides(self.type_)[dim]
        return static if static is not None else b.extract(self.value, i64, STRIDES, dim)

    def element_pointer(
        self, b: Builder, indices: Sequence[SSAValue], inbounds: bool = True
    ) -> SSAValue:
        """`aligned + offset + sum(index * stride)` as a GEP over the element type
        (`inbounds` unless the address may lie outside the buffer)."""
        linear: int | SSAValue = self.offset(b)
        for dim, index in enumerate(indices):
            linear = b.add(linear, b.mul(index, self.stride(b, dim)))
        aligned = self.aligned(b)
        if linear == 0:
            return aligned
        element = llvm_type(self.type_.element_type)
        assert element is not None, "checked before rewriting"
        return b.emit(llvm_ops.element_address(aligned, b.value(linear), element, inbounds))


def pack_descriptor(
    b: Builder,
    rank: int,
    allocated: SSAValue,
    aligned: SSAValue,
    offset: int | SSAValue,
    sizes: Sequence[int | SSAValue],
    strides: Sequence[int | SSAValue],
) -> SSAValue:
    """A new descriptor struct value from its fields (`undef` + `insertvalue`s)."""
    struct = b.emit(llvm_ops.undef(descriptor_type(rank)))
    struct = b.insert(struct, allocated, ALLOCATED)
    struct = b.insert(struct, aligned, ALIGNED)
    struct = b.insert(struct, b.value(offset), OFFSET)
    for dim, size in enumerate(sizes):
        struct = b.insert(struct, b.value(size), SIZES, dim)
    for dim, stride in enumerate(strides):
        struct = b.insert(struct, b.value(stride), STRIDES, dim)
    return struct


def row_major_strides(b: Builder, sizes: Sequence[int | SSAValue]) -> list[int | SSAValue]:
    """Contiguous strides for `sizes` (last dim 1), computed at run time where needed."""
    strides: list[int | SSAValue] = []
    running: int | SSAValue = 1
    for size in reversed(sizes):
        strides.append(running)
        running = b.mul(running, size)
    return strides[::-1]


@dataclass
class TypeRecord:
    """
    The operand types of every op before rewriting began.

    Patterns run in no fixed order, so a memref operand may already have been replaced
    by its descriptor struct; the static shape and layout are read from here instead.
    `declarations` gathers the C functions (malloc, free, libm) the patterns call, which
    the pass declares once at the end; `constants` holds each function's shared
    constants, which `builder` hands to a pattern's `Builder`.
    """

    operand_types: dict[Operation, tuple[Attribute, ...]] = field(
        default_factory=dict[Operation, tuple[Attribute, ...]]
    )
    declarations: dict[str, llvm.LLVMFunctionType] = field(
        default_factory=dict[str, llvm.LLVMFunctionType]
    )
    constants: ConstantPool = field(default_factory=ConstantPool)

    def builder(self, op: Operation) -> Builder:
        """A `Builder` for the ops replacing `op`, using its function's constants."""
        return Builder(constants=self.constants.of(op))

    def memref(self, op: Operation, index: int) -> MemRefType:
        type_ = self.operand_types[op][index]
        assert isinstance(type_, MemRefType), "checked before rewriting"
        return type_

    def descriptor(self, op: Operation, index: int) -> Descriptor:
        return Descriptor(op.operands[index], self.memref(op, index))

    def declare(self, name: str, inputs: Sequence[Attribute], output: Attribute | None) -> None:
        result = llvm.LLVMVoidType() if output is None else output
        self.declarations[name] = llvm.LLVMFunctionType(list(inputs), result)
