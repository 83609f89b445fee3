"""
Bufferize: tensors become memrefs, function by function, with one buffer plan each.

Level 2 -> level 3 of docs/design/lowering.md. Tensor values are immutable; buffers are
not, so the pass decides for every tensor which buffer holds it and who frees it:

- A `linalg.generic` writes into a fresh buffer, or *in place* into the buffer of an
  input that dies at the generic (same type, read with the output's own indexing map,
  owned by this function, no other live tensor shares it). A `tensor.empty` that only
  names the shape of such an output is never allocated.
- Views share their source's buffer: `collapse_shape`/`expand_shape`/`cast` (of
  contiguous data) and `extract_slice` (a strided `memref.subview`). `insert_slice` writes into
  its destination's buffer when the destination dies there, into a copy otherwise.
- Constant tensors become private `memref.global`s, never freed, never written.
- Ownership: each block owns the buffers it allocates, the results of the `scf` ops
  and calls in it, and the memrefs it carries in as loop arguments. A terminator
  (`scf.yield`, `scf.condition`, `func.return`) hands buffers over: what it yields must
  be a buffer the block owns (a copy is made otherwise: an argument, a global, a view, a
  value from outside, or one yielded twice). Every owned buffer not handed over is freed
  right after its last use (through any view) in its block.

So a function returns fresh buffers its caller owns, a loop frees the value it replaces
each iteration, and no temporary outlives its last use. Copies are `linalg.generic`
ops like any other, so they become loops LLVM can vectorise.

Donated arguments (`{ml.result_alias = N : i64}`, `mlc.lowering.support.result_aliases`)
are buffers the caller gives away for result N. They are overwritten in place like
owned buffers, under the same rule (the tensor they hold is dead there), but only at
the function's own level, and never freed. Result N is then left in the argument's
buffer and dropped from the function's results: where it was not computed there, the
return copies it in (after every other read of the argument; a remark says so).

The pass is a driver: `bufferize_state` holds one function's plan (which buffer holds
each value, who owns it, the in-place decision), `bufferize_rules` and
`bufferize_control_flow` say how each op bufferizes. Every op built takes the location
of the op it comes from; a dealloc, that of the op whose buffer it frees.
"""

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType, ModuleOp
from xdsl.ir import Block
from xdsl.passes import ModulePass

from mlc.diagnostics import op_error
from mlc.lowering.linalg.bufferize_rules import RULES
from mlc.lowering.linalg.bufferize_state import BufferState, Globals, convert_type, memref_type
from mlc.lowering.support.result_aliases import alias_errors, result_aliases

__all__ = ["BufferizePass", "memref_type"]


def _signature(function: func.FuncOp) -> FunctionType:
    """The memref form of the function's type, less the results left in donated arguments."""
    function_type, aliased = function.function_type, result_aliases(function)
    return FunctionType.from_lists(
        [convert_type(t) for t in function_type.inputs],
        [convert_type(t) for i, t in enumerate(function_type.outputs) if i not in aliased],
    )


def _check_donations(module: ModuleOp) -> None:
    """Donated arguments are well formed, and their functions called only from outside."""
    donating: set[str] = set()
    for function in module.walk():
        if not isinstance(function, func.FuncOp):
            continue
        if errors := alias_errors(function):
            raise op_error(function, f"bufferize: {errors[0]}")
        if result_aliases(function):
            donating.add(function.sym_name.data)
    for call in module.walk():
        if isinstance(call, func.CallOp) and call.callee.string_value() in donating:
            raise op_error(
                call,
                f"bufferize: @{call.callee.string_value()} has donated arguments; "
                "it can only be called from outside the program",
            )


def bufferize_function(function: func.FuncOp, globals_: Globals) -> Block:
    """The memref form of `function`'s body, built aside; the function is unchanged."""
    if len(function.body.blocks) != 1:
        raise op_error(function, "bufferize: functions with several blocks are not supported")
    state = BufferState(globals_, RULES)
    old = function.body.block
    new = state.new_block_like(old)
    state.donate({result: new.args[arg] for result, arg in result_aliases(function).items()})
    state.fill_block(old, new)
    return new


class BufferizePass(ModulePass):
    """Tensors to memrefs for every function of the module (see the module docstring)."""

    name = "bufferize"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _check_donations(op)
        globals_ = Globals()
        new_bodies = [
            (function, bufferize_function(function, globals_))
            for function in op.walk()
            if isinstance(function, func.FuncOp) and function.body.blocks
        ]
        # Nothing is changed until every function has been converted.
        for function in op.walk():
            if isinstance(function, func.FuncOp):
                function.function_type = _signature(function)
        for function, new in new_bodies:
            old = function.body.block
            function.body.detach_block(old)
            function.body.add_block(new)
            old.erase(safe_erase=False)
        globals_.insert_into(op.body.block)
