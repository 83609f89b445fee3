"""
The `bufferize` rules of control flow: `scf` loops and branches, calls, terminators.

Ownership moves here. A loop takes over the buffers it carries (a copy when the init
lives on after it); its body, a branch or a function body owns what it allocates and
hands buffers on through its terminator (a copy of anything it does not own); the
results of loops, branches and calls are fresh buffers the enclosing block owns.
"""

from xdsl.dialects import func, scf
from xdsl.dialects.builtin import MemRefType, TensorType
from xdsl.ir import Block, BlockArgument, Operation, Region, SSAValue

from mlc.diagnostics import op_remark
from mlc.lowering.linalg.bufferize_state import BufferizableOp, BufferState, convert_type


def _tensor_args(old: Block, new: Block, skip: int = 0) -> list[SSAValue]:
    return [
        new.args[i] for i in range(skip, len(old.args)) if isinstance(old.args[i].type, TensorType)
    ]


def _bind_owned_results(state: BufferState, old: Operation, new: Operation) -> None:
    for old_result, new_result in zip(old.results, new.results, strict=True):
        state.bind(old_result, new_result)
        if isinstance(new_result.type, MemRefType):
            state.new_buffer(new_result)


def _loop_inits(state: BufferState, op: Operation, first: int) -> list[SSAValue]:
    """The loop's operands from `first` on: its tensors are buffers it takes over."""
    return [
        state.pass_into(op, i) if isinstance(v.type, TensorType) else state.lookup(v)
        for i, v in enumerate(op.operands)
        if i >= first
    ]


class ForRule(BufferizableOp):
    """An `scf.for` carrying buffers; the body updates them in place where it can."""

    FIRST_ITER_ARG = 3  # after the lower bound, upper bound and step

    def writes(self, op: Operation, index: int) -> bool:
        return index >= self.FIRST_ITER_ARG

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, scf.ForOp)
        inits = _loop_inits(state, op, self.FIRST_ITER_ARG)
        old = op.body.block
        body = state.new_block_like(old)
        state.fill_block(old, body, _tensor_args(old, body, skip=1))
        new = state.emit(
            scf.ForOp(
                state.lookup(op.lb), state.lookup(op.ub), state.lookup(op.step), inits, Region(body)
            )
        )
        new.attributes |= op.attributes
        _bind_owned_results(state, op, new)


class WhileRule(BufferizableOp):
    """An `scf.while` carrying buffers through both of its regions."""

    def writes(self, op: Operation, index: int) -> bool:
        return True

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, scf.WhileOp)
        inits = _loop_inits(state, op, 0)
        regions: list[Region] = []
        for region in (op.before_region, op.after_region):
            old = region.block
            new_block = state.new_block_like(old)
            state.fill_block(old, new_block, _tensor_args(old, new_block))
            regions.append(Region(new_block))
        result_types = [convert_type(r.type) for r in op.results]
        new = state.emit(scf.WhileOp(inits, result_types, regions[0], regions[1]))
        _bind_owned_results(state, op, new)


class IfRule(BufferizableOp):
    """An `scf.if` whose branches each hand over a fresh buffer."""

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, scf.IfOp)
        regions: list[Region] = []
        for region in (op.true_region, op.false_region):
            if not region.blocks:
                regions.append(Region())
                continue
            new_block = Block()
            state.fill_block(region.block, new_block)
            regions.append(Region(new_block))
        result_types = [convert_type(r.type) for r in op.results]
        new = state.emit(scf.IfOp(state.lookup(op.cond), result_types, regions[0], regions[1]))
        _bind_owned_results(state, op, new)


class YieldRule(BufferizableOp):
    """`scf.yield` hands its buffers to the op around it."""

    def bufferize(self, state: BufferState, op: Operation) -> None:
        state.emit(scf.YieldOp(*state.handed_over(op.operands)))


class ConditionRule(BufferizableOp):
    """`scf.condition` hands its buffers to the `after` region or the loop's results."""

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, scf.ConditionOp)
        condition = state.lookup(op.condition)
        state.emit(scf.ConditionOp(condition, *state.handed_over(op.args)))


class ReturnRule(BufferizableOp):
    """
    `func.return` hands its buffers to the caller; a result aliased with a donated
    argument is left in the argument's buffer instead and not returned.
    """

    def bufferize(self, state: BufferState, op: Operation) -> None:
        if not state.donated:
            state.emit(func.ReturnOp(*state.handed_over(op.operands)))
            return
        kept = [v for i, v in enumerate(op.operands) if i not in state.donated]
        returned = state.handed_over(kept)  # copies out of donated buffers, made first
        self.fill_donated(state, op)
        state.emit(func.ReturnOp(*returned))

    @staticmethod
    def fill_donated(state: BufferState, op: Operation) -> None:
        """
        Copy each aliased result into its argument's buffer, unless it was computed
        there in place. A value in another donated buffer is saved to a temporary
        first, since that buffer is overwritten too (a swap of two arguments).
        """
        moves: list[tuple[SSAValue, SSAValue]] = []
        donated_buffers = set(state.donated.values())
        for result, buffer in state.donated.items():
            value = op.operands[result]
            new = state.lookup(value)
            if state.root.get(new) is buffer and new.type == buffer.type:
                continue  # computed in place: the whole buffer, as it is laid out
            index = buffer.index if isinstance(buffer, BlockArgument) else "?"
            op_remark(
                op,
                f"result {result} is copied into donated argument {index}: it was not "
                "computed in that buffer (the argument is read after the result is "
                "written, or the result is not an elementwise update of it)",
            )
            if state.root.get(new) in donated_buffers:
                new = state.copy(new, value.type)
            moves.append((new, buffer))
        for source, buffer in moves:
            state.emit_copy(source, buffer)


class CallRule(BufferizableOp):
    """A call on memrefs; its results are fresh buffers the caller owns."""

    def bufferize(self, state: BufferState, op: Operation) -> None:
        assert isinstance(op, func.CallOp)
        arguments = [state.lookup(v) for v in op.arguments]
        result_types = [convert_type(r.type) for r in op.results]
        new = state.emit(func.CallOp(op.callee, arguments, result_types))
        _bind_owned_results(state, op, new)


CONTROL_FLOW_RULES: dict[type[Operation], BufferizableOp] = {
    scf.ForOp: ForRule(),
    scf.WhileOp: WhileRule(),
    scf.IfOp: IfRule(),
    scf.YieldOp: YieldRule(),
    scf.ConditionOp: ConditionRule(),
    func.ReturnOp: ReturnRule(),
    func.CallOp: CallRule(),
}
