"""
One function per kind of register micro-kernel, called from the tile loops of every
matmul and convolution of a program, as BLIS and oneDNN call theirs: the MR x NR
accumulate over a K block and its write-back (`mlc.lowering.cpu.matmul_micro_kernel`)
are built, lowered and optimised by LLVM once, not once per GEMM. A training step's
GEMMs or ResNet-50's twenty convolution shapes then share two or three functions.

    func.func private @mlc_micro_kernel_f32_6x16v8(
        %a: memref<?xf32>, %a_off, %a_row, %a_k, %rows,     A: row r at k is
                                                            a[a_off + min(r, rows-1)*a_row + k*a_k]
        %bp: memref<?xf32>, %b_off, %depth, [%b_k,]         panel: bp[b_off + k*NR + jj]
                                                            (`_bk`: bp[b_off + k*b_k + jj])
        %c: memref<?xf32>, %c_off, %c_row, %columns,        C: c[c_off + r*c_row + jj]
        %accumulate: i1)                                    C += tile, else C = tile

A kind is the element types of A, the panels and C, MR, NR, the vector length and
whether A comes from its packed block (`packed`: MR-row micro-panels, contiguous along
k, so its strides are constants of the function), and whether B is read in place
(`b_in_place`: its k rows are `b_k` apart, and each step prefetches the row
`B_PREFETCH_ROWS` ahead, which the hardware's prefetchers do not fetch across 4 KiB).
Everything else is an argument, so that a program has one or two kinds per element
type: whether the tile is added to C or stored (the first K block of a kernel whose C
held zeros), and where N ends (the tile's columns past N are masked; a full tile takes
the plain stores). The C tile is
prefetched before a K block of `PREFETCH_DEPTH` or more (`prefetch_tile`), so that its
write-back finds it in L1.
Each operand is passed as a flat view of its buffer, with offsets and strides computed
by the caller, which needs identity layouts and C's columns contiguous (`shareable`). The caller
keeps the loops and the epilogue; B's packing has shared functions of its own
(`mlc.lowering.cpu.shared_packing`). The function is `no_inline`: LLVM otherwise
inlines it back into a program's few callers (a call per tile and K block costs
nothing next to the block's MR x NR x KC multiply-adds).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    UnitAttr,
    VectorType,
    i1,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.traits import SymbolTable

from mlc.lowering.cpu.matmul_micro_kernel import CAt, RowAt, micro_kernel, write_back
from mlc.lowering.cpu.matmul_packing import element_of
from mlc.lowering.linalg.contraction import Matmul, indices
from mlc.lowering.support import quick_ops
from mlc.lowering.support.loop_builder import Ops, collapse_trailing, if_then
from mlc.lowering.support.prefetch import L2_LOCALITY, aligned_base, element_bytes, prefetch
from mlc.tiling_model import MatmulTiles


@dataclass(frozen=True)
class MicroKernel:
    """What makes two micro-kernels the same function (the module docstring)."""

    a: Attribute
    accumulator: Attribute
    c: Attribute
    mr: int
    nr: int
    vector: int
    packed: bool
    b_in_place: bool = False

    @property
    def name(self) -> str:
        types = "_".join(dict.fromkeys(str(t) for t in (self.a, self.accumulator, self.c)))
        packed = "_packed" if self.packed else ""
        in_place = "_bk" if self.b_in_place else ""
        return f"mlc_micro_kernel_{types}_{self.mr}x{self.nr}v{self.vector}{packed}{in_place}"


def shareable(mm: Matmul, operands: Sequence[SSAValue]) -> bool:
    """Whether A, the panels and C have identity layouts and C's last dim is the column
    loop (contiguous columns): then each is one flat buffer with offsets and strides."""
    column = mm.maps[2].results[-1]
    if not (isinstance(column, AffineDimExpr) and column.position == mm.batch + 2):
        return False
    return all(
        isinstance(v.type, MemRefType) and isinstance(v.type.layout, NoneAttr) for v in operands
    )


def flat_view(b: Ops, value: SSAValue) -> SSAValue:
    """`value` (an identity-layout memref) as one dynamic dimension: the kernels' type."""
    type_ = value.type
    assert isinstance(type_, MemRefType)
    if type_.get_num_dims() != 1:
        value = collapse_trailing(b, value, 0)
    wanted = MemRefType(type_.element_type, [DYNAMIC_INDEX])
    return b(memref.CastOp.get(value, wanted)) if value.type != wanted else value


def linear(b: Ops, value: SSAValue, indices: Sequence[SSAValue]) -> SSAValue:
    """The position of `value[indices]` in its identity-layout buffer."""
    type_ = value.type
    assert isinstance(type_, MemRefType)
    position = indices[0]
    for d in range(1, type_.get_num_dims()):
        position = b.add(b.mul(position, b.dim(value, d)), indices[d])
    return position


@dataclass(frozen=True)
class TileCalls:
    """A kernel's operands as the shared micro-kernels take them: A, C and the panels as
    flat buffers, and the strides of A's rows and k and of C's rows (from their maps,
    at batch 0: a batch moves the offsets only); where B is read in place (the panels
    are B), the stride of its k (`b_k`)."""

    kernels: "SharedKernels"
    mm: Matmul
    tiles: MatmulTiles
    operands: tuple[SSAValue, SSAValue, SSAValue]  # A, C, panels
    flat: tuple[SSAValue, SSAValue, SSAValue]
    strides: tuple[SSAValue, SSAValue, SSAValue]  # A's row and k, C's row
    b_k: SSAValue | None = None

    @staticmethod
    def of(
        b: Ops,
        kernels: "SharedKernels",
        mm: Matmul,
        tiles: MatmulTiles,
        operands: tuple[SSAValue, SSAValue, SSAValue],
        b_in_place: bool = False,
    ) -> "TileCalls | None":
        """The calls for `mm`'s tiles; None if its operands do not allow them."""
        if not shareable(mm, operands):
            return None
        a, c, _ = operands
        zero_i, one = b.index(0), b.index(1)
        batch = [zero_i] * mm.batch

        def at(value: SSAValue, map_index: int, loops: list[SSAValue]) -> SSAValue:
            return linear(b, value, indices(b, mm.maps[map_index], [*batch, *loops]))

        a_origin, c_origin = at(a, 0, [zero_i] * 3), at(c, 2, [zero_i] * 3)
        a_row = b.sub(at(a, 0, [one, zero_i, zero_i]), a_origin)
        a_k = b.sub(at(a, 0, [zero_i, one, zero_i]), a_origin)
        c_row = b.sub(at(c, 2, [one, zero_i, zero_i]), c_origin)
        a_flat, c_flat, panels_flat = (flat_view(b, value) for value in operands)
        flat = (a_flat, c_flat, panels_flat)
        b_k = None
        if b_in_place:
            b_origin = at(operands[2], 1, [zero_i] * 3)
            b_k = b.sub(at(operands[2], 1, [zero_i, one, zero_i]), b_origin)
        return TileCalls(kernels, mm, tiles, operands, flat, (a_row, a_k, c_row), b_k)

    def call(
        self,
        b: Ops,
        a: tuple[RowAt, SSAValue | None],
        tile: tuple[SSAValue, SSAValue, SSAValue],
        k_range: tuple[SSAValue, SSAValue],
        c_at: CAt,
        panel: tuple[SSAValue, SSAValue],
        sizes: tuple[SSAValue, SSAValue],
        overwrite: bool,
    ) -> None:
        """
        The call for the MR x NR tile at `tile` (row, column, the task's first row) over
        `k_range`: A read through `a` (its indices, or the task's packed block), the
        panel `panel` (batch, number; B at the tile's column where it is read in place,
        the batch ignored: B has none). With `overwrite`, the first K block stores into C
        (which held no zeros).
        """
        (a_at, block), (i, j0, i0), (k0, k_end) = a, tile, k_range
        (a, c, packed), (a_flat, c_flat, panels_flat) = self.operands, self.flat
        (a_row, a_k, c_row), (m, n), zero_i = self.strides, sizes, b.index(0)
        rows_left = b.sub(m, i)
        if block is not None:
            q = b(arith.DivSIOp(b.sub(i, i0), b.index(self.tiles.mr)))
            at = linear(b, block, [q, zero_i, zero_i])
            a_args = (flat_view(b, block), at, a_row, a_k, rows_left)
        else:
            a_args = (a_flat, linear(b, a, a_at(b, i, k0)), a_row, a_k, rows_left)
        if self.b_k is None:
            at = linear(b, packed, [*panel, k0, zero_i])
            panel_args = (panels_flat, at, b.sub(k_end, k0))
        else:
            at = linear(b, packed, indices(b, self.mm.maps[1], [zero_i, k0, j0]))
            panel_args = (panels_flat, at, b.sub(k_end, k0), self.b_k)
        c_args = (c_flat, linear(b, c, c_at(b, i, j0)), c_row, b.sub(n, j0))
        types = (element_of(a_args[0]), self.mm.accumulator, element_of(c))
        blocking = (self.tiles.mr, self.tiles.nr, self.tiles.vector)
        in_place = self.b_k is not None
        kind = MicroKernel(*types, *blocking, packed=block is not None, b_in_place=in_place)
        adds = b(arith.CmpiOp(k0, zero_i, "ne" if overwrite else "sge"))
        name = self.kernels.symbol(kind)
        b.ops.append(func.CallOp(name, [*a_args, *panel_args, *c_args, adds], []))


class SharedKernels:
    """The module's shared functions (micro-kernels, B packings), each defined once,
    before the function whose kernel first needs it."""

    def __init__(self, op: Operation):
        self.op = op

    def symbol(self, kind: MicroKernel) -> str:
        return self.define(kind.name, lambda: kernel_function(kind))

    def define(self, name: str, build: Callable[[], func.FuncOp]) -> str:
        """`name`, the function `build` gives defined in the module if it was not yet."""
        module = self.op.get_toplevel_object()
        assert isinstance(module, ModuleOp)
        if SymbolTable.lookup_symbol(module, name) is None:
            function = self.op.parent_op()
            while function is not None and function.parent_op() is not module:
                function = function.parent_op()
            assert function is not None
            module.body.block.insert_op_before(build(), function)
        return name


# The K block depth from which the C tile is prefetched: 4096 x 16 x 256 ran 0.93x with
# the prefetch at every depth (its 24 prefetches next to a 16-step loop, C in cache),
# 4096 x 32 x 128 1.01x, 1024 x 64 x 256 1.01x (one thread, one process, 2026-11-29).
PREFETCH_DEPTH = 32


def prefetch_tile(
    b: Ops, c: tuple[SSAValue, SSAValue, SSAValue], last: SSAValue, kind: MicroKernel
) -> None:
    """
    Prefetch (for writing) the cache lines of the C tile that the write-back reads and
    writes after the K loop: each row's 64-byte lines and its last element (a row that
    does not start on a line spans one more), rows past the last read as the last. C is
    read once per K block, its tiles rows apart (outside L2 for a large C): without the
    prefetch each write-back waited for its 2 x MR misses, 1024 x 1024 ran 1.23x slower.
    Columns past N may be prefetched: a prefetch never faults.
    """
    buffer, offset, row_stride = c
    base, size = aligned_base(b, buffer), element_bytes(buffer)
    columns = sorted({*range(0, kind.nr, max(1, 64 // size)), kind.nr - 1})
    for r in range(kind.mr):
        row = offset if r == 0 else b.add(offset, b.mul(b.min(b.index(r), last), row_stride))
        for column in columns:
            prefetch(b, base, b.add(row, b.index(column)) if column else row, size, write=True)


# Rows ahead of the K loop that a B read in place is prefetched, into L2 (each step
# fetches the lines of the panel's row this far on; past B's end a prefetch fetches
# nothing). Its rows are N apart, a 4 KiB multiple at N = 1024: the hardware's
# prefetchers do not cross pages, and in L1 they share a few sets with A's rows. On
# the 2-core VM (B in L2/L3 between calls) 0, 8 and 16 rows and L1 or L2 timed alike
# (64 x 1024 x 1024, one thread, 2026-11-29); it is for a B that comes from memory.
B_PREFETCH_ROWS = 8


def _row_prefetch(
    b: Ops, panel: tuple[SSAValue, SSAValue, SSAValue], kind: MicroKernel
) -> Callable[[Ops, SSAValue], None]:
    """The prefetch, at step `k`, of the panel's row `k + B_PREFETCH_ROWS` of B read in
    place: each of its 64-byte lines."""
    buffer, offset, row_stride = panel
    base, size = aligned_base(b, buffer), element_bytes(buffer)
    columns = range(0, kind.nr, max(1, 64 // size))
    ahead = b.mul(b.index(B_PREFETCH_ROWS), row_stride)
    start = b.add(offset, ahead)

    def fetch(kb: Ops, k: SSAValue) -> None:
        row = kb.add(start, kb.mul(k, row_stride))
        for column in columns:
            at = kb.add(row, kb.index(column)) if column else row
            prefetch(kb, base, at, size, write=False, locality=L2_LOCALITY)

    return fetch


def kernel_function(kind: MicroKernel) -> func.FuncOp:
    """The private function of `kind` (the module docstring)."""
    index = IndexType()
    inputs: list[Attribute] = [MemRefType(kind.a, [DYNAMIC_INDEX]), *[index] * 4]
    inputs += [MemRefType(kind.accumulator, [DYNAMIC_INDEX]), index, index]
    inputs += [index] * kind.b_in_place
    inputs += [MemRefType(kind.c, [DYNAMIC_INDEX]), index, index, index, i1]
    block = Block(arg_types=inputs)
    a, a_off, a_row, a_k, rows, panels, b_off, depth, *b_k = block.args[: 8 + kind.b_in_place]
    c, c_off, c_row, columns, adds = block.args[-5:]
    b = Ops()
    tiles = MatmulTiles(kind.mr, kind.nr, 1, kind.mr, kind.vector)
    if kind.packed:  # micro-panel rows are adjacent, its k steps MR apart
        a_row, a_k = b.index(1), b.index(kind.mr)
    last = b.sub(rows, b.index(1))
    starts = [a_off] + [
        b.add(a_off, b.mul(b.min(b.index(r), last), a_row)) for r in range(1, kind.mr)
    ]
    b_row = b_k[0] if b_k else b.index(kind.nr)

    def a_at(rb: Ops, r: int, k: SSAValue) -> list[SSAValue]:
        return [rb.add(starts[r], rb.mul(k, a_k))]

    def panel_at(kb: Ops, k: SSAValue, offset: SSAValue) -> list[SSAValue]:
        return [kb.add(kb.add(b_off, kb.mul(k, b_row)), offset)]

    def c_at(cb: Ops, row: SSAValue, column: SSAValue) -> list[SSAValue]:
        return [cb.add(cb.add(c_off, cb.mul(row, c_row)), column)]

    deep = b(quick_ops.cmpi(depth, b.index(PREFETCH_DEPTH), "sge"))
    if_then(b, deep, lambda pb: prefetch_tile(pb, (c, c_off, c_row), last, kind))
    vector_type = VectorType(kind.accumulator, [kind.vector])
    zero_i = b.index(0)
    ahead = _row_prefetch(b, (panels, b_off, b_row), kind) if kind.b_in_place else None
    acc = micro_kernel(b, (a, a_at), (panels, panel_at), (zero_i, depth), tiles, vector_type, ahead)

    def write(accumulate: bool) -> Callable[[Ops], None]:
        tile, sizes = (zero_i, zero_i), (rows, columns)
        return lambda wb: write_back(wb, (c, c_at), acc, tile, sizes, tiles, accumulate)

    if_then(b, adds, write(True), write(False))
    b.ops.append(func.ReturnOp())
    block.add_ops(b.ops)
    function = func.FuncOp(kind.name, (inputs, []), Region(block), "private")
    function.attributes["no_inline"] = UnitAttr()
    return function
