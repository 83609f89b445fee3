"""
How the tiled contraction kernel stages a convolution's operands (an implicit GEMM,
`mlc.lowering.gpu.contraction.conv_match`): the weight as an ordinary operand, the image gathered.

- The weight `w[f, c, kh, kw]` is read through a collapsed `[f, k]` view made in the
  kernel (`memref.collapse_shape`: same data), so it is staged as any operand
  contiguous along K: runs along k, 16-byte loads when aligned.
- The image slice X'[k, p] is gathered: each thread copies a run of consecutive
  output pixels p of one k, as the columns of a matmul's B[k, j]. It decodes its k
  into (c, kh, kw) once per run and each p into (n, oh, ow), reads
  `x[n, c, oh * sh + kh * dh - top, ow * sw + kw * dw - left]` of the unpadded
  image, and takes zero where that lies outside it (one unsigned compare a dim: a
  negative index wraps above the size). For a stride-1 convolution a warp's reads are
  consecutive along an image row. Pixels and k past the end are clamped for the read;
  k past the end is zeroed when stored, as for any operand.
"""

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import FloatAttr, MemRefType
from xdsl.ir import SSAValue

from mlc.lowering.gpu.contraction.conv_geometry import ConvGeometry
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.match import Contraction
from mlc.lowering.gpu.contraction.tile_staging import Staging, run_width
from mlc.lowering.support.loop_builder import collapse_trailing


def conv_staging(
    bounds: list[SSAValue],
    c: Contraction,
    operand: int,
    extent: int,
    depth: int,
    threads: int,
    keep_layout: bool,
) -> Staging:
    """
    `Staging.of` for a convolution: the weight (`c.a`) or the gathered image (`c.b`);
    `bounds` are the kernel's loop sizes, the merged ones included.
    """
    extent_dim = c.rows if operand == c.a else c.cols
    if operand == c.a:
        width = run_width(extent * depth // threads)
        return WeightStaging(
            c, operand, extent_dim, extent, depth, threads, True, keep_layout, width
        )
    return ImageStaging(
        c, operand, extent_dim, extent, depth, threads, False, False, 1, bounds=bounds
    )


@dataclass
class WeightStaging(Staging):
    """The weight, staged through its `[f, k]` view (module docstring)."""

    matrix: SSAValue | None = None

    def allocate(self, emit: Emitter) -> None:
        super().allocate(emit)
        self.matrix = collapse_trailing(emit, self.c.op.operands[self.operand], 1)  # pyright: ignore[reportArgumentType]

    @property
    def buffer(self) -> SSAValue:
        assert self.matrix is not None
        return self.matrix

    def indices(self, e: Emitter, along: SSAValue, k: SSAValue, ivs) -> list[SSAValue]:
        return [along, k]


@dataclass
class ImageStaging(Staging):
    """The image, gathered into X'[k, p] slices (module docstring)."""

    bounds: list[SSAValue] | None = None

    @property
    def conv(self) -> ConvGeometry:
        assert self.c.conv is not None
        return self.c.conv

    def load(
        self,
        e: Emitter,
        run: tuple[SSAValue, SSAValue],
        first: SSAValue,
        base: SSAValue,
        sizes: tuple[SSAValue, SSAValue],
        ivs: Callable[[SSAValue, SSAValue], list[SSAValue]],
        vectors: bool,
    ) -> list[SSAValue]:
        """A thread's run of pixels at k = first + its k, zero outside the image."""
        conv, bounds = self.conv, self.bounds
        assert bounds is not None
        k_size, pixels = sizes
        k_run, along_run = run
        k = e(arith.MinUIOp(e.add(first, k_run), e.sub(k_size, 1)))
        channel, kh, kw = conv.tap(e, bounds, k)
        (sh, sw), (dh, dw), (top, left) = conv.strides, conv.dilations, conv.padding
        row_tap = e.mul(kh, dh) if top == 0 else e(arith.SubiOp(e.mul(kh, dh), e.index(top)))
        col_tap = e.mul(kw, dw) if left == 0 else e(arith.SubiOp(e.mul(kw, dw), e.index(left)))
        height, width = (self._size(e, d) for d in (2, 3))
        padded = (top, left) != (0, 0)
        first_pixel, last_pixel = e.add(base, along_run), e.sub(pixels, 1)
        zero_index = e.index(0)
        source = conv.source.type
        assert isinstance(source, MemRefType)
        zero = e(arith.ConstantOp(FloatAttr(0.0, source.element_type)))  # pyright: ignore[reportArgumentType]
        values = []
        for j in range(self.copies):
            p = e(arith.MinUIOp(e.add(first_pixel, j), last_pixel))
            n, oh, ow = conv.pixel(e, bounds, p)
            row, col = e.add(e.mul(oh, sh), row_tap), e.add(e.mul(ow, sw), col_tap)
            if not padded:
                values.append(e(memref.LoadOp.get(conv.source, [n, channel, row, col])))
                continue
            inside = e(arith.AndIOp(e.less(row, height), e.less(col, width)))
            row = e(arith.SelectOp(inside, row, zero_index))
            col = e(arith.SelectOp(inside, col, zero_index))
            value = e(memref.LoadOp.get(conv.source, [n, channel, row, col]))
            values.append(e(arith.SelectOp(inside, value, zero)))
        return values

    def _size(self, e: Emitter, dim: int) -> SSAValue:
        """The unpadded image's size along `dim`."""
        source = self.conv.source
        assert isinstance(source.type, MemRefType)
        size = source.type.get_shape()[dim]
        return e.index(size) if size >= 0 else e(memref.DimOp(source, e.index(dim)))
