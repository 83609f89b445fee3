"""
convert-linalg-to-parallel-loops: `linalg.generic` on memrefs to `scf.parallel` nests.

The GPU counterpart of `convert-linalg-to-loops`. The parallel iterators of a generic
become one `scf.parallel` (outermost, in the order of the map dims, so the last
parallel dim walks the output's contiguous axis); its reduction iterators become
`scf.for` loops inside. When no output map uses a reduction dim (every `ml`
reduction and matmul), each output element is loaded once before the reduction
loops, carried through them in `iter_args` (a register on the GPU) and stored once
after:

    linalg.generic {iterator_types = ["parallel", "reduction", "parallel"]}
        ins(%a, %b) outs(%c)     // matmul (i, k, j)
==>
    scf.parallel (%i, %j) = (%c0, %c0) to (%m, %n) step (%c1, %c1) {
      %init = memref.load %c[%i, %j]
      %acc = scf.for %k = %c0 to %kk step %c1 iter_args(%s = %init) -> (f32) {
        ...loads of %a[%i, %k] and %b[%k, %j], the generic's body...
        scf.yield %sum
      }
      memref.store %acc, %c[%i, %j]
      scf.reduce
    }

When a fill generic (`mlc.lowering.gpu.fills`) writes such an output just before, with
nothing between reading it, the carried value starts at the fill's constant instead
of a load, and the fill goes (one kernel fewer: softmax's and layer_norm's `-inf`
and 0). A generic with no parallel iterator (a full reduction) gets a one-iteration
`scf.parallel`, so it still becomes one kernel. `memref.copy` becomes an
`scf.parallel` of loads and stores too: on the GPU target buffers live in device
memory, where a copy is a kernel (or a driver copy) rather than a host `memcpy`.

Precondition: buffer semantics (run `bufferize` first). Index arithmetic of
non-trivial maps is left as `affine.apply` for `lower-affine`.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineConstantExpr, AffineDimExpr, AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.convert_linalg_to_loops import materialize_loop_bound
from xdsl.transforms.loop_nest_lowering_utils import indices_for_map

from mlc.diagnostics import op_error
from mlc.lowering.gpu.fills import fill_before, filled_with
from mlc.lowering.linalg.contraction import Epilogue, epilogue_of, multiply_add
from mlc.lowering.support.loop_builder import Ops


def split_iterators(op: GenericOp) -> tuple[list[int], list[int]]:
    """The generic's parallel dims and its other (reduction) dims, each in map order."""
    parallel: list[int] = []
    reduction: list[int] = []
    for dim, iterator in enumerate(op.iterator_types):
        (parallel if iterator.data == IteratorType.PARALLEL else reduction).append(dim)
    return parallel, reduction


def outputs_independent_of(op: GenericOp, dims: Sequence[int]) -> bool:
    """Whether no output indexing map reads any of `dims` (so outputs can live in registers)."""
    maps = op.get_indexing_maps().data[len(op.inputs) :]
    return not any(dim in expr.used_dims() for m in maps for expr in m.data.results for dim in dims)


class _Emitter:
    """Inserts ops at a moving point, each carrying the location of the op being lowered."""

    def __init__(self, rewriter: PatternRewriter, op: Operation):
        self.rewriter = rewriter
        self.location = op.location
        self.point = InsertPoint.before(op)

    def __call__(self, new: Operation) -> Operation:
        new.location = self.location
        self.rewriter.insert(new, self.point)
        return new

    def keep_location(self, new: Operation) -> Operation:
        """Insert `new` as it is: a cloned body op keeps its own location."""
        self.rewriter.insert(new, self.point)
        return new

    def index(self, value: int) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr.from_index_int_value(value))).results[0]

    def indices(self, affine_map: AffineMap, ivs: Sequence[SSAValue]) -> Sequence[SSAValue]:
        values = indices_for_map(self.rewriter, self.point, affine_map, ivs)
        for value in values:
            if value.owner is not None and isinstance(value.owner, Operation):
                value.owner.location = self.location
        return values


def _parallel(emit: _Emitter, bounds: Sequence[SSAValue]) -> tuple[scf.ParallelOp, Block]:
    """An empty `scf.parallel` from 0 to `bounds` step 1 (one iteration when no bounds)."""
    zero, one = emit.index(0), emit.index(1)
    uppers = list(bounds) or [one]
    body = Block(arg_types=[IndexType()] * len(uppers))
    loop = scf.ParallelOp([zero] * len(uppers), uppers, [one] * len(uppers), Region(body))
    emit(loop)
    return loop, body


def _clone_body(
    emit: _Emitter, block: Block, args: Sequence[SSAValue], ivs: Sequence[SSAValue]
) -> list[SSAValue]:
    """Clone a generic's body with its arguments bound; the values it yields."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, args, strict=True))
    for inner in block.ops:
        if isinstance(inner, YieldOp):
            return [mapping.get(v, v) for v in inner.operands]
        if isinstance(inner, IndexOp):
            mapping[inner.result] = ivs[inner.dim.value.data]
            continue
        emit.keep_location(inner.clone(value_mapper=mapping))
    raise AssertionError("a linalg.generic body ends with linalg.yield")


def contraction_dims(op: GenericOp, parallel: Sequence[int]) -> tuple[int, int] | None:
    """
    The last two parallel dims when register tiling them saves loads, else None.

    That is when one input ignores the last dim and another ignores the one before it,
    as matmul's `a[i, k]` ignores `j` and `b[k, j]` ignores `i`: each value loaded then
    serves a whole row or column of the tile.
    """
    if len(parallel) < 2:
        return None
    rows, cols = parallel[-2], parallel[-1]
    maps = [m.data for m in op.get_indexing_maps().data[: len(op.inputs)]]

    def ignores(m: AffineMap, dim: int) -> bool:
        return not any(dim in expr.used_dims() for expr in m.results)

    for n, first in enumerate(maps):
        for m, second in enumerate(maps):
            if n != m and ignores(first, cols) and ignores(second, rows):
                return rows, cols
    return None


# Contractions with fewer outputs than this (all sizes static) are not register tiled:
# tiles would leave too few threads to fill a GPU (132 SMs x 2048 threads on an H100),
# while one warp per output (convert-parallel-loops-to-gpu) shares each reduction.
SMALL_OUTPUT = 32768
# Contractions with at most this many columns (static) take a whole row of outputs an
# iteration: a classifier head's x @ w (10 columns) then reads each row of x once, and
# `convert-parallel-loops-to-gpu` shares the row's reduction among a warp's lanes, the
# accumulators side by side. A shared-memory tile would compute 64 columns to keep 10
# and leave most of the GPU idle (128 blocks for 8192 rows): 8.8 us for the MLP's head
# on an H100, against 4.2 with a row an iteration. Two rows (each load of the other
# operand serving both) took 3.9, but one row an iteration is what a softmax over the
# columns joins (`fuse-row-epilogues`), which saves a kernel of 2.4, and its stores
# need no guard.
NARROW_COLUMNS = 16


def _static_size(op: GenericOp, dims: Sequence[int]) -> float:
    """The product of the loop sizes of `dims`, or infinity if any is dynamic."""
    sizes = [size for _, _, size in op.get_loop_bound_sources()]
    total = 1
    for dim in dims:
        if sizes[dim] < 0:
            return math.inf
        total *= sizes[dim]
    return total


def narrow_columns(op: GenericOp, cols: int) -> int | None:
    """The column count of a contraction whose columns `cols` are static and few
    (`NARROW_COLUMNS`), else None."""
    count = _static_size(op, [cols])
    return int(count) if count <= NARROW_COLUMNS else None


def peeled_epilogue(op: GenericOp, reduction: Sequence[int]) -> Epilogue | None:
    """
    The epilogue `linalg-fuse-elementwise` fused into a contraction's last iteration
    (`mlc.lowering.linalg.contraction.epilogue_of`), when the reduction sizes are static: the
    loops then carry `c + a * b` alone and the epilogue runs once on each total after
    them, so that no branch sits in the loop and a warp can share it.
    """
    if len(op.inputs) < 2 or len(op.outputs) != 1:
        return None
    if (found := multiply_add(op.body.block)) is None:
        return None
    rest, total = found
    sizes = {d: _static_size(op, [d]) for d in reduction}
    if any(math.isinf(size) for size in sizes.values()):
        return None
    return epilogue_of(op, rest, total, {d: int(size) for d, size in sizes.items()})


@dataclass
class RegisterTile:
    """`tile_rows` x `tile_cols` outputs per iteration of the parallel loop, in registers."""

    rows: int
    cols: int
    tile_rows: int
    tile_cols: int
    sizes: tuple[SSAValue, SSAValue]
    whole_columns: bool = False  # the tile spans every column (a narrow contraction)

    def points(
        self, emit: _Emitter, outer: Sequence[SSAValue]
    ) -> list[tuple[list[SSAValue], SSAValue | None]]:
        """
        Each output of the tile: its indices (clamped into range) and whether it is in
        range (None when it always is: a tile of one row, or one spanning the columns).
        """
        one = emit.index(1)
        coordinates: list[list[tuple[SSAValue, SSAValue | None]]] = []
        for dim, tile, size in zip(
            (self.rows, self.cols), (self.tile_rows, self.tile_cols), self.sizes, strict=True
        ):
            if dim == self.cols and self.whole_columns:
                coordinates.append([(emit.index(offset), None) for offset in range(tile)])
                continue
            if tile == 1:
                coordinates.append([(outer[dim], None)])
                continue
            last = emit(arith.SubiOp(size, one)).results[0]
            first = emit(arith.MuliOp(outer[dim], emit.index(tile))).results[0]
            column = []
            for offset in range(tile):
                index = emit(arith.AddiOp(first, emit.index(offset))).results[0]
                clamped = emit(arith.MinUIOp(index, last)).results[0]
                inside = emit(arith.CmpiOp(index, size, "ult")).results[0]
                column.append((clamped, inside))
            coordinates.append(column)
        points: list[tuple[list[SSAValue], SSAValue | None]] = []
        for row, row_inside in coordinates[0]:
            for col, col_inside in coordinates[1]:
                point = list(outer)
                point[self.rows], point[self.cols] = row, col
                inside = row_inside
                if col_inside is not None:
                    both = None if inside is None else emit(arith.AndIOp(inside, col_inside))
                    inside = col_inside if both is None else both.results[0]
                points.append((point, inside))
        return points


@dataclass
class GenericToParallelLoops(RewritePattern):
    """One `linalg.generic` on memrefs to `scf.parallel` over `scf.for` (module docstring)."""

    register_tile: tuple[int, int] = (1, 1)
    # id of a generic -> {output index: the constant its carried value starts at}
    starts: dict[int, dict[int, Attribute]] = field(default_factory=dict[int, dict[int, Attribute]])
    absorbed: set[int] = field(default_factory=set[int])  # ids of the fills those replace

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        if id(op) in self.absorbed:
            rewriter.erase(op)
            return
        if op.res:
            op_error(op, "requires buffer semantics: run bufferize before this pass")
        emit = _Emitter(rewriter, op)
        bounds: list[SSAValue] = []
        for operand, dim_index, dim_size in op.get_loop_bound_sources():
            if not isinstance(operand.type, MemRefType):
                op_error(op, "requires buffer semantics: run bufferize before this pass")
            bounds.append(
                materialize_loop_bound(rewriter, emit.point, operand, dim_index, dim_size)
            )
        parallel, reduction = split_iterators(op)
        carried = bool(reduction) and outputs_independent_of(op, reduction)
        tile = self._tile(op, emit, parallel, bounds) if carried else None
        looped = list(parallel)
        counts = [bounds[d] for d in parallel]
        if tile is not None:
            counts[-2] = _ceil_div(emit, bounds[tile.rows], tile.tile_rows)
            if tile.whole_columns:  # one column tile: no loop over it
                looped, counts = looped[:-1], counts[:-1]
            else:
                counts[-1] = _ceil_div(emit, bounds[tile.cols], tile.tile_cols)
        _, body = _parallel(emit, counts)
        emit.point = InsertPoint.at_start(body)
        ivs: list[SSAValue | None] = [None] * len(bounds)
        for dim, iv in zip(looped, body.args):
            ivs[dim] = iv
        if carried:
            self._carried(op, emit, bounds, reduction, ivs, tile)
        else:
            self._nested(op, emit, bounds, reduction, ivs)
        emit(scf.ReduceOp())
        rewriter.erase(op)

    def _tile(
        self, op: GenericOp, emit: _Emitter, parallel: Sequence[int], bounds: Sequence[SSAValue]
    ) -> RegisterTile | None:
        if self.register_tile == (1, 1):
            return None
        if (dims := contraction_dims(op, parallel)) is None:
            return None
        if _static_size(op, parallel) < SMALL_OUTPUT:
            return None  # few outputs: one warp each beats fewer, longer threads
        rows, cols = dims
        sizes = (bounds[rows], bounds[cols])
        if (columns := narrow_columns(op, cols)) is not None:
            return RegisterTile(rows, cols, 1, columns, sizes, whole_columns=True)
        return RegisterTile(rows, cols, *self.register_tile, sizes)

    @staticmethod
    def _loads(
        op: GenericOp, emit: _Emitter, ivs: Sequence[SSAValue], which: Sequence[int]
    ) -> list[SSAValue]:
        maps = op.get_indexing_maps().data
        values: list[SSAValue] = []
        for i in which:
            operand = op.operands[i]
            if not isinstance(operand.type, MemRefType):
                values.append(operand)  # a scalar operand is used as is
                continue
            load = memref.LoadOp.get(operand, emit.indices(maps[i].data, ivs))
            values.append(emit(load).results[0])
        return values

    @staticmethod
    def _stores(
        op: GenericOp, emit: _Emitter, ivs: Sequence[SSAValue], values: Sequence[SSAValue]
    ) -> None:
        maps = op.get_indexing_maps().data
        for j, value in enumerate(values):
            i = len(op.inputs) + j
            emit(memref.StoreOp.get(value, op.operands[i], emit.indices(maps[i].data, ivs)))

    def _for_nest(
        self,
        emit: _Emitter,
        bounds: Sequence[SSAValue],
        dims: Sequence[int],
        ivs: list[SSAValue | None],
        carried: Sequence[SSAValue],
    ) -> tuple[list[scf.ForOp], list[SSAValue]]:
        """`scf.for` loops over `dims` (outermost first) carrying `carried`; emit moves inside."""
        loops: list[scf.ForOp] = []
        for dim in dims:
            zero, one = emit.index(0), emit.index(1)
            types = [v.type for v in carried]
            block = Block(arg_types=[IndexType(), *types])
            loop = scf.ForOp(zero, bounds[dim], one, carried, Region(block))
            emit(loop)
            loops.append(loop)
            ivs[dim] = block.args[0]
            carried = list(block.args[1:])
            emit.point = InsertPoint.at_start(block)
        return loops, list(carried)

    def _carried(self, op, emit, bounds, reduction, ivs, tile: RegisterTile | None) -> None:
        n_out = len(op.outputs)
        # Output maps ignore the reduction dims: any index stands in for them here.
        zero = emit.index(0)
        outer = [zero if iv is None else iv for iv in ivs]
        points = tile.points(emit, outer) if tile else [(outer, None)]
        init = [value for point, _ in points for value in self._starts(op, emit, point)]
        epilogue = peeled_epilogue(op, reduction)
        loops, carried = self._for_nest(emit, bounds, reduction, ivs, init)
        results: list[SSAValue] = []
        for n, (point, _) in enumerate(points):
            inner = [ivs[d] if d in reduction else iv for d, iv in enumerate(point)]
            accumulators = carried[n * n_out : (n + 1) * n_out]
            results += self._step(op, emit, inner, accumulators, epilogue)
        for loop in reversed(loops):
            emit(scf.YieldOp(*results))
            results = list(loop.results)
            emit.point = InsertPoint.after(loop)
        emit.point = InsertPoint.after(loops[0])
        for n, (point, inside) in enumerate(points):
            values = results[n * n_out : (n + 1) * n_out]
            if epilogue is not None:
                ops = Ops()
                values = [epilogue.apply(ops, point, values[0])]
                for new_op in ops.ops:
                    emit(new_op)
            self._guarded_stores(op, emit, point, values, inside)

    def _starts(self, op: GenericOp, emit: _Emitter, point: Sequence[SSAValue]) -> list[SSAValue]:
        """The outputs' values at `point` before the reduction: a fill's constant, or loaded."""
        n_in, n_out = len(op.inputs), len(op.outputs)
        starts = self.starts.get(id(op), {})
        read = [n_in + i for i in range(n_out) if i not in starts]
        loaded = iter(self._loads(op, emit, point, read))
        return [
            emit(arith.ConstantOp(starts[i])).results[0] if i in starts else next(loaded)
            for i in range(n_out)
        ]

    def _step(
        self,
        op: GenericOp,
        emit: _Emitter,
        inner: Sequence[SSAValue],
        accumulators: Sequence[SSAValue],
        epilogue: Epilogue | None,
    ) -> list[SSAValue]:
        """One iteration's body at `inner`; with a peeled epilogue, `c + a * b` alone."""
        block = op.body.block
        if epilogue is None:
            inputs = self._loads(op, emit, inner, range(len(op.inputs)))
            return _clone_body(emit, block, [*inputs, *accumulators], inner)
        a, b = self._loads(op, emit, inner, (0, 1))
        mapping = {block.args[0]: a, block.args[1]: b, block.args[-1]: accumulators[0]}
        for body_op in list(block.ops)[:2]:  # `multiply_add`'s mulf and addf
            emit.keep_location(body_op.clone(value_mapper=mapping))
        return [mapping[epilogue.accumulated]]

    def _guarded_stores(
        self,
        op: GenericOp,
        emit: _Emitter,
        point: Sequence[SSAValue],
        values: Sequence[SSAValue],
        inside: SSAValue | None,
    ) -> None:
        """The stores of `values` at `point`, under `scf.if inside` unless None."""
        if inside is None:
            self._stores(op, emit, point, values)
            return
        then = Block()
        emit(scf.IfOp(inside, [], Region(then)))
        after = emit.point
        emit.point = InsertPoint.at_end(then)
        self._stores(op, emit, point, values)
        emit(scf.YieldOp())
        emit.point = after

    def _nested(self, op, emit, bounds, reduction, ivs) -> None:
        loops, _ = self._for_nest(emit, bounds, reduction, ivs, [])
        values = self._loads(op, emit, ivs, range(len(op.operands)))
        results = _clone_body(emit, op.body.block, values, ivs)
        self._stores(op, emit, ivs, results)
        for loop in reversed(loops):
            emit(scf.YieldOp())
            emit.point = InsertPoint.after(loop)


def _ceil_div(emit: _Emitter, value: SSAValue, divisor: int) -> SSAValue:
    if divisor == 1:
        return value
    bumped = emit(arith.AddiOp(value, emit.index(divisor - 1))).results[0]
    return emit(arith.DivUIOp(bumped, emit.index(divisor))).results[0]


class CopyToParallelLoops(RewritePattern):
    """`memref.copy` to an `scf.parallel` of element loads and stores."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CopyOp, rewriter: PatternRewriter) -> None:
        target = op.destination.type
        assert isinstance(target, MemRefType)
        emit = _Emitter(rewriter, op)
        bounds = [
            materialize_loop_bound(rewriter, emit.point, op.destination, dim, size)
            for dim, size in enumerate(target.get_shape())
        ]
        _, body = _parallel(emit, bounds)
        emit.point = InsertPoint.at_start(body)
        ivs = list(body.args) if bounds else []
        value = emit(memref.LoadOp.get(op.source, ivs)).results[0]
        emit(memref.StoreOp.get(value, op.destination, ivs))
        emit(scf.ReduceOp())
        rewriter.erase(op)


def _covers(op: GenericOp, output: int) -> bool:
    """Whether the parallel loops write every element of output `output` (each result
    of its map a parallel dim, or 0 on a dim of static size 1)."""
    operand = op.outputs[output]
    affine_map = op.get_indexing_maps().data[len(op.inputs) + output].data
    shape = operand.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue]
    dims: list[int] = []
    for size, expr in zip(shape, affine_map.results, strict=True):
        if isinstance(expr, AffineDimExpr):
            dims.append(expr.position)
        elif not (isinstance(expr, AffineConstantExpr) and expr.value == 0 and size == 1):
            return False
    return len(set(dims)) == len(dims)


def absorbable_fills(module: ModuleOp) -> tuple[dict[int, dict[int, Attribute]], set[int]]:
    """The fills that reductions carrying their outputs can start from (module docstring):
    per reduction (by id) its outputs' starting constants, and the fills' ids."""
    starts: dict[int, dict[int, Attribute]] = {}
    absorbed: set[int] = set()
    for op in module.walk():
        if not isinstance(op, GenericOp) or op.res:
            continue
        _, reduction = split_iterators(op)
        if not reduction or not outputs_independent_of(op, reduction):
            continue
        for output in range(len(op.outputs)):
            fill = fill_before(op, output)
            if fill is None or id(fill) in absorbed or not _covers(op, output):
                continue
            constant = filled_with(fill)
            assert constant is not None and isinstance(constant.owner, arith.ConstantOp)
            starts.setdefault(id(op), {})[output] = constant.owner.value
            absorbed.add(id(fill))
    return starts, absorbed


def _reject_other_linalg(module: ModuleOp) -> None:
    for op in module.walk():
        if op.dialect_name() == "linalg" and not isinstance(op, GenericOp | YieldOp | IndexOp):
            op_error(
                op,
                f"'{op.name}' is not supported by convert-linalg-to-parallel-loops "
                "(convert-ml-to-linalg emits linalg.generic only)",
            )


@dataclass(frozen=True)
class ConvertLinalgToParallelLoopsPass(ModulePass):
    """Lower `linalg.generic`s and `memref.copy`s on memrefs to `scf.parallel` nests."""

    name = "convert-linalg-to-parallel-loops"

    register_tile: tuple[int, ...] = (4, 4)

    def __post_init__(self) -> None:
        if len(self.register_tile) != 2 or not all(1 <= t <= 8 for t in self.register_tile):
            raise ValueError(
                f"register-tile takes two sizes in [1, 8], got {list(self.register_tile)}"
            )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        _reject_other_linalg(op)
        tile = (self.register_tile[0], self.register_tile[1])
        starts, absorbed = absorbable_fills(op)
        lower_generics = GenericToParallelLoops(tile, starts, absorbed)
        PatternRewriteWalker(
            GreedyRewritePatternApplier([lower_generics, CopyToParallelLoops()]),
            apply_recursively=False,
        ).rewrite_module(op)
