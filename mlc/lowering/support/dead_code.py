"""
xDSL's `region_dce` (erase the ops whose results nobody live uses and which have no
observable effect) with each op's memory effects computed once per call.

xDSL's liveness analysis asks `would_be_trivially_dead` of every op, on every round
until nothing changes, and for a loop that means the effects of its whole body, again
for each loop nested in it: on a loop nest `depth` times its size, each round. Here
an op's effects are the union of its children's, each computed once, and the answer
for an op is kept for the whole analysis (the IR does not change until it ends), so
the analysis is linear. It keeps and erases exactly the ops xDSL's keeps and erases.

xDSL's analysis repeats its sweep of the region until one marks no op live, so it
always sweeps at least twice, the last time to find nothing new. Here a sweep is
repeated only when it may have missed something: when an op became live after one of
the ops defining its operands had been passed over as dead in that sweep. Where every
use comes after its definition, or in a block the post-order visits first (SSA's
dominance: every region the pipeline's stages make), that never happens, and one sweep
is the fixpoint xDSL's second sweep would confirm.
"""

from collections.abc import Set as AbstractSet

from xdsl.ir import Operation, Region, SSAValue
from xdsl.pattern_rewriter import PatternRewriterListener
from xdsl.traits import (
    EffectInstance,
    IsTerminator,
    MemoryEffect,
    MemoryEffectKind,
    RecursiveMemoryEffect,
    SymbolOpInterface,
)
from xdsl.transforms.dead_code_elimination import LiveSet

Effects = AbstractSet[EffectInstance] | None

_RECURSIVE = RecursiveMemoryEffect.get_effects.__func__


class EffectCache:
    """
    `xdsl.traits.get_effects` of ops, each computed once: an op with xDSL's
    `RecursiveMemoryEffect` has the union of its children's effects (unknown if one
    child's are), which come from this cache rather than a fresh walk of the body.
    Only valid while the IR does not change.
    """

    def __init__(self) -> None:
        self._effects: dict[Operation, Effects] = {}
        self._dead: dict[Operation, bool] = {}
        # Per op class (traits belong to the class): its `MemoryEffect` traits, and
        # whether it is a terminator or a symbol (never removable).
        self._interfaces: dict[type[Operation], list[MemoryEffect]] = {}
        self._kept: dict[type[Operation], bool] = {}

    def effects(self, op: Operation) -> Effects:
        """The op's memory effects; None where they are unknown."""
        if op in self._effects:
            return self._effects[op]
        result: set[EffectInstance] | None = None
        interfaces = self._interfaces.get(type(op))
        if interfaces is None:
            interfaces = self._interfaces[type(op)] = op.get_traits_of_type(MemoryEffect)
        if interfaces:
            result = set()
            for interface in interfaces:
                found = (
                    self._nested(op)
                    if getattr(type(interface).get_effects, "__func__", None) is _RECURSIVE
                    else interface.get_effects(op)
                )
                if found is None:
                    result = None
                    break
                result.update(found)
        self._effects[op] = result
        return result

    def _nested(self, op: Operation) -> Effects:
        effects: set[EffectInstance] = set()
        for region in op.regions:
            for block in region.blocks:
                for child in block.ops:
                    found = self.effects(child)
                    if found is None:
                        return None
                    effects.update(found)
        return effects

    def would_be_trivially_dead(self, op: Operation) -> bool:
        """xDSL's `would_be_trivially_dead`: whether the op would be dead if its
        results were unused (no terminator, no symbol, only effects on itself)."""
        if op in self._dead:
            return self._dead[op]
        kept = self._kept.get(type(op))
        if kept is None:
            kept = self._kept[type(op)] = op.has_trait(
                IsTerminator, value_if_unregistered=False
            ) or op.has_trait(SymbolOpInterface, value_if_unregistered=False)
        dead = not kept and self._result_only_effects(op)
        self._dead[op] = dead
        return dead

    def _result_only_effects(self, root: Operation) -> bool:
        effects = self.effects(root)
        return effects is not None and all(
            e.kind == MemoryEffectKind.READ
            or (
                e.kind == MemoryEffectKind.ALLOC
                and isinstance(v := e.value, SSAValue)
                and root.is_ancestor(v.owner)
            )
            for e in effects
        )


class _CachedLiveSet(LiveSet):
    """
    xDSL's liveness analysis, asking an `EffectCache` whether an op is removable, and
    noting whether another sweep could mark more ops live (`stale`): an op passed over
    as dead in this sweep (`passed`) defines an operand of an op marked live after it.
    """

    def __init__(self) -> None:
        super().__init__()
        self.cache = EffectCache()
        self.stale = True
        self.passed: set[Operation] = set()

    def set_live(self, op: Operation) -> None:
        if op in self._live_ops:
            return
        self.changed = True
        self._live_ops.add(op)
        if self.passed and any(operand.owner in self.passed for operand in op.operands):
            self.stale = True

    def propagate_op_liveness(self, op: Operation) -> None:
        for region in op.regions:
            self.propagate_region_liveness(region)
        if self.is_live(op):
            return
        if not self.cache.would_be_trivially_dead(op):
            self.set_live(op)
            return
        if any(self.is_live(use.operation) for result in op.results for use in result.uses):
            self.set_live(op)
        else:
            self.passed.add(op)


def region_dce(region: Region, listener: PatternRewriterListener | None = None) -> bool:
    """Erase the dead ops of `region` (xDSL's `region_dce`, in linear time); whether any
    was erased."""
    live_set = _CachedLiveSet()
    while live_set.stale:
        live_set.stale = False
        live_set.passed.clear()
        live_set.propagate_region_liveness(region)
    live_set.changed = False
    live_set.delete_dead(region, listener)
    return live_set.changed


class DeadOpCheck:
    """
    xDSL's `is_trivially_dead` (no result used, and the op would be dead if none were)
    with the answers that depend on the op's class alone (terminator or symbol; its
    `MemoryEffect` traits) worked out once per class. On changing IR, for a pass that
    asks it of every op it visits (`canonicalize`): xDSL's looks the traits up anew
    each time, an `isinstance` over the class's traits per question.
    """

    def __init__(self) -> None:
        self._kept: dict[type[Operation], bool] = {}
        self._interfaces: dict[type[Operation], list[MemoryEffect]] = {}

    def __call__(self, op: Operation) -> bool:
        for result in op.results:
            if result.first_use is not None:
                return False
        cls = type(op)
        kept = self._kept.get(cls)
        if kept is None:
            kept = self._kept[cls] = op.has_trait(
                IsTerminator, value_if_unregistered=False
            ) or op.has_trait(SymbolOpInterface, value_if_unregistered=False)
        if kept:
            return False
        interfaces = self._interfaces.get(cls)
        if interfaces is None:
            interfaces = self._interfaces[cls] = op.get_traits_of_type(MemoryEffect)
        if not interfaces:
            return False  # unknown effects
        for interface in interfaces:
            effects = interface.get_effects(op)
            if effects is None or not all(_on_itself(op, e) for e in effects):
                return False
        return True


def _on_itself(op: Operation, effect: EffectInstance) -> bool:
    """Whether `effect` is unobservable outside `op`: a read, or an allocation of a
    value `op` (or an op in it) defines."""
    return effect.kind == MemoryEffectKind.READ or (
        effect.kind == MemoryEffectKind.ALLOC
        and isinstance(v := effect.value, SSAValue)
        and op.is_ancestor(v.owner)
    )
