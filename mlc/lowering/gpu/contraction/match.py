"""
Which `linalg.generic`s the GPU's tiled contraction kernel takes, and what it needs.

A match (`match`) is an f32 generic on memrefs with one reduction dim and an
`acc + a * b` body, one input along the rows and one along the columns (batch dims in
front), as `convert-linalg-to-parallel-loops` would register-tile it. Every operand is
read through its own indexing map, so a transposed operand (`b[j, k]`) matches too; a
generic whose inputs use the rows and columns otherwise is declined. Also found here:
an epilogue that `linalg-fuse-elementwise` fused in (`scf.if` on the last reduction
iteration) and a fill generic writing the output just before, whose constant the
accumulators can start at.
"""

from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import MemRefType, f32
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Operation, SSAValue

from mlc.lowering.gpu.convert_linalg_to_parallel_loops import (
    SMALL_OUTPUT,
    _static_size,
    contraction_dims,
    narrow_columns,
    outputs_independent_of,
    split_iterators,
)
from mlc.lowering.gpu.fills import fill_before

if TYPE_CHECKING:
    from mlc.lowering.gpu.contraction.conv_match import ConvGeometry


@dataclass
class Contraction:
    """What the kernel needs to know of a matched generic."""

    op: GenericOp
    a: int  # the input that ignores the columns
    b: int  # the input that ignores the rows
    batch: list[int]
    rows: int
    cols: int
    k: int
    accumulate: list[Operation]  # the body's mulf, addf
    epilogue: scf.IfOp | None
    fill: GenericOp | None = None  # the generic that fills the output just before
    conv: "ConvGeometry | None" = None  # a convolution: rows f, cols and k merged loops


def _accumulation(op: GenericOp) -> tuple[int, int, list[Operation], SSAValue] | None:
    """The inputs of `acc + a * b` in the body, its two ops and the value they yield."""
    block = op.body.block
    acc = block.args[-1]
    uses = list(acc.uses)
    if len(uses) != 1 or not isinstance(add := uses[0].operation, arith.AddfOp):
        return None
    product = add.rhs if add.lhs is acc else add.lhs
    mul = product.owner
    if not isinstance(mul, arith.MulfOp) or not product.has_one_use():
        return None
    args = list(block.args)
    if mul.lhs not in args or mul.rhs not in args or mul.lhs is mul.rhs:
        return None
    return args.index(mul.lhs), args.index(mul.rhs), [mul, add], add.result


def _epilogue(op: GenericOp, accumulated: SSAValue) -> scf.IfOp | bool | None:
    """The fused epilogue (`scf.if` yielded by the body), None if none, False if unknown."""
    yielded = op.body.block.last_op
    assert isinstance(yielded, YieldOp)
    if yielded.operands[0] is accumulated:
        return None
    branch = yielded.operands[0].owner
    if not isinstance(branch, scf.IfOp) or len(branch.results) != 1:
        return False
    otherwise = branch.false_region.block.last_op
    if otherwise is None or list(otherwise.operands) != [accumulated]:
        return False
    inside = set(branch.true_region.walk())
    for inner in branch.true_region.walk():
        for operand in inner.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and owner not in inside and operand is not accumulated:
                return False  # only the accumulator and block arguments come from outside
    return branch


def _uses(op: GenericOp, operand: int, dim: int) -> bool:
    """Whether operand `operand`'s indexing map reads loop `dim`."""
    affine_map = op.get_indexing_maps().data[operand].data
    return any(dim in e.used_dims() for e in affine_map.results)


def _roles(op: GenericOp, x: int, y: int, rows: int, cols: int) -> tuple[int, int] | None:
    """Of the product's inputs `x`, `y`: (the one along the rows, the one along the columns)."""
    for a, b in ((x, y), (y, x)):
        if _uses(op, a, rows) and _uses(op, b, cols):
            if _uses(op, a, cols) or _uses(op, b, rows):
                return None
            return a, b
    return None


def _f32_buffers(op: GenericOp) -> bool:
    """Buffer semantics, all operands memrefs, one f32 output."""
    if op.res or len(op.outputs) != 1:
        return False
    if not all(isinstance(v.type, MemRefType) for v in op.operands):
        return False
    output = op.outputs[0].type
    return isinstance(output, MemRefType) and output.element_type == f32


def match(op: GenericOp) -> Contraction | None:
    """The contraction this kernel handles (module docstring), or None."""
    if not _f32_buffers(op):
        return None
    parallel, reduction = split_iterators(op)
    if len(reduction) != 1 or not outputs_independent_of(op, reduction):
        return None
    if (dims := contraction_dims(op, parallel)) is None:
        return None
    if _static_size(op, parallel) < SMALL_OUTPUT or narrow_columns(op, dims[1]) is not None:
        return None  # few outputs, or few columns: the loop mapping's warps share rows
    if (found := _accumulation(op)) is None:
        return None
    x, y, accumulate, accumulated = found
    rows, cols = dims
    if (roles := _roles(op, x, y, rows, cols)) is None:
        return None
    a, b = roles
    if (epilogue := _epilogue(op, accumulated)) is False:
        return None
    assert epilogue is not True
    (k,) = reduction
    others = [i for i in range(len(op.inputs)) if i not in (a, b)]
    if any(_uses(op, i, k) for i in others):
        return None  # an epilogue input read along K
    batch = parallel[:-2]
    return Contraction(op, a, b, batch, rows, cols, k, accumulate, epilogue, fill_before(op))
