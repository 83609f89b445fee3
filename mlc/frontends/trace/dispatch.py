"""
The op functions by numpy's name: what `TracedArray`'s operators and numpy hooks call.

`x + y`, `np.add(x, y)` and `ops.add(x, y)` must record the same op, but the array
class cannot import the op functions: they make arrays. So the functions register
themselves here as they are defined (`@ufunc("add")`, `@array_function("sum")`,
`@method("astype")`, the registration NEP 18 shows for `__array_function__`), and the
array looks them up by name when it is used. `mlc.frontends.trace` imports every
function module, so the tables are full once the frontend is imported.
"""

from collections.abc import Callable
from typing import Any, TypeVar

Function = TypeVar("Function", bound=Callable[..., Any])

UFUNCS: dict[str, Callable[..., Any]] = {}
"""The numpy ufuncs mlc traces, by name: `np.add(x, y)` and `x + y` call `UFUNCS["add"]`."""

ARRAY_FUNCTIONS: dict[str, Callable[..., Any]] = {}
"""The other numpy functions mlc traces, by name (`np.sum(x)`, `x.sum()`)."""

METHODS: dict[str, Callable[..., Any]] = {}
"""Array methods that are no numpy function mlc traces: `astype`, `__getitem__`."""


def _registrar(
    table: dict[str, Callable[..., Any]], names: tuple[str, ...]
) -> Callable[[Function], Function]:
    def register(function: Function) -> Function:
        for name in names:
            table[name] = function
        return function

    return register


def ufunc(*names: str) -> Callable[[Function], Function]:
    """Register the decorated op function as the numpy ufuncs `names`."""
    return _registrar(UFUNCS, names)


def array_function(*names: str) -> Callable[[Function], Function]:
    """Register the decorated op function as the numpy functions `names`."""
    return _registrar(ARRAY_FUNCTIONS, names)


def method(*names: str) -> Callable[[Function], Function]:
    """Register the decorated op function as the array methods `names`."""
    return _registrar(METHODS, names)
