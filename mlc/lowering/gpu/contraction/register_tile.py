"""
A thread's accumulators in the GPU's SIMT tiled contraction kernel (`tiled_kernel`),
as 4-wide vectors, and a slice's products as vector FMAs.

A thread holds `thread_rows x thread_cols` accumulators in registers, and each K step
adds the outer product of its rows' A values and its columns' B values, read by
16-byte shared loads. As scalars, a step is one `math.fma` per accumulator on scalars
extracted from those loads. As vectors of 4, a step is one `vector.fma` per vector:
one operand a 16-byte load as it is, the other one value splat by a `vector.shuffle`.
NVPTX has no vector FMA, so LLVM makes both the same `fma.rn.f32`s on the same
registers (each lane's chain of FMAs is the scalar one, so the sums are the same
bits); the vector form is about a third of the ops, and every later pass and the
translation to LLVM IR pay per op.

The K loop still carries scalars: a slice packs them into vectors as it starts
(`pack`) and unpacks them as it ends (`unpack`), pairs LLVM folds away. Carried as
vectors, the loop's PTX is the same instructions with its accumulator registers
numbered in another order, and ptxas allocated two of ResNet-50's kernels 80
registers and a 12-byte spill instead of 93 and none.

The vectors run along the operand whose tile is `[buffer, k, extent]` (a 16-byte load
there is 4 of the thread's rows or columns at one step): along a row of accumulators
when B's tile is, else down a column when A's is. A kernel whose two tiles are both
`[buffer, extent, k]` keeps scalars, as do the tensor-core paths.
"""

from dataclasses import dataclass

from xdsl.dialects import math, vector
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, VectorType, f32, i64
from xdsl.ir import SSAValue

from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.tile_staging import QUAD, Staging

QUAD_TYPE = VectorType(f32, [QUAD])
Element = tuple[SSAValue, int]  # a 16-byte shared load and the lane that holds the value


@dataclass(frozen=True)
class RegisterTile:
    """How a thread's `rows x cols` accumulators are held (slot `cols * i + j`)."""

    rows: int
    cols: int
    along: str | None = None  # "cols": 4 columns of a row a vector; "rows": 4 rows; None

    @staticmethod
    def of(rows: int, cols: int, stagings: tuple[Staging, Staging]) -> "RegisterTile":
        """Vectors along the operand whose tile is `[buffer, k, extent]` (module docstring)."""
        a, b = stagings
        if not b.tile_along_k and cols % QUAD == 0:
            return RegisterTile(rows, cols, "cols")
        if not a.tile_along_k and rows % QUAD == 0:
            return RegisterTile(rows, cols, "rows")
        return RegisterTile(rows, cols)

    @property
    def slots(self) -> list[list[int]]:
        """The accumulator slots of each carried value, lane by lane."""
        rows, cols = self.rows, self.cols
        if self.along == "cols":
            return [
                [cols * i + j + q for q in range(QUAD)]
                for i in range(rows)
                for j in range(0, cols, QUAD)
            ]
        if self.along == "rows":
            return [
                [cols * (i + q) + j for q in range(QUAD)]
                for j in range(cols)
                for i in range(0, rows, QUAD)
            ]
        return [[slot] for slot in range(rows * cols)]

    def pack(self, e: Emitter, scalars: list[SSAValue]) -> list[SSAValue]:
        """The carried values of accumulators `scalars` (a splat where the 4 are one value)."""
        if self.along is None:
            return list(scalars)
        packed, splats = [], {}
        for slots in self.slots:
            values = [scalars[slot] for slot in slots]
            if all(value is values[0] for value in values):  # a fill's constant: one splat
                if values[0] not in splats:
                    splats[values[0]] = e(vector.BroadcastOp(values[0], QUAD_TYPE))
                packed.append(splats[values[0]])
                continue
            packed_value = e(vector.BroadcastOp(values[0], QUAD_TYPE))
            for lane, value in enumerate(values[1:], start=1):
                packed_value = e(vector.InsertOp(value, packed_value, [lane], QUAD_TYPE))
            packed.append(packed_value)
        return packed

    def unpack(self, e: Emitter, carried: list[SSAValue]) -> list[SSAValue]:
        """The accumulators, slot by slot, of the carried values."""
        if self.along is None:
            return list(carried)
        scalars: list[SSAValue] = [carried[0]] * (self.rows * self.cols)
        for value, slots in zip(carried, self.slots, strict=True):
            for lane, slot in enumerate(slots):
                scalars[slot] = e(vector.ExtractOp(value, [lane], f32))
        return scalars

    def products(
        self,
        e: Emitter,
        steps: tuple[list[list[Element]], list[list[Element]]],
        accs: list[SSAValue],
    ) -> None:
        """Each step's outer product of A's and B's values (`step_elements`) into `accs`."""
        for a_values, b_values in zip(*steps, strict=True):
            if self.along is None:
                a_scalars, b_scalars = _scalars(e, a_values), _scalars(e, b_values)
                for i, a_value in enumerate(a_scalars):
                    for j, b_value in enumerate(b_scalars):
                        slot = self.cols * i + j
                        accs[slot] = e(math.FmaOp(a_value, b_value, accs[slot]))
                continue
            splat, whole = (a_values, b_values) if self.along == "cols" else (b_values, a_values)
            quads = [quad for quad, lane in whole[::QUAD]]
            splats = [_splat(e, quad, lane) for quad, lane in splat]
            for slot, (value, quad) in enumerate(
                (value, quad) for value in splats for quad in quads
            ):
                accs[slot] = e(vector.FMAOp(value, quad, accs[slot]))


def step_elements(
    e: Emitter,
    staging: Staging,
    buffer: SSAValue,
    kq: int,
    offsets: list[SSAValue],
    k_base: SSAValue | None,
) -> list[list[Element]]:
    """
    A thread's values at steps kq .. kq + 3 of the slice, by their 16-byte shared loads:
    of a `[buffer, extent, k]` tile one load a row (its 4 steps), else one load per 4
    rows (or columns) a step, in `offsets` order.
    """
    assert staging.tile is not None

    def quad_at(indices: list[SSAValue]) -> SSAValue:
        load = vector.LoadOp(staging.tile, indices, QUAD_TYPE)
        load.attributes["alignment"] = IntegerAttr(16, i64)
        return e(load)

    def k_at(step: int) -> SSAValue:
        return e.index(step) if k_base is None else e.add(k_base, step)

    if staging.tile_along_k:  # one load: 4 steps of one row
        rows = [quad_at(staging.at(buffer, k_at(kq), r)) for r in offsets]
        return [[(row, step) for row in rows] for step in range(QUAD)]
    steps = []
    for step in range(kq, kq + QUAD):  # one load: 4 rows of one step
        k = k_at(step)
        quads = [quad_at(staging.at(buffer, k, r)) for r in offsets[::QUAD]]
        steps.append([(quad, lane) for quad in quads for lane in range(QUAD)])
    return steps


def _scalars(e: Emitter, elements: list[Element]) -> list[SSAValue]:
    return [e(vector.ExtractOp(quad, [lane], f32)) for quad, lane in elements]


def _splat(e: Emitter, quad: SSAValue, lane: int) -> SSAValue:
    """Lane `lane` of `quad` in all 4 lanes."""
    mask = DenseArrayBase.from_list(i64, [lane] * QUAD)
    return e(vector.ShuffleOp(quad, quad, mask, result_type=QUAD_TYPE))  # pyright: ignore[reportArgumentType]
