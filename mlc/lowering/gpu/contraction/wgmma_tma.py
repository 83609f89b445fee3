"""
The wgmma kernel (`wgmma_kernel`) fed by the Tensor Memory Accelerator, with
warp-specialised producer and consumer warpgroups (`WgmmaShape.tma`).

The cp.async kernel has every thread issue 16-byte copies between its wgmmas: address
arithmetic and copy instructions in the warps that should keep the tensor cores busy.
Here one more warpgroup produces: one of its threads copies each stage's A and B tiles
with `cp.async.bulk.tensor` (one instruction a K-major tile, one a 64-wide panel of an
MN-major one), through the operands' tensor maps (`tensor_map_host`: the 128-byte
swizzle, so a box lands in shared memory as `wgmma_layout` places it, zeros outside
the tensor). The other warpgroups consume, each on its 64 rows as before. A ring of
`stages` buffers is guarded by two mbarriers a stage:

    producer thread, slice t into stage s = t % stages, round r = t / stages:
      wait empty[s] to finish round r - 1 (parity (r & 1) ^ 1: round 0 passes at once)
      arrive.expect_tx full[s], the stage's bytes; the TMA copies complete them on full[s]
    every consumer thread, slice t:
      wait full[s] (parity r & 1); wgmma.fence; 4 wgmmas; commit; wait_group 1
      arrive on empty of slice t - 1, whose wgmmas are now done

full[s] counts the producer's one arrival (and the copies' bytes), empty[s] every
consumer thread's. The barriers are set up by thread 0 before a block-wide barrier,
the last the block takes. With 2 consumer warpgroups, `setmaxnreg` then moves
registers from the producer warpgroup to the consumers, which hold the accumulators.

The operands' addresses are in their maps, which the host makes before the launch
(`tensor_map_host`), with the operand's dims: a batched operand's batch dims lie
outside its matrix, with a box of 1 along them (one matrix a copy, at the block's batch
indices: `cp.async.bulk.tensor.3d` and up), and an operand broadcast over the batch
(rank 2) is read by every batch's blocks. tf32 operands (f32 made K-major before the
kernel, `kmajor_operand`) are copied 32 deep, a 128-byte row, as the cp.async kernel
stages them; the 16-bit ones 64 deep.
"""

from functools import partial
from math import prod

from xdsl.dialects import arith, gpu, llvm, scf
from xdsl.dialects.builtin import BFloat16Type, IndexType, MemRefType, i32, i64
from xdsl.ir import Block, Region, SSAValue
from xdsl.ir.affine import AffineDimExpr

from mlc.lowering.gpu import tensor_map_host
from mlc.lowering.gpu.contraction import wgmma_layout as layout
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.match import Contraction
from mlc.lowering.gpu.contraction.wgmma_kernel import (
    WARPGROUP,
    WgmmaBlock,
    WgmmaShape,
    bare,
    element_bytes,
    element_type,
    tied,
)
from mlc.lowering.gpu.contraction.wgmma_kernel import (
    launch as wgmma_launch,
)
from mlc.lowering.gpu.contraction.wgmma_staging import Operand, k_major
from mlc.tensor_maps import TiledMap

# Registers a thread after `setmaxnreg`, with 2 consumer warpgroups (CUTLASS's split):
# 384 threads launch with 168 each (65536 / 384, as ptxas gives these kernels), and
# 40 x 128 + 232 x 256 = 168 x 384. `setmaxnreg.inc` waits until the block has released
# what it asks for, so the split must match the launch count exactly; other shapes,
# whose count ptxas sets by their use, keep it (no `setmaxnreg`).
PRODUCER_REGISTERS = 40
CONSUMER_REGISTERS = 232
REGISTER_SPLIT_WARPGROUPS = 2
BARRIER_BYTES = 8


def tma_declined(c: Contraction, shape: WgmmaShape) -> str | None:
    """Why the TMA feed cannot take `c` (beyond `wgmma_kernel.declined`), or None."""
    maps = c.op.get_indexing_maps().data
    for operand, extent_dim, extent in ((c.a, c.rows, shape.rows), (c.b, c.cols, shape.cols)):
        dims = [r.position for r in maps[operand].data.results if isinstance(r, AffineDimExpr)]
        if set(dims[-2:]) != {c.k, extent_dim} or not set(dims[:-2]) <= set(c.batch):
            return "an operand whose batch dims are not outside its matrix"
        if len(dims) not in tensor_map_host.RANKS:
            return f"an operand of rank {len(dims)} (tensor maps of 2 to 5 dims)"
        try:
            _map_of(c, operand, extent_dim, extent)
        except ValueError as error:  # beyond the driver's limits
            return str(error)
    return None


def _map_of(c: Contraction, operand: int, extent_dim: int, extent: int) -> TiledMap:
    """The map of an operand (a row-major memref; batch dims outermost, copied a matrix
    at a time): a K-major one copied a whole slice deep, an MN-major one (16-bit) a
    64-wide panel at a time. A tf32 operand is K-major (`kmajor_operand`), 32 f32 deep."""
    type_ = c.op.operands[operand].type
    assert isinstance(type_, MemRefType)
    size = element_bytes(c)
    dims = tuple(reversed(type_.get_shape()))  # innermost first
    strides = tuple(size * prod(dims[:i]) for i in range(1, len(dims)))
    depth = layout.depth(size)
    major = k_major(c.op, operand, c.k, extent_dim) or not c.half
    box = (depth, extent) if major else (layout.DEPTH, depth)
    element = "bf16" if isinstance(element_type(c), BFloat16Type) else "f16" if c.half else "f32"
    return TiledMap(element, dims, strides, (*box, *[1] * (len(dims) - 2)))


def launch(
    host: Emitter, c: Contraction, bounds: list[SSAValue], batch: SSAValue, shape: WgmmaShape
) -> None:
    """The contraction's maps, then its `gpu.launch` (`wgmma_kernel.launch`)."""
    maps = [
        tensor_map_host.made(host, c.op.operands[operand], _map_of(c, operand, dim, extent))
        for operand, dim, extent in ((c.a, c.rows, shape.rows), (c.b, c.cols, shape.cols))
    ]
    wgmma_launch(host, c, bounds, batch, shape, partial(_TmaWgmma, maps=maps))


class _TmaWgmma(WgmmaBlock):
    """The kernel of one block (module docstring)."""

    def __init__(self, *args, maps: list[SSAValue]):
        super().__init__(*args)
        self.maps = maps  # the device addresses of A's and B's maps (index)

    def build(self, bx: SSAValue, by: SSAValue, tid: SSAValue) -> None:
        e, shape = self.e, self.shape
        self.base = self._shared_base(e)
        self.full = e(arith.AddiOp(self.base, _i32(e, shape.stages * shape.slice_bytes)))
        self.empty = e(arith.AddiOp(self.full, _i32(e, shape.stages * BARRIER_BYTES)))
        first = Block()
        e(scf.IfOp(e(arith.CmpiOp(tid, e.index(0), "eq")), [], [first]))
        f = e.region(first)
        consumers = shape.warpgroups * WARPGROUP
        for s in range(shape.stages):
            _init(f, self._barrier(f, self.full, _i32(f, s)), 1)
            _init(f, self._barrier(f, self.empty, _i32(f, s)), consumers)
        bare(f, "fence.mbarrier_init.release.cluster;")
        f(scf.YieldOp())
        e(gpu.BarrierOp())
        producer, consumer = Block(), Block()
        e(scf.IfOp(e.less(tid, e.index(consumers)), [], [consumer], [producer]))
        self.e = e.region(consumer)
        split = shape.warpgroups == REGISTER_SPLIT_WARPGROUPS
        if split:
            bare(self.e, f"setmaxnreg.inc.sync.aligned.u32 {CONSUMER_REGISTERS};")
        self._tile(bx, by, tid)
        self.e(scf.YieldOp())
        p = e.region(producer)
        if split:
            bare(p, f"setmaxnreg.dec.sync.aligned.u32 {PRODUCER_REGISTERS};")
        one = Block()
        p(scf.IfOp(p(arith.CmpiOp(tid, p.index(consumers), "eq")), [], [one]))
        self._produce(p.region(one), bx, by, tid)
        p(scf.YieldOp())

    def _operands(self, e: Emitter, tid: SSAValue) -> list[Operand]:
        """A and B in a stage as the cp.async kernel places them, copied by TMA."""
        c, shape = self.c, self.shape
        placed = ((c.a, c.rows, shape.rows, 0), (c.b, c.cols, shape.cols, shape.rows * 128))
        return [
            Operand(index, dim, extent, bool(k_major(c.op, index, c.k, dim)), start, [])
            for index, dim, extent, start in placed
        ]

    def _barrier(self, e: Emitter, first: SSAValue, stage: SSAValue) -> SSAValue:
        """The shared address (i32) of stage `stage`'s barrier in the array at `first`."""
        return e(arith.AddiOp(first, e(arith.MuliOp(stage, _i32(e, BARRIER_BYTES)))))

    def _round(self, e: Emitter, t: SSAValue) -> tuple[SSAValue, SSAValue]:
        """Slice `t`'s stage and the parity of its round through the ring, as i32."""
        stages = self.shape.stages
        stage = e(arith.IndexCastOp(e.rem(t, stages), i32))
        parity = e(arith.IndexCastOp(e.rem(e.div(t, stages), 2), i32))
        return stage, parity

    def _produce(self, e: Emitter, bx: SSAValue, by: SSAValue, tid: SSAValue) -> None:
        """One thread's TMA copies of every slice, each stage once its buffer is free."""
        c, shape, depth = self.c, self.shape, self.staging.depth
        maps = [e(arith.IndexCastOp(at, i64)) for at in self.maps]
        for at in maps:
            _asm(e, "prefetch.tensormap [$0];", "l", [at])
        origins = [
            e(arith.IndexCastOp(e.mul(b, n), i32)) for b, n in ((by, shape.rows), (bx, shape.cols))
        ]
        operands = self._operands(e, tid)
        outer = [self._batch_coordinates(e, operand.index) for operand in operands]
        slices = e.ceil_div(self.bounds[c.k], depth)
        body = Block(arg_types=[IndexType()])
        e(scf.ForOp(e.index(0), slices, e.index(1), [], Region(body)))
        b = e.region(body)
        t = body.args[0]
        stage, parity = self._round(b, t)
        free = b(arith.XOrIOp(parity, _i32(b, 1)))
        _wait(b, self._barrier(b, self.empty, stage), free)
        full = self._barrier(b, self.full, stage)
        _asm(
            b, "mbarrier.arrive.expect_tx.shared::cta.b64 _, [$0], $1;", "r,r",
            [full, _i32(b, shape.slice_bytes)],
        )  # fmt: skip
        stage_at = self._stage_at(b, t)
        k0 = b(arith.IndexCastOp(b.mul(t, depth), i32))
        for operand, at, origin, batch in zip(operands, maps, origins, outer, strict=True):
            tile = b(arith.AddiOp(stage_at, _i32(b, operand.start)))
            if operand.k_major:
                _copy(b, tile, at, [k0, origin, *batch], full)
                continue
            for panel in range(operand.extent // layout.DEPTH):
                x = b(arith.AddiOp(origin, _i32(b, panel * layout.DEPTH)))
                into = b(arith.AddiOp(tile, _i32(b, panel * layout.panel_bytes())))
                _copy(b, into, at, [x, k0, *batch], full)
        b(scf.YieldOp())
        e(scf.YieldOp())

    def _batch_coordinates(self, e: Emitter, operand: int) -> list[SSAValue]:
        """The block's batch indices along an operand's batch dims, innermost first (its
        map's dims past the matrix), as i32."""
        results = self.c.op.get_indexing_maps().data[operand].data.results[:-2]
        ivs = dict(zip(self.c.batch, self.batch_ivs, strict=True))
        return [
            e(arith.IndexCastOp(ivs[r.position], i32))
            for r in reversed(results)
            if isinstance(r, AffineDimExpr)
        ]

    def _loop(self, emit: Emitter, init: list[SSAValue], tid: SSAValue) -> list[SSAValue]:
        """The consumers' slices: each waited for, multiplied, its stage given back."""
        c = self.c
        slices = emit.ceil_div(self.bounds[c.k], self.staging.depth)
        warpgroup = emit(arith.IndexCastOp(emit.div(tid, WARPGROUP), i32))
        body = Block(arg_types=[IndexType(), *[acc.type for acc in init]])
        loop = scf.ForOp(emit.index(0), slices, emit.index(1), init, Region(body))
        emit(loop)
        e = emit.region(body)
        t, accs = body.args[0], list(body.args[1:])
        stage, parity = self._round(e, t)
        _wait(e, self._barrier(e, self.full, stage), parity)
        stage_at = self._stage_at(e, t)
        accs = tied(e, "wgmma.fence.sync.aligned;", accs)
        accs = self._mma(e, stage_at, warpgroup, accs)
        bare(e, "wgmma.commit_group.sync.aligned;")
        accs = tied(e, "wgmma.wait_group.sync.aligned 1;", accs)
        after = Block()  # slice t - 1's wgmmas are done: its stage may be refilled
        e(scf.IfOp(e(arith.CmpiOp(t, e.index(0), "ne")), [], [after]))
        a = e.region(after)
        previous, _ = self._round(a, a.sub(t, 1))
        _asm(
            a,
            "mbarrier.arrive.shared::cta.b64 _, [$0];",
            "r",
            [self._barrier(a, self.empty, previous)],
        )
        a(scf.YieldOp())
        e(scf.YieldOp(*accs))
        return tied(emit, "wgmma.wait_group.sync.aligned 0;", list(loop.results))


def _i32(e: Emitter, value: int) -> SSAValue:
    return e(arith.ConstantOp.from_int_and_width(value, i32))


def _asm(e: Emitter, text: str, constraints: str, operands: list[SSAValue]) -> None:
    e(llvm.InlineAsmOp(text, constraints + ",~{memory}", operands, has_side_effects=True))


def _init(e: Emitter, barrier: SSAValue, count: int) -> None:
    _asm(e, "mbarrier.init.shared::cta.b64 [$0], $1;", "r,r", [barrier, _i32(e, count)])


def _wait(e: Emitter, barrier: SSAValue, parity: SSAValue) -> None:
    """Spin until the barrier's phase of `parity` has completed."""
    text = (
        "{ .reg .pred done; WAIT_${:uid}: "
        "mbarrier.try_wait.parity.shared::cta.b64 done, [$0], $1; "
        "@!done bra WAIT_${:uid}; }"
    )
    _asm(e, text, "r,r", [barrier, parity])


def _copy(e: Emitter, into: SSAValue, map_at: SSAValue, at: list[SSAValue], full: SSAValue) -> None:
    """The box at coordinates `at` (i32, innermost first) of the tensor `map_at` maps,
    to shared `into`, completing on the barrier `full`."""
    n = len(at)
    coordinates = ", ".join(f"${2 + i}" for i in range(n))
    text = (
        f"cp.async.bulk.tensor.{n}d.shared::cluster.global.mbarrier::complete_tx::bytes "
        f"[$0], [$1, {{{coordinates}}}], [${2 + n}];"
    )
    _asm(e, text, "r,l," + "r," * n + "r", [into, map_at, *at, full])
