"""
Merge structurally identical private functions into one, before they are lowered.

A model repeats kernels: the transformer block's Q, K and V projections are one matmul
kernel three times, its four bias-and-reshape nests are one loop nest; a ResNet's
convolutions of one shape are one kernel each time. Outlining each outermost
`scf.parallel` (`parallel.outline_parallel_loops`) gives every one a private
`func.func` of its own, and each would be converted to `llvm`, translated, optimised
and compiled again. Here the copies go first: calls to a copy call the first of its
kind, and the copy is erased, so every distinct kernel is lowered and compiled once
(on the transformer block, 30 outlined loops become 20 functions; on ResNet-50, 148
become 70).

Two functions are merged when they are equal up to their names
(`mlc.lowering.support.function_merging`: same type and attributes, structurally
equivalent bodies; SSA names and locations aside), repeatedly, so that functions
calling merged copies merge in turn. A function is never merged with one that differs
in a constant, an attribute or a type.
"""

from collections.abc import Iterable

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation

from mlc.lowering.support import function_merging


def _is_candidate(op: Operation, names: set[str] | None) -> bool:
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

    For each of `suffixes`, references to `<erased><suffix>` are redirected to
    `<kept><suffix>` too, and the declaration of `<erased><suffix>` is erased (the
    thread-pool dispatch stubs that stand for a function until it is linked).
    """
    wanted = None if names is None else set(names)
    suffixes = tuple(suffixes)

    def with_stubs(merged: dict[str, str]) -> dict[str, str]:
        renamed = dict(merged)
        for suffix in suffixes:
            renamed.update({old + suffix: new + suffix for old, new in merged.items()})
        return renamed

    return function_merging.merge(
        module, module, lambda op: _is_candidate(op, wanted), aliases=with_stubs
    )
