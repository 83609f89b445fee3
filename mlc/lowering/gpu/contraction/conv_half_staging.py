"""
How the tiled contraction kernel stages a 16-bit (f16, bf16) convolution for the tensor
cores (`mlc.lowering.gpu.contraction.mma_half`): an implicit GEMM
(`mlc.lowering.gpu.contraction.conv_match`) whose operands reach `half_staging`'s 16-bit
tiles as `conv_staging` stages the f32 ones.

- The weight `w[f, c, kh, kw]` through its collapsed `[f, k]` view: a matmul's A,
  contiguous along K; 16-byte `cp.async` copies of 8 elements where its rows
  (`c * kh * kw` elements) are a multiple of 8 long and the buffer is aligned.
- The image gathered into X'[k, p] (`conv_staging.ImageStaging.load`): each thread
  reads its run of pixels of one k element by element, zero outside the image (the
  padding), and stores them into the tile through registers. The im2col matrix is
  never materialised; fragments are then loaded from the tile by `ldmatrix.trans`.
- A 1x1 convolution of stride 1 without padding is a plain matmul on the NCHW image
  viewed as `x[n][c, h * w]`: a run of 8 pixels of one channel that starts at a
  multiple of 8 is 16 contiguous bytes when `h * w` is a multiple of 8 (checked at run
  time with the image's alignment), so the image takes `cp.async` copies too.

Both operands take the `cp.async` pipeline or neither (`half_stagings`' rule): otherwise
both go through registers into two alternating tiles.
"""

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import MemRefType, NoneAttr
from xdsl.ir import Attribute, SSAValue

from mlc.lowering.gpu.contraction import async_copy
from mlc.lowering.gpu.contraction.conv_staging import ImageStaging, WeightStaging
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.half_staging import (
    CHUNK,
    HalfStaging,
    element_address,
    shared_address,
)
from mlc.lowering.gpu.contraction.match import Contraction


def pointwise(c: Contraction) -> bool:
    """Whether a convolution's image is a matmul's B: 1x1, stride 1, no padding, row-major."""
    conv = c.conv
    if conv is None:
        return False
    sizes = c.op.get_static_loop_ranges()
    source = conv.source.type
    return (
        sizes[conv.kh] == sizes[conv.kw] == 1
        and conv.strides == (1, 1)
        and conv.padding == (0, 0)
        and isinstance(source, MemRefType)
        and isinstance(source.layout, NoneAttr)
    )


def conv_half_stagings(
    bounds: list[SSAValue],
    c: Contraction,
    rows: int,
    cols: int,
    depth: int,
    threads: int,
    buffers: int,
) -> tuple[HalfStaging, HalfStaging]:
    """The weight's and the image's 16-bit stagings (module docstring); `bounds` are the
    kernel's loop sizes, the merged ones included."""
    a = WeightHalfStaging(c, c.a, c.rows, rows, depth, threads, True, True, 1, buffers)
    b = ImageHalfStaging(
        c, c.b, c.cols, cols, depth, threads, False, False, 1, buffers, bounds=bounds
    )
    if a.copies % CHUNK == 0 and b.copies % CHUNK == 0 and b.pointwise:
        a.width = b.width = CHUNK
    return a, b


@dataclass
class WeightHalfStaging(WeightStaging, HalfStaging):
    """The weight's `[f, k]` view in 16-bit tiles: `WeightStaging`'s view and indices,
    `HalfStaging`'s tiles, copies and stores."""

    @property
    def element(self) -> Attribute:
        """The weight's element type (the tile is allocated before the view is made)."""
        weight = self.c.op.operands[self.operand].type
        assert isinstance(weight, MemRefType)
        return weight.element_type


@dataclass
class ImageHalfStaging(ImageStaging, HalfStaging):
    """The image gathered into 16-bit tiles (module docstring)."""

    @property
    def pointwise(self) -> bool:
        return pointwise(self.c)

    def _plane(self, e: Emitter) -> SSAValue:
        """Pixels of one channel of one image: h * w."""
        return e.mul(self._size(e, 2), self._size(e, 3))

    def vectorisable(self, emit: Emitter) -> SSAValue | None:
        """Whether `cp.async` may copy runs of 8 pixels: an aligned image, h * w % 8 == 0."""
        if self.width == 1:
            return None
        address = emit(memref.ExtractAlignedPointerAsIndexOp.get(self.conv.source))
        zero = emit.index(0)
        aligned = emit(arith.CmpiOp(emit.rem(address, async_copy.COPY_BYTES), zero, "eq"))
        whole = emit(arith.CmpiOp(emit.rem(self._plane(emit), CHUNK), zero, "eq"))
        return emit(arith.AndIOp(aligned, whole))

    def copy_async(
        self,
        e: Emitter,
        buffer: SSAValue,
        run: tuple[SSAValue, SSAValue],
        first: SSAValue,
        base: SSAValue,
        sizes: tuple[SSAValue, SSAValue],
        ivs: Callable[[SSAValue, SSAValue], list[SSAValue]],
    ) -> None:
        """
        A thread's run of pixels of channel k = first + its k into tile `buffer`, 8 at a
        copy from `x[n, k, 0, hw]` (the run starts at a multiple of 8 and stays in one
        image); past K the copy is zero-filled, past the pixels it is clamped.
        """
        assert self.tile is not None and self.width == CHUNK
        k_size, pixels = sizes
        k_run, along_run = run
        k = e.add(first, k_run)
        channel = e(arith.MinUIOp(k, e.sub(k_size, 1)))
        read = async_copy.bytes_if(e, e.less(k, k_size))
        plane, zero = self._plane(e), e.index(0)
        last = e.sub(pixels, CHUNK)  # pixels is a multiple of 8 here, and at least 8
        for start in range(0, self.copies, CHUNK):
            p = e(arith.MinUIOp(e.add(e.add(base, along_run), start), last))
            image, pixel = e.div(p, plane), e.rem(p, plane)
            source = element_address(e, self.conv.source, [image, channel, zero, pixel])
            tile_k, tile_along = self._place(e, k_run, along_run, start)
            shared = shared_address(e, self.tile, self.at(buffer, tile_k, tile_along))
            async_copy.copy_to(e, shared, source, read)
