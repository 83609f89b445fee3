"""
Stride-2 pooling of a small image in vectors, for `mlc.lowering.cpu.depthwise_vectors`'
flat-image sweep (`vector_images`): a block of two output rows, each window tap read as
its own pair of masked loads and a shuffle, cost a 3x3 max pooling eighteen loads,
twelve of them across cache lines, and nine shuffles a block. Pooling has no weights, so its
window combines in any order: here each image row is loaded once, from its first
column, the rows under each output row combine first, and each column offset of the
window then takes its lanes of the two results with one shuffle (ResNet's 3x3 stride-2
max pooling of 8 x 64 x 16 x 16: four row loads and four shuffles a block).
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.dialects import arith, vector
from xdsl.dialects.builtin import DenseArrayBase, DenseIntOrFPElementsAttr, VectorType, i1, i64
from xdsl.ir import Operation, SSAValue

from mlc.lowering.support.loop_builder import Ops


@dataclass(frozen=True)
class Image:
    """The static sizes `vector_images` works with: the image's and the output's."""

    height: int
    width: int
    rows: int
    columns: int

    def inside(self, row: int, column: int) -> bool:
        return 0 <= row < self.height and 0 <= column < self.width


def constant_mask(b: Ops, bits: Sequence[bool]) -> SSAValue:
    """A constant `vector<Nxi1>` of `bits`."""
    type_ = VectorType(i1, [len(bits)])
    attr = DenseIntOrFPElementsAttr.from_list(type_, [int(bit) for bit in bits])
    return b(arith.ConstantOp(attr, type_))


class RowLoads:
    """Each image row of one channel loaded once, from its first column: `lanes`
    pixels, those past the row's end the padding (`read` masks them)."""

    def __init__(self, image: Image, lanes: int, read: Callable[[int, Sequence[bool]], SSAValue]):
        self.image, self.lanes, self.read = image, lanes, read
        self.loaded: dict[int, SSAValue] = {}

    def __call__(self, row: int) -> SSAValue:
        if row not in self.loaded:
            bits = [column < self.image.width for column in range(self.lanes)]
            self.loaded[row] = self.read(row * self.image.width, bits)
        return self.loaded[row]


def pooled_taps(
    b: Ops,
    combine: Operation,
    image: Image,
    top: int,
    offsets: Sequence[tuple[int, int]],
    rows: RowLoads,
    empty: SSAValue,
) -> list[SSAValue] | None:
    """
    The window of the block of output rows `top` and `top + 1` as one vector per column
    offset (each to be combined into the block's accumulator with `combine`'s op), or
    None where this does not apply: a window that is not a grid of (row, column)
    offsets, or a column inside the image beyond the rows' loads. Lanes whose column
    lies outside the image take `empty` (the padding); rows outside it are left out, as
    the tap-by-tap sweep leaves out a tap that reads only padding.
    """
    lanes = rows.lanes
    half = lanes // 2
    row_offsets = sorted({r for r, _ in offsets})
    column_offsets = sorted({c for _, c in offsets})
    if len(set(offsets)) != len(row_offsets) * len(column_offsets):
        return None
    reach = [2 * j + c for c in column_offsets for j in range(half)]
    if any(0 <= column < image.width and not 0 <= column < lanes for column in reach):
        return None
    halves: list[SSAValue | None] = []
    for o in (top, top + 1):
        combined: SSAValue | None = None
        for row in (2 * o + r for r in row_offsets):
            if o < image.rows and 0 <= row < image.height:
                value = rows(row)
                combined = value if combined is None else b(type(combine)(combined, value))
        halves.append(combined)
    if halves == [None, None]:
        return []  # every row under the block is padding
    first, second = (h if h is not None else empty for h in halves)
    values: list[SSAValue] = []
    for c in column_offsets:
        columns = [2 * j + c for j in range(half)] * 2
        valid = [0 <= column < lanes for column in columns]
        pick = [
            (k // half) * lanes + (column if ok else 0)
            for k, (column, ok) in enumerate(zip(columns, valid, strict=True))
        ]
        picked = b(_shuffle(first, second, pick))
        if not all(valid):  # the padding into the lanes outside the image
            picked = b(
                _shuffle(picked, empty, [k if ok else lanes + k for k, ok in enumerate(valid)])
            )
        values.append(picked)
    return values


def _shuffle(first: SSAValue, second: SSAValue, pick: Sequence[int]) -> vector.ShuffleOp:
    """Lanes `pick` of `first` then `second` side by side, as many as `first` has."""
    return vector.ShuffleOp(
        first,
        second,
        DenseArrayBase.from_list(i64, list(pick)),
        result_type=first.type,  # pyright: ignore[reportArgumentType]
    )
