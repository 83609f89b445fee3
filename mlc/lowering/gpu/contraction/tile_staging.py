"""
How the GPU's tiled contraction kernel stages an operand's K slices in shared memory.

Each input of the contraction (A along the output's rows, B along its columns) is
copied one K slice (`depth` deep) at a time into a shared tile laid out as the operand
lies in memory, so that a warp's global loads are coalesced whatever the layout and no
thread transposes anything:

- `along_k` (A[i, k], or a transposed B[j, k]: K is the contiguous dim): the tile is
  `[buffer, extent, k]`, each thread copies a run of consecutive k of one row;
- otherwise (B[k, j], or a transposed A[k, i]): the tile is `[buffer, k, extent]`,
  each thread copies a run of consecutive rows (or columns) of one k.

Runs are read as vectors of up to 4 floats (`ld.global.v4.f32`) when, at run time, the
buffer starts aligned to the vector and its rows hold a multiple of its width: a run
then never straddles a row's end (its start is clamped to the row's last vector, for
rows and columns past the end, whose results are never stored). Otherwise each element
is read on its own, clamped into the buffer. Elements past K read as zero, so the tail
slice adds nothing. Runs are stored into the tile as 8- or 16-byte vectors.

A thread reads its part of an `along_k` tile as 4 consecutive k of a row (one 16-byte
shared load serves 4 steps of K), rows interleaved between threads (lane + i x rows /
per thread) so that a warp's 16-byte loads fall on distinct banks: rows are padded by
`K_PAD` floats, an odd number of 16-byte units apart. A tile `[buffer, k, extent]` is
read as 4 consecutive rows (or columns) of one k; its rows are padded by `EXTENT_PAD`
so that the tensor-core path's fragment reads (`mlc.lowering.gpu.contraction.mma`) do not conflict.
"""

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import IntegerAttr, MemRefType, NoneAttr, VectorType, f32, i64
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr

from mlc.lowering.gpu.contraction import async_copy
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.match import Contraction

QUAD = 4  # floats per 16-byte load
K_PAD = 4  # floats after each row of an along-K tile
EXTENT_PAD = 8  # floats after each row of a [k, extent] tile
TRANSPOSED_PAD = 4  # floats after each row of a [k, extent] tile of an along-K operand
HALF_PAD = 8  # 16-bit elements after each row of a 16-bit tile (`half_staging`)
WORKGROUP = IntegerAttr(3, i64)  # NVVM's shared address space


def run_width(copies: int) -> int:
    """Floats one global load reads of a thread's run of `copies`: 4, 2 or 1."""
    return next((w for w in (QUAD, 2) if copies % w == 0), 1)


def tile_bytes(extent: int, depth: int, buffers: int = 2) -> int:
    """The most shared memory one operand's `buffers` tiles take, in either layout."""
    return buffers * 4 * max(extent * (depth + K_PAD), depth * (extent + EXTENT_PAD))


def half_tile_bytes(extent: int, depth: int, buffers: int) -> int:
    """`tile_bytes` of a 16-bit operand's tiles (`half_staging`: rows padded by 8)."""
    return buffers * 2 * max(extent * (depth + HALF_PAD), depth * (extent + HALF_PAD))


@dataclass
class Staging:
    """One operand's shared tiles and the run of a slice each thread copies."""

    c: Contraction
    operand: int  # c.a or c.b
    extent_dim: int  # the loop dim along the tile: c.rows or c.cols
    extent: int  # the block tile's rows or columns
    depth: int
    threads: int
    along_k: bool  # K is the operand's contiguous dim: runs go along K
    tile_along_k: bool  # the tile is [buffer, extent, k] (else [buffer, k, extent])
    width: int  # floats a global load reads at once on the vector path (1: none)
    buffers: int = 2  # slices the shared tile holds (more than 2: a `cp.async` pipeline)
    tile: SSAValue | None = None

    @staticmethod
    def of(
        c: Contraction,
        operand: int,
        extent: int,
        depth: int,
        threads: int,
        keep_layout: bool,
        buffers: int = 2,
    ) -> "Staging":
        """
        The staging of `operand` in `buffers` tiles; with `keep_layout`, an along-K run
        stays along K (as the tensor cores read it, and as `cp.async` can copy it).
        """
        extent_dim = c.rows if operand == c.a else c.cols
        affine_map = c.op.get_indexing_maps().data[operand].data
        innermost = affine_map.results[-1] if affine_map.results else None
        along_k = isinstance(innermost, AffineDimExpr) and innermost.position == c.k
        plain = isinstance(innermost, AffineDimExpr) and innermost.position in (c.k, extent_dim)
        buffer = c.op.operands[operand].type
        identity = isinstance(buffer, MemRefType) and isinstance(buffer.layout, NoneAttr)
        width = run_width(extent * depth // threads) if plain and identity else 1
        tile_along_k = along_k and keep_layout
        return Staging(
            c, operand, extent_dim, extent, depth, threads, along_k, tile_along_k, width, buffers
        )

    @property
    def copies(self) -> int:
        return self.extent * self.depth // self.threads

    def allocate(self, emit: Emitter) -> None:
        if self.tile_along_k:
            shape = [self.buffers, self.extent, self.depth + K_PAD]
        elif self.along_k:  # transposed by the stores
            shape = [self.buffers, self.depth, self.extent + TRANSPOSED_PAD]
        else:
            shape = [self.buffers, self.depth, self.extent + EXTENT_PAD]
        self.tile = emit(memref.AllocaOp.get(f32, shape=shape, memory_space=WORKGROUP))

    def at(self, buffer: SSAValue, k: SSAValue, along: SSAValue) -> list[SSAValue]:
        """The tile's indices of step `k` of the slice, row (or column) `along` of the tile."""
        return [buffer, along, k] if self.tile_along_k else [buffer, k, along]

    def assign(self, emit: Emitter, tid: SSAValue) -> tuple[SSAValue, SSAValue]:
        """Where thread `tid`'s run starts: (k within the slice, row or column in the tile)."""
        if self.along_k:
            per_row = self.depth // self.copies
            return emit.mul(emit.rem(tid, per_row), self.copies), emit.div(tid, per_row)
        per_k = self.extent // self.copies
        return emit.div(tid, per_k), emit.mul(emit.rem(tid, per_k), self.copies)

    @property
    def buffer(self) -> SSAValue:
        """The buffer the runs are read from."""
        return self.c.op.operands[self.operand]

    def indices(self, e: Emitter, along: SSAValue, k: SSAValue, ivs) -> list[SSAValue]:
        """The buffer's indices of element (along, k): through the operand's map."""
        return e.indices(self.c.op, self.operand, ivs(along, k))

    def value_types(self, vectors: bool) -> list:
        """The types of a thread's run as `load` returns it on either path."""
        if not vectors or self.width == 1:
            return [f32] * self.copies
        return [VectorType(f32, [self.width])] * (self.copies // self.width)

    def vectorisable(self, emit: Emitter) -> SSAValue | None:
        """Whether the vector path may run (module docstring); None when it never may."""
        if self.width == 1:
            return None
        buffer = self.buffer
        assert isinstance(buffer.type, MemRefType)
        address = emit(memref.ExtractAlignedPointerAsIndexOp.get(buffer))
        zero = emit.index(0)
        aligned = emit(arith.CmpiOp(emit.rem(address, 4 * self.width), zero, "eq"))
        last = emit(memref.DimOp(buffer, emit.index(buffer.type.get_num_dims() - 1)))
        rows = emit(arith.CmpiOp(emit.rem(last, self.width), zero, "eq"))
        return emit(arith.AndIOp(aligned, rows))

    def zeros(self, emit: Emitter, vectors: bool) -> list[SSAValue]:
        zero = emit.zero()
        return [
            zero if t == f32 else emit(vector.BroadcastOp(zero, t))
            for t in self.value_types(vectors)
        ]

    def load(
        self,
        e: Emitter,
        run: tuple[SSAValue, SSAValue],
        first: SSAValue,
        base: SSAValue,
        sizes: tuple[SSAValue, SSAValue],
        ivs: "Callable[[SSAValue, SSAValue], list[SSAValue]]",
        vectors: bool,
    ) -> list[SSAValue]:
        """
        A thread's run of the slice that starts at K index `first`, as `value_types`:
        `run` from `assign`, `base` the tile's first row (or column), `sizes` K and the
        extent's size, `ivs(along, k)` the loop indices of an element. Elements past K
        are read clamped; `store` zeroes them, so nothing waits on a load before then.
        """
        k_run, along_run = run
        k0, along0 = e.add(first, k_run), e.add(base, along_run)
        step = self.width if vectors else 1
        values = []
        for start in range(0, self.copies, step):
            k, along = self._place(e, k0, along0, start)
            values.append(self._read(e, k, along, sizes, ivs, step))
        return values

    def _place(
        self, e: Emitter, k0: SSAValue, along0: SSAValue, step: int
    ) -> tuple[SSAValue, SSAValue]:
        """The (k, row or column) `step` elements into a run starting at (k0, along0)."""
        if step == 0:
            return k0, along0
        if self.along_k:
            return e.add(k0, step), along0
        return k0, e.add(along0, step)

    def _clamped(
        self, e: Emitter, k: SSAValue, along: SSAValue, sizes, ivs, width: int
    ) -> list[SSAValue]:
        """
        The operand's indices of `width` contiguous elements at (k, along), clamped into
        the buffer: a vector's start to its row's last vector (module docstring).
        """
        k_size, size = sizes
        k_last = e.sub(k_size, width if self.along_k else 1)
        along_last = e.sub(size, 1 if self.along_k else width)
        k_in = e(arith.MinUIOp(k, k_last))
        along_in = e(arith.MinUIOp(along, along_last))
        return self.indices(e, along_in, k_in, ivs)

    def _read(self, e: Emitter, k: SSAValue, along: SSAValue, sizes, ivs, width: int):
        """`width` contiguous elements at (k, along), clamped into the buffer (`_clamped`)."""
        operand, indices = self.buffer, self._clamped(e, k, along, sizes, ivs, width)
        if width == 1:
            return e(memref.LoadOp.get(operand, indices))
        read = vector.LoadOp(operand, indices, VectorType(f32, [width]))
        read.attributes["alignment"] = IntegerAttr(4 * width, i64)
        return e(read)

    def store(
        self,
        e: Emitter,
        buffer: SSAValue,
        run: tuple[SSAValue, SSAValue],
        values: list[SSAValue],
        first: SSAValue,
        k_size: SSAValue,
    ) -> None:
        """A thread's run from `load` into the tile, zero past K (vectors: 8 or 16-byte stores)."""
        assert self.tile is not None
        k_run, along_run = run
        step = self.copies // len(values)
        for q, value in enumerate(values):
            k, along = self._place(e, k_run, along_run, q * step)
            inside = e.less(e.add(first, k), k_size)
            if isinstance(value.type, VectorType) and self.along_k and not self.tile_along_k:
                zeros = e(vector.BroadcastOp(e.zero(), value.type))
                kept = e(arith.SelectOp(inside, value, zeros))
                for j in range(step):  # transposed: one 4-byte store each
                    element = e(vector.ExtractOp(kept, [j], f32))
                    place = self.at(buffer, e.add(k, j), along)
                    e(memref.StoreOp.get(element, self.tile, place))
            elif isinstance(value.type, VectorType):
                zeros = e(vector.BroadcastOp(e.zero(), value.type))
                write = vector.StoreOp(
                    e(arith.SelectOp(inside, value, zeros)), self.tile, self.at(buffer, k, along)
                )
                write.attributes["alignment"] = IntegerAttr(4 * step, i64)
                e(write)
            else:
                kept = e(arith.SelectOp(inside, value, e.zero()))
                e(memref.StoreOp.get(kept, self.tile, self.at(buffer, k, along)))

    def copy_async(
        self,
        e: Emitter,
        buffer: SSAValue,
        run: tuple[SSAValue, SSAValue],
        first: SSAValue,
        base: SSAValue,
        sizes: tuple[SSAValue, SSAValue],
        ivs: "Callable[[SSAValue, SSAValue], list[SSAValue]]",
    ) -> None:
        """
        A thread's run of the slice that starts at K index `first` straight into tile
        `buffer`, as 16-byte `cp.async` copies (arguments as `load`'s; the vector path's
        conditions hold: `width` is 4 and the buffer is aligned). A vector past K is
        zero-filled: K is then a multiple of 4 along K, so a vector is all in or all out.
        """
        assert self.tile is not None and self.width == QUAD
        k_run, along_run = run
        k0, along0 = e.add(first, k_run), e.add(base, along_run)
        operand = self.buffer
        for start in range(0, self.copies, QUAD):
            k, along = self._place(e, k0, along0, start)
            source = _address(e, operand, self._clamped(e, k, along, sizes, ivs, QUAD))
            tile_k, tile_along = self._place(e, k_run, along_run, start)
            shared = _address(e, self.tile, self.at(buffer, tile_k, tile_along))
            read = async_copy.bytes_if(e, e.less(k, sizes[0]))
            async_copy.copy(e, shared, source, read)


def _address(e: Emitter, buffer: SSAValue, indices: list[SSAValue]) -> SSAValue:
    """The generic address of `buffer[indices]`, a row-major memref without an offset."""
    assert isinstance(buffer.type, MemRefType)
    linear = indices[0]
    for dim, index in enumerate(indices[1:], start=1):
        size = buffer.type.get_shape()[dim]
        extent = e.index(size) if size >= 0 else e(memref.DimOp(buffer, e.index(dim)))
        linear = e.add(e.mul(linear, extent), index)
    base = e(memref.ExtractAlignedPointerAsIndexOp.get(buffer))
    return e.add(base, e.mul(linear, 4))
