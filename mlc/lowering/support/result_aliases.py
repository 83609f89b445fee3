"""
Donated arguments: which results a function writes into its arguments' buffers.

An argument marked `{ml.result_alias = N : i64}` is donated: the caller gives its buffer
away, `bufferize` leaves result N in it and the function returns N no more (the
runtime hands the caller's own array back in its place). Read at tensor level by
`bufferize` and by the compiled program's signature, so kept free of pass imports.
"""

from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr

from mlc.dialects.ml.base import RESULT_ALIAS


def result_aliases(function: func.FuncOp) -> dict[int, int]:
    """Each donated argument by the result it holds: `{result: argument}`."""
    if function.arg_attrs is None:
        return {}
    aliases: dict[int, int] = {}
    for index, attrs in enumerate(function.arg_attrs.data):
        alias = attrs.data.get(RESULT_ALIAS)
        if isinstance(alias, IntegerAttr):
            aliases[alias.value.data] = index
    return aliases


def alias_errors(function: func.FuncOp) -> list[str]:
    """What is wrong with `function`'s `ml.result_alias` attributes (nothing: empty)."""
    if function.arg_attrs is None:
        return []
    inputs, outputs = function.function_type.inputs.data, function.function_type.outputs.data
    errors: list[str] = []
    taken: set[int] = set()
    for index, attrs in enumerate(function.arg_attrs.data):
        if (alias := attrs.data.get(RESULT_ALIAS)) is None:
            continue
        if not isinstance(alias, IntegerAttr):
            errors.append(f"argument {index}: {RESULT_ALIAS} must be an integer")
            continue
        result = alias.value.data
        if not 0 <= result < len(outputs):
            errors.append(f"argument {index}: no result {result} to alias")
        elif inputs[index] != outputs[result]:
            errors.append(
                f"argument {index} ({inputs[index]}) cannot hold result {result} "
                f"({outputs[result]}): the types differ"
            )
        elif result in taken:
            errors.append(f"argument {index}: result {result} is aliased twice")
        taken.add(result)
    return errors
