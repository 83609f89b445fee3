"""
Head split and merge transposes folded into the fused attention's operand layout.

A transformer's projections write `(batch..., S, H * D)`; the model splits the heads
by a reshape to `(batch..., S, H, D)` and a transpose to the attention's
`(batch..., H, S, D)`, and merges its output back by the inverse transpose and a
reshape. On memrefs the reshapes are views but the transposes are copies, a kernel
each. The attention kernels address their operands through the stand-in's maps, which
take either order of the head and sequence dims, so at the stand-in (on tensors):

    %t = ml.transpose %x {perm = [..., S, H, D]}   (only the attention uses %t)
    %o = ml.attention %t, ...
    %m = ml.transpose %o {perm = [..., S, H, Dv]}  (the attention's only user)
==>
    %m = <stand-in> reading %x as (batch..., S, H, D), writing (batch..., S, H, Dv)

Only the head split (the head and sequence dims swapped, the rest in place) folds: the
feature dim stays innermost and contiguous, which the tensor-core kernel's 16-byte
copies need. A transpose with another user stays (its copy is made anyway, and the
kernel reads it compactly), as does the output's when the attention has other users.
"""

from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from mlc.dialects import ml

OPERANDS = ("q", "k", "v", "out")


def is_head_split(op: Operation | None) -> bool:
    """Whether `op` is an `ml.transpose` swapping the head and sequence dims (the
    third and second from last) and keeping the others in place."""
    if not isinstance(op, ml.TransposeOp):
        return False
    perm = list(op.perm.get_values())
    rank = len(perm)
    if rank < 3:
        return False
    return perm == [*range(rank - 3), rank - 2, rank - 3, rank - 1]


def _only_user(value: SSAValue) -> Operation | None:
    users = {id(use.operation): use.operation for use in value.uses}
    return next(iter(users.values())) if len(users) == 1 else None


@dataclass(frozen=True)
class Folded:
    """What an attention's stand-in reads and writes in place of its operands and
    result: the transposes it absorbs, by operand name (`OPERANDS`)."""

    inputs: dict[str, ml.TransposeOp]
    output: ml.TransposeOp | None

    @property
    def sequence_major(self) -> frozenset[str]:
        """The operands stored `(batch..., S, H, D)`."""
        return frozenset([*self.inputs, *(["out"] if self.output is not None else [])])

    def source(self, name: str, value: SSAValue) -> SSAValue:
        """What the stand-in reads for operand `name` (`value` when not folded)."""
        transpose = self.inputs.get(name)
        return transpose.x if transpose is not None else value


def fold(op: ml.AttentionOp) -> Folded:
    """The head transposes around `op` that its stand-in can absorb (module docstring)."""
    inputs: dict[str, ml.TransposeOp] = {}
    for name, value in zip(OPERANDS, (op.q, op.k, op.v), strict=False):
        owner = value.owner
        if is_head_split(owner) and _only_user(value) is op:
            assert isinstance(owner, ml.TransposeOp)
            inputs[name] = owner
    user = _only_user(op.result)
    output = user if isinstance(user, ml.TransposeOp) and is_head_split(user) else None
    return Folded(inputs, output)


def stored_dim(position: int, rank: int, sequence_major: bool) -> int:
    """The stored dim of logical dim `position` of `(batch..., H, S, D)`, and back (the
    swap is its own inverse)."""
    if not sequence_major or position < rank - 3 or position == rank - 1:
        return position
    return (2 * rank - 5) - position  # H <-> S
