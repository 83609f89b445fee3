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
"""

from xdsl.dialects import cf, llvm
from xdsl.dialects.builtin import ModuleOp, StringAttr, i8
from xdsl.ir import Block, Operation
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.diagnostics import op_location
from mlc.lowering.convert_to_llvm.common import PTR, TypeRecord

SYMBOL = "mlc_assert_failed"  # as mlc.backend.assertions binds it
MESSAGE_PREFIX = "__mlc_assert_message_"


def message_text(op: cf.AssertOp) -> str:
    """The one-line diagnostic the failure reports: location, then the assert's message."""
    location = op_location(op)
    head = f"{location}: " if location is not None else ""
    return f"{head}error: {op.msg.data}"


def lower_asserts(module: ModuleOp, record: TypeRecord) -> None:
    """Lower every `cf.assert` of `module` (see the module docstring)."""
    messages: dict[str, str] = {}  # text -> global name, one global per distinct text
    for op in [op for op in module.walk() if isinstance(op, cf.AssertOp)]:
        text = message_text(op)
        if text not in messages:
            messages[text] = f"{MESSAGE_PREFIX}{len(messages)}"
            declare_message(module, messages[text], text)
        lower_assert(op, messages[text])
    if messages:
        record.declare(SYMBOL, [PTR], None)


def declare_message(module: ModuleOp, name: str, text: str) -> None:
    data = text.encode() + b"\0"
    message = llvm.GlobalOp(
        llvm.LLVMArrayType(len(data), i8),
        name,
        "internal",
        constant=True,
        value=StringAttr(data.decode()),
    )
    Rewriter.insert_op(message, InsertPoint.at_start(module.body.block))


def lower_assert(op: cf.AssertOp, message: str) -> None:
    block = op.parent_block()
    assert block is not None, "a cf.assert in a function body"
    after = block.split_before(op)
    failed = Block()
    address = llvm.AddressOfOp(message, PTR)
    failed_ops: list[Operation] = [
        address,
        llvm.CallOp(SYMBOL, address.result),
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
