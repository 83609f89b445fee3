"""
The fused attention kernel on the tensor cores (f16, bf16; head and value dims 64 or
128; sm_80 and later), in FlashAttention-2's form. A CTA of 4 warps owns `BQ = 64`
query rows, 16 a warp; the keys and values go by in blocks of `BK = 64`:

    Q[64, D] -> shared (cp.async) -> a warp's Q fragments, in registers for good
    for each key block (up to the causal band's end for the CTA's rows):
      K, V of block j + 1 -> the other shared buffers (cp.async, zero past Sk)
      S = Q·Kᵀ                      mma.sync m16n8k16, K fragments by ldmatrix
      S = S * scale * log2(e); -inf where masked (only on blocks that need it)
      m' = max(m, rowmax S) (a row spans a quad of lanes: 2 shuffles)
      P = 2^(S - m'); a = 2^(m - m'); l = l * a + rowsum P; O = O * a
      O += P·V                      P rounded to f16/bf16 in registers (the accumulator
                                    layout of S is the A fragment layout of P·V),
                                    V fragments by ldmatrix.trans
    out = O / l (l summed over the quad), rounded to the element type, a lane's
                                    column pairs as one 32-bit store

Fragments are `mma_half`'s (PTX's m16n8k16 layouts): lane `g = lane / 4`,
`t = lane % 4` of a warp holds rows `g`, `g + 8` of the warp's 16, columns `2t`, `2t + 1`
of every 8-wide tile of S and O. Shared memory (dynamic: 69632 bytes at D = Dv = 128)
holds two buffers of K (`BK x (D + 8)`) and of V (`BK x (Dv + 8)`), rows padded by 16
bytes so `ldmatrix` reads them conflict free; Q passes through the second K buffer
before the loop. A row whose every key is masked is NaN (0 / 0), as with the unfused
softmax; rows past Sq compute on zeros and store nothing. K, V and Q must be row-major
and 16-byte aligned (cp.async copies 8 elements): identity-layout buffers from the
allocator are, in either order of the head and sequence dims (`stand_in`): a head's
rows are then `H * D` elements apart, each still 8-element aligned.
"""

import math

from xdsl.dialects import arith, gpu, llvm, memref, scf
from xdsl.dialects import math as mathd
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    MemRefType,
    NoneAttr,
    UnitAttr,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Block, SSAValue

from mlc.gpu_architectures import ASYNC_COPY_SM, WARP
from mlc.lowering.gpu.attention.kernel import (
    LOG2E,
    Grid,
    constant,
    for_loop,
    mask_at,
    open_launch,
    to_f32,
)
from mlc.lowering.gpu.attention.stand_in import Attention, element, shape
from mlc.lowering.gpu.contraction import async_copy
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.half_staging import CHUNK, element_address, shared_address
from mlc.lowering.gpu.contraction.mma_half import ldmatrix_x4, mma_m16n8k16
from mlc.lowering.gpu.contraction.tile_staging import HALF_PAD, WORKGROUP
from mlc.lowering.gpu.convert_gpu_to_nvvm import DYNAMIC_SHARED_ATTR

BQ = 64  # query rows of a CTA
BK = 64  # keys of a block
WARPS = BQ // 16
THREADS = WARPS * WARP
HEAD_DIMS = (64, 128)


def declined(a: Attention, sm: int) -> str | None:
    """Why this kernel cannot take `a` (the FMA kernel then does), or None."""
    if not isinstance(element(a.q), Float16Type | BFloat16Type):
        return "not f16 or bf16"
    if sm < ASYNC_COPY_SM:
        return f"sm_{sm} has no 16-bit mma.sync (sm_80 on)"
    dims = shape(a.q)[-1], shape(a.v)[-1]
    if any(d not in HEAD_DIMS for d in dims):
        return f"head dim {dims[0]}, value dim {dims[1]} (the tensor cores take 64 and 128)"
    for value in (a.q, a.k, a.v, a.out):
        type_ = value.type
        assert isinstance(type_, MemRefType)
        if not isinstance(type_.layout, NoneAttr):
            return "a strided buffer"
    return None


def shared_bytes(d: int, dv: int) -> int:
    return 2 * 2 * BK * (d + HALF_PAD + dv + HALF_PAD)  # 2 buffers of K and V, 2 bytes each


def launch(host: Emitter, a: Attention) -> None:
    """Replace stand-in `a.op` (at `host`) by the kernel's `gpu.launch`."""
    d, dv = shape(a.q)[-1], shape(a.v)[-1]
    grid = open_launch(host, a, BQ, THREADS, shared_bytes(d, dv))
    _Flash(a, grid).build()
    grid.e(scf.YieldOp())
    host.rewriter.erase(a.op)


def _i32(e: Emitter, value: int) -> SSAValue:
    return e(arith.ConstantOp.from_int_and_width(value, i32))


def _narrow(e: Emitter, index: SSAValue) -> SSAValue:
    return e(arith.IndexCastOp(index, i32))


def _add32(e: Emitter, a: SSAValue, b: SSAValue | int) -> SSAValue:
    if isinstance(b, int):
        if b == 0:
            return a
        b = _i32(e, b)
    return e(arith.AddiOp(a, b))


def _shuffle_xor(e: Emitter, value: SSAValue, lanes: int) -> SSAValue:
    text = f"shfl.sync.bfly.b32 $0, $1, {lanes}, 31, -1;"
    return e(llvm.InlineAsmOp(text, "=f,f", [value], [f32], has_side_effects=True))


def _pack(e: Emitter, kind: str, low: SSAValue, high: SSAValue) -> SSAValue:
    """Two f32 rounded to `kind` (f16, bf16) in one b32, `low` in its low half."""
    text = f"cvt.rn.{kind}x2.f32 $0, $1, $2;"
    return e(llvm.InlineAsmOp(text, "=r,f,f", [high, low], [i32]))


class _Flash:
    """The kernel of one CTA (module docstring)."""

    def __init__(self, a: Attention, grid: Grid):
        e = grid.e
        self.a, self.g, self.e = a, grid, e
        self.sq, self.sk = grid.sizes
        self.d, self.dv = shape(a.q)[-1], shape(a.v)[-1]
        self.kind = "bf16" if isinstance(element(a.q), BFloat16Type) else "f16"
        self.kv_head = e.div(grid.head, a.groups) if a.groups > 1 else grid.head
        warp, lane = e.div(grid.tid, WARP), e.rem(grid.tid, WARP)
        self.t = e.rem(lane, 4)
        self.warp_row = e.add(grid.q0, e.mul(warp, 16))
        first = e.add(self.warp_row, e.div(lane, 4))
        self.rows = [first, e.add(first, 8)]
        alloca = memref.AllocaOp.get(
            element(a.q), shape=[shared_bytes(self.d, self.dv) // 2], memory_space=WORKGROUP
        )
        alloca.attributes[DYNAMIC_SHARED_ATTR] = UnitAttr()
        tile = e(alloca)
        self.window = shared_address(e, tile, [e.index(0)])
        self.strides = (self.d + HALF_PAD) * 2, (self.dv + HALF_PAD) * 2  # row bytes of K, V
        # This lane's ldmatrix row: row `lane % 8` of 8x8 matrix `lane / 8`; per operand
        # its (row, column) in the tile (`mma_half.lane_matrices`).
        row, matrix = e.rem(lane, 8), e.div(lane, 8)
        low, high = e.mul(e.rem(matrix, 2), 8), e.mul(e.div(matrix, 2), 8)
        q_at = self._offset(e, e.add(e.mul(warp, 16), e.add(low, row)), high, self.strides[0])
        self.q_address = e(arith.AddiOp(self.window, q_at))
        self.k_offset = self._offset(e, e.add(high, row), low, self.strides[0])
        self.v_offset = self._offset(e, e.add(low, row), high, self.strides[1])

    @staticmethod
    def _offset(e: Emitter, row: SSAValue, column: SSAValue, stride: int) -> SSAValue:
        """Bytes into a tile of rows `stride` bytes long, as i32."""
        return _narrow(e, e.add(e.mul(row, stride), e.mul(column, 2)))

    def _buffer(self, e: Emitter, operand: int, buffer: SSAValue) -> SSAValue:
        """The window address (i32) of K (`operand` 0) or V (1) buffer `buffer` (index)."""
        k_bytes = BK * self.strides[0]
        start = [0, 2 * k_bytes][operand]
        size = [k_bytes, BK * self.strides[1]][operand]
        at = e(arith.MuliOp(_narrow(e, buffer), _i32(e, size)))
        return e(arith.AddiOp(self.window, _add32(e, at, start)))

    def _copy_rows(
        self, e: Emitter, name: str, head: SSAValue, first: SSAValue, end: SSAValue,
        tile: SSAValue, stride: int, width: int,
    ) -> None:  # fmt: skip
        """Rows `first..first+64` of operand `name` (q, k, v) at `[batch, head]` into
        `tile`, zero from `end` on."""
        source = {"q": self.a.q, "k": self.a.k, "v": self.a.v}[name]
        per_row = width // CHUNK
        for n in range(BK * per_row // THREADS):
            chunk = e.add(self.g.tid, n * THREADS)
            r, c = e.div(chunk, per_row), e.mul(e.rem(chunk, per_row), CHUNK)
            at = e.add(first, r)
            inside = e.less(at, end)
            clamped = e(arith.SelectOp(inside, at, e.index(0)))
            address = element_address(e, source, self.a.index(name, self.g.batch, head, clamped, c))
            shared = e(arith.AddiOp(tile, self._offset(e, r, c, stride)))
            async_copy.copy_to(e, shared, address, async_copy.bytes_if(e, inside))

    def _issue(self, e: Emitter, block: SSAValue) -> None:
        """Start copying key block `block` (index) to buffers `block % 2` (the caller commits)."""
        first, buffer = e.mul(block, BK), e.rem(block, 2)
        for operand, (name, width) in enumerate((("k", self.d), ("v", self.dv))):
            tile = self._buffer(e, operand, buffer)
            stride = self.strides[operand]
            self._copy_rows(e, name, self.kv_head, first, self.sk, tile, stride, width)

    def build(self) -> None:
        e, a = self.e, self.a
        end = self.sk
        if a.causal:  # key j is in row i's band where j + Sq <= i + Sk
            limit = e.add(e.add(self.g.q0, BQ), self.sk)
            band = e(arith.MinUIOp(self.sk, e(arith.SubiOp(limit, self.sq))))
            end = e(arith.SelectOp(e.less(self.sq, limit), band, e.index(0)))
        blocks = e.ceil_div(end, BK)
        q_tile = self._buffer(e, 0, e.index(1))
        self._copy_rows(e, "q", self.g.head, self.g.q0, self.sq, q_tile, self.strides[0], self.d)
        async_copy.commit_group(e)
        self._issue(e, e.index(0))
        async_copy.commit_group(e)
        async_copy.wait_group(e, 1)
        e(gpu.BarrierOp())
        q_tile_address = _add32(e, self.q_address, BK * self.strides[0])  # in K buffer 1
        self.q = [
            ldmatrix_x4(e, _add32(e, q_tile_address, kk * 32), False) for kk in range(self.d // 16)
        ]
        e(gpu.BarrierOp())  # every warp has its Q before block 1 overwrites it
        zero, minus_inf = constant(e, 0.0), constant(e, -math.inf)
        carried = [minus_inf, minus_inf, zero, zero, *([zero] * (self.dv // 2))]
        loop, body, args = for_loop(e, e.index(0), blocks, e.index(1), carried)
        body(scf.YieldOp(*self._step(body, args[0], blocks, args[1:])))
        m, l, acc = loop.results[:2], loop.results[2:4], list(loop.results[4:])  # noqa: E741
        del m
        self._store(e, l, acc)

    def _step(
        self, e: Emitter, block: SSAValue, blocks: SSAValue, carried: list[SSAValue]
    ) -> list[SSAValue]:
        """One key block: prefetch the next, score this one, fold it into the statistics."""
        m, l, acc = carried[:2], carried[2:4], carried[4:]  # noqa: E741
        following = e.add(block, 1)
        prefetch = Block()
        e(scf.IfOp(e.less(following, blocks), [], [prefetch]))
        inside = e.region(prefetch)
        self._issue(inside, following)
        inside(scf.YieldOp())
        async_copy.commit_group(e)  # maybe empty: one group a step keeps the count
        async_copy.wait_group(e, 1)
        e(gpu.BarrierOp())  # block `block` is in its buffers
        buffer = e.rem(block, 2)
        scores = self._scores(e, buffer)
        scores = self._masked(e, e.mul(block, BK), scores)
        result = self._softmax(e, scores, m, l, acc)
        m, l, acc, p = result  # noqa: E741
        acc = self._accumulate(e, buffer, p, acc)
        e(gpu.BarrierOp())  # every warp is done with the buffers before they refill
        return [*m, *l, *acc]

    def _scores(self, e: Emitter, buffer: SSAValue) -> list[SSAValue]:
        """S = Q·Kᵀ of the warp's 16 rows and the block's 64 keys: 8 tiles of 4 (unscaled)."""
        scores = [constant(e, 0.0)] * (4 * BK // 8)
        keys = e(arith.AddiOp(self._buffer(e, 0, buffer), self.k_offset))
        for kk in range(self.d // 16):
            for pair in range(BK // 16):
                address = _add32(e, keys, pair * 16 * self.strides[0] + kk * 32)
                fragments = ldmatrix_x4(e, address, False)
                for half in range(2):
                    tile = 2 * pair + half
                    b = fragments[2 * half : 2 * half + 2]
                    c = scores[4 * tile : 4 * tile + 4]
                    scores[4 * tile : 4 * tile + 4] = mma_m16n8k16(e, self.kind, self.q[kk], b, c)
        return scores

    def _masked(self, e: Emitter, k0: SSAValue, scores: list[SSAValue]) -> list[SSAValue]:
        """Scaled into log2 units; -inf past Sk, outside the causal band, where masked.
        Blocks all in (no mask, not the last block, before the warp's diagonal) skip the
        tests."""
        scale = constant(e, self.a.scale * LOG2E)
        if self.a.mask is not None:
            return self._mask_each(e, k0, scores, scale)
        needs = e.less(self.sk, e.add(k0, BK))
        if self.a.causal:  # the block's last key against the warp's first row
            last = e.add(e.add(k0, BK - 1), self.sq)
            past = e.less(e.add(self.warp_row, self.sk), last)
            needs = e(arith.OrIOp(needs, past))
        masked, plain = Block(), Block()
        choice = scf.IfOp(needs, [f32] * len(scores), [masked], [plain])
        e(choice)
        inside = e.region(masked)
        inside(scf.YieldOp(*self._mask_each(inside, k0, scores, scale)))
        outside = e.region(plain)
        outside(scf.YieldOp(*(outside(arith.MulfOp(s, scale)) for s in scores)))
        return list(choice.results)

    def _mask_each(
        self, e: Emitter, k0: SSAValue, scores: list[SSAValue], scale: SSAValue
    ) -> list[SSAValue]:
        a = self.a
        minus_inf, log2e = constant(e, -math.inf), constant(e, LOG2E)
        last_row = e.sub(self.sq, 1)
        out = []
        for n, value in enumerate(scores):
            tile, slot = divmod(n, 4)
            row = self.rows[slot // 2]
            key = e.add(e.add(k0, e.mul(self.t, 2)), 8 * tile + slot % 2)
            allowed = e.less(key, self.sk)
            s = e(arith.MulfOp(value, scale))
            if a.causal:
                band = e(arith.CmpiOp(e.add(key, self.sq), e.add(row, self.sk), "ule"))
                allowed = e(arith.AndIOp(allowed, band))
            if a.mask is not None:
                at_key = e(arith.SelectOp(allowed, key, e.index(0)))
                at_row = e(arith.MinUIOp(row, last_row))
                bit = mask_at(e, a, [*self.g.batch, self.g.head, at_row, at_key])
                if bit.type == i1:
                    allowed = e(arith.AndIOp(allowed, bit))
                else:
                    s = e(arith.AddfOp(s, e(arith.MulfOp(to_f32(e, bit), log2e))))
            out.append(e(arith.SelectOp(allowed, s, minus_inf)))
        return out

    def _softmax(
        self,
        e: Emitter,
        scores: list[SSAValue],
        m: list[SSAValue],
        l: list[SSAValue],  # noqa: E741
        acc: list[SSAValue],
    ) -> tuple[list[SSAValue], list[SSAValue], list[SSAValue], list[SSAValue]]:
        """The online softmax of the block, per row: new m, l, rescaled acc, P."""
        minus_inf, zero = constant(e, -math.inf), constant(e, 0.0)
        p = list(scores)
        new_m, new_l, alphas = [], [], []
        for half in range(2):
            mine = [n for n in range(len(scores)) if (n % 4) // 2 == half]
            largest = m[half]
            for n in mine:
                largest = e(arith.MaximumfOp(largest, scores[n]))
            for lanes in (1, 2):  # a row's 64 scores are spread over a quad of lanes
                largest = e(arith.MaximumfOp(largest, _shuffle_xor(e, largest, lanes)))
            empty = e(arith.CmpfOp(largest, minus_inf, "oeq"))
            base = e(arith.SelectOp(empty, zero, largest))
            alpha = e(mathd.Exp2Op(e(arith.SubfOp(m[half], base))))
            total = e(arith.MulfOp(l[half], alpha))
            for n in mine:
                p[n] = e(mathd.Exp2Op(e(arith.SubfOp(scores[n], base))))
                total = e(arith.AddfOp(total, p[n]))
            new_m.append(largest)
            new_l.append(total)
            alphas.append(alpha)
        rescaled = [e(arith.MulfOp(x, alphas[(n % 4) // 2])) for n, x in enumerate(acc)]
        return new_m, new_l, rescaled, p

    def _accumulate(
        self, e: Emitter, buffer: SSAValue, p: list[SSAValue], acc: list[SSAValue]
    ) -> list[SSAValue]:
        """acc += P·V: P's accumulator tiles as A fragments, V by ldmatrix.trans."""
        acc = list(acc)
        values = e(arith.AddiOp(self._buffer(e, 1, buffer), self.v_offset))
        for chunk in range(BK // 16):
            left, right = p[8 * chunk : 8 * chunk + 4], p[8 * chunk + 4 : 8 * chunk + 8]
            a = [
                _pack(e, self.kind, left[0], left[1]),
                _pack(e, self.kind, left[2], left[3]),
                _pack(e, self.kind, right[0], right[1]),
                _pack(e, self.kind, right[2], right[3]),
            ]
            for pair in range(self.dv // 16):
                address = _add32(e, values, chunk * 16 * self.strides[1] + pair * 32)
                fragments = ldmatrix_x4(e, address, True)
                for half in range(2):
                    tile = 2 * pair + half
                    b = fragments[2 * half : 2 * half + 2]
                    c = acc[4 * tile : 4 * tile + 4]
                    acc[4 * tile : 4 * tile + 4] = mma_m16n8k16(e, self.kind, a, b, c)
        return acc

    def _store(self, e: Emitter, l: list[SSAValue], acc: list[SSAValue]) -> None:  # noqa: E741
        """out = acc / l for the lane's rows below Sq, rounded to the element type: the
        lane's two adjacent columns (2t, 2t + 1 of each 8-wide tile) rounded together and
        stored as one 32-bit word (4-byte aligned: the column and Dv are even)."""
        store = "{ .reg .u64 ga; cvta.to.global.u64 ga, $0; st.global.b32 [ga], $1; }"
        for half in range(2):
            total = l[half]
            for lanes in (1, 2):
                total = e(arith.AddfOp(total, _shuffle_xor(e, total, lanes)))
            block = Block()
            e(scf.IfOp(e.less(self.rows[half], self.sq), [], [block]))
            inner = e.region(block)
            for tile in range(self.dv // 8):
                pair = acc[4 * tile + 2 * half : 4 * tile + 2 * half + 2]
                low, high = (inner(arith.DivfOp(value, total)) for value in pair)
                column = inner.add(inner.mul(self.t, 2), 8 * tile)
                index = self.a.index("out", self.g.batch, self.g.head, self.rows[half], column)
                at = inner(arith.IndexCastOp(element_address(inner, self.a.out, index), i64))
                packed = _pack(inner, self.kind, low, high)
                inner(llvm.InlineAsmOp(store, "l,r,~{memory}", [at, packed], has_side_effects=True))
            inner(scf.YieldOp())
