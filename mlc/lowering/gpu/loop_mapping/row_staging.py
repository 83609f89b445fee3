"""
Small buffers that every row of a warp-row kernel reads, staged in shared memory.

A narrow contraction's row (a classifier head's `x @ w`, 10 columns) reads all of `w`
with its lanes along `w`'s rows: lane `l` reads `w[l, c]`, `w[l + 32, c]`, ..., so one
warp load touches 32 rows of `w` 40 bytes apart, ten 128-byte lines for 128 useful
bytes, and L1's line a cycle bounds the kernel. The block's threads copy such a buffer
into shared memory once (rows padded to an odd length, so that consecutive rows start
in different banks), a barrier, and every load of it reads the copy: one wavefront a
load.

A buffer is staged when it is a static memref of at most `STAGED_BYTES`, comes from
outside the loop, is not written in it, and the row's reduction loop indexes it by its
induction variable in a dim other than the last (the lanes' accesses are strided; a
row-contiguous operand, as layer norm's scale, is left to L1).
"""

from collections.abc import Sequence
from math import prod

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects.builtin import IndexType, MemRefType
from xdsl.ir import Block, Region, SSAValue

from mlc.lowering.gpu.contraction.tile_staging import WORKGROUP
from mlc.lowering.support.loop_builder import implicit_index

STAGED_BYTES = 16384  # per buffer: 8 blocks an SM still fit an H100's shared memory


def staged_buffers(op: scf.ParallelOp, loop: scf.ForOp) -> list[SSAValue]:
    """The buffers of `op`'s row reduction `loop` worth staging (module docstring)."""
    inside = set(op.walk())
    written = {o.memref for o in inside if isinstance(o, memref.StoreOp)}
    iv = loop.body.block.args[0]
    found: list[SSAValue] = []
    for load in loop.body.block.ops:
        if not isinstance(load, memref.LoadOp) or load.memref in found:
            continue
        buffer, indices = load.memref, list(load.indices)
        if buffer in written or buffer.owner in inside or not _small(buffer.type):
            continue
        if iv in indices[:-1]:
            found.append(buffer)
    return found


def _small(type_: object) -> bool:
    """A static buffer of at most `STAGED_BYTES`."""
    if not isinstance(type_, MemRefType) or any(size < 0 for size in type_.get_shape()):
        return False
    if not hasattr(type_.element_type, "bitwidth"):
        return False
    width = type_.element_type.bitwidth  # pyright: ignore[reportAttributeAccessIssue]
    return prod(type_.get_shape()) * width <= STAGED_BYTES * 8


def padded_shape(shape: Sequence[int]) -> list[int]:
    """`shape` with its last dim made odd: 32 consecutive rows in 32 different banks."""
    return [*shape[:-1], shape[-1] | 1] if len(shape) > 1 else list(shape)


def stage(buffers: Sequence[SSAValue], thread: SSAValue, threads: int) -> dict[SSAValue, SSAValue]:
    """
    Copies of `buffers` in shared memory, filled by the block's `threads` threads
    (`thread` this one's index) and then a barrier; built under the caller's implicit
    builder, where every thread of the block runs. Returns buffer -> copy.
    """
    copies: dict[SSAValue, SSAValue] = {}
    for buffer in buffers:
        type_ = buffer.type
        assert isinstance(type_, MemRefType)
        shape = type_.get_shape()
        copy = memref.AllocaOp.get(
            type_.element_type, shape=padded_shape(shape), memory_space=WORKGROUP
        ).memref
        total, step = implicit_index(prod(shape)), implicit_index(threads)
        sizes = [implicit_index(size) for size in shape[1:]]
        body = Block(arg_types=[IndexType()])
        with ImplicitBuilder(body):
            indices = _delinearise(body.args[0], sizes)
            value = memref.LoadOp.get(buffer, indices).res
            memref.StoreOp.get(value, copy, indices)
            scf.YieldOp()
        scf.ForOp(thread, total, step, [], Region(body))
        copies[buffer] = copy
    if copies:
        gpu.BarrierOp()
    return copies


def read_copies(region: Region, copies: dict[SSAValue, SSAValue]) -> None:
    """Point every load in `region` of a staged buffer at its copy."""
    for op in region.walk():
        if isinstance(op, memref.LoadOp) and op.memref in copies:
            op.operands[0] = copies[op.memref]


def _delinearise(linear: SSAValue, sizes: Sequence[SSAValue]) -> list[SSAValue]:
    """The indices of element `linear` of a row-major buffer (`sizes`: all dims but the
    first)."""
    indices: list[SSAValue] = []
    rest = linear
    for size in reversed(sizes):
        indices.append(arith.RemUIOp(rest, size).result)
        rest = arith.DivUIOp(rest, size).result
    return [rest, *reversed(indices)]
