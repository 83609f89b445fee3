"""
Contractions and windows: matmul, and 1-D to 3-D convolutions and pools.

A window's output size is `floor((size + pads - dilation*(kernel-1) - 1) / stride) + 1`;
pads list the begins of every spatial dim, then the ends, as ONNX does.
"""

from collections.abc import Sequence

from mlc.shapes.broadcasting import broadcast
from mlc.shapes.dims import (
    DYNAMIC,
    Shape,
    ShapeError,
    format_dim,
    format_shape,
    is_static,
    join_dims,
)


def matmul(a: Sequence[int], b: Sequence[int]) -> Shape:
    """numpy.matmul for operands of rank >= 2: batch dims broadcast, (m,k)@(k,n)."""
    if len(a) < 2 or len(b) < 2:
        raise ShapeError(f"expects operands of rank >= 2, got ranks {len(a)} and {len(b)}")
    join_dims(
        a[-1],
        b[-2],
        f"contracting dimensions differ: lhs dimension {len(a) - 1} is "
        f"{format_dim(a[-1])}, rhs dimension {len(b) - 2} is {format_dim(b[-2])}",
    )
    try:
        batch = broadcast(a[:-2], b[:-2])
    except ShapeError:
        raise ShapeError(
            f"batch dimensions ({format_shape(a[:-2])}) and "
            f"({format_shape(b[:-2])}) are not broadcast-compatible"
        ) from None
    return (*batch, a[-2], b[-1])


def window_output(
    size: int, kernel: int, stride: int, dilation: int, pad_lo: int, pad_hi: int
) -> int:
    """floor((size + pads - dilation*(kernel-1) - 1) / stride) + 1, or DYNAMIC."""
    if not is_static(size) or not is_static(kernel):
        return DYNAMIC
    out = (size + pad_lo + pad_hi - dilation * (kernel - 1) - 1) // stride + 1
    if out < 1:
        raise ShapeError(
            f"window of size {kernel} (dilation {dilation}) does not fit an input "
            f"dimension of {size} padded by ({pad_lo}, {pad_hi})"
        )
    return out


SPATIAL_NAMES = {1: "W", 2: "HW", 3: "DHW"}


def check_window_attrs(
    spatial: int, strides: Sequence[int], pads: Sequence[int], dilations: Sequence[int]
) -> None:
    """Window attributes of `spatial` dims: pads hold the begins, then the ends."""
    if len(strides) != spatial:
        raise ShapeError(f"expects {spatial} strides, got {len(strides)}")
    if len(dilations) != spatial:
        raise ShapeError(f"expects {spatial} dilations, got {len(dilations)}")
    if len(pads) != 2 * spatial:
        raise ShapeError(
            f"expects {2 * spatial} pads (the begins, then the ends of "
            f"{'x'.join(SPATIAL_NAMES[spatial])}), got {len(pads)}"
        )
    if any(s < 1 for s in strides):
        raise ShapeError(f"strides {list(strides)} must be positive")
    if any(d < 1 for d in dilations):
        raise ShapeError(f"dilations {list(dilations)} must be positive")
    if any(p < 0 for p in pads):
        raise ShapeError(f"pads {list(pads)} must be non-negative")


def conv(
    spatial: int,
    x: Sequence[int],
    w: Sequence[int],
    bias: Sequence[int] | None,
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int],
    groups: int,
) -> Shape:
    """onnx Conv over `spatial` dims (1 to 3), in NC(D)(H)W / OI(D)(H)W layout."""
    check_window_attrs(spatial, strides, pads, dilations)
    rank = spatial + 2
    if len(x) != rank or len(w) != rank:
        names = SPATIAL_NAMES[spatial]
        raise ShapeError(
            f"expects a rank-{rank} input (NC{names}) and rank-{rank} weights (OI{names}), "
            f"got ranks {len(x)} and {len(w)}"
        )
    if groups < 1:
        raise ShapeError(f"groups ({groups}) must be positive")
    n, c = x[:2]
    o, i = w[:2]
    kernel = w[2:]
    if any(is_static(k) and k < 1 for k in kernel):
        raise ShapeError(f"weight kernel ({format_shape(kernel)}) must be non-empty")
    if is_static(o) and o % groups:
        raise ShapeError(f"output channels ({o}) are not divisible by groups ({groups})")
    if is_static(c) and is_static(i) and c != i * groups:
        raise ShapeError(
            f"input channels ({c}) do not match weight input channels ({i}) times groups ({groups})"
        )
    if bias is not None:
        if len(bias) != 1:
            raise ShapeError(f"expects a rank-1 bias, got rank {len(bias)}")
        join_dims(o, bias[0], f"bias size ({bias[0]}) does not match the output channels ({o})")
    outputs = [
        window_output(size, k, strides[d], dilations[d], pads[d], pads[d + spatial])
        for d, (size, k) in enumerate(zip(x[2:], kernel, strict=True))
    ]
    return (n, o, *outputs)


def pool(
    spatial: int,
    x: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
    pads: Sequence[int],
) -> Shape:
    """onnx MaxPool / AveragePool over `spatial` dims; every window must hold an input element."""
    check_window_attrs(spatial, strides, pads, dilations)
    if len(kernel) != spatial:
        raise ShapeError(f"expects {spatial} kernel sizes, got {len(kernel)}")
    if any(k < 1 for k in kernel):
        raise ShapeError(f"kernel {list(kernel)} must be positive")
    if len(x) != spatial + 2:
        names = SPATIAL_NAMES[spatial]
        raise ShapeError(f"expects a rank-{spatial + 2} input (NC{names}), got rank {len(x)}")
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    if any(max(pads[d], pads[d + spatial]) >= extents[d] for d in range(spatial)):
        raise ShapeError(
            f"pads {list(pads)} must be smaller than the kernel {list(kernel)}"
            + (f" dilated by {list(dilations)}" if any(d > 1 for d in dilations) else "")
        )
    outputs = [
        window_output(size, k, strides[d], dilations[d], pads[d], pads[d + spatial])
        for d, (size, k) in enumerate(zip(x[2:], kernel, strict=True))
    ]
    return (*x[:2], *outputs)
