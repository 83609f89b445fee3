"""
A compiled program's public functions as the program wrote them (tensor types), and
the check of a call's arguments against them.

Every argument is checked *before* native code runs, so a wrong count, dtype, rank or
static size is a `TypeError`/`ValueError` naming the argument, never a crash. The
signatures are also what the disk cache keeps of a program (`to_json`), so a cache hit
needs no frontend to know them.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FunctionType,
    IndexType,
    IntegerType,
    MemRefType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute
from xdsl.parser import Parser

from mlc.backend.runtime import dtype_of
from mlc.ir import type_text
from mlc.lowering.graph.shape_inference import ArgumentDims, argument_constraints
from mlc.lowering.support.result_aliases import result_aliases


@dataclass(frozen=True)
class Signature:
    """A public function's argument and result types, as the program wrote them."""

    name: str
    inputs: tuple[Attribute, ...]
    outputs: tuple[Attribute, ...]
    arg_names: tuple[str, ...]
    constraints: tuple[ArgumentDims, ...] = ()
    aliases: tuple[tuple[int, int], ...] = ()  # (result, donated argument holding it)

    @staticmethod
    def of(function: func.FuncOp) -> "Signature":
        names = tuple(
            f"%{arg.name_hint}" if arg.name_hint else f"#{i}" for i, arg in enumerate(function.args)
        )
        return Signature(
            function.sym_name.data,
            tuple(function.function_type.inputs),
            tuple(function.function_type.outputs),
            names,
            tuple(argument_constraints(function)),
            tuple(sorted(result_aliases(function).items())),
        )

    def to_json(self) -> dict[str, Any]:
        """The signature as JSON data (types in MLIR syntax), for the disk cache."""
        return {
            "name": self.name,
            "inputs": [type_text(t) for t in self.inputs],
            "outputs": [type_text(t) for t in self.outputs],
            "arg_names": list(self.arg_names),
            "constraints": [[[list(d) for d in c.dims], c.size] for c in self.constraints],
            "aliases": [list(pair) for pair in self.aliases],
        }

    @staticmethod
    def from_json(data: dict[str, Any]) -> "Signature":
        """The signature `to_json` described; `ValueError`/`KeyError`/`ParseError` if bad."""
        context = Context()  # builtin types only: no dialect needs loading
        types = lambda texts: tuple(Parser(context, t).parse_attribute() for t in texts)  # noqa: E731
        return Signature(
            str(data["name"]),
            types(data["inputs"]),
            types(data["outputs"]),
            tuple(str(n) for n in data["arg_names"]),
            tuple(
                ArgumentDims(tuple((int(i), int(d)) for i, d in dims), int(size))
                for dims, size in data["constraints"]
            ),
            tuple((int(r), int(a)) for r, a in data.get("aliases", [])),
        )

    def check(self, args: Sequence[Any], device_arrays: bool = False) -> list[Any]:
        """
        The arguments as the backend takes them; raises on any mismatch.

        With `device_arrays`, pycuda `GPUArray`s are accepted where arrays are expected.
        """
        if self._conforming(args, device_arrays):
            return list(args)
        if len(args) != len(self.inputs):
            raise TypeError(f"@{self.name} takes {len(self.inputs)} argument(s), got {len(args)}")
        checked: list[Any] = []
        for i, (arg, type_) in enumerate(zip(args, self.inputs, strict=True)):
            what = f"@{self.name}: argument {i} ({self.arg_names[i]})"
            if isinstance(type_, TensorType):
                dtype, shape = self._array_types[i]
                checked.append(_check_array(what, arg, type_, dtype, device_arrays, shape))
            else:
                checked.append(_check_scalar(what, arg, type_))
        for constraint in self.constraints:
            self._check_constraint(constraint, checked)
        return checked

    def _conforming(self, args: Sequence[Any], device_arrays: bool) -> bool:
        """
        Whether `args` pass every check as they are: contiguous arrays (or `GPUArray`s)
        of the right dtypes and static sizes, no scalars. The common case, checked
        without building a message; anything else takes the full check, which says
        what is wrong.
        """
        expected = self._array_types
        if len(args) != len(self.inputs) or len(expected) != len(args):
            return False
        for i, arg in enumerate(args):
            dtype, shape = expected[i]
            kind = type(arg)
            if kind is not np.ndarray and not (device_arrays and kind.__name__ == "GPUArray"):
                return False
            if arg.dtype != dtype or len(arg.shape) != len(shape):
                return False
            if not arg.flags.c_contiguous:
                return False
            for want, got in zip(shape, arg.shape):
                if want != got and want != DYNAMIC_INDEX:
                    return False
        for constraint in self.constraints:
            self._check_constraint(constraint, args)
        return True

    @cached_property
    def _array_types(self) -> dict[int, tuple[np.dtype, tuple[int, ...]]]:
        """Each tensor argument's dtype and shape, worked out once (not on every call)."""
        return {
            i: (dtype_of(t.element_type), tuple(t.get_shape()))
            for i, t in enumerate(self.inputs)
            if isinstance(t, TensorType)
        }

    def _check_constraint(self, constraint: ArgumentDims, args: Sequence[Any]) -> None:
        """Dynamic dims the program ties together must agree (a size-1 broadcast is no tie)."""
        sizes = [(i, d, args[i].shape[d]) for i, d in constraint.dims]
        wanted = constraint.size if constraint.size != DYNAMIC_INDEX else sizes[0][2]
        if all(size == wanted for _, _, size in sizes):
            return
        listed = ", ".join(f"{self.arg_names[i]} dim {d} is {size}" for i, d, size in sizes)
        need = f"size {constraint.size}" if constraint.size != DYNAMIC_INDEX else "one size"
        raise ValueError(
            f"@{self.name}: these dims must have {need} (the program ties them together): {listed}"
        )


def _check_array(
    what: str,
    arg: Any,
    type_: TensorType,
    dtype: np.dtype,
    device_arrays: bool = False,
    shape: Sequence[int] | None = None,
) -> np.ndarray:
    on_device = device_arrays and type(arg).__name__ == "GPUArray"
    if not isinstance(arg, np.ndarray) and not on_device:
        expected = type_text(type_)
        raise TypeError(f"{what}: expected a numpy array for {expected}, got {type(arg).__name__}")
    if arg.dtype != dtype:
        expected = type_text(type_)
        raise TypeError(f"{what}: expected dtype {dtype} for {expected}, got {arg.dtype}")
    shape = type_.get_shape() if shape is None else shape
    if arg.ndim != len(shape):
        expected = type_text(type_)
        raise ValueError(
            f"{what}: expected rank {len(shape)} for {expected}, got shape {arg.shape}"
        )
    for dim, (want, got) in enumerate(zip(shape, arg.shape, strict=True)):
        if want != DYNAMIC_INDEX and want != got:
            expected = type_text(type_)
            raise ValueError(
                f"{what}: expected size {want} in dim {dim} for {expected}, got shape {arg.shape}"
            )
    if on_device:
        return arg
    return np.require(arg, requirements="C")  # keeps rank 0, unlike ascontiguousarray


def _check_scalar(what: str, arg: Any, type_: Attribute) -> Any:
    if isinstance(type_, IndexType | IntegerType):
        if isinstance(arg, bool | np.bool_) and not (
            isinstance(type_, IntegerType) and type_.width.data == 1
        ):
            raise TypeError(f"{what}: expected an integer for {type_text(type_)}, got bool")
        if not isinstance(arg, int | np.integer | bool | np.bool_):
            raise TypeError(
                f"{what}: expected an integer for {type_text(type_)}, got {type(arg).__name__}"
            )
        return int(arg)
    if not isinstance(arg, int | float | np.integer | np.floating):
        raise TypeError(
            f"{what}: expected a number for {type_text(type_)}, got {type(arg).__name__}"
        )
    return float(arg)


def public_signatures(module: ModuleOp) -> list[Signature]:
    """The signatures of `module`'s public functions (those with a body, not private)."""
    return [
        Signature.of(op)
        for op in module.body.ops
        if isinstance(op, func.FuncOp) and op.body.blocks and not _is_private(op)
    ]


def _is_private(function: func.FuncOp) -> bool:
    visibility = function.sym_visibility
    return visibility is not None and visibility.data == "private"


def buffer_type(type_: Attribute) -> Attribute:
    """
    The type a tensor-level argument or result has once bufferized: the contiguous,
    row-major memref of `mlc.lowering.linalg.bufferize.memref_type`, built here so that a
    cache hit does not import the pass (and xDSL's linalg with it: ~0.5 s).
    """
    if isinstance(type_, TensorType):
        return MemRefType(type_.element_type, type_.get_shape())
    return type_


def buffer_types(signatures: Sequence[Signature]) -> dict[str, FunctionType]:
    """
    Each function's type once bufferized, by name: what the backends call (the results
    left in donated arguments are not returned).
    """
    types: dict[str, FunctionType] = {}
    for sig in signatures:
        aliased = {result for result, _ in sig.aliases}
        outputs = [buffer_type(t) for i, t in enumerate(sig.outputs) if i not in aliased]
        types[sig.name] = FunctionType.from_lists([buffer_type(t) for t in sig.inputs], outputs)
    return types
