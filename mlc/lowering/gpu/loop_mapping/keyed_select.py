"""
Select-by-key reductions a warp can share: a loop carrying `acc` as

    %c = cmp key(%x), key(%acc)        // cmpi or cmpf, any predicate
    %next = select %c, %x, %acc

keeps the element whose key wins, as the index checks of gathers and scatters keep the
index farthest out of range (`convert_ml_to_linalg/index_checks.py`: key
`i ^ (i >> 63)`, `sgt`). `key` is any chain of ops on `acc` alone (constants aside),
computed on `x` by the same ops, and `x` reads no running value. Two lanes' results
merge by the same rule, `select(cmp(key(theirs), key(mine)), theirs, mine)`, the key
chain cloned for each, and since keeping the winner of a value and itself changes
nothing, every lane may start from the loop's own start (there is no identity to know).
Among elements whose keys tie the winner may be any of them: a reduction that must keep
the first (argmax) carries its index as well, which this does not match.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import arith
from xdsl.ir import Block, Operation, SSAValue

from mlc.lowering.gpu.loop_mapping.vector_lanes import is_pure_scalar


@dataclass(frozen=True)
class KeyedSelect:
    """A select-by-key reduction: the key's ops on the running value `arg`, in order,
    and the comparison of the element's key (its lhs) with the running value's."""

    arg: SSAValue
    key_ops: tuple[Operation, ...]
    compare: arith.CmpiOp | arith.CmpfOp

    def merge(self, mine: Sequence[SSAValue], theirs: Sequence[SSAValue]) -> list[SSAValue]:
        """The winner of two lanes' values (built under the caller's implicit builder)."""
        (mine_value,), (their_value,) = mine, theirs
        key_mine, key_theirs = self._key(mine_value), self._key(their_value)
        compare = self.compare.clone(
            value_mapper={self.compare.lhs: key_theirs, self.compare.rhs: key_mine}
        )
        return [arith.SelectOp(compare.result, their_value, mine_value).result]

    def _key(self, value: SSAValue) -> SSAValue:
        mapping: dict[SSAValue, SSAValue] = {self.arg: value}
        for op in self.key_ops:
            op.clone(value_mapper=mapping)  # inserted by the implicit builder
        return mapping.get(self.compare.rhs, self.compare.rhs)


def keyed_select(arg: SSAValue, value: SSAValue) -> KeyedSelect | None:
    """`value`'s reduction of the running `arg` when it is a select by key (module
    docstring) and `value` is only yielded; else None."""
    chosen = value.owner
    if not isinstance(chosen, arith.SelectOp) or not value.has_one_use():
        return None
    block = chosen.parent_block()
    if block is None or chosen.rhs is not arg or chosen.lhs is arg:
        return None
    compare = chosen.cond.owner
    if not isinstance(compare, arith.CmpiOp | arith.CmpfOp) or not chosen.cond.has_one_use():
        return None
    if compare.parent_block() is not block:
        return None
    key_ops = _key_chain(block, arg, {compare, chosen})
    if key_ops is None:
        return None
    element = chosen.lhs
    if _depends_on(element, arg, block) or not _same(compare.lhs, compare.rhs, element, arg):
        return None
    return KeyedSelect(arg, tuple(key_ops), compare)


def _key_chain(block: Block, arg: SSAValue, ends: set[Operation]) -> list[Operation] | None:
    """The ops of `block` that read `arg` (directly or not) other than `ends`, with the
    constants of `block` they read, in order, when every result of theirs feeds only
    them or `ends`; else None."""
    reading: list[Operation] = []
    reached = {arg}
    for op in block.ops:
        if op in ends or not any(v in reached for v in op.operands):
            continue
        if not is_pure_scalar(op):
            return None  # a store or a load of the running value or its key
        reading.append(op)
        reached.update(op.results)
    inside = set(reading) | ends
    values = [arg, *(result for op in reading for result in op.results)]
    if any(use.operation not in inside for value in values for use in value.uses):
        return None  # the key or the running value is used elsewhere
    constants = _constants_read(reading, block, inside)
    return None if constants is None else list(dict.fromkeys([*constants, *reading]))


def _constants_read(
    ops: Sequence[Operation], block: Block, inside: set[Operation]
) -> list[Operation] | None:
    """The ops of `block` outside `inside` whose results `ops` read, when all are
    constants (a key that reads anything else computed each iteration: None)."""
    found: list[Operation] = []
    for op in ops:
        for operand in op.operands:
            owner = operand.owner
            if not isinstance(owner, Operation) or owner.parent_block() is not block:
                continue
            if owner in inside:
                continue
            if not isinstance(owner, arith.ConstantOp):
                return None
            found.append(owner)
    return found


def _depends_on(value: SSAValue, arg: SSAValue, block: Block) -> bool:
    """Whether `value` is computed in `block` from `arg`."""
    if value is arg:
        return True
    owner = value.owner
    if not isinstance(owner, Operation) or owner.parent_block() is not block:
        return False
    return any(_depends_on(operand, arg, block) for operand in owner.operands)


def _same(a: SSAValue, b: SSAValue, a_root: SSAValue, b_root: SSAValue) -> bool:
    """Whether `a` is computed from `a_root` by the ops `b` is from `b_root`."""
    if a is a_root or b is b_root:
        return a is a_root and b is b_root
    if a is b:
        return True  # a value both read (a constant, a value from outside)
    first, second = a.owner, b.owner
    if not isinstance(first, Operation) or not isinstance(second, Operation):
        return False
    if type(first) is not type(second) or first.regions or second.regions:
        return False
    if first.properties != second.properties or first.attributes != second.attributes:
        return False
    if list(first.results).index(a) != list(second.results).index(b):  # pyright: ignore[reportArgumentType]
        return False
    if len(first.operands) != len(second.operands):
        return False
    return all(
        _same(x, y, a_root, b_root) for x, y in zip(first.operands, second.operands, strict=True)
    )
