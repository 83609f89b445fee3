"""Shape rules of the indexing ops: gather_elements, gather_nd (onnx's rules)."""

from collections.abc import Sequence

from mlc.shapes.dims import Shape, ShapeError, format_shape, is_static, normalize_axis


def agree(a: int, b: int) -> bool:
    return not (is_static(a) and is_static(b) and a != b)


def gather_elements(data: Sequence[int], indices: Sequence[int], axis: int) -> Shape:
    """onnx GatherElements (numpy.take_along_axis): the shape of `indices`."""
    if not data:
        raise ShapeError("expects data of rank >= 1")
    if len(indices) != len(data):
        raise ShapeError(
            f"expects indices of the rank of data ({len(data)}), got {format_shape(indices)}"
        )
    axis = normalize_axis(axis, len(data))
    for d, (i, n) in enumerate(zip(indices, data, strict=True)):
        if d != axis and is_static(i) and is_static(n) and i > n:
            raise ShapeError(f"expects indices dim {d} ({i}) not to exceed the data's ({n})")
    return tuple(indices)


def gather_nd(data: Sequence[int], indices: Sequence[int], batch_dims: int) -> Shape:
    """
    onnx GatherND: `indices[:-1] + data[batch_dims + k:]`, `k` the (static) last dim of
    `indices`; the first `batch_dims` dims of both agree.
    """
    if not data or not indices:
        raise ShapeError("expects data and indices of rank >= 1")
    k = indices[-1]
    if not is_static(k):
        raise ShapeError("expects the last dim of indices to be static")
    if not 0 <= batch_dims < min(len(data), len(indices)):
        raise ShapeError(f"expects batch_dims in [0, {min(len(data), len(indices))})")
    if not 1 <= k <= len(data) - batch_dims:
        raise ShapeError(
            f"expects the last dim of indices in [1, {len(data) - batch_dims}], got {k}"
        )
    for d in range(batch_dims):
        if not agree(data[d], indices[d]):
            raise ShapeError(f"expects batch dim {d} of data and indices to agree")
    batch = [indices[d] if is_static(indices[d]) else data[d] for d in range(batch_dims)]
    return (*batch, *indices[batch_dims:-1], *data[batch_dims + k :])


def top_k(x: Sequence[int], k: int, axis: int) -> Shape:
    """onnx TopK: `x`'s shape with `axis` of size `k`, which must not exceed it."""
    if not x:
        raise ShapeError("expects an input of rank >= 1")
    axis = normalize_axis(axis, len(x))
    if k < 0:
        raise ShapeError(f"expects k >= 0, got {k}")
    if is_static(x[axis]) and k > x[axis]:
        raise ShapeError(f"expects k ({k}) not to exceed dim {axis} ({x[axis]})")
    return (*x[:axis], k, *x[axis + 1 :])


def scatter_elements(
    data: Sequence[int], indices: Sequence[int], updates: Sequence[int], axis: int
) -> Shape:
    """
    onnx ScatterElements: `data`'s shape; `updates` has the shape of `indices`, which has
    the rank of `data` and dims other than `axis` not above the data's.
    """
    gather_elements(data, indices, axis)
    if len(updates) != len(indices) or not all(map(agree, updates, indices)):
        raise ShapeError(
            f"expects updates of shape {format_shape(indices)} (the indices'), "
            f"got {format_shape(updates)}"
        )
    return tuple(data)


def scatter_nd(data: Sequence[int], indices: Sequence[int], updates: Sequence[int]) -> Shape:
    """
    onnx ScatterND: `data`'s shape; the (static) last dim of `indices`, `k`, indexes the
    first `k` dims of `data`, and `updates` has shape `indices[:-1] + data[k:]`.
    """
    if not data or not indices:
        raise ShapeError("expects data and indices of rank >= 1")
    k = indices[-1]
    if not is_static(k):
        raise ShapeError("expects the last dim of indices to be static")
    if not 1 <= k <= len(data):
        raise ShapeError(f"expects the last dim of indices in [1, {len(data)}], got {k}")
    expected = (*indices[:-1], *data[k:])
    if len(updates) != len(expected) or not all(map(agree, updates, expected)):
        raise ShapeError(
            f"expects updates of shape {format_shape(expected)}, got {format_shape(updates)}"
        )
    return tuple(data)
