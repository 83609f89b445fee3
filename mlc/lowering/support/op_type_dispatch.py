"""
Try on each op only the rewrite patterns that can match its class.

xDSL's `GreedyRewritePatternApplier` tries its patterns in order on every op the
`PatternRewriteWalker` visits, and the walker visits every op a rewrite inserts, then,
once anything changed, the whole module again. A conversion that turns 3k ops into 12k
thus runs each of its ~20 patterns' type checks on some 40k ops, most of them already
converted: on the transformer block's `convert-to-llvm` that was a quarter of the pass.

`OpTypeDispatch` works out once per op class which patterns may match it, in their
order: a pattern's op types come from its `op_type_rewrite_pattern` annotation or an
`op_types` attribute; a pattern that declares neither is tried on every op. Ops of a
`finished` dialect (the target of a conversion) get no pattern at all. On any op it
applies exactly the patterns the greedy applier would have applied, in the same order.
"""

import inspect
from collections.abc import Iterable, Sequence
from types import UnionType
from typing import Union, get_args, get_origin

from xdsl.ir import Operation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from mlc.lowering.support.dead_code import DeadOpCheck

OpTypes = tuple[type[Operation], ...]


def declared_op_types(pattern: RewritePattern) -> OpTypes | None:
    """The op classes `pattern` can match, or None if it does not say."""
    if (declared := getattr(pattern, "op_types", None)) is not None:
        return tuple(declared)
    method = type(pattern).match_and_rewrite
    if method.__closure__ is None:
        return None
    # `op_type_rewrite_pattern` wraps the method in a closure over the annotation.
    expected = inspect.getclosurevars(method).nonlocals.get("expected_type")
    if expected is None:
        return None
    if get_origin(expected) in (Union, UnionType):
        return get_args(expected)
    return (expected,) if isinstance(expected, type) else None


class OpTypeDispatch(RewritePattern):
    """Apply the first of `patterns` that rewrites an op, trying only those that can."""

    def __init__(self, patterns: Sequence[RewritePattern], finished: Iterable[str] = ()):
        self.patterns = tuple(patterns)
        self.finished = frozenset(finished)
        self._declared = [(p, declared_op_types(p)) for p in self.patterns]
        self._candidates: dict[type[Operation], tuple[RewritePattern, ...]] = {}

    def candidates(self, cls: type[Operation]) -> tuple[RewritePattern, ...]:
        """The patterns that may match an op of class `cls`, in order."""
        found = self._candidates.get(cls)
        if found is None:
            name = getattr(cls, "name", None)
            if isinstance(name, str) and name.split(".", 1)[0] in self.finished:
                found = ()
            else:
                found = tuple(
                    p for p, types in self._declared if types is None or issubclass(cls, types)
                )
            self._candidates[cls] = found
        return found

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        for pattern in self.candidates(type(op)):
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return


class DeadFirstByClass(RewritePattern):
    """
    xDSL's applier of a conversion's patterns, one per op class (`by_class`), where each
    pattern matches only its class: a dead op is erased first, as xDSL's walker does,
    and a live one gets the pattern of its exact class, looked up once, not tried in turn.
    """

    def __init__(self, by_class: dict[type[Operation], RewritePattern]):
        self.is_dead = DeadOpCheck()
        self.by_class = by_class

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter, /) -> None:
        if self.is_dead(op):
            rewriter.erase(op)
            return
        if (pattern := self.by_class.get(type(op))) is not None:
            pattern.match_and_rewrite(op, rewriter)
