"""Constant strings as `llvm.global`s: assertion messages, the profiler's kernel table."""

from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp, StringAttr, i8
from xdsl.rewriter import InsertPoint, Rewriter


def declare_string(module: ModuleOp, name: str, text: str, linkage: str = "internal") -> None:
    """A NUL-terminated constant `text` named `name`, at the start of `module`."""
    data = text.encode() + b"\0"
    string = llvm.GlobalOp(
        llvm.LLVMArrayType(len(data), i8),
        name,
        linkage,
        constant=True,
        value=StringAttr(data.decode()),
    )
    Rewriter.insert_op(string, InsertPoint.at_start(module.body.block))
