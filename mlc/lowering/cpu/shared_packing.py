"""
One function per kind of B packing, called from every matmul of a program that packs
its B at run time, as the micro-kernels are shared (`mlc.lowering.cpu.shared_micro_kernel`):
the copy of a group of B's panels into the NR-wide layout the micro-kernel reads
(`mlc.lowering.cpu.matmul_packing`) is built, lowered and optimised by LLVM once, not
once per GEMM. A training step packs the B of six GEMMs with two such functions.

    func.func private @mlc_pack_b_f32_32v16(          (`_t`: B read as B[j, k])
        %b: memref<?xf32>, %b_off, %k_stride,          B[k, j]: b[b_off + k*k_stride + j]
        [%j_stride,]                                   (`_t`: + j*j_stride)
        %packed: memref<?x?x?x32xf32>, %t,             the panels of batch t
        %p0, %p_end, %k, %n)                           panels [p0, p_end) of K x N

A kind is B's element type, the panels' (f16 is widened as it is copied), NR, the
vector length, and whether B is read transposed (along k, a column at a time) or
along its rows (a vector of a row at a time, its columns contiguous: no column stride).
Sizes, strides and offsets are arguments, and the last panel's masked copy (where N
ends inside it) is decided at run time, so GEMMs of any shapes share the function. B
must have an identity layout (one flat buffer with offsets and strides); the caller
keeps the loop over panel groups and batches. The function is `no_inline`: LLVM
otherwise inlines it into its few callers and specialises each copy to its sizes, which
undoes the sharing (the MLP step's LLVM IR grew by a seventh).
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, MemRefType, NoneAttr, UnitAttr
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr

from mlc.lowering.cpu.matmul_packing import (
    element_of,
    pack_columns,
    pack_rows,
    partial_panel,
)
from mlc.lowering.cpu.shared_micro_kernel import SharedKernels, flat_view, linear
from mlc.lowering.linalg.contraction import Matmul, indices
from mlc.lowering.support.loop_builder import Ops, for_loop, if_then, less
from mlc.tiling_model import MatmulTiles


@dataclass(frozen=True)
class PackKind:
    """What makes two B packings the same function (the module docstring)."""

    source: Attribute
    packed: Attribute
    nr: int
    vector: int
    transposed: bool

    @property
    def name(self) -> str:
        types = "_".join(dict.fromkeys(str(t) for t in (self.source, self.packed)))
        return f"mlc_pack_b_{types}_{self.nr}v{self.vector}{'_t' if self.transposed else ''}"


def packing_function(kind: PackKind) -> func.FuncOp:
    """The private function of `kind` (the module docstring)."""
    index = IndexType()
    strides = 2 if kind.transposed else 1
    packed_type = MemRefType(kind.packed, [DYNAMIC_INDEX] * 3 + [kind.nr])
    inputs: list[Attribute] = [MemRefType(kind.source, [DYNAMIC_INDEX]), *[index] * (1 + strides)]
    inputs += [packed_type, *[index] * 5]
    block = Block(arg_types=inputs)
    source, offset, k_stride, *rest = block.args
    j_stride = rest[0] if kind.transposed else None
    packed, t, p0, p_end, k, n = rest[-6:]
    b = Ops()

    def source_at(sb: Ops, kk: SSAValue, j: SSAValue) -> list[SSAValue]:
        column = j if j_stride is None else sb.mul(j, j_stride)
        return [sb.add(sb.add(offset, sb.mul(kk, k_stride)), column)]

    tiles = MatmulTiles(1, kind.nr, 1, 1, kind.vector)
    reader = (source, source_at)
    nr = b.index(kind.nr)
    if kind.transposed:

        def columns(cb: Ops, p: SSAValue, _: Sequence[SSAValue]) -> Sequence[SSAValue]:
            pack_columns(cb, reader, (packed, [t, p]), (cb.mul(p, nr), (k, n)), kind.nr)
            return []

        for_loop(b, p0, p_end, b.index(1), columns)
    else:
        full_panels = b(arith.DivSIOp(n, nr))
        pack_rows(b, reader, (packed, t), (p0, b.min(p_end, full_panels), k), tiles)
        partial = partial_panel(reader, (packed, t), (full_panels, (k, n)), tiles)
        if_then(b, less(b, full_panels, p_end), partial)
    b.ops.append(func.ReturnOp())
    block.add_ops(b.ops)
    function = func.FuncOp(kind.name, (inputs, []), Region(block), "private")
    function.attributes["no_inline"] = UnitAttr()
    return function


@dataclass(frozen=True)
class PanelCalls:
    """A matmul's B as the shared packing functions take it: one flat buffer, and the
    strides of its k and j (from its map, at batch 0: a batch moves the offset only)."""

    kernels: SharedKernels
    mm: Matmul
    kind: PackKind
    flat: SSAValue
    strides: tuple[SSAValue, SSAValue]

    @staticmethod
    def of(b: Ops, kernels: SharedKernels, mm: Matmul, tiles: MatmulTiles) -> "PanelCalls | None":
        """The calls packing `mm`'s B; None where B's layout does not allow them (not an
        identity layout, or read along rows whose columns are not its last dim)."""
        source = mm.b
        type_ = source.type
        if not isinstance(type_, MemRefType) or not isinstance(type_.layout, NoneAttr):
            return None
        column = mm.maps[1].results[-1]
        rows_contiguous = isinstance(column, AffineDimExpr) and column.position == mm.batch + 2
        if not (mm.transposed_b or rows_contiguous):
            return None
        kind = PackKind(element_of(source), mm.accumulator, tiles.nr, tiles.vector, mm.transposed_b)
        zero_i, one = b.index(0), b.index(1)
        origin = PanelCalls.at(b, mm, [zero_i] * mm.batch, zero_i, zero_i)
        k_stride = b.sub(PanelCalls.at(b, mm, [zero_i] * mm.batch, one, zero_i), origin)
        j_stride = b.sub(PanelCalls.at(b, mm, [zero_i] * mm.batch, zero_i, one), origin)
        return PanelCalls(kernels, mm, kind, flat_view(b, source), (k_stride, j_stride))

    @staticmethod
    def at(b: Ops, mm: Matmul, batch: Sequence[SSAValue], k: SSAValue, j: SSAValue) -> SSAValue:
        """The position of B's element (batch, k, j) in its buffer."""
        zero_i = b.index(0)
        return linear(b, mm.b, indices(b, mm.maps[1], [*batch, zero_i, k, j]))

    def call(
        self,
        b: Ops,
        batch: Sequence[SSAValue],
        packed: tuple[SSAValue, SSAValue],
        panels: tuple[SSAValue, SSAValue],
        sizes: tuple[SSAValue, SSAValue],
    ) -> None:
        """Pack panels `panels` (first, end) of the batch `batch` (B's batch loop values)
        into `packed` (the panels' buffer, its batch number)."""
        zero_i = b.index(0)
        offset = PanelCalls.at(b, self.mm, batch, zero_i, zero_i)
        k_stride, j_stride = self.strides
        strides = [k_stride, j_stride] if self.kind.transposed else [k_stride]
        args = [self.flat, offset, *strides, *packed, *panels, *sizes]
        kind = self.kind
        name = self.kernels.define(kind.name, lambda: packing_function(kind))
        b.ops.append(func.CallOp(name, args, []))
