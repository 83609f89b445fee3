"""
The values an integer argument must take for the program to be valid, read off its `ml`
ops: what `mlc-run --random` draws such an argument from.

    %ids : tensor<2x7xi64>  --ml.reshape-->  ml.gather %table[30x8], %ids {axis = 0}
        => %ids in [0, 30)
    %mask : tensor<2x7xi64> --ml.cast to i1-->  ml.select %mask, %a, %b
        => %mask in [0, 2)

An integer (or i1) argument gets a range when its values reach

- the indices of an `ml.gather`: [0, n), n the static size of the gathered axis (an
  index past it is undefined behaviour; negative ones count from the end, but a plain
  range keeps the draw simple);
- the condition of an `ml.select`: {0, 1}, so that both branches are taken;

through ops that pass values on without computing new ones: `ml.cast`, `ml.reshape` (its
data), `ml.broadcast_to`, `ml.transpose`, `ml.slice`, `ml.concat`, the data of an
`ml.gather` and the branches of an `ml.select`. An argument that reaches several of them
takes the intersection of their ranges (one whose intersection would be empty keeps the
ranges met first). Anything else (arithmetic, comparisons, control flow, calls) ends the
search: the value that comes out is a new one.
"""

from xdsl.dialects.builtin import IntegerType, ModuleOp, TensorType
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Operation, SSAValue

from mlc.dialects import ml

PASSED_ON: dict[type[Operation], tuple[int, ...] | None] = {
    ml.CastOp: None,  # None: every operand
    ml.ReshapeOp: (0,),  # the data, not the target shape
    ml.BroadcastToOp: None,
    ml.TransposeOp: None,
    ml.SliceOp: None,
    ml.ConcatOp: None,
    ml.GatherOp: (0,),  # the data: the results are some of its values
    ml.SelectOp: (1, 2),  # the branches
}
"""Ops whose results hold only values of the operands at these positions."""

GATHER_INDICES = 1
SELECT_CONDITION = 0


def function_ranges(module: ModuleOp, name: str) -> dict[int, range]:
    """`argument_ranges` of the function `name` of `module` (none if there is no such one)."""
    for op in module.ops:
        if isinstance(op, FuncOp) and op.sym_name.data == name:
            return argument_ranges(op)
    return {}


def argument_ranges(function: FuncOp) -> dict[int, range]:
    """The range each integer argument of `function` must lie in, by position, where known."""
    ranges: dict[int, range] = {}
    for position, argument in enumerate(function.args):
        if is_integer_like(argument.type) and (found := reached_range(argument)) is not None:
            ranges[position] = found
    return ranges


def is_integer_like(type_: Attribute) -> bool:
    """An integer (i1 included) scalar or tensor type."""
    if isinstance(type_, TensorType):
        return isinstance(type_.get_element_type(), IntegerType)
    return isinstance(type_, IntegerType)


def reached_range(value: SSAValue) -> range | None:
    """The intersection of the ranges the uses `value` reaches require, or None if none do."""
    bound: range | None = None
    seen: set[SSAValue] = set()
    pending = [value]
    while pending:
        current = pending.pop()
        if current in seen:
            continue
        seen.add(current)
        for use in current.uses:
            op, position = use.operation, use.index
            if (required := required_range(op, position)) is not None:
                bound = required if bound is None else intersection(bound, required)
            elif passes_on(op, position):
                pending.extend(op.results)
    return bound


def required_range(op: Operation, position: int) -> range | None:
    """The range the operand at `position` of `op` must lie in, if `op` requires one."""
    if isinstance(op, ml.GatherOp) and position == GATHER_INDICES:
        data_type = op.data.type
        assert isinstance(data_type, TensorType)
        size = data_type.get_shape()[op.axis.value.data]  # a negative axis counts from the end
        return range(size) if size > 0 else None  # dynamic (-1), or nothing to index
    if isinstance(op, ml.SelectOp) and position == SELECT_CONDITION:
        return range(2)
    return None


def passes_on(op: Operation, position: int) -> bool:
    if type(op) not in PASSED_ON:
        return False
    positions = PASSED_ON[type(op)]
    return positions is None or position in positions


def intersection(first: range, second: range) -> range:
    """The common part of two ranges of step 1; `first` if they have none."""
    common = range(max(first.start, second.start), min(first.stop, second.stop))
    return common if len(common) else first
