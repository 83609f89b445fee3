"""
The body of a multiply-accumulate generic, as the GPU's tiled contraction kernel reads
it for matmuls (`match`) and convolutions (`conv_match`) alike: the `acc + a * b` it
accumulates, an epilogue `linalg-fuse-elementwise` fused into its last iteration (an
`scf.if` the body yields), and which loops each operand's indexing map reads.
"""

from xdsl.dialects import arith, scf
from xdsl.dialects.linalg.ops import GenericOp, YieldOp
from xdsl.ir import Operation, SSAValue


def accumulation(op: GenericOp) -> tuple[int, int, list[Operation], SSAValue] | None:
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


def fused_epilogue(op: GenericOp, accumulated: SSAValue) -> scf.IfOp | bool | None:
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


def reads_loop(op: GenericOp, operand: int, dim: int) -> bool:
    """Whether operand `operand`'s indexing map reads loop `dim`."""
    affine_map = op.get_indexing_maps().data[operand].data
    return any(dim in e.used_dims() for e in affine_map.results)
