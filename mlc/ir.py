"""
Reading and writing IR text, with source locations on every parsed op.

MLIR gives each parsed op the location of its text, so diagnostics point at the
line that is wrong; xDSL's parser leaves ops at `loc(unknown)`. `LocatedParser`
closes that gap: an op without an explicit `loc(...)` gets `file:line:col`.
"""

import re
from bisect import bisect_right
from functools import lru_cache
from io import StringIO

from xdsl.context import Context
from xdsl.dialect_interfaces.op_asm import OpAsmDialectInterface
from xdsl.dialects.builtin import (
    AnyDenseElement,
    ArrayAttr,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    FileLineColLoc,
    Float80Type,
    Float128Type,
    FloatAttr,
    IntAttr,
    ModuleOp,
    RankedStructure,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from mlc import resources
from mlc.diagnostics import one_line
from mlc.registry import make_context

# The op name at the start of an op's text, after any `%results =`.
OP_NAME = re.compile(r'\s*(?:%[^=]*=\s*)?"?([\w.$]+)')


class LocatedParser(Parser):
    """An xDSL parser that records where each op's text starts."""

    _line_starts: list[int] | None = None

    def line_and_column(self, span: Span[str]) -> tuple[int, int]:
        """
        The 1-based line and column of a span's start.

        xDSL's `Span.get_location` counts newlines from the start of the input on
        every call, which makes locating every op quadratic in the file size.
        """
        if self._line_starts is None:
            text = span.input.content
            self._line_starts = [0, *(i + 1 for i, c in enumerate(text) if c == "\n")]
        line = bisect_right(self._line_starts, span.start)
        return line, span.start - self._line_starts[line - 1] + 1

    def parse_operation(self) -> Operation:
        start = self._current_token.span  # pyright: ignore[reportPrivateUsage]
        try:
            op = super().parse_operation()
        except VerifyException as error:
            # A declarative assembly format checks the operand and result types it
            # parses against the op's constraints; a mismatch is bad input text.
            match = OP_NAME.match(str(start.input.content), start.start)
            name = f"'{match.group(1)}' op " if match else ""
            raise ParseError(start, f"{name}{one_line(str(error))}") from None
        if (kind := _unholdable_float(op)) is not None:
            # xDSL makes such an attribute but cannot print it (nor pack a dense one).
            match = OP_NAME.match(str(start.input.content), start.start)
            name = f"'{match.group(1)}' op " if match else ""
            raise ParseError(start, f"{name}has an {kind} constant, which mlc does not support")
        if isinstance(op.location, UnknownLoc):
            line, column = self.line_and_column(start)
            op.location = FileLineColLoc(
                StringAttr(start.input.name), IntAttr(line), IntAttr(column)
            )
        return op

    def parse_dense_int_or_fp_elements_attr(
        self, type: RankedStructure[AnyDenseElement] | None
    ) -> DenseIntOrFPElementsAttr:
        start = self._current_token.span  # pyright: ignore[reportPrivateUsage]
        try:
            return super().parse_dense_int_or_fp_elements_attr(type)
        except NotImplementedError:  # xDSL packs no f80 or f128 values
            end = self._current_token.span.start  # pyright: ignore[reportPrivateUsage]
            found = UNHOLDABLE_TYPE.search(str(start.input.content), start.start, end)
            kind = found.group(0) if found else "f80 or f128"
            raise ParseError(start, f"dense {kind} elements are not supported") from None


# Float types xDSL parses but cannot hold values of.
UNHOLDABLE_FLOATS = (Float80Type, Float128Type)
UNHOLDABLE_TYPE = re.compile(r"f(?:80|128)\b")


def _unholdable_float(op: Operation) -> str | None:
    """The type of an f80 or f128 `FloatAttr` among the op's attributes, if any."""
    pending: list[Attribute] = [*op.attributes.values(), *op.properties.values()]
    while pending:
        attr = pending.pop()
        if isinstance(attr, FloatAttr) and isinstance(attr.type, UNHOLDABLE_FLOATS):
            return attr.type.name
        if isinstance(attr, ArrayAttr):
            pending.extend(attr.data)  # pyright: ignore[reportUnknownArgumentType, reportUnknownMemberType]
        elif isinstance(attr, DictionaryAttr):
            pending.extend(attr.data.values())
    return None


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
    ctx = ctx or make_context()
    parser = LocatedParser(ctx, padded, name)
    if parser._current_token.kind == MLIRTokenKind.EOF:  # pyright: ignore[reportPrivateUsage]
        # Only whitespace and comments (an empty `// -----` chunk): an empty module,
        # as mlir-opt reads it; xDSL's parser rejects it.
        return ModuleOp([])
    module = parser.parse_module()
    blobs = ctx.get_dialect("builtin").get_interface(OpAsmDialectInterface)
    try:
        resources.import_blobs(module, blobs.lookup if blobs else lambda _: None)
    except ValueError as error:
        parser.raise_error(str(error))
    return module


def print_module(
    module: Operation, *, generic: bool = False, debuginfo: bool = False, blobs: bool = False
) -> str:
    """
    Print IR deterministically, in the custom form unless `generic`; with `blobs`, the
    bytes of the `dense_resource`s it reads follow in a `dialect_resources` section.
    """
    out = StringIO()
    printer = Printer(stream=out, print_generic_format=generic, print_debuginfo=debuginfo)
    printer.print_op(module)
    out.write("\n")
    if blobs and isinstance(module, ModuleOp):
        out.write(resources.blobs_section(module))
    return out.getvalue()


@lru_cache(maxsize=256)  # called on every argument of every call, for its messages
def type_text(type_: Attribute) -> str:
    """A type as MLIR prints it (`tensor<?x4xf32>`), for messages."""
    out = StringIO()
    Printer(stream=out).print_attribute(type_)
    return out.getvalue()
