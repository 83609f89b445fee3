"""
Which convolution generics the GPU's tiled contraction kernel takes, as implicit GEMMs.

A 2-D convolution as `convert-ml-to-linalg` builds it (NCHW, no groups), after
`bufferize`:

    loops (n, f, oh, c, kh, kw, ow)
    x: (n, c, oh * sh + kh * dh, ow * sw + kw * dw)
    w: (f, c, kh, kw)                   y: (n, f, oh, ow)

is the matmul `Y[f, p] += W[f, k] * X'[k, p]` with rows the filters, columns the
output pixels `p = (n * OH + oh) * OW + ow` and `k = (c * KH + kh) * KW + kw`: W is
contiguous along k (read through a collapsed `[f, k]` view), X' is gathered from the
image as the slices are staged (`mlc.lowering.gpu.contraction.conv_staging`), and the output
`y[n, f, oh, ow]` is contiguous along p within an image, so both the image reads of a
stride-1 convolution and the stores coalesce.

The kernel (`mlc.lowering.gpu.contraction.tiled_kernel`) sees two extra, merged loop dims, p and
k, after the generic's own (`Contraction.rows` is f, `cols` and `k` the merged ones);
`ConvGeometry.loop_indices` decodes them into the generic's loops, so epilogues and
stores read through the generic's maps as they do for a matmul.

Padding is a predicate, not a copy: when the image operand is the zero-filled copy
the linalg stage pads into, the kernel reads the unpadded image, zero outside it, and
the copy goes; the bias of `ml.conv2d` (broadcast into the output just before) becomes
the accumulators' start. Both are found by the rules the CPU's depthwise kernel uses
(`mlc.lowering.linalg.absorbed_padding`); the kernel takes a zero padding of the two
spatial dims.

f32 convolutions multiply with FMAs (or tf32 `mma.sync`); f16 and bf16 ones, all three
operands of one type, on the 16-bit tensor-core path (`Contraction.half`: f32
accumulators, the result rounded at the store, operands staged by
`mlc.lowering.gpu.contraction.conv_half_staging`).

Declined, each with a `--remarks` line saying why: groups (depthwise and grouped
convolutions keep the loop mapping), other ranks, other element types, mixed types, a
weight that is not contiguous, maps of another form, and small outputs (all sizes
static, fewer than `SMALL_OUTPUT`: the loop mapping gives each output a warp).
"""

from xdsl.dialects.builtin import FloatAttr, MemRefType, NoneAttr, f32
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Operation, SSAValue
from xdsl.ir.affine import (
    AffineBinaryOpExpr,
    AffineBinaryOpKind,
    AffineConstantExpr,
    AffineDimExpr,
    AffineExpr,
)

from mlc.diagnostics import op_remark
from mlc.lowering.gpu.contraction.accumulation import accumulation, fused_epilogue, reads_loop
from mlc.lowering.gpu.contraction.conv_geometry import ConvGeometry
from mlc.lowering.gpu.contraction.match import HALF_TYPES, Contraction
from mlc.lowering.gpu.fills import fill_before
from mlc.lowering.gpu.loop_analysis import (
    SMALL_OUTPUT,
    outputs_independent_of,
    split_iterators,
    static_size,
)
from mlc.lowering.linalg.absorbed_padding import bias_before, unpadded


def linear_terms(expr: AffineExpr) -> dict[int, int] | None:
    """`expr` as {dim: coefficient} if it is a sum of dims times positive constants."""
    if isinstance(expr, AffineDimExpr):
        return {expr.position: 1}
    if not isinstance(expr, AffineBinaryOpExpr):
        return None
    if expr.kind == AffineBinaryOpKind.Add:
        lhs, rhs = linear_terms(expr.lhs), linear_terms(expr.rhs)
        if lhs is None or rhs is None or lhs.keys() & rhs.keys():
            return None
        return lhs | rhs
    if expr.kind == AffineBinaryOpKind.Mul:
        for dim, scale in ((expr.lhs, expr.rhs), (expr.rhs, expr.lhs)):
            if isinstance(dim, AffineDimExpr) and isinstance(scale, AffineConstantExpr):
                return {dim.position: scale.value} if scale.value > 0 else None
    return None


def _plain(expr: AffineExpr) -> int | None:
    return expr.position if isinstance(expr, AffineDimExpr) else None


def _window(expr: AffineExpr, outer: int, inner: int) -> tuple[int, int] | None:
    """(stride, dilation) of an image index `outer * stride + inner * dilation`."""
    terms = linear_terms(expr)
    if terms is None or terms.keys() != {outer, inner}:
        return None
    return terms[outer], terms[inner]


def _weight_contiguous(weight: SSAValue) -> bool:
    type_ = weight.type
    return isinstance(type_, MemRefType) and isinstance(type_.layout, NoneAttr)


def decline(op: GenericOp, reason: str) -> None:
    op_remark(op, f"convolution left to the loop mapping: {reason}")


def _geometry(op: GenericOp, x: int, y: int) -> tuple[int, int, ConvGeometry] | str:
    """(weight, image, geometry) of a convolution generic, or why it is not one."""
    parallel, reduction = split_iterators(op)
    maps = [m.data for m in op.get_indexing_maps().data]
    out_dims = [_plain(e) for e in maps[-1].results]
    if len(parallel) != 4 or len(reduction) != 3 or len(out_dims) != 4 or None in out_dims:
        return (
            f"not a 2-D convolution without groups (4 parallel and 3 reduction loops, "
            f"got {len(parallel)} and {len(reduction)})"
        )
    n, f, oh, ow = out_dims
    for weight, image in ((x, y), (y, x)):
        w_dims = [_plain(e) for e in maps[weight].results]
        if len(w_dims) == 4 and w_dims[0] == f and set(w_dims[1:]) == set(reduction):
            break
    else:
        return "no input is read as a weight (f, c, kh, kw)"
    _, c, kh, kw = w_dims
    image_map = maps[image].results
    if len(image_map) != 4 or [_plain(e) for e in image_map[:2]] != [n, c]:
        return "the image is not read as (n, c, row, column)"
    rows, cols = _window(image_map[2], oh, kh), _window(image_map[3], ow, kw)
    if rows is None or cols is None:
        return "the image's rows and columns are not strided windows"
    if not _weight_contiguous(op.operands[weight]):
        return "the weight is not a contiguous buffer"
    source, padding, padding_ops = _unpadded(op, op.operands[image])
    strides, dilations = (rows[0], cols[0]), (rows[1], cols[1])
    geometry = ConvGeometry(
        n,
        f,
        oh,
        ow,
        c,
        kh,
        kw,
        strides,
        dilations,
        source,
        padding,
        padding_ops,  # pyright: ignore[reportArgumentType]
    )
    return weight, image, geometry


def _epilogue_problem(op: GenericOp, x: int, y: int, accumulated: SSAValue) -> str | None:
    """Why the generic's epilogue cannot run after the kernel's K loop, or None."""
    _, reduction = split_iterators(op)
    others = [i for i in range(len(op.inputs)) if i not in (x, y)]
    if any(reads_loop(op, i, r) for i in others for r in reduction):
        return "an epilogue input is read along the reduction"
    if fused_epilogue(op, accumulated) is False:
        return "an epilogue of an unknown form"
    return None


def match_conv(op: GenericOp) -> Contraction | None:
    """
    The implicit GEMM of a convolution generic (module docstring), or None; a generic
    that multiplies and accumulates over several reduction dims but is declined gets a
    remark saying why.
    """
    if op.res or len(op.outputs) != 1:
        return None
    parallel, reduction = split_iterators(op)
    if len(reduction) < 2 or (found := accumulation(op)) is None:
        return None  # not a convolution (a matmul, a pooling, an elementwise op)
    if not all(isinstance(v.type, MemRefType) for v in op.operands):
        return None
    if not outputs_independent_of(op, reduction):
        return None
    x, y, accumulate, accumulated = found
    output = op.outputs[0].type
    assert isinstance(output, MemRefType)
    element = output.element_type
    if element != f32 and not isinstance(element, HALF_TYPES):
        return decline(op, f"element type {element} (the kernel takes f32, f16 and bf16)")
    inputs = [t.element_type for i in (x, y) if isinstance(t := op.operands[i].type, MemRefType)]
    if inputs != [element] * 2:
        return decline(op, f"inputs of other types than its {element} result")
    if isinstance(found := _geometry(op, x, y), str):
        return decline(op, found)
    if (problem := _epilogue_problem(op, x, y, accumulated)) is not None:
        return decline(op, problem)
    if (outputs := static_size(op, parallel)) < SMALL_OUTPUT:
        return decline(op, f"{outputs} outputs (fewer than {SMALL_OUTPUT}: a warp each)")
    weight, image, geometry = found
    fill = fill_before(op)
    geometry.bias = bias_before(op) if fill is None else None
    epilogue = fused_epilogue(op, accumulated)
    assert not isinstance(epilogue, bool)
    loops = len(op.iterator_types)
    return Contraction(
        op, weight, image, [], geometry.f, loops, loops + 1, accumulate, epilogue,
        fill, geometry,
    )  # fmt: skip


def _unpadded(op: GenericOp, image: SSAValue) -> tuple[SSAValue, tuple[int, int], list[Operation]]:
    """The image before its zero padding, the top and left pads, and the ops that pad
    (to go with the convolution); `image` itself, no pads and no ops otherwise."""
    padding = unpadded(op, image)
    if padding is None or not isinstance(padding.value, FloatAttr) or padding.value.value.data:
        return image, (0, 0), []
    batch, channels, top, left = padding.offsets
    if batch or channels:
        return image, (0, 0), []
    return padding.source, (top, left), padding.ops
