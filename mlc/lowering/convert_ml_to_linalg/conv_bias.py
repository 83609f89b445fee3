"""
Where a convolution's bias goes: added after it, or its output's start.

Started from the bias, a convolution first writes its whole output with a broadcast,
a pass over it that `linalg-tile` keeps (it drops only a zero fill), and its kernel
then adds into C instead of storing. So a float convolution starts from zeros and the
bias is an elementwise add after it, which `linalg-fuse-elementwise` fuses into the
convolution's epilogue (read per output channel at the last reduction step). Grouped
convolutions keep the bias as their start: their output is computed as (N, G, O/G,
...) and collapsed after, where the add would not fuse; depthwise kernels absorb that
start (`mlc.lowering.linalg.absorbed_padding`). So do 1x1 convolutions: as plain
GEMMs with a fused activation on small images (EfficientNet's SiLU, MobileNet's Clip
at batch 1), the per-channel read in their epilogue cost more than the broadcast
(`mlc-run --profile`: EfficientNet's blocks.5 1x1 conv 2.3 -> 8.0 us).
"""

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap
from xdsl.pattern_rewriter import PatternRewriter

from mlc.dialects import ml
from mlc.dialects.ml.base import is_float
from mlc.lowering.convert_ml_to_linalg.common import (
    build_generic,
    element_type,
    iterator_types,
    tensor_type,
)
from mlc.lowering.convert_ml_to_linalg.movement import empty_of
from mlc.lowering.support.index_calc import Index


def bias_after(op: ml.ConvOp) -> bool:
    """Whether `op` (ungrouped) has a bias to add after it rather than start from: a
    float convolution with a window wider than one pixel (module docstring)."""
    window = tensor_type(op.w).get_shape()[2:]
    if op.bias is None or not is_float(element_type(op.result)):
        return False
    return any(k != 1 for k in window)


def bias_added(
    rewriter: PatternRewriter, op: ml.ConvOp, conv: SSAValue, sizes: Sequence[Index]
) -> SSAValue:
    """`conv + bias[channel]`, an elementwise generic over `op`'s output (`sizes`)."""
    assert op.bias is not None
    rank = len(sizes)
    empty = empty_of(rewriter, op.result.type, sizes)
    maps = [AffineMap(rank, 0, (AffineExpr.dimension(1),)), *[AffineMap.identity(rank)] * 2]
    (added,) = build_generic(
        rewriter,
        [op.bias, conv],
        [empty],
        maps,
        iterator_types(rank),
        lambda a: arith.AddfOp(a[1], a[0]).result,
    )
    return added
