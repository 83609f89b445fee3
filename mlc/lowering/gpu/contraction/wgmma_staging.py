"""
How the wgmma kernel (`wgmma_kernel`) copies an operand's K slices from global to
shared memory, where `wgmma_layout` says the instructions read them.

Every thread copies, with `cp.async`: an operand contiguous along K (A[m, k], a
transposed B[n, k]) or, for 16-bit values, along its extent (a row-major B[k, n], a
transposed A[k, m]) moves 16 bytes a copy along its contiguous dim (8 16-bit values,
4 f32), into the swizzled slice as it lies (the instruction told which by its
transpose flags).

tf32 has no transpose flag: both operands must be K-major in shared memory. An f32
operand contiguous along its extent (the usual row-major B[k, n]) is transposed into
a K-major copy before the kernel (`kmajor_operand`), so tf32 operands here are always
K-major.

Copies of rows past M or N, or K past its end, read nothing and fill zeros
(`cp.async`'s source size 0), which adds nothing; their addresses are clamped inside
the operand.
"""

from dataclasses import dataclass

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import i32
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Block, SSAValue
from xdsl.ir.affine import AffineDimExpr

from mlc.lowering.gpu.contraction import async_copy
from mlc.lowering.gpu.contraction import wgmma_layout as layout
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.half_staging import element_address
from mlc.lowering.gpu.contraction.match import Contraction


def k_major(op: GenericOp, operand: int, k: int, extent: int) -> bool | None:
    """Whether `operand` is contiguous along K (True), along `extent` (False), or neither."""
    results = op.get_indexing_maps().data[operand].data.results
    if not results or not all(isinstance(r, AffineDimExpr) for r in results):
        return None
    last = results[-1]
    assert isinstance(last, AffineDimExpr)
    return True if last.position == k else False if last.position == extent else None


@dataclass
class Operand:
    """One operand's slices: where it is in a stage, how it lies, this thread's copies."""

    index: int  # of the generic's operands
    extent_dim: int  # its loop dim along M (A) or N (B)
    extent: int  # rows (A) or cols (B) of the block's tile
    k_major: bool  # in shared memory (the descriptor's layout)
    start: int  # bytes from a stage's start
    copies: list[tuple[SSAValue, SSAValue, SSAValue]]  # (extent, k, shared offset i32)


@dataclass
class Staging:
    """The copies of one block's slices (module docstring)."""

    c: Contraction
    bounds: list[SSAValue]
    batch_ivs: list[SSAValue]
    threads: int
    element_bytes: int  # 2 (f16, bf16) or 4 (tf32)

    @property
    def depth(self) -> int:
        return layout.depth(self.element_bytes)

    @property
    def unit(self) -> int:
        """Values one 16-byte copy moves."""
        return layout.UNIT_BYTES // self.element_bytes

    def operand(
        self, e: Emitter, index: int, dim: int, extent: int, start: int, tid: SSAValue
    ) -> Operand:
        """An operand's layout and this thread's copies of each slice (`wgmma_layout`)."""
        major = k_major(self.c.op, index, self.c.k, dim)
        assert major is not None
        assert major or self.element_bytes != layout.TF32_BYTES  # `kmajor_operand`
        units_along = self.depth // self.unit if major else extent // self.unit  # a row's
        copies = []
        for n in range(extent * self.depth // self.unit // self.threads):
            unit = e.add(tid, n * self.threads)
            row, along = e.div(unit, units_along), e.mul(e.rem(unit, units_along), self.unit)
            x, k = (row, along) if major else (along, row)
            copies.append((x, k, _swizzled(e, self._linear(e, major, x, k))))
        return Operand(index, dim, extent, major, start, copies)

    def _linear(self, e: Emitter, major: bool, x: SSAValue, k: SSAValue) -> SSAValue:
        """`wgmma_layout.offset` of (x, k) as i32 (x a multiple of 8 when MN-major)."""
        size = self.element_bytes
        if major:
            at = e.add(e.mul(x, layout.ROW_BYTES), e.mul(k, size))
        else:
            per_row = layout.ROW_BYTES // size
            panel = e.mul(e.div(x, per_row), layout.panel_bytes(self.depth))
            within = e.mul(e.rem(x, per_row), size)
            at = e.add(e.add(panel, e.mul(k, layout.ROW_BYTES)), within)
        return e(arith.IndexCastOp(at, i32))

    def issue(
        self,
        e: Emitter,
        t: SSAValue,
        slices: SSAValue,
        stage_at: SSAValue,
        operands: list[Operand],
        origins: dict[int, SSAValue],
    ) -> None:
        """Slice `t`'s copies into the stage at `stage_at` (i32) if there is such a
        slice; then a commit (every thread commits, an empty group too)."""
        c = self.c
        body = Block()
        e(scf.IfOp(e.less(t, slices), [], [body]))
        s = e.region(body)
        k_first, k_size = s.mul(t, self.depth), self.bounds[c.k]
        zero = s.index(0)
        for operand in operands:
            size = self.bounds[operand.extent_dim]
            origin = origins[operand.extent_dim]
            tile = s(arith.AddiOp(stage_at, _i32(s, operand.start)))
            # the last unit inside: no address past the buffer, even for a copy that
            # reads nothing (M, N, K are multiples of the unit)
            unit_along, unit_deep = (1, self.unit) if operand.k_major else (self.unit, 1)
            for x, k, offset in operand.copies:
                along, deep = s.add(origin, x), s.add(k_first, k)
                inside = s(arith.AndIOp(s.less(along, size), s.less(deep, k_size)))
                along = s(arith.MinUIOp(along, s.sub(size, unit_along)))
                deep = s(arith.MinUIOp(deep, s.sub(k_size, unit_deep)))
                ivs = [zero] * len(self.bounds)
                for dim, iv in zip(c.batch, self.batch_ivs, strict=True):
                    ivs[dim] = iv
                ivs[operand.extent_dim], ivs[c.k] = along, deep
                address = element_address(
                    s,
                    c.op.operands[operand.index],
                    s.indices(c.op, operand.index, ivs),
                    self.element_bytes,
                )
                shared = s(arith.AddiOp(tile, offset))
                async_copy.copy_to(s, shared, address, async_copy.bytes_if(s, inside))
        s(scf.YieldOp())
        async_copy.commit_group(e)


def _i32(e: Emitter, value: int) -> SSAValue:
    return e(arith.ConstantOp.from_int_and_width(value, i32))


def _swizzled(e: Emitter, linear: SSAValue) -> SSAValue:
    """`wgmma_layout.swizzle` of an i32 byte offset: unit bits 4-6 XOR row bits 7-9."""
    row = e(arith.AndIOp(e(arith.ShRUIOp(linear, _i32(e, 3))), _i32(e, 0x70)))
    return e(arith.XOrIOp(linear, row))
