"""
How the tiled contraction kernel stages 16-bit operands (f16, bf16) for the tensor cores
(`mlc.lowering.gpu.contraction.mma_half`).

The tiles are laid out as the operands lie in memory, as `tile_staging`'s are:
`[buffer, extent, k]` for an operand contiguous along K (A[i, k], a transposed
B[j, k]), `[buffer, k, extent]` otherwise; the `ldmatrix` fragment loads read the
second with `.trans`. Every row is padded by `HALF_PAD` elements (16 bytes), so a row
is an odd number of 16-byte units long (the tile shapes see to it): the 8 rows an
`ldmatrix` matrix reads then start on 8 distinct 16-byte bank groups, conflict free.
(An XOR swizzle of unpadded rows was measured instead: its per-lane chunk arithmetic
took 30 more registers at 128x128, one block an SM instead of two, 11% slower on an
H200.) Shared addresses are 32-bit offsets into the shared window (`shared_address`),
one register each where LLVM hoists them out of the K loop.

When both operands allow it (at run time: 16-byte aligned buffers whose rows hold a
multiple of 8 elements, and runs of 8 elements a thread), slices reach the tiles by
16-byte `cp.async` copies of 8 elements, `stages` slices in flight; a copy past K is
zero-filled (K is then a multiple of 8 along K: a copy is all in or all out). Otherwise
each element is loaded on its own through registers (clamped into the buffer, zero
past K) into two alternating buffers, and the same fragment loads read them.
"""

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, llvm, memref
from xdsl.dialects.builtin import FloatAttr, MemRefType, i32, i64
from xdsl.ir import Attribute, SSAValue

from mlc.lowering.gpu.contraction import async_copy
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.match import Contraction
from mlc.lowering.gpu.contraction.tile_staging import HALF_PAD, WORKGROUP, Staging

CHUNK = 8  # 16-bit elements in one 16-byte copy
ELEMENT_BYTES = 2


def half_stagings(
    c: Contraction, rows: int, cols: int, depth: int, threads: int, buffers: int
) -> tuple["HalfStaging", "HalfStaging"]:
    """A's and B's stagings; both copy element by element unless both can copy 16 bytes."""
    stagings = tuple(
        HalfStaging.of_half(c, operand, extent, depth, threads, buffers)
        for operand, extent in ((c.a, rows), (c.b, cols))
    )
    a, b = stagings
    if not a.width == b.width == CHUNK:
        a.width = b.width = 1
    return a, b


@dataclass
class HalfStaging(Staging):
    """One 16-bit operand's shared tiles (module docstring)."""

    @staticmethod
    def of_half(
        c: Contraction, operand: int, extent: int, depth: int, threads: int, buffers: int
    ) -> "HalfStaging":
        plain = Staging.of(c, operand, extent, depth, threads, True, buffers)
        width = CHUNK if plain.width > 1 and plain.copies % CHUNK == 0 else 1
        return HalfStaging(
            c, operand, plain.extent_dim, extent, depth, threads, plain.along_k,
            plain.tile_along_k, width, buffers,
        )  # fmt: skip

    @property
    def element(self) -> Attribute:
        buffer = self.buffer.type
        assert isinstance(buffer, MemRefType)
        return buffer.element_type

    def allocate(self, emit: Emitter) -> None:
        if self.tile_along_k:
            shape = [self.buffers, self.extent, self.depth + HALF_PAD]
        else:
            shape = [self.buffers, self.depth, self.extent + HALF_PAD]
        alloca = memref.AllocaOp.get(self.element, shape=shape, memory_space=WORKGROUP)
        self.tile = emit(alloca)

    def value_types(self, vectors: bool) -> list:
        """A thread's run, element by element (the register path)."""
        return [self.element] * self.copies

    def vectorisable(self, emit: Emitter) -> SSAValue | None:
        """Whether the `cp.async` path may run: 16-byte aligned, rows of whole copies."""
        if self.width == 1:
            return None
        buffer = self.buffer
        assert isinstance(buffer.type, MemRefType)
        address = emit(memref.ExtractAlignedPointerAsIndexOp.get(buffer))
        zero = emit.index(0)
        aligned = emit(arith.CmpiOp(emit.rem(address, async_copy.COPY_BYTES), zero, "eq"))
        last = emit(memref.DimOp(buffer, emit.index(buffer.type.get_num_dims() - 1)))
        rows = emit(arith.CmpiOp(emit.rem(last, CHUNK), zero, "eq"))
        return emit(arith.AndIOp(aligned, rows))

    def zero_element(self, emit: Emitter) -> SSAValue:
        return emit(arith.ConstantOp(FloatAttr(0.0, self.element)))  # pyright: ignore[reportArgumentType]

    def zeros(self, emit: Emitter, vectors: bool) -> list[SSAValue]:
        return [self.zero_element(emit)] * self.copies

    def store(
        self,
        e: Emitter,
        buffer: SSAValue,
        run: tuple[SSAValue, SSAValue],
        values: list[SSAValue],
        first: SSAValue,
        k_size: SSAValue,
    ) -> None:
        """A thread's run (element by element) into tile `buffer`, zero past K."""
        assert self.tile is not None
        k_run, along_run = run
        zero = self.zero_element(e)
        for q, value in enumerate(values):
            k, along = self._place(e, k_run, along_run, q)
            inside = e.less(e.add(first, k), k_size)
            kept = e(arith.SelectOp(inside, value, zero))
            e(memref.StoreOp.get(kept, self.tile, self.at(buffer, k, along)))

    def copy_async(
        self,
        e: Emitter,
        buffer: SSAValue,
        run: tuple[SSAValue, SSAValue],
        first: SSAValue,
        base: SSAValue,
        sizes: tuple[SSAValue, SSAValue],
        ivs: Callable[[SSAValue, SSAValue], list[SSAValue]],
    ) -> None:
        """A thread's run of the slice at K index `first` into tile `buffer`, 8 at a copy."""
        assert self.tile is not None and self.width == CHUNK
        k_run, along_run = run
        k0, along0 = e.add(first, k_run), e.add(base, along_run)
        for start in range(0, self.copies, CHUNK):
            k, along = self._place(e, k0, along0, start)
            indices = self._clamped(e, k, along, sizes, ivs, CHUNK)
            source = element_address(e, self.buffer, indices)
            tile_k, tile_along = self._place(e, k_run, along_run, start)
            shared = shared_address(e, self.tile, self.at(buffer, tile_k, tile_along))
            async_copy.copy_to(e, shared, source, async_copy.bytes_if(e, e.less(k, sizes[0])))


def shared_address(e: Emitter, tile: SSAValue, indices: list[SSAValue]) -> SSAValue:
    """
    The 32-bit shared-window address (i32) of 16-bit `tile[indices]`, a static
    row-major shared tile: its offset is computed in 32 bits, so the addresses LLVM
    hoists out of the K loop take one register each instead of two.
    """
    assert isinstance(tile.type, MemRefType)
    base = e(arith.IndexCastOp(e(memref.ExtractAlignedPointerAsIndexOp.get(tile)), i64))
    to_shared = llvm.InlineAsmOp("cvta.to.shared.u64 $0, $1;", "=l,l", [base], [i64])
    window = e(arith.TruncIOp(e(to_shared), i32))
    narrow = [e(arith.IndexCastOp(index, i32)) for index in indices]
    linear = narrow[0]
    for size, index in zip(tile.type.get_shape()[1:], narrow[1:], strict=True):
        linear = e(arith.AddiOp(e(arith.MuliOp(linear, _i32(e, size))), index))
    return e(arith.AddiOp(window, e(arith.MuliOp(linear, _i32(e, ELEMENT_BYTES)))))


def _i32(e: Emitter, value: int) -> SSAValue:
    return e(arith.ConstantOp.from_int_and_width(value, i32))


def element_address(
    e: Emitter, buffer: SSAValue, indices: list[SSAValue], element_bytes: int = ELEMENT_BYTES
) -> SSAValue:
    """The generic address of 16-bit (or `element_bytes`) `buffer[indices]`, a row-major
    memref, no offset."""
    assert isinstance(buffer.type, MemRefType)
    linear = indices[0]
    for dim, index in enumerate(indices[1:], start=1):
        size = buffer.type.get_shape()[dim]
        extent = e.index(size) if size >= 0 else e(memref.DimOp(buffer, e.index(dim)))
        linear = e.add(e.mul(linear, extent), index)
    base = e(memref.ExtractAlignedPointerAsIndexOp.get(buffer))
    return e.add(base, e.mul(linear, element_bytes))
