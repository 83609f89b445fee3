"""
`mlc.trace`: run a Python function on traced arrays and return the `ml` program.

The function's array arguments become the arguments of one `func.func` (named
after the Python function), whose body holds the ops recorded while it ran; what it
returns (an array, a number, or a tuple or list of them) becomes the results.
Arguments that are not arrays (Python numbers, strings, objects) are passed as
they are: the program is specialised to them.
"""

import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Region, SSAValue

from mlc import diagnostics
from mlc.backend.cuda import is_device_array
from mlc.frontends.trace.array import TracedArray, is_traced
from mlc.frontends.trace.recording import lift
from mlc.frontends.trace.tracer import TraceError, Tracer, tensor_type, trace_error, tracing


@dataclass(frozen=True)
class Outputs:
    """
    Where each returned leaf comes from: a result index, or a Python constant; `tree`
    is how the leaves nest (None: one leaf; else the tuple or list type and the trees
    of its items), so `(value, (grad_w, grad_b))` comes back as it was returned.
    """

    sources: tuple[int | None, ...]
    constants: tuple[Any, ...]
    tree: Any

    def rebuild(self, results: Sequence[Any]) -> Any:
        leaves = iter(
            results[i] if i is not None else c
            for i, c in zip(self.sources, self.constants, strict=True)
        )
        return _unflatten(self.tree, leaves)


def _flatten(output: Any, leaves: list[Any]) -> Any:
    """Append `output`'s leaves to `leaves`; return its tree."""
    if isinstance(output, dict):
        trace_error("a traced function returns arrays, or tuples or lists of them")
    if not isinstance(output, tuple | list):
        leaves.append(output)
        return None
    return (type(output), tuple(_flatten(item, leaves) for item in output))


def _unflatten(tree: Any, leaves: Any) -> Any:
    if tree is None:
        return next(leaves)
    kind, items = tree
    return kind(_unflatten(item, leaves) for item in items)


def is_array_arg(value: Any) -> bool:
    """A numpy array or scalar, or a device array (traced from its shape and dtype alone)."""
    return isinstance(value, np.ndarray | np.generic) or is_device_array(value)


def array_type(value: Any) -> Attribute:
    """The tensor type of an array argument, read without copying a device array out."""
    if is_device_array(value):
        return tensor_type(tuple(value.shape), np.dtype(value.dtype))
    return tensor_type(np.shape(value), np.asarray(value).dtype)


def function_name(fn: Callable[..., Any]) -> str:
    name = getattr(fn, "__name__", "")
    return name if name.isidentifier() else "main"


def argument_names(fn: Callable[..., Any], count: int) -> list[str | None]:
    """The Python parameter names, as SSA name hints (for argument-check messages)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return [None] * count
    names: list[str | None] = []
    for i in range(count):
        if i < len(params) and params[i].kind in (
            inspect.Parameter.POSITIONAL_ONLY,
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
        ):
            names.append(params[i].name)
        else:
            names.append(None)
    return names


def bind_inputs(
    tracer: Tracer, fn: Callable[..., Any], args: Sequence[Any], types: Sequence[Attribute]
) -> list[Any]:
    """The call's arguments with each array replaced by a traced block argument."""
    tracer.block = tracer.function_block = Block(arg_types=types)
    names = argument_names(fn, len(args))
    block_args = iter(tracer.block.args)
    bound: list[Any] = []
    for arg, name in zip(args, names, strict=True):
        if not is_array_arg(arg):
            bound.append(arg)
            continue
        value = next(block_args)
        if name is not None:
            value.name_hint = name
        bound.append(TracedArray(tracer, value))
    return bound


def finish(
    tracer: Tracer, name: str, output: Any, lift_constants: bool = True
) -> tuple[func.FuncOp, Outputs]:
    """Close the function: its results are the leaves of `output` (or its traced ones)."""
    leaves: list[Any] = []
    tree = _flatten(output, leaves)
    results: list[SSAValue] = []
    sources: list[int | None] = []
    constants: list[Any] = []
    for leaf in leaves:
        if not is_traced(leaf) and not lift_constants:
            sources.append(None)
            constants.append(leaf)
            continue
        value = lift(tracer, leaf).value
        if value not in results:
            results.append(value)
        sources.append(results.index(value))
        constants.append(None)
    tracer.emit(func.ReturnOp(*results)).location = tracer.function_location
    inputs = [a.type for a in tracer.block.args]
    function = func.FuncOp(name, (inputs, [r.type for r in results]), Region(tracer.block))
    function.location = tracer.function_location
    return function, Outputs(tuple(sources), tuple(constants), tree)


def verified(module: ModuleOp) -> ModuleOp:
    if errors := diagnostics.verify_module(module):
        raise TraceError(errors)
    return module


def trace(fn: Callable[..., Any], *example_args: Any) -> ModuleOp:
    """
    The `ml` program `fn` computes, recorded by running it once on traced arrays.

    Array arguments (numpy arrays and scalars, or `GPUArray`s) fix the argument types; other
    arguments are passed through and the program is specialised to them. Returned
    numbers and numpy arrays become constant results.
    """
    tracer = Tracer(fn)
    types = [array_type(a) for a in example_args if is_array_arg(a)]
    with tracing(tracer):
        bound = bind_inputs(tracer, fn, example_args, types)
        output = fn(*bound)
        function, _ = finish(tracer, function_name(fn), output)
    return verified(ModuleOp([function]))
