"""
autotune-tiles: the blocking of each matmul and convolution measured on this machine.

`linalg-tile` blocks a contraction as `mlc.tiling_model` says: MR rows of registers,
KC-deep blocks of K, from the host's vector width and cache sizes. The model settles
the common case; where it does not (a convolution whose M is 8 filters, a K that the
caches cut awkwardly), only a measurement does. This pass runs after `bufferize` and
before `outline-kernels` (`mlc.compile(..., autotune=True)` or `MLC_AUTOTUNE=1`
put it there; off by default, and compiles are then deterministic). For each
contraction that `linalg-tile` would give its register kernel, with static sizes:

1. a standalone program is built: one function per candidate blocking
   (`tiling_model.tile_candidates`, the model's first), each the contraction alone
   with the zero fill it absorbs, its constant operands (weights, whose panels are
   then packed at compile time, as in the program) and the others as arguments;
2. `mlc.tuning` lowers the program by the rest of the `loops` stage and the `llvm`
   stage, compiles and loads it, and times the candidates in turns on random inputs;
3. the fastest candidate becomes the contraction's `mlc.tiles` attribute, which
   `linalg-tile` takes as given; the model's own blocking is kept unless another
   is faster by `MARGIN`, so timing noise does not move choices.

Choices are recorded per machine on disk (`mlc.tuning`), keyed by the standalone
program (the operands' types, the weights' types but not their values, the body, the
thread count): a layer is measured once per machine, and a second model with the same
layer reads it. `measure=false` applies recorded choices only; `cache=PATH`
reads and writes another file (lit tests seed one).
"""

import hashlib
from dataclasses import dataclass, replace
from io import StringIO
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DenseArrayBase, MemRefType, ModuleOp, NoneAttr, i64
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.printer import Printer
from xdsl.traits import SymbolTable

from mlc import tuning
from mlc.lowering.cpu.conv_gemm import conv_of
from mlc.lowering.cpu.linalg_tile import TILES_ATTR, kernel_choice, tiles_attribute
from mlc.lowering.linalg.contraction import matmul_of, zero_fill_before
from mlc.lowering.support.op_walk import walk_ops
from mlc.tiling_model import (
    PLAIN_LOOP_COLUMNS,
    MatmulTiles,
    balanced_depth,
    thread_count,
    tile_candidates,
)

MARGIN = 0.97  # another blocking must take under 97% of the model's time to replace it


@dataclass(frozen=True)
class Layer:
    """A contraction to tune: the op, the zero fill it absorbs, the model's blocking."""

    op: GenericOp
    fill: GenericOp | None
    tiles: MatmulTiles
    depth: int  # K


def tunable(op: GenericOp) -> Layer | None:
    """`op` as a layer to tune, or None: not a float contraction on the register kernel,
    or sizes known only at run time (nothing to measure at compile time)."""
    if TILES_ATTR in op.attributes or (mm := matmul_of(op) or conv_of(op)) is None:
        return None
    m, n, k = mm.sizes
    if m is None or n is None or k is None or n <= PLAIN_LOOP_COLUMNS:
        return None
    kind, tiles = kernel_choice(mm, None)
    if kind != "kernel":
        return None
    return Layer(op, zero_fill_before(op, mm.c), replace(tiles, kc=balanced_depth(k, tiles)), k)


class Standalone:
    """
    The program that times one layer: a function per candidate blocking, each the
    layer's fill and contraction on the same arguments. Constant operands (a
    `memref.get_global` of a constant, an `arith.constant`) are copied in; every other
    operand becomes an argument, which must be a static, contiguous memref.
    """

    def __init__(self, layer: Layer, source: ModuleOp):
        self.layer = layer
        self.globals: dict[str, memref.GlobalOp] = {}
        self.arguments: list[SSAValue] = []
        ops = [o for o in (layer.fill, layer.op) if o is not None]
        for op in ops:
            for operand in op.operands:
                if operand not in self.arguments and not self._constant(operand, source):
                    self.arguments.append(operand)

    def _constant(self, value: SSAValue, source: ModuleOp) -> bool:
        owner = value.owner
        if isinstance(owner, arith.ConstantOp):
            return True
        if not isinstance(owner, memref.GetGlobalOp):
            return False
        found = SymbolTable.lookup_symbol(source, owner.name_)
        if not isinstance(found, memref.GlobalOp) or found.constant is None:
            return False
        self.globals[owner.name_.root_reference.data] = found
        return True

    def valid(self) -> bool:
        """Whether every argument can be made from a numpy array of its shape."""
        return all(
            isinstance(t := v.type, MemRefType)
            and isinstance(t.layout, NoneAttr)
            and all(d >= 0 for d in t.get_shape())
            for v in self.arguments
        )

    def function(self, name: str, tiles: MatmulTiles | None) -> func.FuncOp:
        """The layer as `@name`, its contraction blocked as `tiles` (None: unmarked)."""
        block = Block(arg_types=[v.type for v in self.arguments])
        mapping: dict[SSAValue, SSAValue] = dict(zip(self.arguments, block.args, strict=True))
        for op in (self.layer.fill, self.layer.op):
            if op is None:
                continue
            for operand in op.operands:
                if operand not in mapping:
                    copy = operand.owner.clone()
                    assert isinstance(copy, Operation)
                    block.add_op(copy)
                    mapping[operand] = copy.results[0]
            clone = op.clone(value_mapper=mapping)
            if tiles is not None and op is self.layer.op:
                clone.attributes[TILES_ATTR] = tiles_attribute(tiles)
            block.add_op(clone)
        block.add_op(func.ReturnOp())
        return func.FuncOp(name, ([v.type for v in self.arguments], []), Region(block))

    def module(self, candidates: list[MatmulTiles]) -> ModuleOp:
        ops: list[Operation] = [g.clone() for g in self.globals.values()]
        ops += [self.function(f"candidate{i}", t) for i, t in enumerate(candidates)]
        return ModuleOp(ops)

    def key(self, threads: int) -> str:
        """What the layer's time depends on: its function unmarked, the weights' types
        (not their values: a layer of another model with the same shapes reads the
        same choice) and the thread count."""
        text = StringIO()
        Printer(text).print_op(ModuleOp([self.function("layer", None)]))
        weights = "\n".join(f"{name}: {g.type}" for name, g in sorted(self.globals.items()))
        digest = hashlib.sha256(f"{text.getvalue()}\n{weights}\nthreads {threads}".encode())
        return digest.hexdigest()


def measure(standalone: Standalone, candidates: list[MatmulTiles], ctx: Context) -> int:
    """The index of the fastest candidate (0, the model's, unless another beats it by
    `MARGIN`), each timed by `mlc.tuning` on the same random arguments."""
    names = [f"candidate{i}" for i in range(len(candidates))]
    types = [v.type for v in standalone.arguments]
    times = tuning.time_functions(standalone.module(candidates), names, types, ctx)  # pyright: ignore[reportArgumentType]
    best = min(range(len(times)), key=times.__getitem__)
    return best if times[best] < MARGIN * times[0] else 0


@dataclass(frozen=True)
class AutotuneTilesPass(ModulePass):
    """Mark each static matmul or convolution with its measured blocking (module docstring)."""

    name = "autotune-tiles"

    measure: bool = True
    """Time the layers no recorded choice covers; false: apply recorded choices only."""

    cache: str = ""
    """The file of recorded choices; empty: this machine's (`mlc.tuning`)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        file = Path(self.cache) if self.cache else None
        recorded = tuning.recorded(file)
        found: dict[str, list[int]] = {}
        threads = thread_count()
        for generic in [g for g in walk_ops(op) if isinstance(g, GenericOp)]:
            if (layer := tunable(generic)) is None:
                continue
            standalone = Standalone(layer, op)
            if not standalone.valid():
                continue
            candidates = tile_candidates(layer.tiles, layer.depth)
            key = standalone.key(threads)
            choice = recorded.get(key) or found.get(key)
            if choice is None and self.measure:
                choice = _as_list(candidates[measure(standalone, candidates, ctx)])
                found[key] = choice
            if choice is not None and len(choice) == 5:
                generic.attributes[TILES_ATTR] = DenseArrayBase.from_list(i64, choice)
        tuning.record(found, file)


def _as_list(tiles: MatmulTiles) -> list[int]:
    return [tiles.mr, tiles.nr, tiles.kc, tiles.mc, tiles.vector]
