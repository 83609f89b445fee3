"""
`cf.assert` -> a branch to a block that reports the failure, then carries on.

    cf.assert %ok, "'ml.add' op operand #0 dim 0 must be 1 or 4 ..."
==>
    cf.cond_br %ok, ^continue, ^failed
  ^failed:
    %m = llvm.mlir.addressof @__mlc_assert_message_0 : !llvm.ptr
    llvm.call @mlc_assert_failed(%m) : (!llvm.ptr) -> ()
    cf.br ^continue
  ^continue:
    ...

The message global holds the assert's text behind its location
(`model.py:3:7: error: ...`), NUL-terminated. `mlc_assert_failed` is bound by the JIT
(`mlc.backend.assertions`): it records the call's first failure, which the runtime
raises as `mlc.RuntimeCheckError` once the compiled function returns. Unlike MLIR's
lowering to `abort`, execution goes on: the lowerings that emit checks keep every read
in bounds when one fails (convert_ml_to_linalg.broadcast), so the call finishes and
frees its buffers as usual. Runs on a function in `cf` form, after `convert-scf-to-cf`,
so splitting a block is always legal; the `cf` branches are lowered with the others.

A check that reports a value (`mlc.lowering.support.checks`: the `cmpi`'s left operand)
calls `mlc_assert_failed_value(message, value)` instead, the value as an i64, which
the runtime formats into the message's `{}`.
"""

from xdsl.dialects import arith, cf, llvm
from xdsl.dialects.builtin import IndexType, IntegerType, ModuleOp, i64
from xdsl.ir import Block, Operation, SSAValue

from mlc.diagnostics import op_location
from mlc.lowering.convert_to_llvm.common import PTR, TypeRecord
from mlc.lowering.support.checks import reported_value
from mlc.lowering.support.llvm_globals import declare_string
from mlc.lowering.support.op_walk import walk_ops

SYMBOL = "mlc_assert_failed"  # as mlc.backend.assertions binds it
VALUE_SYMBOL = "mlc_assert_failed_value"  # the same, with an i64 for the message's `{}`
MESSAGE_PREFIX = "__mlc_assert_message_"


def message_text(op: cf.AssertOp) -> str:
    """The one-line diagnostic the failure reports: location, then the assert's message."""
    location = op_location(op)
    head = f"{location}: " if location is not None else ""
    return f"{head}error: {op.msg.data}"


def lower_asserts(module: ModuleOp, record: TypeRecord) -> None:
    """Lower every `cf.assert` of `module` (see the module docstring)."""
    messages: dict[str, str] = {}  # text -> global name, one global per distinct text
    symbols: set[str] = set()
    for op in [op for op in walk_ops(module) if isinstance(op, cf.AssertOp)]:
        text = message_text(op)
        if text not in messages:
            messages[text] = f"{MESSAGE_PREFIX}{len(messages)}"
            declare_string(module, messages[text], text)
        symbols.add(lower_assert(op, messages[text]))
    if SYMBOL in symbols:
        record.declare(SYMBOL, [PTR], None)
    if VALUE_SYMBOL in symbols:
        record.declare(VALUE_SYMBOL, [PTR, i64], None)


def as_i64(value: SSAValue) -> tuple[list[Operation], SSAValue]:
    """`value` (an integer or an index) as an i64, and the casts that make it so."""
    if isinstance(value.type, IndexType):
        cast = arith.IndexCastOp(value, i64)
    elif isinstance(value.type, IntegerType) and value.type.width.data < 64:
        cast = arith.ExtSIOp(value, i64)
    else:
        return [], value
    return [cast], cast.result


def lower_assert(op: cf.AssertOp, message: str) -> str:
    """Lower one assert; return the symbol its failure calls."""
    block = op.parent_block()
    assert block is not None, "a cf.assert in a function body"
    after = block.split_before(op)
    failed = Block()
    address = llvm.AddressOfOp(message, PTR)
    value = reported_value(op)
    if value is None:
        symbol, casts, args = SYMBOL, [], [address.result]
    else:
        casts, reported = as_i64(value)
        symbol, args = VALUE_SYMBOL, [address.result, reported]
    failed_ops: list[Operation] = [
        address,
        *casts,
        llvm.CallOp(symbol, *args),
        cf.BranchOp(after),
    ]
    for new in failed_ops:
        new.location = op.location
        failed.add_op(new)
    region = block.parent
    assert region is not None
    region.insert_block_after(failed, block)
    branch = cf.ConditionalBranchOp(op.arg, after, (), failed, ())
    branch.location = op.location
    block.add_op(branch)
    op.detach()
    op.erase()
    return symbol
