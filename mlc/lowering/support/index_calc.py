"""
Index arithmetic that folds on ints: one formula for static and dynamic sizes.

Shared by the ml-to-linalg lowerings (slice bounds, window sizes) and the ONNX frontend
(shape arithmetic of imported ops), and run on plain ints by unit tests against numpy.
"""

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType, IntegerAttr
from xdsl.ir import Operation, SSAValue

# An index known at compile time (a Python int) or only at run time (an `index` value).
Index = SSAValue | int


class IndexCalc:
    """
    Index arithmetic on `Index` values: Python ints fold, SSA values get `arith` ops.

    One formula (slice bounds, window sizes) thus serves static dims, where it gives
    ints for static op attributes, dynamic dims, where it emits IR, and unit tests,
    which run it on plain ints against numpy. `insert` places a new op (the pattern's
    `rewriter.insert`); in a generic body, where the implicit builder has already
    placed it, use `IndexCalc.in_body()`.
    """

    def __init__(self, insert: Callable[[Operation], Operation] | None = None):
        self.insert = insert

    @staticmethod
    def in_body() -> "IndexCalc":
        return IndexCalc(lambda op: op)

    def value(self, x: Index) -> SSAValue:
        """`x` as an SSA value, materialising a constant if needed."""
        if isinstance(x, SSAValue):
            return x
        return self._emit(arith.ConstantOp(IntegerAttr(x, IndexType())))

    def _emit(self, op: Operation) -> SSAValue:
        assert self.insert is not None, "IndexCalc without an insertion point met an SSA value"
        return self.insert(op).results[0]

    def _binary(
        self,
        a: Index,
        b: Index,
        fold: Callable[[int, int], int],
        make: Callable[[SSAValue, SSAValue], Operation],
    ) -> Index:
        if isinstance(a, int) and isinstance(b, int):
            return fold(a, b)
        return self._emit(make(self.value(a), self.value(b)))

    def add(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and a == 0:
            return b
        if isinstance(b, int) and b == 0:
            return a
        return self._binary(a, b, lambda x, y: x + y, arith.AddiOp)

    def sub(self, a: Index, b: Index) -> Index:
        if isinstance(b, int) and b == 0:
            return a
        if a is b:
            return 0
        return self._binary(a, b, lambda x, y: x - y, arith.SubiOp)

    def mul(self, a: Index, b: Index) -> Index:
        if isinstance(a, int) and a == 1:
            return b
        if isinstance(b, int) and b == 1:
            return a
        return self._binary(a, b, lambda x, y: x * y, arith.MuliOp)

    def min(self, a: Index, b: Index) -> Index:
        return self._binary(a, b, min, arith.MinSIOp)

    def max(self, a: Index, b: Index) -> Index:
        return self._binary(a, b, max, arith.MaxSIOp)

    def floordiv(self, a: Index, b: Index) -> Index:
        if isinstance(b, int) and b == 1:
            return a
        return self._binary(a, b, lambda x, y: x // y, arith.FloorDivSIOp)

    def ceildiv(self, a: Index, b: int) -> Index:
        """
        Rounds up, for a non-negative `a` and a positive `b`.

        `(a - 1) // b + 1` (floor division, so `a == 0` gives 0) cannot overflow as
        `(a + b - 1) // b` can for a huge step.
        """
        if b == 1:
            return a
        return self.add(self.floordiv(self.sub(a, 1), b), 1)
