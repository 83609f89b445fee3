"""
Convolutions as matmuls for `linalg-tile`'s micro-kernel: an implicit GEMM whose B
operand is packed straight from the image.

A convolution generic as `convert-ml-to-linalg` builds it (NCHW, padding already
applied to a copy of the image), with or without groups, strides and dilations,

    loops (n, [g,] co, oh, ci, kh, kw, ow)
    x: (n, [g * Cig +] ci, oh * s + kh * d, ow * s + kw * d)
    w: ([g,] co, ci, kh, kw)                  y: (n, [g,] co, oh, ow)

is, for each batch (n [, g]), the matmul

    Y[co, (oh, ow)] += W[co, (ci, kh, kw)] @ X'[(ci, kh, kw), (oh, ow)]

W and Y, contiguous, are read through views that merge their trailing dims (M x K and
M x N); X' (im2col) is never built: the kernel packs each NR-wide panel of it from the
image, through x's map (`mlc.lowering.linalg.contraction.Image`). A 1x1 convolution is
the same plain GEMM. Where x is a zero-padded copy of the image that only the
convolution reads (`mlc.lowering.linalg.absorbed_padding`) and its rows are read at
stride 1 or 2, the panels are packed from the image itself, zeros written for the
taps outside it (`absorb_padding`, `mlc.lowering.cpu.conv_padded_packing`): the
padded copy, a fill and a copy of the whole image per call, is never made.

In general: the output map is `(prefix.., i, spatial..)` and the weight map
`(wprefix.., i, reductions..)`, all plain loops, the reduction loops in order, the
weight's prefix among the output's, and the image map does not use `i`. An epilogue
is taken along when each extra input is read like the output (through a merged view)
or through prefix loops and `i` only (a per-channel bias or scale).
"""

from collections.abc import Sequence
from dataclasses import replace

from xdsl.dialects.builtin import FloatAttr, MemRefType, NoneAttr
from xdsl.dialects.linalg.ops import GenericOp, IndexOp
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineDimExpr, AffineMap

from mlc.lowering.cpu.conv_packing import segment_width
from mlc.lowering.linalg.absorbed_padding import Padding, unpadded
from mlc.lowering.linalg.contraction import (
    Epilogue,
    Image,
    Matmul,
    epilogue_of,
    float_buffers,
    multiply_add,
)
from mlc.tiling_model import MatmulTiles

MAX_COLUMN_TAPS = 11
"""The most column taps (kernel width) a padding is absorbed for: each is unrolled."""


def _dims(map_: AffineMap) -> list[int] | None:
    if not all(isinstance(e, AffineDimExpr) for e in map_.results):
        return None
    return [e.position for e in map_.results]  # pyright: ignore[reportAttributeAccessIssue]


def _identity_layout(value: SSAValue) -> bool:
    type_ = value.type
    return isinstance(type_, MemRefType) and isinstance(type_.layout, NoneAttr)


def _gemm_map(positions: Sequence[int], loops: int) -> AffineMap:
    return AffineMap(loops, 0, tuple(AffineDimExpr(p) for p in positions))


def _layout(op: GenericOp) -> tuple[list[int], int, list[int], list[int]] | None:
    """The loops of `op` as (prefix, i, spatial, reductions) of a GEMM, or None."""
    maps = [m.data for m in op.indexing_maps.data]
    parallel = [it.data.value == "parallel" for it in op.iterator_types.data]
    reductions = [d for d, p in enumerate(parallel) if not p]
    w_dims, y_dims = _dims(maps[1]), _dims(maps[-1])
    if not reductions or w_dims is None or y_dims is None or len(w_dims) <= len(reductions):
        return None
    if w_dims[-len(reductions) :] != reductions:
        return None
    i = w_dims[-len(reductions) - 1]
    if i not in y_dims or i in maps[0].used_dims():
        return None
    prefix, spatial = y_dims[: y_dims.index(i)], y_dims[y_dims.index(i) + 1 :]
    if not spatial or not set(w_dims[: -len(reductions) - 1]) <= set(prefix):
        return None
    if set(spatial) & set(w_dims):
        return None
    if sorted([*prefix, i, *spatial, *reductions]) != list(range(len(parallel))):
        return None
    return prefix, i, spatial, reductions


def conv_of(op: GenericOp) -> Matmul | None:
    """The batched matmul `op` is as an implicit GEMM (module docstring), or None."""
    if op.res or len(op.inputs) < 2 or len(op.outputs) != 1 or (layout := _layout(op)) is None:
        return None
    prefix, i, spatial, reductions = layout
    maps = [m.data for m in op.indexing_maps.data]
    x, w, y = op.inputs[0], op.inputs[1], op.outputs[0]
    if not float_buffers(op, (x, w, y)) or not (_identity_layout(w) and _identity_layout(y)):
        return None
    if (found := multiply_add(op.body.block)) is None:
        return None
    w_dims, y_dims = _dims(maps[1]), _dims(maps[-1])
    assert w_dims is not None and y_dims is not None
    w_prefix = w_dims[: -len(reductions) - 1]
    w_shape = w.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue]
    y_shape = y.type.get_shape()  # pyright: ignore[reportAttributeAccessIssue]
    k_sizes = w_shape[-len(reductions) :]
    static = [s for s in k_sizes if s >= 0]
    k = None if len(static) < len(k_sizes) else _product(static)
    m = w_shape[-len(reductions) - 1]
    n_sizes = [y_shape[y_dims.index(s)] for s in spatial]
    n = None if any(s < 0 for s in n_sizes) else _product(n_sizes)
    batch = len(prefix)
    loops = batch + 3  # the matmul's (batch.., i, k, j)
    a_map = _gemm_map([*(prefix.index(d) for d in w_prefix), batch, batch + 1], loops)
    c_map = _gemm_map([*range(batch), batch, batch + 2], loops)
    b_map = _gemm_map([batch + 1, batch + 2], loops)
    rest, total = found
    epilogue = None
    if len(rest) > 1 or len(op.inputs) > 2:
        if k is None:
            return None
        sizes = dict(zip(reductions, k_sizes, strict=True))
        epilogue = epilogue_of(op, rest, total, sizes)
        if epilogue is None:
            return None
        epilogue = _translated(epilogue, (maps[-1], y), (prefix, i), c_map)
        if epilogue is None:
            return None
    image = Image(x, maps[0], tuple(prefix), tuple(reductions), tuple(spatial), w, y)
    return Matmul(
        w, x, y, (a_map, b_map, c_map), batch, epilogue, (m if m >= 0 else None, n, k), image
    )


def absorb_padding(op: GenericOp, mm: Matmul, tiles: MatmulTiles) -> tuple[Matmul, Padding] | None:
    """
    `mm` (`conv_of(op)`) packing its panels from the image before its zero padding,
    and that padding (its ops to erase once `op` is lowered), or None where it stays:
    rows narrower than a vector that divide it keep the padded copy, whose whole rows
    the packing gathers (`conv_packing.segment_width`).
    """
    image = mm.image
    if image is None or image.row_stride() not in (1, 2) or segment_width(image, tiles):
        return None
    padding = unpadded(op, image.source)
    if padding is None or not isinstance(padding.value, FloatAttr) or padding.value.value.data:
        return None
    source, padded = padding.source.type, image.source.type
    if not isinstance(source, MemRefType) or not _identity_layout(padding.source):
        return None
    pads = tuple(
        (pad, bool(pad) or inner < 0 or inner != outer)
        for pad, inner, outer in zip(
            padding.offsets,
            source.get_shape(),
            padded.get_shape(),
            strict=True,  # pyright: ignore[reportAttributeAccessIssue]
        )
    )
    if not _separate_taps(image, pads):
        return None
    unpadded_image = replace(image, source=padding.source, pads=pads)
    return replace(mm, b=padding.source, image=unpadded_image), padding


def _separate_taps(image: Image, pads: Sequence[tuple[int, bool]]) -> bool:
    """Whether the reduction loops the image's last dim reads (its column taps, unrolled
    by the packing) are few, of static sizes, and read by no other padded dim."""
    *outer, last = image.map.results
    columns = [p for p, r in enumerate(image.reductions) if r in last.used_dims()]
    shape = image.weight.type.get_shape()[-len(image.reductions) :]  # pyright: ignore[reportAttributeAccessIssue]
    taps = _product([shape[p] for p in columns])
    if any(shape[p] < 0 for p in columns) or not 0 < taps <= MAX_COLUMN_TAPS:
        return False
    read = {r for e, (_, check) in zip(outer, pads, strict=False) if check for r in e.used_dims()}
    return not read & {image.reductions[p] for p in columns}


def _translated(
    epilogue: Epilogue,
    output: tuple[AffineMap, SSAValue],
    loops: tuple[Sequence[int], int],
    c_map: AffineMap,
) -> Epilogue | None:
    """`epilogue` over the matmul's loops, or None where it needs a spatial loop."""
    if any(isinstance(o, IndexOp) for o in epilogue.body.walk()):
        return None
    y_map, y = output
    prefix, i = loops
    renamed = {d: q for q, d in enumerate(prefix)} | {i: len(prefix)}
    inputs: dict[SSAValue, tuple[SSAValue, AffineMap]] = {}
    merged: dict[SSAValue, int] = {}
    for arg, (source, map_) in epilogue.inputs.items():
        if map_ == y_map and source.type == y.type and _identity_layout(source):
            inputs[arg] = (source, c_map)
            merged[arg] = len(prefix) + 1
        elif map_.used_dims() <= set(renamed):  # constants or prefix loops and i
            replacements = [AffineDimExpr(renamed.get(d, 0)) for d in range(map_.num_dims)]
            gemm = map_.replace_dims_and_symbols(replacements, [], c_map.num_dims, 0)
            inputs[arg] = (source, gemm)
        else:
            return None
    return Epilogue(epilogue.body, epilogue.accumulated, inputs, {}, merged, epilogue.loop_reads)


def _product(values: Sequence[int]) -> int:
    result = 1
    for v in values:
        result *= v
    return result
