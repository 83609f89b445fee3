"""
`cse`: xDSL's common subexpression elimination, with its bookkeeping made linear.

The same walk, the same replacements and erasures in the same order as xDSL's
`CSEDriver` (`xdsl.transforms.common_subexpression_elimination`): each op is looked up
among the ops known in its scope; an equivalent one (same name, attributes,
properties, operands and result types, structurally equal regions) replaces it if it
has no effects, or only reads and the two are in one block with no write between;
otherwise it becomes known. Dead ops are erased at the end. What differs is the cost:

- xDSL hashes an op's attributes, properties, operands and result types each time
  the op is looked up, stored, or compared (four to six times an op); here an op's key
  is hashed once, when it is visited.
- xDSL copies the whole table of known ops on entering each region (on ResNet-50's
  GPU loop IR, ~2k regions under one function of ~40k ops); here a region's table
  holds what the region adds, and a lookup goes out through the enclosing ones.
- The trait answers that depend on an op's class alone (terminator, isolated from
  above, its `MemoryEffect` traits) are looked up once per class, and an op's effects
  once per op.

The answers are xDSL's: a key is never hashed after its op changes (an op's results
are replaced only when no user of them is a known op), so a hash kept is the hash
xDSL would compute again.
"""

from collections.abc import Set as AbstractSet
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnregisteredOp
from xdsl.ir import Block, Operation, Region
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.traits import (
    EffectInstance,
    IsolatedFromAbove,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
)
from xdsl.transforms.common_subexpression_elimination import (
    has_other_side_effecting_op_in_between,
)

from mlc.lowering.support.dead_code import DeadOpCheck


class _Key:
    """An op as a key of the known ops: xDSL's `OperationInfo`, hashed once."""

    __slots__ = ("hash", "op")

    def __init__(self, op: Operation) -> None:
        self.op = op
        self.hash = hash(
            (
                _name(op),
                sum(hash(i) for i in op.attributes.items()),
                sum(hash(i) for i in op.properties.items()),
                hash(op.result_types),
                hash(op.operands),
            )
        )

    def __hash__(self) -> int:
        return self.hash

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, _Key) or self.hash != other.hash:
            return False
        op, theirs = self.op, other.op
        return (
            _name(op) == _name(theirs)
            and op.attributes == theirs.attributes
            and op.properties == theirs.properties
            and op.operands == theirs.operands
            and op.result_types == theirs.result_types
            and all(
                s.is_structurally_equivalent(o)
                for s, o in zip(op.regions, theirs.regions, strict=True)
            )
        )


def _name(op: Operation) -> str:
    return op.op_name.data if isinstance(op, UnregisteredOp) else op.name


class _Scopes:
    """The known ops of the regions the walk is in, innermost last."""

    def __init__(self) -> None:
        self.tables: list[dict[_Key, Operation]] = [{}]

    def get(self, key: _Key) -> Operation | None:
        for table in reversed(self.tables):
            found = table.get(key)
            if found is not None:
                return found
        return None

    def __contains__(self, key: _Key) -> bool:
        return any(key in table for table in self.tables)

    def add(self, key: _Key, op: Operation) -> None:
        self.tables[-1][key] = op


@dataclass
class _ClassTraits:
    terminator: bool
    isolated: bool
    effects: list[MemoryEffect]


class CSEDriver:
    """xDSL's `CSEDriver` (see the module docstring)."""

    def __init__(self) -> None:
        self.rewriter = Rewriter()
        self.to_erase: set[Operation] = set()
        self.known = _Scopes()
        self.is_dead = DeadOpCheck()
        self.classes: dict[type[Operation], _ClassTraits] = {}

    def traits(self, op: Operation) -> _ClassTraits:
        cls = type(op)
        found = self.classes.get(cls)
        if found is None:
            found = self.classes[cls] = _ClassTraits(
                op.has_trait(IsTerminator),
                op.has_trait(IsolatedFromAbove, value_if_unregistered=True),
                op.get_traits_of_type(MemoryEffect),
            )
        return found

    def effects(
        self, op: Operation, interfaces: list[MemoryEffect]
    ) -> AbstractSet[EffectInstance] | None:
        """xDSL's `get_effects`, with the class's traits already found."""
        if not interfaces:
            return None
        effects: set[EffectInstance] = set()
        for interface in interfaces:
            found = interface.get_effects(op)
            if found is None:
                return None
            effects.update(found)
        return effects

    def replace_and_delete(self, op: Operation, existing: Operation) -> None:
        for old, new in zip(op.results, existing.results, strict=True):
            if all(_Key(use.operation) not in self.known for use in old.uses):
                old.replace_all_uses_with(new)
        if all(not result.uses for result in op.results):
            self.to_erase.add(op)

    def simplify_operation(self, op: Operation, traits: _ClassTraits) -> None:
        if traits.terminator:
            return
        if self.is_dead(op):
            self.to_erase.add(op)
            return
        if any(len(region.blocks) > 1 for region in op.regions):
            return
        effects = self.effects(op, traits.effects)
        if effects is None:
            return
        key = _Key(op)
        if effects:
            if not all(e.kind == MemoryEffectKind.READ for e in effects):
                return
            existing = self.known.get(key)
            if (
                existing is not None
                and op.parent_block() is existing.parent_block()
                and not has_other_side_effecting_op_in_between(existing, op)
            ):
                self.replace_and_delete(op, existing)
                return
            self.known.add(key, op)
            return
        existing = self.known.get(key)
        if existing is not None:
            self.replace_and_delete(op, existing)
            return
        self.known.add(key, op)

    def simplify_block(self, block: Block) -> None:
        for op in block.ops:
            traits = self.traits(op)
            if op.regions:
                if traits.isolated:
                    outer = self.known
                    self.known = _Scopes()
                    for region in op.regions:
                        self.simplify_region(region)
                    self.known = outer
                else:
                    for region in op.regions:
                        self.simplify_region(region)
            self.simplify_operation(op, traits)

    def simplify_region(self, region: Region) -> None:
        if len(region.blocks) == 1:
            self.known.tables.append({})
            self.simplify_block(region.block)
            self.known.tables.pop()

    def simplify(self, op: Operation) -> None:
        for region in op.regions:
            self.simplify_region(region)
        for erased in self.to_erase:
            if erased.parent is not None:
                self.rewriter.erase_op(erased)


def cse(op: Operation) -> None:
    """Eliminate the common subexpressions of the regions of `op`, in place."""
    CSEDriver().simplify(op)


@dataclass(frozen=True)
class CSEPass(ModulePass):
    """Eliminate common subexpressions (see the module docstring)."""

    name = "cse"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        cse(op)
