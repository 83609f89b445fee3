"""
One sweep of a rewrite pattern over a module: what xDSL's
`PatternRewriteWalker(pattern, apply_recursively=False)` does, for conversions that
rewrite every op of a module once (convert-to-llvm turns ResNet-50's ~50k kernel ops
into llvm ops this way).

Without recursion, xDSL's walker visits the ops that were there when it started, in
walk order, skipping the ops a rewrite removed (its worklist's only change); what a
rewrite inserts is not visited. `sweep` visits the same ops in the same order, from a
list, and its rewriter's `replace` does what xDSL's does (new ops before the old one,
uses and name hints carried over, the old op erased) without the listener calls and
worklist updates behind each step, which took a third of the conversion's time.
"""

from collections.abc import Sequence

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.lowering.support.op_walk import walk_ops


class SweepRewriter(PatternRewriter):
    """A `PatternRewriter` that records the ops it removes and replaces ops directly."""

    def __init__(self, op: Operation, removed: set[Operation]):
        super().__init__(op)
        self.removed = removed

    def handle_operation_removal(self, op: Operation) -> None:
        super().handle_operation_removal(op)
        if op.regions:
            self.removed.update(walk_ops(op))
        else:
            self.removed.add(op)

    def replace(
        self,
        op: Operation,
        new_ops: Operation | Sequence[Operation],
        new_results: Sequence[SSAValue | None] | None = None,
        safe_erase: bool = True,
    ) -> None:
        """`PatternRewriter.replace`, with no one listening but the sweep."""
        if self.operation_insertion_handler or self.operation_replacement_handler:
            super().replace(op, new_ops, new_results, safe_erase)
            return
        self.has_done_action = True
        new_ops = (new_ops,) if isinstance(new_ops, Operation) else new_ops
        if new_ops:
            Rewriter.insert_op(new_ops, InsertPoint.before(op))
            _name_results(new_ops, self._name_hint)
        if new_results is None:
            new_results = new_ops[-1].results if new_ops else []
        if len(op.results) != len(new_results):
            raise ValueError(f"Expected {len(op.results)} new results, but got {len(new_results)}")
        for old_result, new_result in zip(op.results, new_results):
            if new_result is None:
                old_result.erase(safe_erase=safe_erase)
                continue
            old_result.replace_all_uses_with(new_result)
            if not new_result.name_hint:
                new_result.name_hint = old_result.name_hint
        if len(new_results) == 1 and (only := new_results[0]) is not None:
            _name_results(new_ops, only.name_hint)
        self.erase(op, safe_erase=safe_erase)


def _name_results(ops: Sequence[Operation], hint: str | None) -> None:
    """Give `hint` to the results of `ops` that have no name hint (as xDSL's rewriter does)."""
    if hint is None:
        return
    for new in ops:
        for result in new.results:
            if not result.name_hint:
                result.name_hint = hint


def sweep(module: ModuleOp, pattern: RewritePattern) -> bool:
    """Apply `pattern` once to each op of `module` (not the module itself), in walk
    order, as xDSL's non-recursive walker does; whether anything changed."""
    removed: set[Operation] = set()
    changed = False
    ops = walk_ops(module)[1:]
    if not ops:
        return False
    rewriter = SweepRewriter(ops[0], removed)
    for op in ops:
        if op in removed:
            continue
        rewriter.has_done_action = False
        rewriter._current_operation = op  # pyright: ignore[reportPrivateUsage]
        rewriter.insertion_point = InsertPoint.before(op)
        rewriter.name_hint = None
        try:
            pattern.match_and_rewrite(op, rewriter)
        except Exception as err:  # reported as the walker reports it
            op.emit_error(f"Error while applying pattern: {err}", underlying_error=err)
        changed |= rewriter.has_done_action
    return changed
