"""
Donated arguments of `mlc.jit`: paired with results when a function is traced, and
made safe to write when a compiled program is called.

At trace time each donated array argument takes the first result of its type not yet
taken (as JAX pairs donated buffers with outputs), marked `ml.result_alias` on the
function (`mlc.lowering.support.result_aliases`), which `bufferize` honours. At call
time `donated_buffers` decides which arrays the program may write as they are, which
it must get copies of, and which are staged on the GPU and copied back.
"""

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, i64

from mlc.backend.cuda import is_device_array, upload
from mlc.backend.runtime import array_address
from mlc.dialects.ml.base import RESULT_ALIAS
from mlc.frontends.trace.program import is_array_arg


def check_argnums(argnums: int | Sequence[int]) -> tuple[int, ...]:
    """`donate_argnums` as a tuple; a `TypeError` unless an int or distinct ints >= 0."""
    if isinstance(argnums, int):
        return (argnums,)
    if all(type(i) is int and i >= 0 for i in argnums) and len(set(argnums)) == len(argnums):
        return tuple(argnums)
    raise TypeError(f"donate_argnums must be an int or distinct ints >= 0, got {argnums!r}")


def donate_arguments(
    function: func.FuncOp, args: Sequence[Any], argnums: Sequence[int], name: str
) -> None:
    """
    Mark the traced `function`'s arguments for the call's arguments `argnums` (arrays
    only) with the results they hold; warn, at the user's call, of any none fits.
    """
    for i in argnums:
        if i >= len(args) or not is_array_arg(args[i]):
            raise TypeError(f"mlc.jit: donate_argnums names argument {i}, which is not an array")
    positions = [sum(map(is_array_arg, args[:i])) for i in argnums]
    unused = mark_donated(function, positions)
    if unused:
        named = ", ".join(str(argnums[positions.index(p)]) for p in unused)
        warnings.warn(
            f"mlc.jit: {name}: donated argument(s) {named} match no result of the same "
            "shape and dtype; they are not written",
            stacklevel=5,  # here, JitFunction._trace, _trace_call, __call__: the user's call
        )


def mark_donated(function: func.FuncOp, arguments: Sequence[int]) -> list[int]:
    """
    Give each donated argument (block argument index) the first result of its type not
    yet given to another, as JAX pairs donated buffers with outputs; mark the pair with
    `ml.result_alias`. Returns the arguments no result matched.
    """
    inputs, outputs = function.function_type.inputs.data, function.function_type.outputs.data
    attrs = [dict(a.data) for a in function.arg_attrs.data] if function.arg_attrs else None
    attrs = attrs or [{} for _ in inputs]
    taken: set[int] = set()
    unused: list[int] = []
    for arg in arguments:
        result = next(
            (r for r, t in enumerate(outputs) if r not in taken and t == inputs[arg]), None
        )
        if result is None:
            unused.append(arg)
            continue
        taken.add(result)
        attrs[arg][RESULT_ALIAS] = IntegerAttr(result, i64)
    function.arg_attrs = ArrayAttr([DictionaryAttr(a) for a in attrs])
    return unused


def donated_buffers(
    args: Sequence[Any], donated: Sequence[int], on_gpu: bool
) -> tuple[list[Any], list[tuple[Any, Any]]]:
    """
    The arguments a donating call writes into, and the host arrays to copy back.

    A donated array is written in place unless that is unsafe or impossible: read-only,
    sharing memory with another argument (the program would read its own writes), or a
    host array given to a GPU program (`on_gpu`), staged on the device and copied back.
    The first two are copied, so the result is a new array; the arguments then are
    never changed.
    """
    buffers = list(args)
    write_back: list[tuple[Any, Any]] = []
    shared = _sharing_memory(buffers)
    for i in donated:
        array = buffers[i]
        if is_device_array(array):
            if i in shared:
                buffers[i] = array.copy()
            continue
        if i in shared or not array.flags.writeable:
            buffers[i] = array = array.copy()
        if on_gpu:
            buffers[i] = staged = upload(array)
            write_back.append((staged, array))
    return buffers, write_back


def _sharing_memory(arrays: Sequence[Any]) -> set[int]:
    """
    The positions of arrays whose memory overlaps another argument's, host or device:
    one sort of their address ranges (the arrays are contiguous once checked), cheap
    enough for every call (`np.may_share_memory` pairwise costs ~100 us for 15).
    """
    spans: list[tuple[int, int, int, int]] = []  # kind (host 0, device 1), start, end, position
    for i, a in enumerate(arrays):
        if isinstance(a, np.ndarray) and a.nbytes:
            start = array_address(a)
            spans.append((0, start, start + a.nbytes, i))
        elif is_device_array(a) and a.nbytes:
            start = int(a.gpudata)
            spans.append((1, start, start + a.nbytes, i))
    spans.sort()
    shared: set[int] = set()
    reach: tuple[int, int, int] = (-1, 0, -1)  # kind, end and position of the farthest span
    for kind, start, end, i in spans:
        if kind == reach[0] and start < reach[1]:  # it overlaps the span reaching farthest
            shared.update((i, reach[2]))
        if kind != reach[0] or end > reach[1]:
            reach = (kind, end, i)
    return shared
