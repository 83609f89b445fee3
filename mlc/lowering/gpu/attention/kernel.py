"""
The fused attention kernel: one CTA per (batch..., head, block of `BQ` query rows),
one thread per query row, the whole online softmax of the row in its registers.

    for each block of BK keys (up to the causal band's end for the CTA's rows):
      stage k[j0:j0+BK] and v[j0:j0+BK] in shared memory (f32, zero past Sk)
      s[j] = q[i]·k[j] * scale * log2(e)              (f32 FMAs, q read from global)
      s[j] = -inf where masked (past Sk, the causal band, a false i1 mask); + mask * log2(e)
      m' = max(m, max s);  m* = m' == -inf ? 0 : m'
      p[j] = 2^(s[j] - m*);  a = 2^(m - m*);  l = l * a + sum p;  acc = acc * a
      acc += sum_j p[j] * v[j]                        (p through the thread's row of shared)
    out[i] = acc / l                                  (rounded to the element type)

The statistics are those of `decompose-attention`, so a row whose every score is masked
is NaN (0 / 0), as the unfused softmax is. f16 and bf16 are loaded, computed in f32 and
rounded once. Query head `h` reads K/V head `h // G`. Sequence lengths are read at run
time: the last key block is masked past Sk, rows past Sq compute on the last row and
store nothing. Shared memory: `BK x (D + Dv)` staged keys and values and `BQ x (BK + 1)`
probabilities (f32), 41 KiB at D = Dv = 128.
"""

import math
from dataclasses import dataclass

from xdsl.dialects import arith, gpu, memref, scf
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import Float32Type, FloatAttr, IndexType, f32, i1, i32
from xdsl.ir import Block, Region, SSAValue

from mlc.lowering.gpu.attention.stand_in import Attention, element, shape
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.tile_staging import WORKGROUP

BQ = 64  # query rows of a CTA, one thread each
BK = 32  # keys staged per step
LOG2E = math.log2(math.e)


@dataclass(frozen=True)
class Grid:
    """Inside a kernel's launch, where CTA `(bx, by, bz)` has work: what it works on."""

    e: Emitter  # into the body of the CTA's work
    batch: list[SSAValue]  # the batch indices
    head: SSAValue
    q0: SSAValue  # the CTA's first query row
    tid: SSAValue
    sizes: tuple[SSAValue, SSAValue]  # Sq, Sk


def open_launch(
    host: Emitter, a: Attention, rows: int, threads: int, shared_bytes: int = 0
) -> Grid:
    """
    A `gpu.launch` at `host` of one CTA of `threads` threads per (batch..., head, `rows`
    query rows), `shared_bytes` of dynamic shared memory; the CTA's `Grid`, whose emitter
    the caller closes with `scf.yield`.
    """
    nb = a.batch_rank
    batch = [dim(host, a.q, n) for n in range(nb)]
    sizes = dim(host, a.q, a.stored("q", nb + 1)), dim(host, a.k, a.stored("k", nb + 1))
    count = host.index(1)
    for size in batch:
        count = host.mul(count, size)
    one = host.index(1)
    blocks_x = host(arith.MaxUIOp(host.ceil_div(sizes[0], rows), one))
    grid = [blocks_x, host.index(a.size("q", nb)), host(arith.MaxUIOp(count, one))]
    body = Block(arg_types=[IndexType()] * 12)
    shared = host(arith.ConstantOp.from_int_and_width(shared_bytes, i32)) if shared_bytes else None
    block = [host.index(threads), one, one]
    host(gpu.LaunchOp(Region(body), grid, block, dynamicSharedMemorySize=shared))
    kernel = host.region(body)
    x, y, z = (gpu.DimensionAttr(d) for d in gpu.DimensionEnum)
    bx, by, bz = (kernel(gpu.BlockIdOp(d)) for d in (x, y, z))
    tid = kernel(gpu.ThreadIdOp(x))
    q0 = kernel.mul(bx, rows)
    work = kernel(arith.AndIOp(kernel.less(q0, sizes[0]), kernel.less(bz, count)))
    then = Block()
    kernel(scf.IfOp(work, [], [then]))
    kernel(gpu.TerminatorOp())
    inner = kernel.region(then)
    ivs: list[SSAValue] = []
    rest = bz
    for size in reversed(batch):
        ivs.append(inner.rem(rest, size))
        rest = inner.div(rest, size)
    ivs.reverse()
    return Grid(inner, ivs, by, q0, tid, sizes)


def launch(host: Emitter, a: Attention) -> None:
    """Replace stand-in `a.op` (at `host`) by the kernel's `gpu.launch`."""
    g = open_launch(host, a, BQ, BQ)
    _Row(a, g.e, g.batch, g.head, g.sizes).build(g.q0, g.tid)
    g.e(scf.YieldOp())
    host.rewriter.erase(a.op)


def dim(e: Emitter, buffer: SSAValue, n: int) -> SSAValue:
    size = shape(buffer)[n]
    return e.index(size) if size >= 0 else e(memref.DimOp(buffer, e.index(n)))


def to_f32(e: Emitter, value: SSAValue) -> SSAValue:
    return value if isinstance(value.type, Float32Type) else e(arith.ExtFOp(value, f32))


def constant(e: Emitter, value: float) -> SSAValue:
    return e(arith.ConstantOp(FloatAttr(value, f32)))


def for_loop(
    e: Emitter, lower: SSAValue, upper: SSAValue, step: SSAValue, carried: list[SSAValue]
) -> tuple[scf.ForOp, Emitter, list[SSAValue]]:
    """An `scf.for` carrying `carried`: the op, an emitter into its body, its body args."""
    body = Block(arg_types=[IndexType(), *(v.type for v in carried)])
    loop = scf.ForOp(lower, upper, step, carried, Region(body))
    e(loop)
    return loop, e.region(body), list(body.args)


class _Row:
    """The kernel of one CTA, one query row a thread (module docstring)."""

    def __init__(
        self,
        a: Attention,
        e: Emitter,
        batch: list[SSAValue],
        head: SSAValue,
        sizes: tuple[SSAValue, SSAValue],
    ):
        self.a, self.e, self.batch, self.head = a, e, batch, head
        self.sq, self.sk = sizes
        self.kv_head = e.div(head, a.groups) if a.groups > 1 else head
        self.d, self.dv = shape(a.q)[-1], shape(a.v)[-1]

    def build(self, q0: SSAValue, tid: SSAValue) -> None:
        e, a = self.e, self.a
        row = e.add(q0, tid)
        valid = e.less(row, self.sq)
        self.row = e(arith.SelectOp(valid, row, e.sub(self.sq, 1)))
        self.diagonal = e.add(row, self.sk)  # key j is in the band where j + Sq <= i + Sk
        self.tid = tid
        self.keys = self._alloca([BK, self.d])
        self.values = self._alloca([BK, self.dv])
        self.probabilities = self._alloca([BQ, BK + 1])
        end = self.sk
        if a.causal:
            limit = e.add(e.add(q0, BQ), self.sk)
            band = e(arith.MinUIOp(self.sk, e(arith.SubiOp(limit, self.sq))))
            end = e(arith.SelectOp(e.less(self.sq, limit), band, e.index(0)))
        zero = constant(e, 0.0)
        carried = [constant(e, -math.inf), zero, *([zero] * self.dv)]
        loop, body, args = for_loop(e, e.index(0), e.ceil_div(end, BK), e.index(1), carried)
        body(scf.YieldOp(*self._step(body, body.mul(args[0], BK), args[1:])))
        m, l, *acc = loop.results  # noqa: E741
        del m
        store = Block()
        e(scf.IfOp(valid, [], [store]))
        out = e.region(store)
        kind = element(a.out)
        for n, value in enumerate(acc):
            result = out(arith.DivfOp(value, l))
            if kind != f32:
                result = out(arith.TruncFOp(result, kind))
            index = a.index("out", self.batch, self.head, row, out.index(n))
            out(memref.StoreOp.get(result, a.out, index))
        out(scf.YieldOp())

    def _alloca(self, shape_: list[int]) -> SSAValue:
        return self.e(memref.AllocaOp.get(f32, shape=shape_, memory_space=WORKGROUP))

    def _stage(self, e: Emitter, name: str, tile: SSAValue, width: int, k0: SSAValue):
        """Rows k0..k0+BK of K or V (`name`; this CTA's K/V head) into `tile`, zero past
        Sk."""
        source = self.a.k if name == "k" else self.a.v
        loop, body, args = for_loop(e, self.tid, e.index(BK * width), e.index(BQ), [])
        r, c = body.div(args[0], width), body.rem(args[0], width)
        key = body.add(k0, r)
        inside = body.less(key, self.sk)
        at = body(arith.SelectOp(inside, key, body.index(0)))
        index = self.a.index(name, self.batch, self.kv_head, at, c)
        value = to_f32(body, body(memref.LoadOp.get(source, index)))
        kept = body(arith.SelectOp(inside, value, constant(body, 0.0)))
        body(memref.StoreOp.get(kept, tile, [r, c]))
        body(scf.YieldOp())
        del loop

    def _step(self, e: Emitter, k0: SSAValue, carried: list[SSAValue]) -> list[SSAValue]:
        """One key block: stage it, score it, fold it into the statistics and `acc`."""
        a = self.a
        m, l, acc = carried[0], carried[1], carried[2:]  # noqa: E741
        e(gpu.BarrierOp())  # every thread is done with the previous block
        self._stage(e, "k", self.keys, self.d, k0)
        self._stage(e, "v", self.values, self.dv, k0)
        e(gpu.BarrierOp())
        scores = self._scores(e)
        scaled = constant(e, a.scale * LOG2E)
        minus_inf = constant(e, -math.inf)
        for j in range(BK):
            key = e.add(k0, j)
            allowed = e.less(key, self.sk)
            s = e(arith.MulfOp(scores[j], scaled))
            if a.causal:
                in_band = e(arith.CmpiOp(e.add(key, self.sq), self.diagonal, "ule"))
                allowed = e(arith.AndIOp(allowed, in_band))
            if a.mask is not None:
                at = e(arith.SelectOp(allowed, key, e.index(0)))
                bit = self._mask(e, at)
                if bit.type == i1:
                    allowed = e(arith.AndIOp(allowed, bit))
                else:
                    s = e(arith.AddfOp(s, e(arith.MulfOp(to_f32(e, bit), constant(e, LOG2E)))))
            scores[j] = e(arith.SelectOp(allowed, s, minus_inf))
        largest = m
        for s in scores:
            largest = e(arith.MaximumfOp(largest, s))
        empty = e(arith.CmpfOp(largest, minus_inf, "oeq"))
        base = e(arith.SelectOp(empty, constant(e, 0.0), largest))
        alpha = e(mathd.Exp2Op(e(arith.SubfOp(m, base))))
        total = e(arith.MulfOp(l, alpha))
        for j, s in enumerate(scores):
            p = e(mathd.Exp2Op(e(arith.SubfOp(s, base))))
            total = e(arith.AddfOp(total, p))
            e(memref.StoreOp.get(p, self.probabilities, [self.tid, e.index(j)]))
        rescaled = [e(arith.MulfOp(x, alpha)) for x in acc]
        loop, body, args = for_loop(e, e.index(0), e.index(BK), e.index(1), rescaled)
        p = body(memref.LoadOp.get(self.probabilities, [self.tid, args[0]]))
        summed = []
        for n, x in enumerate(args[1:]):
            v = body(memref.LoadOp.get(self.values, [args[0], body.index(n)]))
            summed.append(body(arith.AddfOp(x, body(arith.MulfOp(p, v)))))
        body(scf.YieldOp(*summed))
        return [largest, total, *loop.results]

    def _scores(self, e: Emitter) -> list[SSAValue]:
        """q[row]·k[j] for the BK staged keys, unscaled: a loop over the head dim."""
        zero = constant(e, 0.0)
        loop, body, args = for_loop(e, e.index(0), e.index(self.d), e.index(1), [zero] * BK)
        d = args[0]
        index = self.a.index("q", self.batch, self.head, self.row, d)
        q = to_f32(body, body(memref.LoadOp.get(self.a.q, index)))
        sums = []
        for j, s in enumerate(args[1:]):
            k = body(memref.LoadOp.get(self.keys, [body.index(j), d]))
            sums.append(body(arith.AddfOp(s, body(arith.MulfOp(q, k)))))
        body(scf.YieldOp(*sums))
        return list(loop.results)

    def _mask(self, e: Emitter, key: SSAValue) -> SSAValue:
        return mask_at(e, self.a, [*self.batch, self.head, self.row, key])


def mask_at(e: Emitter, a: Attention, full: list[SSAValue]) -> SSAValue:
    """`a`'s mask at `full` (batch..., head, row, key), broadcast: a size-1 dim (static or
    at run time) read at 0."""
    mask = a.mask
    assert mask is not None
    mask_shape = shape(mask)
    first = len(full) - len(mask_shape)
    indices = []
    for n, size in enumerate(mask_shape):
        if size == 1:
            indices.append(e.index(0))
        elif size < 0:
            single = e(arith.CmpiOp(dim(e, mask, n), e.index(1), "eq"))
            indices.append(e(arith.SelectOp(single, e.index(0), full[first + n])))
        else:
            indices.append(full[first + n])
    return e(memref.LoadOp.get(mask, indices))
