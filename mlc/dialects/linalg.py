"""
xDSL's `linalg` dialect, with `linalg.generic` parsing every form it prints.

xDSL prints a generic with several results as MLIR does, `-> (tensor<..>, tensor<..>)`,
but parses only the bare list `-> tensor<..>, tensor<..>`, so mlc's multi-result row
kernels (softmax's exps and row sums) would not survive `mlc-opt | mlc-opt`.
`linalg_dialect()` makes `GenericOp.parse` accept both before handing out xDSL's
dialect. The op class itself stays xDSL's, so code that dispatches on it is unaffected.
"""

from collections.abc import Callable
from typing import Any

from xdsl.dialects.linalg import Linalg
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Dialect
from xdsl.parser import Parser
from xdsl.utils.mlir_lexer import MLIRTokenKind

_xdsl_parse = GenericOp.parse.__func__  # pyright: ignore[reportFunctionMemberAccess]


def _parse(cls: type[GenericOp], parser: Parser) -> GenericOp:
    """xDSL's parser, reading a result type list that starts with `(` in parentheses."""
    bare_list = parser.parse_comma_separated_list

    def result_types(
        delimiter: Parser.Delimiter, parse: Callable[[], Any], context_msg: str = ""
    ) -> list[Any]:
        next_kind = parser._current_token.kind  # pyright: ignore[reportPrivateUsage]
        if (
            delimiter == Parser.Delimiter.NONE
            and parse == parser.parse_attribute
            and next_kind == MLIRTokenKind.L_PAREN
        ):
            delimiter = Parser.Delimiter.PAREN
        return bare_list(delimiter, parse, context_msg)

    # A generic in a generic's body parses while the outer one's override is in place:
    # put back whatever was there, the outer override or none.
    outer = vars(parser).get("parse_comma_separated_list")
    parser.parse_comma_separated_list = result_types  # pyright: ignore[reportAttributeAccessIssue]
    try:
        return _xdsl_parse(cls, parser)
    finally:
        if outer is None:
            del parser.parse_comma_separated_list
        else:
            parser.parse_comma_separated_list = outer  # pyright: ignore[reportAttributeAccessIssue]


def linalg_dialect() -> Dialect:
    """xDSL's linalg dialect, its `linalg.generic` parsing parenthesised result types."""
    GenericOp.parse = classmethod(_parse)  # pyright: ignore[reportAttributeAccessIssue]
    return Linalg
