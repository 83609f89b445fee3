"""
The Hopper (sm_90a) kernel of 16-bit contractions: `wgmma.mma_async` on operands in
shared memory, f32 accumulators in registers.

A block of `WgmmaShape.warpgroups` warpgroups (4 consecutive warps each) computes a
`rows x cols` tile of the output, 64 rows a warpgroup, each warpgroup one
`wgmma.mma_async.sync.aligned.m64n{cols}k16.f32.{f16,bf16}` per 16-deep step, its A and
B read from shared memory through matrix descriptors (`wgmma_layout`: 128-byte
swizzled slices 64 deep, a K-major or MN-major operand as it lies in memory, the
instruction told which by its transpose flags):

    slices 0 .. stages - 3 -> shared (cp.async, every thread, 16 bytes a copy)
    for each slice t:
      wait for this thread's copies of slice t; fence.proxy.async; barrier
      slice t + stages - 2 -> the buffer slice t - 2 used (cp.async)
      wgmma.fence; 4 x wgmma.mma_async (k 0, 16, 32, 48); wgmma.commit_group
      wgmma.wait_group 1: slice t - 1's products done, slice t's may still run
    wgmma.wait_group 0
    accumulators -> the fused epilogue -> the output (inside M and N)

Every thread copies: the copies need not be spread over warps by role. The barrier at
slice t says that every warpgroup is done with slice t - 2 (each waited for it at
t - 1), so its buffer can be refilled; the fence makes the copies' writes visible to
the tensor cores' (async proxy) reads. Copies of rows past M or N, or K past its end,
read nothing and fill zeros (`cp.async`'s source size 0), which adds nothing. The
asm statements that wait and fence take the accumulators as tied operands, so that
LLVM keeps every use of them between an MMA and its wait in order.

The accumulators of warp `w` of a warpgroup, lane `4 g + t`: `d[4 i + 2 h + j]` is row
`16 w + g + 8 h`, column `8 i + 2 t + j` of the warpgroup's 64 x cols (PTX's m64nNk16
D fragment). Columns `j = 0, 1` are rounded together and stored as one 32-bit word;
a fused epilogue computes each in f32 first (`epilogue.in_f32`). Shared memory is
dynamic (`mlc.dynamic_shared`): `stages` slices of A and B and 1024 bytes to align the
first to an atom.
"""

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, gpu, llvm, memref, scf
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    IndexType,
    MemRefType,
    NoneAttr,
    UnitAttr,
    f32,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from mlc.lowering.gpu.contraction import async_copy
from mlc.lowering.gpu.contraction import wgmma_layout as layout
from mlc.lowering.gpu.contraction.block_order import grouped
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.epilogue import (
    column_inputs,
    initial_values,
    pairs_stored,
    shared_inputs,
    store_output,
    store_pair,
)
from mlc.lowering.gpu.contraction.half_staging import shared_address
from mlc.lowering.gpu.contraction.kmajor_operand import transposable
from mlc.lowering.gpu.contraction.match import Contraction
from mlc.lowering.gpu.contraction.tile_staging import WORKGROUP
from mlc.lowering.gpu.contraction.tiled_kernel import batch_position, grid
from mlc.lowering.gpu.contraction.wgmma_staging import Operand, Staging, k_major
from mlc.lowering.gpu.convert_gpu_to_nvvm import DYNAMIC_SHARED_ATTR

WARPGROUP = 128  # threads of a warpgroup: 4 warps
WARPGROUP_ROWS = 64  # the M of one wgmma
MAX_SHARED_BYTES = 227 * 1024  # dynamic shared memory a block may have on sm_90
WGMMA_SM = 90  # the first compute capability with wgmma (as sm_90a)
UNIT = layout.UNIT_BYTES // layout.ELEMENT_BYTES  # 16-bit values a copy moves: 8


@dataclass(frozen=True)
class WgmmaShape:
    """A block's output tile, slices in flight, and the block launch order."""

    rows: int = 128
    cols: int = 256
    stages: int = 4
    block_group: int = 8  # `block_order.grouped`
    tma: bool = False  # slices copied by TMA from a producer warpgroup (`wgmma_tma`)

    @property
    def warpgroups(self) -> int:
        """The warpgroups that multiply (the consumers, with TMA)."""
        return self.rows // WARPGROUP_ROWS

    @property
    def threads(self) -> int:
        return (self.warpgroups + self.tma) * WARPGROUP

    @property
    def barrier_bytes(self) -> int:
        """With TMA: a full and an empty mbarrier (8 bytes each) per stage."""
        return 2 * 8 * self.stages if self.tma else 0

    @property
    def slice_bytes(self) -> int:
        return (self.rows + self.cols) * layout.ROW_BYTES  # a 128-byte row of K each

    @property
    def shared_bytes(self) -> int:
        # + alignment slack
        return self.stages * self.slice_bytes + self.barrier_bytes + layout.ATOM_BYTES

    def problem(self) -> str | None:
        """Why this shape cannot be built, or None."""
        if self.rows not in (64, 128, 192, 256):
            return "rows must be 64, 128, 192 or 256 (64 a warpgroup)"
        if not 64 <= self.cols <= 256 or self.cols % 64:
            return "cols must be 64, 128, 192 or 256 (one wgmma's N, 64-wide panels)"
        if self.stages < 3:
            return "a wgmma pipeline takes 3 stages or more"
        copies = (self.rows, self.cols)  # by every thread, without TMA
        if not self.tma and any(extent * layout.DEPTH // UNIT % self.threads for extent in copies):
            return "the threads cannot share a slice's 16-byte copies evenly"
        if self.shared_bytes > MAX_SHARED_BYTES:
            return f"{self.shared_bytes} bytes of shared memory ({MAX_SHARED_BYTES} allowed)"
        return None

    def __str__(self) -> str:
        feed = "/tma" if self.tma else ""
        return f"wgmma {self.rows}x{self.cols}/{self.stages}/g{self.block_group}{feed}"


def declined(c: Contraction, shape: WgmmaShape, tf32: bool = False) -> str | None:
    """Why the wgmma kernel does not take `c` (the mma.sync kernel does), or None; f32
    contractions are taken in tf32 when `tf32` allows it."""
    if not (c.half or tf32) or c.conv is not None:
        return "not a 16-bit or tf32 matmul"
    unit = layout.UNIT_BYTES // element_bytes(c)
    depth = layout.depth(element_bytes(c))
    sizes = [size for _, _, size in c.op.get_loop_bound_sources()]
    m, n, k = sizes[c.rows], sizes[c.cols], sizes[c.k]
    if min(m, n, k) < 0:
        return "dynamic sizes"
    if m % unit or n % unit or k % unit:
        return f"{m}x{n}x{k} (M, N and K must be multiples of {unit}: 16-byte copies)"
    if min(m, n) < WARPGROUP_ROWS or k < depth:
        return f"{m}x{n}x{k} is small (M, N from 64, K from {depth})"
    for operand, extent in ((c.a, c.rows), (c.b, c.cols)):
        type_ = c.op.operands[operand].type
        assert isinstance(type_, MemRefType)
        if not isinstance(type_.layout, NoneAttr):
            return "a strided operand"
        major = k_major(c.op, operand, c.k, extent)
        if major is None:
            return "an operand contiguous along neither K nor its rows or columns"
        if not major and not c.half and (why := transposable(c.op, operand, c.k)) is not None:
            return why  # tf32 reads K-major operands alone (`kmajor_operand`)
    return None


def launch(
    host: Emitter,
    c: Contraction,
    bounds: list[SSAValue],
    batch: SSAValue,
    shape: WgmmaShape,
    block: Callable[..., "WgmmaBlock"] | None = None,
) -> None:
    """The contraction's `gpu.launch` at `host`: one block a `rows x cols` output tile,
    built by `block` (given `WgmmaBlock`'s arguments; None: the cp.async kernel)."""
    one = host.index(1)
    blocks = grid(host, c, bounds, batch, shape.rows, shape.cols)
    body = Block(arg_types=[IndexType()] * 12)
    shared = host(arith.ConstantOp.from_int_and_width(shape.shared_bytes, i32))
    threads = [host.index(shape.threads), one, one]
    host(gpu.LaunchOp(Region(body), blocks, threads, dynamicSharedMemorySize=shared))
    kernel = host.region(body)
    x, y, z = (gpu.DimensionAttr(d) for d in gpu.DimensionEnum)
    bx, by, bz = (kernel(gpu.BlockIdOp(d)) for d in (x, y, z))
    tid = kernel(gpu.ThreadIdOp(x))
    then = Block()
    kernel(scf.IfOp(kernel.less(bz, batch), [], [then]))
    kernel(gpu.TerminatorOp())
    inner = kernel.region(then)
    batch_ivs = batch_position(inner, c, bounds, bz)
    if shape.block_group > 1:
        bx, by = grouped(inner, bx, by, shape.block_group)
    (block or WgmmaBlock)(c, inner, bounds, batch_ivs, shape).build(bx, by, tid)
    inner(scf.YieldOp())


def _i32(e: Emitter, value: int) -> SSAValue:
    return e(arith.ConstantOp.from_int_and_width(value, i32))


def _i64(e: Emitter, value: int) -> SSAValue:
    return e(arith.ConstantOp.from_int_and_width(value, i64))


def tied(
    e: Emitter, text: str, accs: list[SSAValue], extra: str = "", operands=()
) -> list[SSAValue]:
    """Inline PTX `text` that takes and gives back the accumulators (tied operands)."""
    n = len(accs)
    constraints = ",".join(["=f"] * n + [str(i) for i in range(n)]) + extra + ",~{memory}"
    struct = llvm.LLVMStructType.from_type_list([f32] * n)
    asm = llvm.InlineAsmOp(text, constraints, [*accs, *operands], [struct], has_side_effects=True)
    result = e(asm)
    return [
        e(llvm.ExtractValueOp(DenseArrayBase.from_list(i64, [q]), result, f32)) for q in range(n)
    ]


def bare(e: Emitter, text: str) -> None:
    e(llvm.InlineAsmOp(text, "~{memory}", [], has_side_effects=True))


class WgmmaBlock:
    """The kernel of one block (module docstring)."""

    def __init__(
        self,
        c: Contraction,
        e: Emitter,
        bounds: list[SSAValue],
        batch_ivs: list[SSAValue],
        shape: WgmmaShape,
    ):
        self.c, self.e, self.bounds, self.batch_ivs, self.shape = c, e, bounds, batch_ivs, shape
        element = element_type(c)
        self.kind = "bf16" if isinstance(element, BFloat16Type) else "f16" if c.half else "tf32"
        self.staging = Staging(c, bounds, batch_ivs, shape.threads, element_bytes(c))

    def ivs(self, row: SSAValue, col: SSAValue, k: SSAValue) -> list[SSAValue]:
        c = self.c
        values: list[SSAValue] = [k] * len(self.bounds)
        for dim, iv in zip(c.batch, self.batch_ivs, strict=True):
            values[dim] = iv
        values[c.rows], values[c.cols], values[c.k] = row, col, k
        return values

    def build(self, bx: SSAValue, by: SSAValue, tid: SSAValue) -> None:
        self.base = self._shared_base(self.e)
        self._tile(bx, by, tid)

    def _shared_base(self, e: Emitter) -> SSAValue:
        """The first stage's shared address (i32): the dynamic window aligned to an atom."""
        size = self.staging.element_bytes
        alloca = memref.AllocaOp.get(
            element_type(self.c), shape=[self.shape.shared_bytes // size], memory_space=WORKGROUP
        )
        alloca.attributes[DYNAMIC_SHARED_ATTR] = UnitAttr()
        window = shared_address(e, e(alloca), [e.index(0)])
        mask = _i32(e, -layout.ATOM_BYTES)
        return e(arith.AndIOp(e(arith.AddiOp(window, _i32(e, layout.ATOM_BYTES - 1))), mask))

    def _operands(self, e: Emitter, tid: SSAValue) -> list[Operand]:
        """A and B in a stage (A first, B after its rows), with this thread's copies."""
        c, shape = self.c, self.shape
        a_bytes = shape.rows * layout.ROW_BYTES  # a 128-byte row of K a row of A
        return [
            self.staging.operand(e, c.a, c.rows, shape.rows, 0, tid),
            self.staging.operand(e, c.b, c.cols, shape.cols, a_bytes, tid),
        ]

    def _tile(self, bx: SSAValue, by: SSAValue, tid: SSAValue) -> None:
        """The block's output tile: its slices multiplied (`_loop`), then stored."""
        e, c, shape = self.e, self.c, self.shape
        row0, col0 = e.mul(by, shape.rows), e.mul(bx, shape.cols)
        self.operands = self._operands(e, tid)
        self.origins = {c.rows: row0, c.cols: col0}
        rows, cols = self._lane_places(tid, row0, col0)
        m, n = self.bounds[c.rows], self.bounds[c.cols]
        clamped_rows = [e(arith.MinUIOp(r, e.sub(m, 1))) for r in rows]
        clamped_cols = [e(arith.MinUIOp(x, e.sub(n, 1))) for x in cols]
        zero = e.index(0)
        slots = self._slots(len(cols))
        places = [self.ivs(clamped_rows[h], clamped_cols[q], zero) for q, h in slots]
        accs = self._loop(e, initial_values(e, c, places), tid)
        pairs = pairs_stored(c)
        step = 2 if pairs else 1
        given = shared_inputs(e, c, places[0])  # before any element's check
        sizes = [size for _, _, size in c.op.get_loop_bound_sources()]
        whole = sizes[c.rows] % shape.rows == 0 and sizes[c.cols] % shape.cols == 0
        columns: dict[int, dict[int, SSAValue]] = {}  # a column's bias: `column_inputs`
        for slot in range(0, len(slots), step):
            (q, h), values = slots[slot], accs[slot : slot + step]
            row, col = rows[h], cols[q]
            for x in range(q, q + step):  # loaded at the column's first row
                if x not in columns:  # (inside N: clamped, but for whole tiles)
                    at = self.ivs(rows[0], cols[x] if whole else clamped_cols[x], zero)
                    columns[x] = {**given, **column_inputs(e, c, at, given)}
            s = e
            if not whole:  # every tile whole: no element to leave out, no branch
                inside = e(arith.AndIOp(e.less(row, m), e.less(col, n)))
                store = Block()
                e(scf.IfOp(inside, [], [store]))
                s = e.region(store)
            if pairs:  # columns 2 t + 8 i, + 1: both inside (N is a multiple of 8)
                places = [self.ivs(row, x, zero) for x in (col, cols[q + 1])]
                store_pair(s, c, values, places, [columns[q], columns[q + 1]])
            else:
                store_output(s, c, values[0], self.ivs(row, col, zero), columns[q])
            if not whole:
                s(scf.YieldOp())

    @staticmethod
    def _slots(columns: int) -> list[tuple[int, int]]:
        """Per accumulator `d[4 i + 2 h + j]`, in order: (its column's index 2 i + j, its row h)."""
        return [(2 * i + j, h) for i in range(columns // 2) for h in range(2) for j in range(2)]

    def _lane_places(self, tid: SSAValue, row0: SSAValue, col0: SSAValue):
        """This thread's 2 output rows and cols / 4 columns (the D fragment)."""
        e = self.e
        warp, lane = e.div(tid, 32), e.rem(tid, 32)
        g, t = e.div(lane, 4), e.rem(lane, 4)
        first = e.add(row0, e.add(e.mul(warp, 16), g))  # warp 4 w + v: rows 64 w + 16 v
        rows = [first, e.add(first, 8)]
        start = e.add(col0, e.mul(t, 2))
        cols = [e.add(start, 8 * i + j) for i in range(self.shape.cols // 8) for j in range(2)]
        return rows, cols

    def _descriptor(
        self, e: Emitter, stage_at: SSAValue, operand: Operand, kk: int, first: int
    ) -> SSAValue:
        """The descriptor of `operand`'s instruction at step `kk`, extent rows from `first`."""
        size = self.staging.element_bytes
        at = operand.start + layout.step_offset(operand.k_major, kk, first, element_bytes=size)
        address = e(arith.AddiOp(stage_at, _i32(e, at)))
        field = e(
            arith.AndIOp(
                e(arith.ShRUIOp(address, _i32(e, 4))), _i32(e, layout.DESCRIPTOR_ADDRESS_MASK)
            )
        )
        base = _i64(e, layout.descriptor_base(operand.k_major))
        return e(arith.OrIOp(base, e(arith.ExtUIOp(field, i64))))

    def _mma(
        self, e: Emitter, stage_at: SSAValue, warpgroup: SSAValue, accs: list[SSAValue]
    ) -> list[SSAValue]:
        """The slice's 4 wgmmas, each warpgroup on its 64 rows of A (chosen by `warpgroup`)."""
        a, b = self.operands
        n = len(accs)
        size = self.staging.element_bytes
        # tf32 takes no transpose flags: both operands are K-major (`wgmma_staging`)
        flags = "" if size == layout.TF32_BYTES else f", {int(not a.k_major)}, {int(not b.k_major)}"
        instruction = f"m64n{self.shape.cols}k{layout.instruction_k(size)}"
        text = (
            f"{{ .reg .pred p; setp.ne.b32 p, ${2 * n + 2}, 0; "
            f"wgmma.mma_async.sync.aligned.{instruction}.f32.{self.kind}.{self.kind} "
            f"{{{', '.join(f'${q}' for q in range(n))}}}, ${2 * n}, ${2 * n + 1}, p, 1, 1"
            f"{flags}; }}"
        )
        one = _i32(e, 1)
        a_rows = e(
            arith.MuliOp(warpgroup, _i32(e, layout.step_offset(a.k_major, 0, WARPGROUP_ROWS)))
        )
        a_stage = e(arith.AddiOp(stage_at, a_rows))
        for kk in range(0, layout.depth(size), layout.instruction_k(size)):
            descriptors = [
                self._descriptor(e, a_stage, a, kk, 0),
                self._descriptor(e, stage_at, b, kk, 0),
            ]
            accs = tied(e, text, accs, ",l,l,r", [*descriptors, one])
        return accs

    def _stage_at(self, e: Emitter, t: SSAValue) -> SSAValue:
        """The shared address (i32) of the stage slice `t` goes to: `t % stages`."""
        stage = e(arith.IndexCastOp(e.rem(t, self.shape.stages), i32))
        return e(arith.AddiOp(self.base, e(arith.MuliOp(stage, _i32(e, self.shape.slice_bytes)))))

    def _issue(self, e: Emitter, t: SSAValue, slices: SSAValue) -> None:
        """Slice `t`'s copies, if there is such a slice, and a commit (`wgmma_staging`)."""
        stage_at = self._stage_at(e, t)
        self.staging.issue(e, t, slices, stage_at, self.operands, self.origins)

    def _loop(self, emit: Emitter, init: list[SSAValue], tid: SSAValue) -> list[SSAValue]:
        shape, c = self.shape, self.c
        slices = emit.ceil_div(self.bounds[c.k], self.staging.depth)
        warpgroup = emit(arith.IndexCastOp(emit.div(tid, WARPGROUP), i32))
        for t in range(shape.stages - 2):
            self._issue(emit, emit.index(t), slices)
        body = Block(arg_types=[IndexType(), *[f32] * len(init)])
        loop = scf.ForOp(emit.index(0), slices, emit.index(1), init, Region(body))
        emit(loop)
        e = emit.region(body)
        t, accs = body.args[0], list(body.args[1:])
        async_copy.wait_group(e, shape.stages - 3)
        bare(e, "fence.proxy.async.shared::cta;")
        e(gpu.BarrierOp())
        self._issue(e, e.add(t, shape.stages - 2), slices)
        stage_at = self._stage_at(e, t)
        accs = tied(e, "wgmma.fence.sync.aligned;", accs)
        accs = self._mma(e, stage_at, warpgroup, accs)
        bare(e, "wgmma.commit_group.sync.aligned;")
        accs = tied(e, "wgmma.wait_group.sync.aligned 1;", accs)
        e(scf.YieldOp(*accs))
        done = tied(emit, "wgmma.wait_group.sync.aligned 0;", list(loop.results))
        async_copy.wait_group(emit, 0)
        return done


def element_type(c: Contraction) -> Attribute:
    """The type of the operands: f16, bf16, or f32 (multiplied in tf32)."""
    type_ = c.op.operands[c.a].type
    assert isinstance(type_, MemRefType)
    return type_.element_type


def element_bytes(c: Contraction) -> int:
    return layout.ELEMENT_BYTES if c.half else layout.TF32_BYTES
