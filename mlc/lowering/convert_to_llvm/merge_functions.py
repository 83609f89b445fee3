"""
Merge structurally identical private functions into one, before they are lowered.

A model repeats kernels: the transformer block's Q, K and V projections are one matmul
kernel three times, its four bias-and-reshape nests are one loop nest. Outlining each
outermost `scf.parallel` (`parallel.outline_parallel_loops`) gives every one a private
`func.func` of its own, and each would be converted to `llvm`, translated, optimised and
compiled again. Here the copies go first: calls to a copy call the first of its kind,
and the copy is erased, so every distinct kernel is lowered and compiled once (on the
transformer block, 30 outlined loops become 20 functions).

Two functions are merged when their types match and their bodies are structurally
equivalent (xDSL's `is_structurally_equivalent`: same ops, attributes, types and
use-def structure; locations aside). Candidates are grouped by a cheap fingerprint
first, so the exact comparison only runs between likely copies.
"""

from collections.abc import Iterable

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, SymbolRefAttr


def _fingerprint(function: func.FuncOp) -> tuple[object, ...]:
    """Equal for structurally equivalent functions (and, rarely, for others)."""
    return (function.function_type, tuple(op.name for op in function.body.walk()))


def _is_candidate(op: object, names: set[str] | None) -> bool:
    return (
        isinstance(op, func.FuncOp)
        and op.is_declaration is False
        and op.sym_visibility is not None
        and op.sym_visibility.data == "private"
        and (names is None or op.sym_name.data in names)
    )


def merge_identical_functions(
    module: ModuleOp, names: Iterable[str] | None = None, suffixes: Iterable[str] = ()
) -> dict[str, str]:
    """
    Erase each private function (among `names`, if given) that repeats an earlier
    one and redirect its calls; the map from each erased name to the kept one.

    For each of `suffixes`, calls to `<erased><suffix>` are redirected to
    `<kept><suffix>` too, and the declaration of `<erased><suffix>` is erased (the
    thread-pool dispatch stubs that stand for a function until it is linked).
    """
    wanted = None if names is None else set(names)
    buckets: dict[tuple[object, ...], list[func.FuncOp]] = {}
    merged: dict[str, str] = {}
    for op in list(module.ops):
        if not _is_candidate(op, wanted):
            continue
        assert isinstance(op, func.FuncOp)
        kinds = buckets.setdefault(_fingerprint(op), [])
        kept = next((k for k in kinds if k.body.is_structurally_equivalent(op.body)), None)
        if kept is None:
            kinds.append(op)
        else:
            merged[op.sym_name.data] = kept.sym_name.data
    if not merged:
        return merged
    renamed = dict(merged)
    for suffix in suffixes:
        renamed.update({old + suffix: new + suffix for old, new in merged.items()})
    for op in module.walk():
        if isinstance(op, func.CallOp) and (new := renamed.get(op.callee.string_value())):
            op.callee = SymbolRefAttr(new)
    for op in list(module.ops):
        if isinstance(op, func.FuncOp) and op.sym_name.data in renamed:
            module.body.block.erase_op(op)
    return merged
