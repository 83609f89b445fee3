"""
One function per kind of register micro-kernel, called from the tile loops of every
matmul and convolution of a program, as BLIS and oneDNN call theirs: the MR x NR
accumulate over a K block and its write-back (`mlc.lowering.cpu.matmul_micro_kernel`)
are built, lowered and optimised by LLVM once, not once per GEMM. A training step's
GEMMs or ResNet-50's twenty convolution shapes then share two or three functions.

    func.func private @mlc_micro_kernel_f32_6x16v8_acc_edge(
        %a: memref<?xf32>, %a_off, %a_row, %a_k, %rows,     A: row r at k is
                                                            a[a_off + min(r, rows-1)*a_row + k*a_k]
        %bp: memref<?xf32>, %b_off, %depth,                 panel: bp[b_off + k*NR + jj]
        %c: memref<?xf32>, %c_off, %c_row, %columns)        C: c[c_off + r*c_row + jj]

A kind is the element types of A, the panels and C, MR, NR, the vector length, whether
the tile is stored or added to C (`acc`), whether N may end inside it (`edge`: the
masked stores) and whether A comes from its packed block (`packed`: MR-row
micro-panels, contiguous along k, so its strides are constants of the function). Each
operand is passed as a flat view of its buffer, with offsets and strides computed by
the caller, which needs identity layouts and C's columns contiguous (`shareable`).
The caller keeps the loops, the packing and the epilogue.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    IndexType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    VectorType,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.traits import SymbolTable

from mlc.lowering.cpu.matmul_micro_kernel import micro_kernel, write_back
from mlc.lowering.linalg.contraction import Matmul
from mlc.lowering.support.loop_builder import Ops, collapse_trailing
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
    accumulate: bool
    edge: bool
    packed: bool

    @property
    def name(self) -> str:
        types = "_".join(dict.fromkeys(str(t) for t in (self.a, self.accumulator, self.c)))
        mode = "acc" if self.accumulate else "store"
        edge = "_edge" if self.edge else ""
        packed = "_packed" if self.packed else ""
        return f"mlc_micro_kernel_{types}_{self.mr}x{self.nr}v{self.vector}_{mode}{edge}{packed}"


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


def call(
    b: Ops,
    kernels: "SharedKernels",
    kind: MicroKernel,
    a: tuple[SSAValue, SSAValue, SSAValue, SSAValue, SSAValue],
    panel: tuple[SSAValue, SSAValue, SSAValue],
    c: tuple[SSAValue, SSAValue, SSAValue, SSAValue],
) -> None:
    """`func.call` of `kind`'s function: `a` is (A, offset, row stride, k stride, rows
    left), `panel` (panels, offset, depth), `c` (C, offset, row stride, columns left)."""
    b.ops.append(func.CallOp(kernels.symbol(kind), [*a, *panel, *c], []))


class SharedKernels:
    """The module's micro-kernel functions, each defined once, before the function
    whose kernel first needs it."""

    def __init__(self, op: Operation):
        self.op = op

    def symbol(self, kind: MicroKernel) -> str:
        module = self.op.get_toplevel_object()
        assert isinstance(module, ModuleOp)
        name = kind.name
        if SymbolTable.lookup_symbol(module, name) is None:
            function = self.op.parent_op()
            while function is not None and function.parent_op() is not module:
                function = function.parent_op()
            assert function is not None
            module.body.block.insert_op_before(kernel_function(kind), function)
        return name


def kernel_function(kind: MicroKernel) -> func.FuncOp:
    """The private function of `kind` (the module docstring)."""
    index = IndexType()
    inputs: list[Attribute] = [MemRefType(kind.a, [DYNAMIC_INDEX]), *[index] * 4]
    inputs += [MemRefType(kind.accumulator, [DYNAMIC_INDEX]), index, index]
    inputs += [MemRefType(kind.c, [DYNAMIC_INDEX]), index, index, index]
    block = Block(arg_types=inputs)
    a, a_off, a_row, a_k, rows, panels, b_off, depth, c, c_off, c_row, columns = block.args
    b = Ops()
    tiles = MatmulTiles(kind.mr, kind.nr, 1, kind.mr, kind.vector)
    if kind.packed:  # micro-panel rows are adjacent, its k steps MR apart
        a_row, a_k = b.index(1), b.index(kind.mr)
    last = b.sub(rows, b.index(1))
    starts = [a_off] + [
        b.add(a_off, b.mul(b.min(b.index(r), last), a_row)) for r in range(1, kind.mr)
    ]
    nr = b.index(kind.nr)

    def a_at(rb: Ops, r: int, k: SSAValue) -> list[SSAValue]:
        return [rb.add(starts[r], rb.mul(k, a_k))]

    def panel_at(kb: Ops, k: SSAValue, offset: SSAValue) -> list[SSAValue]:
        return [kb.add(kb.add(b_off, kb.mul(k, nr)), offset)]

    def c_at(cb: Ops, row: SSAValue, column: SSAValue) -> list[SSAValue]:
        return [cb.add(cb.add(c_off, cb.mul(row, c_row)), column)]

    vector_type = VectorType(kind.accumulator, [kind.vector])
    zero_i = b.index(0)
    acc = micro_kernel(b, (a, a_at), (panels, panel_at), (zero_i, depth), tiles, vector_type)
    write_back(
        b, (c, c_at), acc, (zero_i, zero_i), (rows, columns), tiles, kind.accumulate, kind.edge
    )
    b.ops.append(func.ReturnOp())
    block.add_ops(b.ops)
    return func.FuncOp(kind.name, (inputs, []), Region(block), "private")
