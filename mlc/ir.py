"""
Reading and writing IR text, with source locations on every parsed op.

MLIR gives each parsed op the location of its text, so diagnostics point at the
line that is wrong; xDSL's parser leaves ops at `loc(unknown)`. `LocatedParser`
closes that gap: an op without an explicit `loc(...)` gets `file:line:col`.
"""

from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, ModuleOp, StringAttr, UnknownLoc
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer

from mlc.registry import make_context


class LocatedParser(Parser):
    """An xDSL parser that records where each op's text starts."""

    def parse_operation(self) -> Operation:
        start = self._current_token.span  # pyright: ignore[reportPrivateUsage]
        op = super().parse_operation()
        if isinstance(op.location, UnknownLoc):
            where = start.get_location()
            op.location = FileLineColLoc(
                StringAttr(where.file), IntAttr(where.line), IntAttr(where.col)
            )
        return op


def parse_module(
    source: str | bytes,
    name: str = "<string>",
    *,
    ctx: Context | None = None,
    first_line: int = 1,
) -> ModuleOp:
    """
    Parse MLIR text (generic or custom form) into a module, without verifying it.

    `first_line` is the line number of the text's first line in its file, so that
    a chunk of a split file reports the lines of the file. Raises xDSL's
    `ParseError` on malformed text.
    """
    text = source.decode() if isinstance(source, bytes) else source
    padded = "\n" * (first_line - 1) + text
    parser = LocatedParser(ctx or make_context(), padded, name)
    return parser.parse_module()


def print_module(module: Operation, *, generic: bool = False, debuginfo: bool = False) -> str:
    """Print IR deterministically, in the custom form unless `generic`."""
    out = StringIO()
    printer = Printer(stream=out, print_generic_format=generic, print_debuginfo=debuginfo)
    printer.print_op(module)
    out.write("\n")
    return out.getvalue()
