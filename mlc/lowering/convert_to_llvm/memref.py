"""
`memref` -> `llvm`: memrefs become descriptor structs, accesses become GEPs.

    %v = memref.load %m[%i, %j] : memref<?x8xf32>
==>
    %p = llvm.extractvalue %m[1]                 // aligned pointer
    %a = llvm.mul %i, 8 ; %l = llvm.add %a, %j   // offset 0 and strides [8, 1] are static
    %e = llvm.getelementptr inbounds %p[%l] : (!llvm.ptr, i64) -> !llvm.ptr, f32
    %v = llvm.load %e : !llvm.ptr -> f32

Offsets and strides the type fixes are used as constants, so LLVM sees them; only the
dynamic ones are read from the descriptor. `memref.alloc` calls `malloc(bytes + 63)` and
rounds the pointer up to 64 bytes with a GEP (keeping the pointer's provenance, which
alias analysis wants); field 0 keeps malloc's pointer, which `memref.dealloc` frees.
A `memref.global` becomes a flat LLVM array global, its dense initialiser kept as data.
`memref.extract_aligned_pointer_as_index` is the aligned pointer as an integer.
`memref.copy` between identity layouts is one `llvm.memcpy`; other copies are turned
into `scf.for` loops by `copy_to_loops` before control flow is lowered.
"""

from collections.abc import Sequence

from xdsl.dialects import arith, llvm, memref, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    NoneAttr,
    i1,
    i8,
    i64,
)
from xdsl.ir import Block, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from mlc.lowering.convert_to_llvm import bf16, llvm_ops
from mlc.lowering.convert_to_llvm.common import (
    PTR,
    TypeRecord,
    element_size,
    llvm_type,
    pack_descriptor,
    replace,
    row_major_strides,
)

SUPPORTED: tuple[type[Operation], ...] = (
    memref.AllocOp,
    memref.AllocaOp,
    memref.DeallocOp,
    memref.LoadOp,
    memref.StoreOp,
    memref.DimOp,
    memref.CopyOp,
    memref.GlobalOp,
    memref.GetGlobalOp,
    memref.SubviewOp,
    memref.CollapseShapeOp,
    memref.ExpandShapeOp,
    memref.ReinterpretCastOp,
    memref.CastOp,
    memref.ExtractAlignedPointerAsIndexOp,
)

ALIGNMENT = 64  # bytes: a cache line and a full AVX-512 vector


def constant_index(value: SSAValue) -> int | None:
    """The value of an index constant (arith or already llvm), else None."""
    owner = value.owner
    if isinstance(owner, arith.ConstantOp | llvm.ConstantOp) and isinstance(
        owner.value, IntegerAttr
    ):
        return owner.value.value.data
    return None


def unsupported_memref_op_reason(op: Operation) -> str | None:
    """What a memref op needs that convert-to-llvm cannot give it, or None."""
    if isinstance(op, memref.AllocOp | memref.AllocaOp):
        if not isinstance(op.memref.type.layout, NoneAttr):
            return (
                "with a non-identity layout is not supported "
                "(allocate contiguous memory and take a subview)"
            )
    if isinstance(op, memref.DimOp) and constant_index(op.index) is None:
        return "with a non-constant dimension index is not supported"
    if isinstance(op, memref.CollapseShapeOp | memref.ExpandShapeOp):
        if not isinstance(op.src.type.layout, NoneAttr) or not isinstance(
            op.result.type.layout, NoneAttr
        ):
            return "is only supported on identity layouts (copy the strided view first)"
    if (
        isinstance(op, memref.GlobalOp)
        and not isinstance(op.initial_value, DenseIntOrFPElementsAttr)
        and op.sym_visibility.data == "private"
    ):
        return "without a dense initial value must be public (an external declaration)"
    if isinstance(op, memref.CastOp) and not (
        isinstance(op.source.type, MemRefType)
        and isinstance(op.source.type.layout, NoneAttr)
        and isinstance(op.dest.type.layout, NoneAttr)
    ):
        return "is only supported between identity layouts of one rank"
    if isinstance(op, memref.SubviewOp) and dropped_dims(op) is None:
        return "drops dimensions that are not static unit dimensions"
    return None


def dropped_dims(op: memref.SubviewOp) -> set[int] | None:
    """The source dims a rank-reducing subview drops (static size-1 dims), or None if unclear."""
    sizes = op.static_sizes.get_values()
    result_shape = op.result.type.get_shape()
    drop = len(sizes) - len(result_shape)
    dropped: set[int] = set()
    j = 0
    for i, size in enumerate(sizes):
        remaining_source = len(sizes) - i
        remaining_result = len(result_shape) - j
        if size == 1 and drop and (remaining_source > remaining_result or result_shape[j] != 1):
            dropped.add(i)
            drop -= 1
        else:
            j += 1
    return dropped if drop == 0 and j == len(result_shape) else None


def _mixed(static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[int | SSAValue]:
    """Merge a static list holding `DYNAMIC_INDEX` markers with the dynamic operands."""
    values = iter(dynamic)
    return [next(values) if x == memref.DYNAMIC_INDEX else x for x in static]


def copy_to_loops(op: memref.CopyOp) -> list[Operation]:
    """
    An `scf.for` nest copying element by element: for copies that are not one memcpy.

    Ops, not a rewrite, so the pass can run it before `convert-scf-to-cf`.
    """
    source_type = op.source.type
    assert isinstance(source_type, MemRefType)
    rank = source_type.get_num_dims()
    zero = arith.ConstantOp(IntegerAttr(0, IndexType()))
    one = arith.ConstantOp(IntegerAttr(1, IndexType()))
    dims = [arith.ConstantOp(IntegerAttr(dim, IndexType())) for dim in range(rank)]
    sizes = [memref.DimOp(op.source, dim) for dim in dims]
    bodies = [Block(arg_types=[IndexType()]) for _ in range(rank)]
    indices = [body.args[0] for body in bodies]
    load = memref.LoadOp.get(op.source, indices)
    store = memref.StoreOp.get(load.res, op.destination, indices)
    inner: list[Operation] = [load, store]
    for dim in reversed(range(rank)):  # wrap the body in one loop per dim, innermost first
        bodies[dim].add_ops([*inner, scf.YieldOp()])
        inner = [scf.ForOp(zero, sizes[dim], one, [], bodies[dim])]
    return [zero, one, *dims, *sizes, *inner]


class CopyToLoops(RewritePattern):
    """A `memref.copy` that is not between identity layouts -> an `scf.for` nest."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CopyOp, rewriter: PatternRewriter, /) -> None:
        if is_contiguous_copy(op):
            return  # one memcpy, see ConvertCopy
        new_ops = copy_to_loops(op)
        for new in new_ops:
            for inner in new.walk():
                inner.location = op.location
        rewriter.replace(op, new_ops, [])


def is_contiguous_copy(op: memref.CopyOp) -> bool:
    """Both sides identity layouts: the copy is one memcpy of the whole buffer."""
    source, destination = op.source.type, op.destination.type
    assert isinstance(source, MemRefType) and isinstance(destination, MemRefType)
    return isinstance(source.layout, NoneAttr) and isinstance(destination.layout, NoneAttr)


class ConvertAlloc(RewritePattern):
    """`memref.alloc` -> `malloc` + align up; `memref.alloca` -> `llvm.alloca`."""

    def __init__(self, record: TypeRecord):
        self.record = record

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if not isinstance(op, memref.AllocOp | memref.AllocaOp):
            return
        type_ = op.memref.type
        b = self.record.builder(op)
        sizes = _mixed(type_.get_shape(), op.dynamic_sizes)
        count: int | SSAValue = 1
        for size in sizes:
            count = b.mul(count, size)
        element = llvm_type(type_.element_type)
        assert element is not None
        if isinstance(op, memref.AllocaOp):
            allocated = b.emit(llvm.AllocaOp(b.value(count), element, alignment=ALIGNMENT))
            aligned = allocated
        else:
            nbytes = b.add(b.mul(count, element_size(type_.element_type)), ALIGNMENT - 1)
            self.record.declare("malloc", [i64], PTR)
            allocated = b.call("malloc", [b.value(nbytes)], PTR)
            assert allocated is not None
            # pad = (-address) & 63 bytes moves the pointer up to the next 64-byte line.
            address = b.emit(llvm.PtrToIntOp(allocated, i64))
            negated = b.emit(llvm_ops.binary(llvm.SubOp, b.value(0), address))
            pad = b.emit(llvm_ops.binary(llvm.AndOp, negated, b.value(ALIGNMENT - 1)))
            aligned = b.emit(llvm_ops.element_address(allocated, pad, i8))
        strides = row_major_strides(b, sizes)
        pack_descriptor(b, len(sizes), allocated, aligned, 0, sizes, strides)
        replace(rewriter, op, b.ops)


class ConvertDealloc(RewritePattern):
    """`memref.dealloc` -> `free` of the allocated pointer (field 0)."""

    def __init__(self, record: TypeRecord):
        self.record = record

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DeallocOp, rewriter: PatternRewriter, /) -> None:
        b = self.record.builder(op)
        allocated = self.record.descriptor(op, 0).allocated(b)
        self.record.declare("free", [PTR], None)
        b.call("free", [allocated], None)
        replace(rewriter, op, b.ops, [])


class ConvertLoadStore(RewritePattern):
    """`memref.load`/`store` -> address arithmetic, `llvm.load`/`store`."""

    def __init__(self, record: TypeRecord):
        self.record = record

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        b = self.record.builder(op)
        if isinstance(op, memref.LoadOp):
            pointer = self.record.descriptor(op, 0).element_pointer(b, op.indices)
            b.emit(llvm_ops.load(pointer, llvm_type(op.res.type)))
            replace(rewriter, op, b.ops)
        elif isinstance(op, memref.StoreOp):
            pointer = self.record.descriptor(op, 1).element_pointer(b, op.indices)
            b.ops.append(llvm_ops.store(op.value, pointer))
            replace(rewriter, op, b.ops, [])


class ConvertDim(RewritePattern):
    """`memref.dim` with a constant index -> the static size or the descriptor's field."""

    def __init__(self, record: TypeRecord):
        self.record = record

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DimOp, rewriter: PatternRewriter, /) -> None:
        dim = constant_index(op.index)
        assert dim is not None, "checked before rewriting"
        b = self.record.builder(op)
        size = self.record.descriptor(op, 0).size(b, dim)
        replace(rewriter, op, b.ops, [b.value(size)])


class ConvertCopy(RewritePattern):
    """`memref.copy` between identity layouts -> `llvm.memcpy` of the whole buffer."""

    def __init__(self, record: TypeRecord):
        self.record = record

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CopyOp, rewriter: PatternRewriter, /) -> None:
        b = self.record.builder(op)
        source = self.record.descriptor(op, 0)
        destination = self.record.descriptor(op, 1)
        count: int | SSAValue = 1
        for dim in range(source.rank):
            count = b.mul(count, source.size(b, dim))
        nbytes = b.mul(count, element_size(source.type_.element_type))
        to = destination.element_pointer(b, [])
        from_ = source.element_pointer(b, [])
        is_volatile = b.constant(0, i1)
        b.ops.append(
            llvm.CallIntrinsicOp(
                "llvm.memcpy.p0.p0.i64", [to, from_, b.value(nbytes), is_volatile], []
            )
        )
        replace(rewriter, op, b.ops, [])


class ConvertGlobal(RewritePattern):
    """`memref.global` -> a flat `llvm.mlir.global` array holding the dense data."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.GlobalOp, rewriter: PatternRewriter, /) -> None:
        type_ = op.type
        count = 1
        for size in type_.get_shape():
            count *= size
        element = llvm_type(type_.element_type)
        assert element is not None
        private = op.sym_visibility.data == "private"
        # An uninitialised public global is a declaration, defined outside (a resource).
        value = op.initial_value if isinstance(op.initial_value, DenseIntOrFPElementsAttr) else None
        if value is not None and isinstance(type_.element_type, BFloat16Type):
            value = bf16.dense_bits(value, [count])  # its bit patterns, as i16
        new = llvm.GlobalOp(
            llvm.LLVMArrayType(count, element),
            op.sym_name,
            "internal" if private else "external",
            constant=op.constant is not None,
            value=value,
            alignment=ALIGNMENT,
        )
        replace(rewriter, op, [new], [])


class ConvertGetGlobal(RewritePattern):
    """`memref.get_global` -> `llvm.mlir.addressof` in a static descriptor (never freed)."""

    def __init__(self, record: TypeRecord):
        self.record = record

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.GetGlobalOp, rewriter: PatternRewriter, /) -> None:
        type_ = op.memref.type
        b = self.record.builder(op)
        address = b.emit(llvm.AddressOfOp(op.name_.string_value(), PTR))
        sizes: list[int | SSAValue] = list(type_.get_shape())
        pack_descriptor(b, len(sizes), address, address, 0, sizes, row_major_strides(b, sizes))
        replace(rewriter, op, b.ops)


class ConvertExtractAlignedPointer(RewritePattern):
    """`memref.extract_aligned_pointer_as_index` -> the descriptor's aligned pointer as i64."""

    def __init__(self, record: TypeRecord):
        self.record = record

    @op_type_rewrite_pattern
    def match_and_rewrite(
        self, op: memref.ExtractAlignedPointerAsIndexOp, rewriter: PatternRewriter, /
    ) -> None:
        b = self.record.builder(op)
        pointer = self.record.descriptor(op, 0).aligned(b)
        b.emit(llvm.PtrToIntOp(pointer, i64))
        replace(rewriter, op, b.ops)


class ConvertCast(RewritePattern):
    """
    `memref.cast` between identity layouts of one rank: the same descriptor.

    Only static knowledge changes (`?` <-> a size); the run-time sizes are the same.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CastOp, rewriter: PatternRewriter, /) -> None:
        rewriter.replace(op, [], [op.source])


class ConvertView(RewritePattern):
    """`subview`, `reinterpret_cast`, `collapse_shape`, `expand_shape`: new metadata, same data."""

    def __init__(self, record: TypeRecord):
        self.record = record

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if isinstance(op, memref.SubviewOp):
            fields = self._subview(op)
        elif isinstance(op, memref.ReinterpretCastOp):
            fields = self._reinterpret_cast(op)
        elif isinstance(op, memref.CollapseShapeOp | memref.ExpandShapeOp):
            fields = self._reshape(op)
        else:
            return
        b, offset, sizes, strides = fields
        source = self.record.descriptor(op, 0)
        allocated, aligned = source.allocated(b), source.aligned(b)
        pack_descriptor(b, len(sizes), allocated, aligned, offset, sizes, strides)
        replace(rewriter, op, b.ops)

    def _subview(self, op: memref.SubviewOp):
        b = self.record.builder(op)
        source = self.record.descriptor(op, 0)
        result = op.result.type
        offsets = _mixed(op.static_offsets.get_values(), op.offsets)
        sizes = _mixed(op.static_sizes.get_values(), op.sizes)
        steps = _mixed(op.static_strides.get_values(), op.strides)
        # Static facts of the result type win: LLVM then sees constants.
        offset: int | SSAValue | None = result.get_offset()
        if offset is None:
            offset = source.offset(b)
            for dim, start in enumerate(offsets):
                offset = b.add(offset, b.mul(start, source.stride(b, dim)))
        dropped = dropped_dims(op) or set()
        result_strides = list(result.get_strides() or [None] * result.get_num_dims())
        kept = [dim for dim in range(source.rank) if dim not in dropped]
        strides: list[int | SSAValue] = []
        for stride, dim in zip(result_strides, kept, strict=True):
            strides.append(
                stride if stride is not None else b.mul(source.stride(b, dim), steps[dim])
            )
        return b, offset, [sizes[dim] for dim in kept], strides

    def _reinterpret_cast(self, op: memref.ReinterpretCastOp):
        b = self.record.builder(op)
        (offset,) = _mixed(op.static_offsets.get_values(), op.offsets)
        sizes = _mixed(op.static_sizes.get_values(), op.sizes)
        strides = _mixed(op.static_strides.get_values(), op.strides)
        return b, offset, sizes, strides

    def _reshape(self, op: memref.CollapseShapeOp | memref.ExpandShapeOp):
        b = self.record.builder(op)
        source = self.record.descriptor(op, 0)
        result = op.result.type
        groups = [[dim.value.data for dim in group] for group in op.reassociation.data]
        sizes: list[int | SSAValue]
        if isinstance(op, memref.CollapseShapeOp):
            sizes = []
            for group in groups:
                size: int | SSAValue = 1
                for dim in group:
                    size = b.mul(size, source.size(b, dim))
                sizes.append(size)
        else:
            sizes = _mixed(op.static_output_shape.get_values(), op.output_shape)
        sizes = [
            static if static >= 0 else size
            for static, size in zip(result.get_shape(), sizes, strict=True)
        ]
        return b, source.offset(b), sizes, row_major_strides(b, sizes)
