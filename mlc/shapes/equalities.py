"""
Dim equalities: which operand dims an op's shape rule makes equal to which result dims.

The result-shape rules of the other modules say what size a result dim has; these say
which dims are *the same* dim, so `shape-inference` and the trace analyses can carry a
size (or a dim name) across ops with `DimUnifier`.
"""

from collections.abc import Sequence

from mlc.shapes.dims import is_static, normalize_axes, normalize_axis

# Dims an op's shape rule makes equal, as pairs of `(position, axis)`: position `i` is
# operand `i`, `RESULT` the op's result. Where the lowering broadcasts a dynamic dim that
# is 1 at run time (elementwise ops, broadcast_to, matmul batch dims: `runtime_broadcast`),
# a dynamic dim equals its result dim only when nothing else can set that size; elsewhere
# (layer_norm parameters, the traced-program analyses) a dynamic dim is taken to equal
# its partner, and only a static 1 escapes the equality.

RESULT = -1
DimRef = tuple[int, int]
Equality = tuple[DimRef, DimRef]


def identity_equalities(rank: int, operand: int = 0) -> list[Equality]:
    """The result has the operand's shape (elementwise unary ops, casts, softmax)."""
    return [((operand, d), (RESULT, d)) for d in range(rank)]


def broadcast_equalities(
    operands: Sequence[Sequence[int]],
    rank: int,
    positions: Sequence[int] | None = None,
    runtime_broadcast: bool = False,
) -> list[Equality]:
    """
    Each operand dim that is not a static 1 equals the result dim it aligns with.

    With `runtime_broadcast`, a dynamic dim may still be 1 at run time, so it equals
    the result dim only if every other operand aligned with it is a static 1 or absent.
    """
    positions = range(len(operands)) if positions is None else positions
    equalities: list[Equality] = []
    for i, (p, shape) in enumerate(zip(positions, operands, strict=True)):
        for d, dim in enumerate(shape):
            r = d + rank - len(shape)
            if dim == 1 or (
                runtime_broadcast and not is_static(dim) and _partnered(operands, i, r, rank)
            ):
                continue
            equalities.append(((p, d), (RESULT, r)))
    return equalities


def _partnered(operands: Sequence[Sequence[int]], i: int, result_dim: int, rank: int) -> bool:
    """Whether an operand other than `i` aligns with `result_dim` and is not a static 1."""
    for j, shape in enumerate(operands):
        axis = result_dim - rank + len(shape)
        if j != i and axis >= 0 and shape[axis] != 1:
            return True
    return False


def broadcast_to_equalities(
    shape: Sequence[int], target: Sequence[int], has_shape_operand: bool
) -> list[Equality]:
    """
    The operand dims of `broadcast_to` that equal their result dim at run time.

    A static dim other than 1 must be the target's; a dynamic one only where the
    result dim follows it (dynamic, with no shape operand), since it may be 1.
    """
    offset = len(target) - len(shape)
    return [
        ((0, d), (RESULT, d + offset))
        for d, dim in enumerate(shape)
        if dim != 1
        and (is_static(dim) or (not has_shape_operand and not is_static(target[d + offset])))
    ]


def matmul_equalities(
    a: Sequence[int], b: Sequence[int], runtime_broadcast: bool = False
) -> list[Equality]:
    """Inner dims agree; rows come from `a`, columns from `b`; batch dims broadcast."""
    rank = max(len(a), len(b))
    batch = broadcast_equalities([a[:-2], b[:-2]], rank - 2, runtime_broadcast=runtime_broadcast)
    return [
        *batch,
        ((0, len(a) - 1), (1, len(b) - 2)),
        ((0, len(a) - 2), (RESULT, rank - 2)),
        ((1, len(b) - 1), (RESULT, rank - 1)),
    ]


def transpose_equalities(perm: Sequence[int]) -> list[Equality]:
    return [((0, p), (RESULT, i)) for i, p in enumerate(perm)]


def concat_equalities(count: int, rank: int, axis: int) -> list[Equality]:
    """Every operand matches the result off the concatenation axis."""
    axis = normalize_axis(axis, rank)
    return [((i, d), (RESULT, d)) for i in range(count) for d in range(rank) if d != axis]


def gather_equalities(data_rank: int, indices_rank: int, axis: int) -> list[Equality]:
    """data[..., indices, ...]: data dims around `axis`, then the indices' dims."""
    axis = normalize_axis(axis, data_rank)
    before = [((0, d), (RESULT, d)) for d in range(axis)]
    indices = [((1, d), (RESULT, axis + d)) for d in range(indices_rank)]
    after = [((0, d), (RESULT, d - 1 + indices_rank)) for d in range(axis + 1, data_rank)]
    return before + indices + after


def reduce_equalities(rank: int, axes: Sequence[int], keepdims: bool) -> list[Equality]:
    """Dims that are not reduced carry over (shifted down when reduced dims are dropped)."""
    reduced = set(normalize_axes(axes, rank))
    kept = [d for d in range(rank) if keepdims or d not in reduced]
    return [((0, d), (RESULT, i)) for i, d in enumerate(kept) if d not in reduced]


def layer_norm_equalities(
    shape: Sequence[int], scale: Sequence[int], bias: Sequence[int]
) -> list[Equality]:
    """The result is the input; scale and bias broadcast against its trailing dims."""
    params = broadcast_equalities([scale, bias], len(shape), positions=(1, 2))
    return identity_equalities(len(shape)) + [(a, (0, d)) for a, (_, d) in params]


def batch_norm_equalities(rank: int) -> list[Equality]:
    """The result is the input; the four (C,) parameters are its channel dim 1."""
    return identity_equalities(rank) + [((p, 0), (0, 1)) for p in range(1, 5)]


def conv_equalities(has_bias: bool, groups: int) -> list[Equality]:
    """Batch from `x`, output channels from `w` (and the bias); input channels if ungrouped."""
    result = [((0, 0), (RESULT, 0)), ((1, 0), (RESULT, 1))]
    if has_bias:
        result.append(((2, 0), (1, 0)))
    if groups == 1:
        result.append(((0, 1), (1, 1)))
    return result


def pool_equalities() -> list[Equality]:
    return [((0, 0), (RESULT, 0)), ((0, 1), (RESULT, 1))]
