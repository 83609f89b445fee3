"""
A software prefetch of one element of a flat memref, at the loops level.

Neither xDSL's `memref` nor its `vector` dialect has MLIR's `memref.prefetch`, so the
prefetch is written as the `llvm` ops it becomes: the buffer's aligned pointer plus the
element's byte offset, as a pointer, passed to `llvm.prefetch`. `convert-to-llvm` lowers
the pointer extraction and the index arithmetic around the `llvm` ops and leaves those as
they are; the intrinsic's three flags are `i32` constants, inline in the LLVM IR as its
`immarg`s require.

    %base = "memref.extract_aligned_pointer_as_index"(%c) : (memref<?xf32>) -> index
    %at = base + position * 4 (as i64), %p = llvm.inttoptr %at
    llvm.call_intrinsic "llvm.prefetch.p0"(%p, %write, %locality, %data)
"""

from xdsl.dialects import arith, llvm, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType, i32, i64
from xdsl.ir import SSAValue

from mlc.lowering.support.loop_builder import Ops

INTRINSIC = "llvm.prefetch.p0"
L1_LOCALITY = 3  # keep in all levels of the cache, as BLIS's `prefetcht0` of the C tile
L2_LOCALITY = 2  # `prefetcht1`: into L2, not L1


def element_bytes(buffer: SSAValue) -> int:
    """Bytes of one element of the memref `buffer`."""
    type_ = buffer.type
    assert isinstance(type_, MemRefType)
    return max(1, type_.element_type.bitwidth // 8)  # pyright: ignore[reportAttributeAccessIssue]


def aligned_base(b: Ops, buffer: SSAValue) -> SSAValue:
    """The address of element 0 of `buffer`, as an index (once per function, then reused)."""
    return b(memref.ExtractAlignedPointerAsIndexOp.get(buffer))


def prefetch(
    b: Ops, base: SSAValue, position: SSAValue, size: int, write: bool, locality: int = L1_LOCALITY
) -> None:
    """Prefetch the element at `position` of a buffer whose element 0 is at `base`
    (`aligned_base`) and whose elements are `size` bytes, for a write or a read."""
    address = b(arith.IndexCastOp(b.add(base, b.mul(position, b.index(size))), i64))
    pointer = b(llvm.IntToPtrOp(address))
    flags = [b(arith.ConstantOp(IntegerAttr(v, i32))) for v in (int(write), locality, 1)]
    b.ops.append(llvm.CallIntrinsicOp(INTRINSIC, [pointer, *flags], []))
