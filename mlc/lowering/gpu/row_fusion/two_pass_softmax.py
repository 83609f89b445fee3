"""
Softmax's statistics over a row that `fuse-row-epilogues` unrolled: the online (max,
sum) step recognised in a short column loop, and its two-pass form (a max tree, then a
sum tree of `exp(x - max)`), which an unrolled row allows: no chain of dependent
rescaling steps.
"""

from collections.abc import Sequence

from xdsl.dialects import arith, math, scf
from xdsl.ir import SSAValue

from mlc.lowering.support import online_softmax


def is_online_pair(loop: scf.ForOp, iterations: Sequence[int]) -> bool:
    """Whether `loop` carries softmax's online (max, sum) step over at least one element
    from its identity, so that its unrolled form may be the two-pass one."""
    body = loop.body.block
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    online = len(body.args) == 3 and online_softmax.is_step(*body.args[1:], *yielded.operands)
    return (
        online
        and bool(iterations)
        and all(map(online_softmax.is_constant, loop.iter_args, online_softmax.IDENTITY))
    )


def two_pass(elements: Sequence[SSAValue]) -> list[SSAValue]:
    """Softmax's (max, sum of exp(x - max)) over `elements`, built under an implicit
    builder. NaN as the online form: a row of -inf only (every `x - max` NaN), or one
    holding +inf or NaN."""
    largest = _tree(arith.MaximumfOp, elements)
    terms = [math.ExpOp(arith.SubfOp(x, largest).result).result for x in elements]
    return [largest, _tree(arith.AddfOp, terms)]


def _tree(kind: type[arith.MaximumfOp | arith.AddfOp], values: Sequence[SSAValue]) -> SSAValue:
    """`values` combined pairwise, level by level: a depth of log2(n), not n."""
    level = list(values)
    while len(level) > 1:
        pairs = [kind(a, b).result for a, b in zip(level[::2], level[1::2], strict=False)]
        level = pairs + ([level[-1]] if len(level) % 2 else [])
    return level[0]
