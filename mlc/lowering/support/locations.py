"""
Locations for the ops a rewrite builds: every new op carries the location of the op it
comes from, so diagnostics and remarks of later passes point at the user's source.

xDSL's rewriter does not copy locations (`rewriter.replace` leaves new ops unknown);
these are the one way mlc's passes stamp them:

- `located_builder(point, loc)`: an xDSL `Builder` whose every inserted op takes `loc`;
- `keep_location(rewriter, op)`: while it is open, every op the rewriter inserts (and the
  ops nested in it) takes `op`'s location;
- `Located(loc)`: collects ops built in straight-line order, each stamped with `loc`;
- `LocatedEmitter(point, loc)`: inserts ops at a moving point, each stamped with `loc`;
- `fused_location(ops)`: one location for an op built from several.
"""

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import FusedLoc, IntegerAttr, NoneAttr, UnknownLoc
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.lowering.support.op_walk import walk_ops


def located_builder(point: InsertPoint, location: object) -> Builder:
    """An xDSL builder at `point` whose ops all take `location` (the lowered op's)."""

    def located(new: Operation) -> None:
        new.location = location  # pyright: ignore[reportAttributeAccessIssue]

    return Builder(point, operation_insertion_handler=[located])


@contextmanager
def keep_location(rewriter: PatternRewriter, op: Operation) -> Iterator[None]:
    """Give every op inserted in the block (and the ops nested in it) `op`'s location."""

    def stamp(inserted: Operation) -> None:
        for nested in walk_ops(inserted):
            nested.location = op.location

    rewriter.operation_insertion_handler.append(stamp)
    try:
        yield
    finally:
        rewriter.operation_insertion_handler.remove(stamp)


@dataclass
class Located:
    """Collects new ops in order, each at `location`; calling it returns the first result."""

    location: Attribute
    ops: list[Operation] = field(default_factory=list[Operation])

    def __call__(self, op: Operation) -> SSAValue:
        op.location = self.location
        self.ops.append(op)
        return op.results[0]


class LocatedEmitter:
    """
    Inserts ops at a moving point, each at `location` (a `located_builder`); calling it
    returns the op's first result, or None for an op without results. The emitters of
    the GPU kernels build on it.
    """

    def __init__(self, point: InsertPoint, location: Attribute):
        self.location = location
        self.builder = located_builder(point, location)

    @property
    def point(self) -> InsertPoint:
        return self.builder.insertion_point

    def __call__(self, new: Operation) -> SSAValue:
        self.builder.insert(new)
        return new.results[0] if new.results else None  # pyright: ignore[reportReturnType]

    def index(self, value: int) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr.from_index_int_value(value)))

    def keep(self, new: Operation) -> None:
        """Insert `new` with its own location (a cloned body op)."""
        Rewriter.insert_op(new, self.point)


def fused_location(ops: Sequence[Operation]) -> Attribute:
    """
    One location for an op built from `ops`: theirs, fused when they differ, the first
    op's first (diagnostics point there). As MLIR's `FusedLoc::get`, fused locations
    are flattened and repeats dropped, so a chain fused step by step stays one list.
    """
    known: list[Attribute] = []
    for op in ops:
        parts = op.location.locations.data if _is_plain_fusion(op.location) else [op.location]
        known += [p for p in parts if not isinstance(p, UnknownLoc) and p not in known]
    if not known:
        return UnknownLoc()
    return known[0] if len(known) == 1 else FusedLoc(known, NoneAttr())


def _is_plain_fusion(location: Attribute) -> bool:
    return isinstance(location, FusedLoc) and isinstance(location.metadata, NoneAttr)
