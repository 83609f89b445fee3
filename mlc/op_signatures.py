"""
An op's verification remembered by its signature, within one module's verification.

xDSL verifies each op from its IRDL definition: operand and result counts, each type,
property and attribute against its constraint, then the traits. For an op class with
no regions or successors, no verifier of its own and only traits that check nothing,
that verdict depends on the op's class, operand and result types, properties and
attributes alone, so ops of the same signature verify alike. The `nvvm` stage's
ResNet-50 (~100k `llvm` ops, most of them repeats) took 3 s to verify op by op. What
depends on where an op sits (an erased operand; the last op of a block must be a
terminator) is checked for every op, as `Operation.verify` checks it.
"""

from collections.abc import Hashable

from xdsl.dialects import llvm
from xdsl.ir import ErasedSSAValue, Operation
from xdsl.irdl import IRDLOperation
from xdsl.traits import IsTerminator, NoTerminator, OpTrait, SameOperandsAndResultType
from xdsl.utils.exceptions import VerifyException

# Op classes whose own `verify_` reads only their signature (xDSL 0.74's: an intrinsic's
# name, a GEP's indices into its element type, a shuffle's mask against its operand
# types, a compare's operand and result shapes): the kernels' most frequent ops.
SIGNATURE_VERIFIERS: frozenset[type[Operation]] = frozenset(
    {llvm.CallIntrinsicOp, llvm.GEPOp, llvm.ShuffleVectorOp, llvm.ICmpOp}
)
# Traits whose `verify` reads only the op's types.
SIGNATURE_TRAITS: tuple[type[OpTrait], ...] = (SameOperandsAndResultType,)


class SignatureVerifier:
    """`verify(op)` raises as `op.verify(verify_nested_ops=False)` would; a signature
    that verified once is not checked against its definition again."""

    def __init__(self) -> None:
        self.context_free: dict[type[Operation], bool] = {}
        self.valid: set[Hashable] = set()

    def verify(self, op: Operation) -> None:
        cls = type(op)
        free = self.context_free.get(cls)
        if free is None:
            free = self.context_free[cls] = _context_free(cls)
        if not free:
            op.verify(verify_nested_ops=False)
            return
        try:
            key = (
                cls,
                tuple(operand.type for operand in op.operands),
                tuple(result.type for result in op.results),
                len(op.regions),
                len(op.successors),
                tuple(op.properties.items()),
                tuple(op.attributes.items()),
            )
            known = key in self.valid
        except TypeError:  # an attribute that does not hash
            op.verify(verify_nested_ops=False)
            return
        if not known:
            op.verify(verify_nested_ops=False)
            self.valid.add(key)
            return
        _check_placement(op)


def _context_free(cls: type[Operation]) -> bool:
    """Whether `cls`'s verification reads nothing but the op's signature: an IRDL op
    without regions or successors, whose `verify_` is the generated one with no
    verifier of the class's own (or one of `SIGNATURE_VERIFIERS`), and whose traits
    check nothing or only types."""
    if not issubclass(cls, IRDLOperation):
        return False
    definition = cls.get_irdl_definition()
    if definition.regions or definition.successors:
        return False
    if any(
        type(trait).verify is not OpTrait.verify and not isinstance(trait, SIGNATURE_TRAITS)
        for trait in definition.traits
    ):
        return False
    function = cls.verify_
    cells = dict(zip(function.__code__.co_freevars, function.__closure__ or (), strict=False))
    custom = cells.get("custom_verify")
    if "op_def" not in cells or custom is None:
        return False
    return custom.cell_contents is Operation.verify_ or cls in SIGNATURE_VERIFIERS


def _check_placement(op: Operation) -> None:
    """What `Operation.verify` checks of an op without regions or successors besides
    its definition: no erased operand, and a terminator where a block must end."""
    for operand in op.operands:
        if isinstance(operand, ErasedSSAValue):
            raise ValueError("Erased SSA value is used by the operation")
    block = op.parent
    region = None if block is None else block.parent
    if block is None or region is None or block.last_op is not op:
        return
    if op.has_trait(IsTerminator):
        return
    if len(region.blocks) > 1:
        raise VerifyException(
            f"Operation {op.name} terminates block in multi-block region but is not a terminator"
        )
    parent = region.parent
    if parent is not None and not parent.has_trait(NoTerminator):
        raise VerifyException(
            f"Operation {op.name} terminates block in single-block region but is not a terminator"
        )
