"""
Graph breaks: a traced function compiled as pieces, chained by guards on values.

When traced code needs a concrete value (`if x.sum() > 0:`,
`float(x)`, a numpy function mlc does not trace), the function is split there: the
ops recorded so far are compiled as one piece, returning the value and every
traced array Python still holds; the piece runs, the value goes back to Python,
and tracing goes on in a fresh piece that takes those arrays as arguments. Each
piece records which piece follows for each value seen (the guard: the truth for
`bool()`, the exact value otherwise), so a later call runs the pieces one after
another without Python, and a value not seen before traces the function again.

    piece 0 --(value guard)--> piece 1 --(value guard)--> ... --> results
                          \\--> piece 1' (another value, traced when first seen)
"""

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, BlockArgument, OpResult, Region, SSAValue

from mlc.diagnostics import SourceLoc
from mlc.frontends.trace.array import TracedArray
from mlc.frontends.trace.program import Outputs, function_name
from mlc.frontends.trace.tracer import Tracer, tensor_type, trace_error, user_source_loc

# Captured arrays with at least this many elements become arguments of the compiled
# pieces instead of constants: no megabytes in the IR, and in-place changes are seen.
PARAMETER_SIZE = 1024


@dataclass(frozen=True)
class GraphBreak:
    """Where traced code needed a concrete value, and why."""

    location: SourceLoc | None
    reason: str

    def __str__(self) -> str:
        return f"{self.location or '<unknown>'}: graph break: {self.reason}"


class NeedsStatic(Exception):
    """Python read the size of a dynamic dim: the variant must be static."""


class NotBucketable(Exception):
    """A padded trace needed a concrete value: padding could change it."""


@dataclass(eq=False)
class Piece:
    """One compiled piece of a function, and the pieces that follow it by guard."""

    done: bool = False
    executable: Any = None
    results: int = 0
    carry: int = 0  # leading results that become arguments of the next piece
    break_index: int = 0  # the result holding the break value
    truth_only: bool = False  # `bool()`: only the value's truth is guarded
    outputs: Outputs | None = None  # the function's results (last piece only)
    params: tuple[np.ndarray, ...] = ()  # captured arrays passed as arguments
    children: dict[Any, "Piece"] = field(default_factory=dict[Any, "Piece"])

    def call(self, arrays: Sequence[np.ndarray], carried: Sequence[np.ndarray]) -> list[Any]:
        if self.executable is None:
            return []
        out = self.executable(*arrays, *self.params, *carried)
        return [out] if self.results == 1 else list(out)

    def key(self, value: np.ndarray) -> Any:
        if self.truth_only:
            return bool(value)
        return (value.dtype.str, value.shape, value.tobytes())


@dataclass(eq=False)
class Variant:
    """The compiled pieces for one guard key; bucketed variants slice their results."""

    types: list[Attribute]
    root: Piece = field(default_factory=Piece)
    slices: list[tuple[int, int, tuple[int, int]]] = field(
        default_factory=list[tuple[int, int, tuple[int, int]]]
    )
    kept: list[Any] = field(default_factory=list[Any])  # the objects the key names by id
    on_device: bool = False  # called on device arrays: its programs are compiled for the GPU

    def run(self, arrays: Sequence[np.ndarray]) -> tuple[Outputs, list[Any]] | None:
        """The results, or None when a guard meets a value no piece was traced for."""
        node, carried = self.root, []
        while node.done and node.outputs is None:
            results = node.call(arrays, carried)
            carried = results[: node.carry]
            value = np.asarray(results[node.break_index])
            if (child := node.children.get(node.key(value))) is None:
                return None
            node = child
        if not node.done or node.outputs is None:
            return None
        return node.outputs, node.call(arrays, carried)

    def unpad(self, results: list[Any], arrays: Sequence[np.ndarray]) -> list[Any]:
        for index, dim, (arg, arg_dim) in self.slices:
            keep = [slice(None)] * results[index].ndim
            keep[dim] = slice(0, arrays[arg].shape[arg_dim])
            results[index] = np.ascontiguousarray(results[index][tuple(keep)])
        return results


class PieceTracer(Tracer):
    """A tracer that answers concrete values by compiling and running the piece so far."""

    def __init__(
        self,
        fn: Callable[..., Any],
        compile_piece: Callable[[ModuleOp], Any],
        variant: Variant,
        arrays: Sequence[np.ndarray],
    ):
        super().__init__(fn)
        self.fn = fn
        self.compile_module = compile_piece
        self.types = variant.types
        self.arrays = arrays
        self.node = variant.root
        self.carried: list[np.ndarray] = []
        self.arrays_made: list[weakref.ref[TracedArray]] = []
        self.breaks: list[GraphBreak] = []
        self.allow_breaks = True
        self.on_device = variant.on_device
        self.params: list[np.ndarray] = []

    def constant(self, array: np.ndarray) -> SSAValue:
        """Large arrays are passed as arguments, not compiled in (ARCHITECTURE.md)."""
        if array.size < PARAMETER_SIZE:
            return super().constant(array)
        block = self.function_block
        for i, param in enumerate(self.params):
            if param is array:
                return block.args[len(self.types) + i]
        index = len(self.types) + len(self.params)
        self.params.append(array)
        return block.insert_arg(tensor_type(array.shape, array.dtype), index)

    def register(self, array: Any) -> None:
        self.arrays_made.append(weakref.ref(array))

    def dynamic_shape_read(self, array: Any) -> None:
        raise NeedsStatic

    def concretize(self, array: Any, why: str) -> Any:
        if self.on_device:
            trace_error(
                f"{why} on GPUArrays: a function called on device arrays is compiled "
                "whole, without graph breaks (use ops.where or ops.cond)"
            )
        if not self.allow_breaks:
            raise NotBucketable
        if self.region_depth:
            trace_error(
                f"{why} inside an ops.cond branch or loop body needs a value that changes "
                "with each run of the traced body: use ops.cond or ops.where there"
            )
        self.breaks.append(GraphBreak(user_source_loc(), why))
        held = self._held()
        carried = list(dict.fromkeys(p.value for p in held if not self._is_input(p.value)))
        outs = carried if array.value in carried else [*carried, array.value]
        node = self.node
        node.params = tuple(self.params)
        node.executable = self._compile_piece(outs)
        node.results, node.carry = len(outs), len(carried)
        node.break_index, node.truth_only = outs.index(array.value), why == "bool()"
        results = node.call(self.arrays, self.carried)
        node.done = True
        self.carried = results[: node.carry]
        self._continue_after(held, carried)
        value = np.asarray(results[node.break_index])
        self.node = node.children.setdefault(node.key(value), Piece())
        return value

    def _held(self) -> list[TracedArray]:
        """The traced arrays of this piece that Python still holds."""
        held = []
        for ref in self.arrays_made:
            array = ref()
            if array is not None and self._in_block(array.value):
                held.append(array)
        return held

    def _in_block(self, value: SSAValue) -> bool:
        if isinstance(value, BlockArgument):
            return value.block is self.block
        return isinstance(value, OpResult) and value.op.parent_block() is self.block

    def _is_input(self, value: SSAValue) -> bool:
        fixed = len(self.types) + len(self.params)
        return isinstance(value, BlockArgument) and value.index < fixed

    def _compile_piece(self, outs: list[SSAValue]) -> Any:
        self.emit(func.ReturnOp(*outs))
        inputs = [a.type for a in self.block.args]
        name = function_name(self.fn)
        function = func.FuncOp(name, (inputs, [v.type for v in outs]), Region(self.block))
        return self.compile_module(ModuleOp([function]))

    def _continue_after(self, held: list[TracedArray], carried: list[SSAValue]) -> None:
        """Start the next piece; held arrays now name its arguments."""
        old, fixed = self.block, len(self.types) + len(self.params)
        self.block = Block(
            arg_types=[*(a.type for a in old.args[:fixed]), *(v.type for v in carried)]
        )
        self.function_block = self.block
        renamed = dict(zip([*old.args[:fixed], *carried], self.block.args, strict=True))
        for new, old_arg in zip(self.block.args, old.args, strict=False):
            new.name_hint = old_arg.name_hint
        for array in held:
            array.value = renamed[array.value]
        self.arrays_made = [weakref.ref(a) for a in held]
