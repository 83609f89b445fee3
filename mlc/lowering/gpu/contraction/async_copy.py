"""
Asynchronous global-to-shared copies (`cp.async`, sm_80 and later) for the GPU's tiled
contraction kernel, as inline PTX (`llvm.inline_asm`: xDSL has no NVVM dialect, and the
NVVM intrinsics take typed address-space pointers that xDSL cannot cast to).

A copy moves 16 bytes from global to shared memory without passing through registers:
the thread issues it and goes on, so several K slices can be in flight at once while
the current one is multiplied. `src_bytes` below 16 (0 past K) zero-fills the rest.
Copies are grouped (`commit_group`); `wait_group(n)` waits until at most `n` of the
thread's groups are pending, after which a barrier makes every thread's copies visible
to the block. The asm statements clobber memory, so LLVM keeps shared loads and
stores in order around them.

Both addresses are generic (as `memref.extract_aligned_pointer_as_index` gives them in
a kernel) and converted in the asm (`cvta.to.shared`, `cvta.to.global`); `copy_to`
takes the shared one as a 32-bit offset into the shared window instead (the 16-bit
path's `half_staging.shared_address`).
"""

from xdsl.dialects import arith, llvm
from xdsl.dialects.builtin import i32, i64
from xdsl.ir import SSAValue

from mlc.lowering.gpu.contraction.emitter import Emitter

COPY_BYTES = 16

_COPY = (
    "{ .reg .u64 sa, ga; cvta.to.shared.u64 sa, $0; cvta.to.global.u64 ga, $1; "
    f"cp.async.cg.shared.global [sa], [ga], {COPY_BYTES}, $2; }}"
)


def copy(e: Emitter, shared: SSAValue, source: SSAValue, src_bytes: SSAValue) -> None:
    """16 bytes from generic address `source` (index) to `shared`; `src_bytes` (i32) read."""
    to_i64 = [e(arith.IndexCastOp(address, i64)) for address in (shared, source)]
    e(llvm.InlineAsmOp(_COPY, "l,l,r,~{memory}", [*to_i64, src_bytes], has_side_effects=True))


def _copy_to(size: int) -> str:
    # .cg (L2 only) takes 16-byte copies alone; smaller ones go through L1 (.ca)
    cache = "cg" if size == COPY_BYTES else "ca"
    return (
        "{ .reg .u64 ga; cvta.to.global.u64 ga, $1; "
        f"cp.async.{cache}.shared.global [$0], [ga], {size}, $2; }}"
    )


def copy_to(
    e: Emitter, shared: SSAValue, source: SSAValue, src_bytes: SSAValue, size: int = COPY_BYTES
) -> None:
    """`copy` to a 32-bit shared-window address `shared` (i32), of `size` bytes (16, 8
    or 4: one f32 of the wgmma kernel's transposing copies)."""
    source = e(arith.IndexCastOp(source, i64))
    e(
        llvm.InlineAsmOp(
            _copy_to(size), "r,l,r,~{memory}", [shared, source, src_bytes], has_side_effects=True
        )
    )


def commit_group(e: Emitter) -> None:
    """Close the thread's copies issued since the last commit into one group."""
    e(llvm.InlineAsmOp("cp.async.commit_group;", "~{memory}", [], has_side_effects=True))


def wait_group(e: Emitter, pending: int) -> None:
    """Wait until at most `pending` of the thread's groups are still in flight."""
    text = f"cp.async.wait_group {pending};"
    e(llvm.InlineAsmOp(text, "~{memory}", [], has_side_effects=True))


def bytes_if(e: Emitter, inside: SSAValue, size: int = COPY_BYTES) -> SSAValue:
    """`size` where `inside` holds, else 0 (a zero-filled copy), as i32."""
    full = e(arith.ConstantOp.from_int_and_width(size, i32))
    none = e(arith.ConstantOp.from_int_and_width(0, i32))
    return e(arith.SelectOp(inside, full, none))
