"""
A convolution as the GPU's tiled contraction kernel sees it, an implicit GEMM
(`mlc.lowering.gpu.contraction.conv_match`): the generic's loops, strides, dilations and
padding, and how the kernel's merged loops (p, the output pixels; k, the taps) decode
back into the generic's loop indices.
"""

from dataclasses import dataclass, field

from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation, SSAValue

from mlc.lowering.gpu.contraction.emitter import Emitter


@dataclass
class ConvGeometry:
    """A convolution's loops, strides, dilations and padding, as the kernel needs them."""

    n: int
    f: int
    oh: int
    ow: int
    c: int
    kh: int
    kw: int
    strides: tuple[int, int]
    dilations: tuple[int, int]
    source: SSAValue  # the unpadded image
    padding: tuple[int, int]  # top, left
    padding_ops: list[Operation] = field(default_factory=list[Operation])  # go with the op
    bias: GenericOp | None = None  # broadcasts a bias into the output just before: goes

    def merged_bounds(self, e: Emitter, bounds: list[SSAValue]) -> list[SSAValue]:
        """The sizes of the merged loops p (output pixels) and k (c, kh, kw)."""
        pixels = e.mul(e.mul(bounds[self.n], bounds[self.oh]), bounds[self.ow])
        depth = e.mul(e.mul(bounds[self.c], bounds[self.kh]), bounds[self.kw])
        return [pixels, depth]

    def pixel(
        self, e: Emitter, bounds: list[SSAValue], p: SSAValue
    ) -> tuple[SSAValue, SSAValue, SSAValue]:
        """(n, oh, ow) of output pixel `p`."""
        ow_size = bounds[self.ow]
        rows = e.div(p, ow_size)
        return e.div(rows, bounds[self.oh]), e.rem(rows, bounds[self.oh]), e.rem(p, ow_size)

    def tap(
        self, e: Emitter, bounds: list[SSAValue], k: SSAValue
    ) -> tuple[SSAValue, SSAValue, SSAValue]:
        """(c, kh, kw) of reduction index `k`."""
        kw_size = bounds[self.kw]
        rows = e.div(k, kw_size)
        return e.div(rows, bounds[self.kh]), e.rem(rows, bounds[self.kh]), e.rem(k, kw_size)

    def loop_indices(
        self,
        e: Emitter,
        bounds: list[SSAValue],
        filters: SSAValue,
        p: SSAValue,
        k: SSAValue,
        merged: tuple[int, int],
    ) -> list[SSAValue]:
        """The generic's loop indices (and the merged ones, at `merged`) of (f, p, k)."""
        values = [k] * len(bounds)
        values[self.f] = filters
        values[self.n], values[self.oh], values[self.ow] = self.pixel(e, bounds, p)
        values[self.c], values[self.kh], values[self.kw] = self.tap(e, bounds, k)
        values[merged[0]], values[merged[1]] = p, k
        return values
