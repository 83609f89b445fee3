"""
convert-contractions-to-gpu: f32 matmul-like `linalg.generic`s to a tiled `gpu.launch`.

The generic loop mapping (`convert-linalg-to-parallel-loops`) gives each thread a few
outputs and reads every operand through L1; a matmul then runs at a sixth of cuBLAS.
This is the classic shared-memory kernel instead, for generics on memrefs that
`convert-linalg-to-parallel-loops` would register-tile (one input ignores the last
parallel dim, another the one before it), with one reduction dim and an
`acc + a * b` body in f32, batch dims in front included:

- a block of 256 threads computes a 128x128 tile of the output; block (x, y, z) takes
  columns 128x, rows 128y and batch z (the batch dims flattened);
- the K loop walks 8-wide slices: the threads copy the A slice (transposed, rows padded
  to 132 floats so the copies do not conflict on banks) and the B slice into shared
  memory (`memref.alloca` in address space 3, NVVM's shared memory), two buffers
  alternating so one `gpu.barrier` per slice suffices, and the next slice's global
  loads are issued before the current slice's arithmetic, hiding their latency;
- each thread keeps an 8x8 tile of accumulators in registers (rows `4ty + i` and
  `64 + 4ty + i`, columns likewise with `tx`: each 4-wide half is one 16-byte shared
  load, and a warp's stores cover 64 contiguous floats) and multiplies with `math.fma`;
- out-of-range rows and columns are clamped for loads and skipped at the store;
  K's tail is zero-filled, which leaves `acc + a * b` unchanged.

When the 128x128 grid has fewer than `FEW_BLOCKS` blocks (an MLP's 8192x128 output
has 64: half an H100 idle), the host launches the same kernel with 64x64 tiles and
4x4 register tiles instead; both are compiled, the choice is one `scf.if` on the host
(folded away when the sizes are static).

An epilogue that `linalg-fuse-elementwise` fused into the contraction (`scf.if` on the
last reduction iteration) is applied to each finished accumulator before its store,
with its other inputs read at the output element. When a fill generic (a constant,
as the zeros `convert-ml-to-linalg` starts a matmul from) writes the output just
before, the accumulators start at that constant and the fill is dropped: one launch
and one pass over the output fewer. Contractions whose sizes are all static with
fewer than `SMALL_OUTPUT` outputs are left to the loop mapping, which gives each
output a warp: a 128x128 tile would leave most of the GPU idle.
"""

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import arith, gpu, math, memref, scf, vector
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    VectorType,
    f32,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorType
from xdsl.dialects.linalg.ops import GenericOp, IndexOp, YieldOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.ir.affine import AffineMap
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.transforms.convert_linalg_to_loops import materialize_loop_bound
from xdsl.transforms.loop_nest_lowering_utils import indices_for_map

from mlc.lowering.convert_linalg_to_parallel_loops import (
    SMALL_OUTPUT,
    _static_size,
    contraction_dims,
    outputs_independent_of,
    split_iterators,
)

TILE = 128  # output rows and columns per block
SMALL_TILE = 64  # for grids of big tiles that would leave SMs idle
FEW_BLOCKS = 264  # fewer 128x128 blocks than this (2 per SM of an H100): small tiles
SLICE = 8  # K per shared-memory slice
THREADS = 256  # a 16 x 16 grid of threads, each with an 8 x 8 (4 x 4) register tile
HALF = 4  # each thread's tile is two (one) 4-wide halves, 64 apart
PAD = 4  # floats padding each row of the transposed A slice (bank-conflict-free copies)
WORKGROUP = IntegerAttr(3, i64)  # NVVM's shared address space


@dataclass
class Contraction:
    """What the kernel needs to know of a matched generic."""

    op: GenericOp
    a: int  # the input that ignores the columns
    b: int  # the input that ignores the rows
    batch: list[int]
    rows: int
    cols: int
    k: int
    accumulate: list[Operation]  # the body's mulf, addf
    epilogue: scf.IfOp | None
    fill: GenericOp | None = None  # the generic that fills the output just before


def _filled_with(op: GenericOp) -> SSAValue | None:
    """The constant an input-less, all-parallel, identity generic fills its output with."""
    if op.inputs or len(op.outputs) != 1 or op.res:
        return None
    if any(it.data != IteratorType.PARALLEL for it in op.iterator_types):
        return None
    affine_map = op.get_indexing_maps().data[0].data
    if affine_map != AffineMap.identity(affine_map.num_dims):
        return None
    yielded = op.body.block.last_op
    assert isinstance(yielded, YieldOp)
    value = yielded.operands[0]
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and owner.parent_block() is op.body.block:
        return value
    return None


def fill_before(op: GenericOp) -> GenericOp | None:
    """
    The fill generic that writes `op`'s output last before it, if nothing reads it between.

    The kernel then starts its accumulators at the constant and the fill goes: one
    launch and one pass over the output fewer.
    """
    output = op.outputs[0]
    previous = op.prev_op
    while previous is not None:
        if isinstance(previous, GenericOp) and list(previous.outputs) == [output]:
            return previous if _filled_with(previous) is not None else None
        if isinstance(previous, memref.DimOp):
            pass  # reads the sizes, not the elements
        elif any(output in inner.operands for inner in previous.walk()):
            return None  # read or written in between, maybe inside a region
        previous = previous.prev_op
    return None


def _accumulation(op: GenericOp) -> tuple[int, int, list[Operation], SSAValue] | None:
    """The inputs of `acc + a * b` in the body, its two ops and the value they yield."""
    block = op.body.block
    acc = block.args[-1]
    uses = list(acc.uses)
    if len(uses) != 1 or not isinstance(add := uses[0].operation, arith.AddfOp):
        return None
    product = add.rhs if add.lhs is acc else add.lhs
    mul = product.owner
    if not isinstance(mul, arith.MulfOp) or not product.has_one_use():
        return None
    args = list(block.args)
    if mul.lhs not in args or mul.rhs not in args or mul.lhs is mul.rhs:
        return None
    return args.index(mul.lhs), args.index(mul.rhs), [mul, add], add.result


def _epilogue(op: GenericOp, accumulated: SSAValue) -> scf.IfOp | bool | None:
    """The fused epilogue (`scf.if` yielded by the body), None if none, False if unknown."""
    yielded = op.body.block.last_op
    assert isinstance(yielded, YieldOp)
    if yielded.operands[0] is accumulated:
        return None
    branch = yielded.operands[0].owner
    if not isinstance(branch, scf.IfOp) or len(branch.results) != 1:
        return False
    otherwise = branch.false_region.block.last_op
    if otherwise is None or list(otherwise.operands) != [accumulated]:
        return False
    inside = set(branch.true_region.walk())
    for inner in branch.true_region.walk():
        for operand in inner.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and owner not in inside and operand is not accumulated:
                return False  # only the accumulator and block arguments come from outside
    return branch


def _uses(op: GenericOp, operand: int, dim: int) -> bool:
    """Whether operand `operand`'s indexing map reads loop `dim`."""
    affine_map = op.get_indexing_maps().data[operand].data
    return any(dim in e.used_dims() for e in affine_map.results)


def _roles(op: GenericOp, x: int, y: int, rows: int, cols: int) -> tuple[int, int] | None:
    """Of the product's inputs `x`, `y`: (the one along the rows, the one along the columns)."""
    for a, b in ((x, y), (y, x)):
        if _uses(op, a, rows) and _uses(op, b, cols):
            if _uses(op, a, cols) or _uses(op, b, rows):
                return None
            return a, b
    return None


def _f32_buffers(op: GenericOp) -> bool:
    """Buffer semantics, all operands memrefs, one f32 output."""
    if op.res or len(op.outputs) != 1:
        return False
    if not all(isinstance(v.type, MemRefType) for v in op.operands):
        return False
    output = op.outputs[0].type
    return isinstance(output, MemRefType) and output.element_type == f32


def match(op: GenericOp) -> Contraction | None:
    """The contraction this kernel handles (module docstring), or None."""
    if not _f32_buffers(op):
        return None
    parallel, reduction = split_iterators(op)
    if len(reduction) != 1 or not outputs_independent_of(op, reduction):
        return None
    if (dims := contraction_dims(op, parallel)) is None:
        return None
    if _static_size(op, parallel) < SMALL_OUTPUT:
        return None
    if (found := _accumulation(op)) is None:
        return None
    x, y, accumulate, accumulated = found
    rows, cols = dims
    if (roles := _roles(op, x, y, rows, cols)) is None:
        return None
    a, b = roles
    if (epilogue := _epilogue(op, accumulated)) is False:
        return None
    assert epilogue is not True
    (k,) = reduction
    others = [i for i in range(len(op.inputs)) if i not in (a, b)]
    if any(_uses(op, i, k) for i in others):
        return None  # an epilogue input read along K
    batch = parallel[:-2]
    return Contraction(op, a, b, batch, rows, cols, k, accumulate, epilogue, fill_before(op))


class _Emitter:
    """Appends ops at a moving point, each with the location of the generic."""

    def __init__(self, rewriter: PatternRewriter, point: InsertPoint, location: object):
        self.rewriter = rewriter
        self.point = point
        self.location = location

    def __call__(self, new: Operation) -> SSAValue:
        new.location = self.location  # pyright: ignore[reportAttributeAccessIssue]
        self.rewriter.insert(new, self.point)
        return new.results[0] if new.results else None  # pyright: ignore[reportReturnType]

    def index(self, value: int) -> SSAValue:
        return self(arith.ConstantOp(IntegerAttr.from_index_int_value(value)))

    def add(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.AddiOp(a, self.index(b) if isinstance(b, int) else b))

    def mul(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.MuliOp(a, self.index(b) if isinstance(b, int) else b))

    def div(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.DivUIOp(a, self.index(b) if isinstance(b, int) else b))

    def rem(self, a: SSAValue, b: SSAValue | int) -> SSAValue:
        return self(arith.RemUIOp(a, self.index(b) if isinstance(b, int) else b))

    def ceil_div(self, a: SSAValue, b: int) -> SSAValue:
        return self.div(self.add(a, b - 1), b)

    def less(self, a: SSAValue, b: SSAValue) -> SSAValue:
        return self(arith.CmpiOp(a, b, "ult"))

    def zero(self) -> SSAValue:
        return self(arith.ConstantOp(FloatAttr(0.0, f32)))

    def load(self, op: GenericOp, index: int, ivs: Sequence[SSAValue]) -> SSAValue:
        """Operand `index` of `op` at loop indices `ivs` (through its indexing map)."""
        affine_map = op.get_indexing_maps().data[index].data
        indices = indices_for_map(self.rewriter, self.point, affine_map, ivs)
        for value in indices:
            if isinstance(value.owner, Operation):
                value.owner.location = self.location  # pyright: ignore[reportAttributeAccessIssue]
        return self(memref.LoadOp.get(op.operands[index], indices))

    def region(self, body: Block) -> "_Emitter":
        return _Emitter(self.rewriter, InsertPoint.at_end(body), self.location)


@dataclass
class _Kernel:
    """Builds the launch body for one contraction (the steps of the module docstring)."""

    c: Contraction
    emit: _Emitter
    bounds: list[SSAValue]
    batch_ivs: list[SSAValue]
    tile: int

    def ivs(self, row: SSAValue, col: SSAValue, k: SSAValue) -> list[SSAValue]:
        values: list[SSAValue] = [k] * len(self.bounds)
        for dim, iv in zip(self.c.batch, self.batch_ivs, strict=True):
            values[dim] = iv
        values[self.c.rows], values[self.c.cols], values[self.c.k] = row, col, k
        return values

    def build(self, bx: SSAValue, by: SSAValue, tid: SSAValue) -> None:
        emit, c, tile = self.emit, self.c, self.tile
        width = HALF * tile // 64  # a thread's tile is width x width
        copies = tile * SLICE // THREADS  # elements of each slice a thread copies
        m, n, k = self.bounds[c.rows], self.bounds[c.cols], self.bounds[c.k]
        a_shape = [2, SLICE, tile + PAD]
        a_tiles = emit(memref.AllocaOp.get(f32, shape=a_shape, memory_space=WORKGROUP))
        b_tiles = emit(memref.AllocaOp.get(f32, shape=[2, SLICE, tile], memory_space=WORKGROUP))
        last_row = emit(arith.SubiOp(m, emit.index(1)))
        last_col = emit(arith.SubiOp(n, emit.index(1)))
        row0, col0 = emit.mul(by, tile), emit.mul(bx, tile)
        tx, ty = emit.rem(tid, 16), emit.div(tid, 16)
        rows = self._mine(row0, ty)
        cols = self._mine(col0, tx)
        zero_index = emit.index(0)
        clamped_rows = [emit(arith.MinUIOp(r, last_row)) for r in rows]
        clamped_cols = [emit(arith.MinUIOp(x, last_col)) for x in cols]
        init = self._initial(clamped_rows, clamped_cols, zero_index)
        # What each thread copies (128 tiles; 64 tiles take 2 where this takes 4):
        # A at row tid / 2, k (tid % 2) * 4 + [0, 4); B at k tid / 32, columns
        # (tid % 32) * 4 + [0, 4).
        a_row = emit.div(tid, SLICE // copies)
        a_k = emit.mul(emit.rem(tid, SLICE // copies), copies)
        a_source = emit(arith.MinUIOp(emit.add(row0, a_row), last_row))
        b_k = emit.div(tid, tile // copies)
        b_col = emit.mul(emit.rem(tid, tile // copies), copies)
        b_sources = [
            emit(arith.MinUIOp(emit.add(col0, emit.add(b_col, j)), last_col)) for j in range(copies)
        ]

        def slice_loads(e: _Emitter, first: SSAValue) -> list[SSAValue]:
            last_k = e(arith.SubiOp(k, e.index(1)))
            values = []
            for kk, row_or_col in [(e.add(a_k, j), None) for j in range(copies)] + [
                (b_k, x) for x in b_sources
            ]:
                index = e.add(first, kk)
                clamped = e(arith.MinUIOp(index, last_k))
                if row_or_col is None:
                    value = e.load(c.op, c.a, self.ivs(a_source, zero_index, clamped))
                else:
                    value = e.load(c.op, c.b, self.ivs(zero_index, row_or_col, clamped))
                values.append(e(arith.SelectOp(e.less(index, k), value, e.zero())))
            return values

        slices = emit.ceil_div(k, SLICE)
        then, otherwise = Block(), Block()
        staged_types = [f32] * (2 * copies)
        first_loads = emit(
            scf.IfOp(emit.less(zero_index, slices), staged_types, [then], [otherwise])
        )
        first = first_loads.owner
        inner = emit.region(then)
        inner(scf.YieldOp(*slice_loads(inner, zero_index)))
        inner = emit.region(otherwise)
        zero = inner.zero()
        inner(scf.YieldOp(*[zero] * (2 * copies)))

        outputs = width * width
        body = Block(arg_types=[IndexType(), *[f32] * outputs, *staged_types])
        loop = scf.ForOp(zero_index, slices, emit.index(1), [*init, *first.results], Region(body))
        emit(loop)
        e = emit.region(body)
        t, accs = body.args[0], list(body.args[1 : 1 + outputs])
        staged = list(body.args[1 + outputs :])
        buffer = e.rem(t, 2)
        for j in range(copies):
            e(memref.StoreOp.get(staged[j], a_tiles, [buffer, e.add(a_k, j), a_row]))
            e(memref.StoreOp.get(staged[copies + j], b_tiles, [buffer, b_k, e.add(b_col, j)]))
        e(gpu.BarrierOp())
        following = slice_loads(e, e.mul(e.add(t, 1), SLICE))
        a_offsets = self._mine(e.index(0), ty, e)[::HALF]
        b_offsets = self._mine(e.index(0), tx, e)[::HALF]
        for kk in range(SLICE):
            step = e.index(kk)
            a_values = self._quads(e, a_tiles, [buffer, step], a_offsets)
            b_values = self._quads(e, b_tiles, [buffer, step], b_offsets)
            for i, a_value in enumerate(a_values):
                for j, b_value in enumerate(b_values):
                    accs[width * i + j] = e(math.FmaOp(a_value, b_value, accs[width * i + j]))
        e(scf.YieldOp(*accs, *following))
        results = list(loop.results)[:outputs]
        for i, row in enumerate(rows):
            for j, col in enumerate(cols):
                inside = emit(arith.AndIOp(emit.less(row, m), emit.less(col, n)))
                store = Block()
                emit(scf.IfOp(inside, [], [store]))
                s = emit.region(store)
                self._store(s, results[width * i + j], self.ivs(row, col, zero_index))
                s(scf.YieldOp())

    def _initial(
        self, rows: list[SSAValue], cols: list[SSAValue], zero: SSAValue
    ) -> list[SSAValue]:
        """The accumulators' start: the fill's constant, or the output's elements."""
        c, emit = self.c, self.emit
        if c.fill is not None:
            constant = _filled_with(c.fill)
            assert constant is not None and isinstance(constant.owner, Operation)
            return [emit(constant.owner.clone())] * (len(rows) * len(cols))
        out = len(c.op.inputs)
        return [emit.load(c.op, out, self.ivs(r, x, zero)) for r in rows for x in cols]

    def _mine(self, base: SSAValue, lane: SSAValue, e: _Emitter | None = None) -> list[SSAValue]:
        """A thread's rows (or columns): base + 4 lane + [0, 4), and 64 + those in 128 tiles."""
        e = e or self.emit
        first = e.add(base, e.mul(lane, HALF))
        halves = range(self.tile // 64)
        return [e.add(first, half * 64 + j) for half in halves for j in range(HALF)]

    @staticmethod
    def _quads(
        e: _Emitter, tile: SSAValue, outer: list[SSAValue], starts: list[SSAValue]
    ) -> list[SSAValue]:
        """The 4 floats at each start of a shared tile's row, one 16-byte load each."""
        quad = VectorType(f32, [HALF])
        values = []
        for start in starts:
            load = vector.LoadOp(tile, [*outer, start], quad)
            load.attributes["alignment"] = IntegerAttr(16, i64)
            loaded = e(load)
            values += [e(vector.ExtractOp(loaded, [j], f32)) for j in range(HALF)]
        return values

    def _store(self, e: _Emitter, value: SSAValue, ivs: list[SSAValue]) -> None:
        c = self.c
        if c.epilogue is not None:
            block = c.op.body.block
            accumulated = c.accumulate[-1].results[0]
            mapping: dict[SSAValue, SSAValue] = {accumulated: value}
            for i, arg in enumerate(block.args[: len(c.op.inputs)]):
                if i not in (c.a, c.b) and arg.uses:
                    mapping[arg] = e.load(c.op, i, ivs)
            for inner in c.epilogue.true_region.block.ops:
                if isinstance(inner, scf.YieldOp):
                    value = mapping.get(inner.operands[0], inner.operands[0])
                    break
                if isinstance(inner, IndexOp):
                    mapping[inner.result] = ivs[inner.dim.value.data]
                    continue
                clone = inner.clone(value_mapper=mapping)
                e.rewriter.insert(clone, e.point)
        out = len(c.op.inputs)
        affine_map = c.op.get_indexing_maps().data[out].data
        indices = indices_for_map(e.rewriter, e.point, affine_map, ivs)
        e(memref.StoreOp.get(value, c.op.outputs[0], indices))


def _grid(
    host: _Emitter, c: Contraction, bounds: list[SSAValue], batch: SSAValue, tile: int
) -> list[SSAValue]:
    """Blocks in x (columns), y (rows) and z (batch) for `tile`-square output tiles."""
    one = host.index(1)
    return [
        host(arith.MaxUIOp(host.ceil_div(bounds[c.cols], tile), one)),
        host(arith.MaxUIOp(host.ceil_div(bounds[c.rows], tile), one)),
        host(arith.MaxUIOp(batch, one)),
    ]


def _kernel_body(
    kernel: _Emitter, c: Contraction, bounds: list[SSAValue], batch: SSAValue, tile: int
) -> None:
    """The launch body: ids, the guard against empty outputs, then the tiled kernel."""
    x, y, z = (gpu.DimensionAttr(d) for d in gpu.DimensionEnum)
    bx, by, bz = (kernel(gpu.BlockIdOp(d)) for d in (x, y, z))
    tid = kernel(gpu.ThreadIdOp(x))
    zero = kernel.index(0)
    rows, cols = kernel.less(zero, bounds[c.rows]), kernel.less(zero, bounds[c.cols])
    work = kernel(arith.AndIOp(kernel(arith.AndIOp(rows, cols)), kernel.less(bz, batch)))
    then = Block()
    kernel(scf.IfOp(work, [], [then]))
    kernel(gpu.TerminatorOp())
    inner = kernel.region(then)
    batch_ivs: list[SSAValue] = []
    rest = bz
    for dim in reversed(c.batch):
        batch_ivs.append(inner.rem(rest, bounds[dim]))
        rest = inner.div(rest, bounds[dim])
    batch_ivs.reverse()
    _Kernel(c, inner, bounds, batch_ivs, tile).build(bx, by, tid)
    inner(scf.YieldOp())


class ContractionToTiledLaunch(RewritePattern):
    """One matched contraction to a tiled `gpu.launch` (module docstring)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GenericOp, rewriter: PatternRewriter) -> None:
        if (contraction := match(op)) is None:
            return
        host = _Emitter(rewriter, InsertPoint.before(op), op.location)
        bounds = [
            materialize_loop_bound(rewriter, host.point, operand, dim, size)
            for operand, dim, size in op.get_loop_bound_sources()
        ]
        batch = host.index(1)
        for dim in contraction.batch:
            batch = host.mul(batch, bounds[dim])
        one = host.index(1)
        grids = {tile: _grid(host, contraction, bounds, batch, tile) for tile in (TILE, SMALL_TILE)}
        x, y, z = grids[TILE]
        big_blocks = host(arith.MuliOp(host(arith.MuliOp(x, y)), z))
        big = host(arith.CmpiOp(big_blocks, host.index(FEW_BLOCKS), "uge"))
        branches = {TILE: Block(), SMALL_TILE: Block()}
        host(scf.IfOp(big, [], [branches[TILE]], [branches[SMALL_TILE]]))
        for tile, block in branches.items():
            inside = host.region(block)
            body = Block(arg_types=[IndexType()] * 12)
            inside(gpu.LaunchOp(Region(body), grids[tile], [inside.index(THREADS), one, one]))
            inside(scf.YieldOp())
            _kernel_body(host.region(body), contraction, bounds, batch, tile)
        rewriter.erase(op)
        if contraction.fill is not None:
            rewriter.erase(contraction.fill)


@dataclass(frozen=True)
class ConvertContractionsToGPUPass(ModulePass):
    """f32 contraction generics on memrefs to shared-memory tiled kernels (module docstring)."""

    name = "convert-contractions-to-gpu"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        PatternRewriteWalker(ContractionToTiledLaunch(), apply_recursively=False).rewrite_module(op)
