"""
Refinement: whether a declared shape agrees with an inferred one, and how to sharpen it.

`compatible` is the check the `ml` verifiers and folds make (MLIR's
verifyCompatibleShape); `refine`, `join` and the `DimUnifier` are what the
`shape-inference` pass and the trace bucketing use to make dims static where the
program pins them.
"""

from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

from mlc.shapes.dims import DYNAMIC, Shape, ShapeError, is_static


def compatible(declared: Sequence[int], inferred: Sequence[int]) -> bool:
    """True when the shapes can describe the same tensor (MLIR's verifyCompatibleShape)."""
    if len(declared) != len(inferred):
        return False
    return all(
        not is_static(a) or not is_static(b) or a == b
        for a, b in zip(declared, inferred, strict=True)
    )


def refine(declared: Sequence[int], *known: Sequence[int]) -> Shape:
    """
    `declared` with each dynamic dim replaced by the first static size `known` gives.

    The caller has checked that the shapes are `compatible`; a static declared dim
    always stays, so a refinement never contradicts what was written.
    """
    result = list(declared)
    for i, dim in enumerate(result):
        if not is_static(dim):
            result[i] = next((k[i] for k in known if is_static(k[i])), DYNAMIC)
    return tuple(result)


def join(a: Sequence[int], b: Sequence[int]) -> Shape:
    """The most static shape that describes both (the type of a merge of two values)."""
    if len(a) != len(b):
        raise ShapeError(f"cannot join shapes of ranks {len(a)} and {len(b)}")
    return tuple(x if x == y else DYNAMIC for x, y in zip(a, b, strict=True))


K = TypeVar("K", bound=Hashable)


class DimUnifier(Generic[K]):
    """
    Union-find over dimensions known to be equal, each class with its static size.

    Keys are whatever names a dim (the pass uses `(value, axis)`). A class has at most
    one static size; `unify` refuses to merge two classes of different sizes.
    """

    def __init__(self) -> None:
        self._parent: dict[K, K] = {}
        self._size: dict[K, int] = {}

    def add(self, key: K, size: int = DYNAMIC) -> None:
        """Make `key` known, with its static size if it has one."""
        if key not in self._parent:
            self._parent[key] = key
            self._size[key] = size

    def find(self, key: K) -> K:
        self.add(key)
        root = key
        while (parent := self._parent[root]) != root:
            root = parent
        while key != root:  # path compression keeps later finds short
            key, self._parent[key] = self._parent[key], root
        return root

    def size(self, key: K) -> int:
        """The static size of `key`'s class, or DYNAMIC."""
        return self._size[self.find(key)]

    def unify(self, a: K, b: K) -> bool:
        """Merge the classes of `a` and `b`; False (and no merge) if their sizes differ."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        sa, sb = self._size[ra], self._size[rb]
        if is_static(sa) and is_static(sb) and sa != sb:
            return False
        self._parent[rb] = ra
        self._size[ra] = sa if is_static(sa) else sb
        return True

    def keys(self) -> list[K]:
        return list(self._parent)
