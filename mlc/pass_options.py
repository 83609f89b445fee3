"""
Pass options from a textual pipeline (`linalg-tile{tile-sizes=8,8,4,4 threads=2}`) to the
fields of a pass's dataclass, with errors in the pipeline's own words.

Options are the pass's init fields, spelled with `-` on the command line (`_` is accepted
too, as xDSL does). A value is checked against the field's type before the pass is built:
an integer, a number, a bool, a string, a list of them (`tuple[int, ...]`), one of fixed
values (`Literal["fast", "none"]`), or one of several types (`int | None`). A bool option
given without a value is true, as in MLIR. Checks of a value's range belong to the pass's
`__post_init__`, which names options the same way.
"""

import dataclasses
from difflib import get_close_matches
from types import NoneType, UnionType
from typing import Literal, Union, get_args, get_origin, get_type_hints

from xdsl.passes import ModulePass


def option_name(field_name: str) -> str:
    """A pass option as the pipeline syntax spells it: `tile_sizes` -> `tile-sizes`."""
    return field_name.replace("_", "-")


def pass_from_options(cls: type[ModulePass], given: dict[str, tuple[object, ...]]) -> ModulePass:
    """
    An instance of `cls` with the options `given` by name (as typed, `-` or `_`), the
    others at their defaults.

    Like xDSL's `from_spec`, but its errors name options as the pipeline spells them and
    say what an option takes (a bool option given without a value is true, as in MLIR);
    the checks of the pass's own `__post_init__` then see every value.
    """
    fields = {f.name: f for f in dataclasses.fields(cls) if f.init and f.name != "name"}
    hints = get_type_hints(cls)
    values: dict[str, object] = {}
    for typed, raw in given.items():
        field_name = typed.replace("-", "_")
        if field_name not in fields:
            if not fields:
                raise ValueError(f"unknown option '{typed}' (the pass takes none)")
            names = [option_name(n) for n in fields]
            close = get_close_matches(option_name(typed), names, n=1)
            hint = f"did you mean '{close[0]}'?" if close else f"options: {', '.join(names)}"
            raise ValueError(f"unknown option '{typed}' ({hint})")
        values[field_name] = option_value(typed, raw, hints[field_name])
    for name, f in fields.items():
        no_default = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        if name not in values and no_default:
            raise ValueError(f"option '{option_name(name)}' is required")
    return cls(**values)


def option_value(typed: str, raw: tuple[object, ...], hint: object) -> object:
    """The value of option `typed` of type `hint` from its comma-separated `raw` values."""
    alternatives = get_args(hint) if get_origin(hint) in (Union, UnionType) else (hint,)
    if not raw and NoneType in alternatives:
        return None
    if not raw and bool in alternatives:
        return True
    for alternative in alternatives:
        if get_origin(alternative) is tuple:
            element = get_args(alternative)[0]
            if all(fits(v, element) for v in raw):
                return tuple(as_kind(v, element) for v in raw)
        elif len(raw) == 1 and fits(raw[0], alternative):
            return as_kind(raw[0], alternative)
    takes = " or ".join(kind_of(a) for a in alternatives if a is not NoneType)
    shown = ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in raw)
    got = f"'{shown}'" if raw else "no value"
    raise ValueError(f"option '{typed}' takes {takes}, got {got}")


def as_kind(value: object, kind: object) -> object:
    """A value that `fits` `kind`, as one: an integer given for a float option becomes one."""
    return float(value) if kind is float and isinstance(value, int) else value


def fits(value: object, kind: object) -> bool:
    """Whether one value of an option fits `kind` (an int is no bool, a float may be an int)."""
    if get_origin(kind) in (Union, UnionType):
        return any(fits(value, k) for k in get_args(kind))
    if get_origin(kind) is Literal:
        return any(value == choice and type(value) is type(choice) for choice in get_args(kind))
    if kind is bool or isinstance(value, bool):
        return kind is bool and isinstance(value, bool)
    if kind is float:
        return isinstance(value, int | float)
    return isinstance(kind, type) and isinstance(value, kind)


KINDS: dict[type, tuple[str, str]] = {
    int: ("an integer", "integers"),
    float: ("a number", "numbers"),
    bool: ("a bool (true or false)", "bools"),
    str: ("a string", "strings"),
}
"""Each kind of option value, in words: (one, several)."""


def kind_of(hint: object, plural: bool = False) -> str:
    """What a value of type `hint` is, in words, for an error message."""
    if get_origin(hint) is tuple:
        return f"a list of {kind_of(get_args(hint)[0], plural=True)}"
    if get_origin(hint) in (Union, UnionType):
        return " or ".join(kind_of(h, plural) for h in get_args(hint))
    if get_origin(hint) is Literal:
        return "one of " + ", ".join(repr(choice) for choice in get_args(hint))
    words = next((w for kind, w in KINDS.items() if hint is kind), (str(hint), str(hint)))
    return words[plural]
