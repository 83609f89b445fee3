"""
Places in a row reduction's body, for `fuse-row-epilogues`: when two indices are the
same, what the fused row body last stored at each place of its top level (so that a
joining loop's loads can read the stored value) and every place it accesses (so that a
joining loop's stores cannot race another row).
"""

from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.dialects import memref, scf
from xdsl.ir import SSAValue

from mlc.lowering.support.loop_builder import constant_index


def same_index(a: SSAValue, b: SSAValue) -> bool:
    """Whether two index values are the same: one value, or equal constants."""
    if a is b:
        return True
    ca, cb = constant_index(a), constant_index(b)
    return ca is not None and ca == cb


@dataclass
class Row:
    """What the fused row body has done so far: the value it last stored at each place
    of its top level (for forwarding), and every access it makes (for hazards)."""

    ivs: Sequence[SSAValue]
    stored: dict[SSAValue, list[tuple[tuple[SSAValue, ...], SSAValue]]] = field(
        default_factory=dict
    )
    # every load and store so far, at any depth: buffer -> the indices of each access
    accesses: dict[SSAValue, list[tuple[SSAValue, ...]]] = field(default_factory=dict)
    written: set[SSAValue] = field(default_factory=set)  # stored, at any depth

    def access(self, op: memref.LoadOp | memref.StoreOp) -> None:
        self.accesses.setdefault(op.memref, []).append(tuple(op.indices))
        if isinstance(op, memref.StoreOp):
            self.written.add(op.memref)

    def in_own_rows(self, buffer: SSAValue) -> bool:
        """Whether every access to `buffer` so far is in the row's own slice of it."""
        rows = len(self.ivs)
        return all(
            same_place(indices[:rows], self.ivs) for indices in self.accesses.get(buffer, [])
        )

    def store(self, buffer: SSAValue, indices: Sequence[SSAValue], value: SSAValue) -> None:
        places = [p for p in self.stored.get(buffer, []) if not same_place(p[0], indices)]
        self.stored[buffer] = [*places, (tuple(indices), value)]

    def value_at(self, buffer: SSAValue, indices: Sequence[SSAValue]) -> SSAValue | None:
        for place, value in self.stored.get(buffer, []):
            if same_place(place, indices):
                return value
        return None


def same_place(a: Sequence[SSAValue], b: Sequence[SSAValue]) -> bool:
    return len(a) == len(b) and all(same_index(x, y) for x, y in zip(a, b, strict=True))


def row_of(reduction: scf.ParallelOp) -> Row:
    """The places the reduction's body stores at its top level, and what it touches."""
    row = Row(list(reduction.body.block.args))
    for op in reduction.body.block.ops:
        if isinstance(op, memref.StoreOp):
            row.store(op.memref, list(op.indices), op.value)
    for op in reduction.body.walk():
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            row.access(op)
    return row
