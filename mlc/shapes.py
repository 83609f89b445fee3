"""
Shape functions: the result shape of every `ml` op, computed from operand shapes.

This module is the one place where mlc's shape rules live. The `ml` verifiers, the
type inference of op builders, the frontends and the `shape-inference` pass all call
these functions, so a rule is written once and checked everywhere.

A shape is a tuple of ints; a dynamic dimension is `DYNAMIC` (xDSL's
`DYNAMIC_INDEX`, the value MLIR prints as `?`). The functions never guess: a dynamic
dimension stays dynamic unless the rule pins it (a dynamic dimension broadcast
against a static `N > 1` must be `N`, a matmul inner dimension against a static one
is that one). A statically provable violation raises `ShapeError` with a message
that names the dimensions involved, in the style of MLIR's verifiers.
"""

from collections.abc import Hashable, Sequence
from math import prod
from typing import Generic, TypeVar

from xdsl.dialects.builtin import DYNAMIC_INDEX

DYNAMIC = DYNAMIC_INDEX

Shape = tuple[int, ...]


class ShapeError(ValueError):
    """A statically provable shape violation; the message is user-facing."""


def is_static(dim: int) -> bool:
    return dim != DYNAMIC


def format_shape(shape: Sequence[int]) -> str:
    """Print a shape as MLIR does inside a tensor type: `2x?x4`, or `scalar`."""
    if not shape:
        return "scalar"
    return "x".join(str(d) if is_static(d) else "?" for d in shape)


def format_dim(dim: int) -> str:
    return str(dim) if is_static(dim) else "?"


def num_elements(shape: Sequence[int]) -> int | None:
    """The element count, or None when a dimension is dynamic."""
    if not all(is_static(d) for d in shape):
        return None
    return prod(shape)


def normalize_axis(axis: int, rank: int, what: str = "axis") -> int:
    """Map a possibly negative axis into `[0, rank)`, as numpy does."""
    if not -rank <= axis < rank:
        raise ShapeError(f"{what} {axis} is out of range for rank {rank}")
    return axis + rank if axis < 0 else axis


def normalize_axes(axes: Sequence[int], rank: int) -> tuple[int, ...]:
    normalized = tuple(normalize_axis(a, rank) for a in axes)
    if len(set(normalized)) != len(normalized):
        raise ShapeError(f"axes {list(axes)} name a dimension twice")
    return normalized


def join_dims(a: int, b: int, what: str) -> int:
    """The dimension two dims that must be equal share; an error if they differ."""
    if not is_static(a):
        return b
    if is_static(b) and a != b:
        raise ShapeError(what)
    return a


# ---------------------------------------------------------------------------
# Elementwise
# ---------------------------------------------------------------------------


def broadcast_dims(a: int, b: int) -> int:
    """The numpy broadcast of two dimensions, or ShapeError when they conflict."""
    if a == 1:
        return b
    if b == 1:
        return a
    if not is_static(a):
        return b  # b is static N > 1 (a must be 1 or N at run time, so the result is N) or ?
    if not is_static(b):
        return a
    if a != b:
        raise ShapeError(f"dimensions {a} and {b} are not broadcast-compatible")
    return a


def broadcast(*shapes: Sequence[int]) -> Shape:
    """Numpy broadcasting of several shapes, aligned at the trailing dimension."""
    rank = max((len(s) for s in shapes), default=0)
    result: list[int] = []
    for i in range(rank):
        dim = 1
        for shape in shapes:
            j = i - rank + len(shape)
            if j < 0:
                continue
            try:
                dim = broadcast_dims(dim, shape[j])
            except ShapeError:
                listed = ", ".join(format_shape(s) for s in shapes)
                raise ShapeError(
                    f"shapes ({listed}) are not broadcast-compatible in dimension {i - rank}"
                ) from None
        result.append(dim)
    return tuple(result)


def broadcast_to(shape: Sequence[int], target: Sequence[int]) -> Shape:
    """Check that `shape` broadcasts to `target` (numpy.broadcast_to) and return it."""
    if len(shape) > len(target):
        raise ShapeError(
            f"cannot broadcast rank {len(shape)} shape ({format_shape(shape)}) "
            f"to lower rank {len(target)} ({format_shape(target)})"
        )
    offset = len(target) - len(shape)
    for i, dim in enumerate(shape):
        want = target[offset + i]
        if dim == 1 or not is_static(want) or not is_static(dim) or dim == want:
            continue
        raise ShapeError(
            f"cannot broadcast ({format_shape(shape)}) to ({format_shape(target)}): "
            f"dimension {i} is {dim}, expected 1 or {want}"
        )
    return tuple(target)


# ---------------------------------------------------------------------------
# Contraction
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Data movement
# ---------------------------------------------------------------------------


def check_permutation(perm: Sequence[int], rank: int) -> None:
    if sorted(perm) != list(range(rank)):
        raise ShapeError(f"perm {list(perm)} is not a permutation of the {rank} dimensions")


def transpose(shape: Sequence[int], perm: Sequence[int]) -> Shape:
    check_permutation(perm, len(shape))
    return tuple(shape[p] for p in perm)


def reshape(shape: Sequence[int], target: Sequence[int]) -> Shape:
    """
    numpy.reshape: `target` may hold one -1, inferred from the element count.

    `target` dims that are `DYNAMIC` are unknown at compile time (a shape operand
    supplies them at run time); they are left dynamic.
    """
    inferred = [i for i, d in enumerate(target) if d == -1]
    if len(inferred) > 1:
        raise ShapeError(f"target shape {list(target)} has more than one -1")
    if any(d < -1 and is_static(d) for d in target):
        raise ShapeError(f"target shape {list(target)} has a negative dimension")
    count = num_elements(shape)
    known = [d for d in target if d != -1]
    known_count = num_elements(known)
    result = list(target)
    if inferred:
        result[inferred[0]] = DYNAMIC
        if count is not None and known_count is not None:
            if known_count == 0 or count % known_count:
                raise ShapeError(
                    f"cannot reshape {count} elements into ({format_shape(known)}) "
                    f"with one inferred dimension"
                )
            result[inferred[0]] = count // known_count
    elif count is not None and known_count is not None and count != known_count:
        raise ShapeError(
            f"element counts differ: ({format_shape(shape)}) has {count}, "
            f"({format_shape(target)}) has {known_count}"
        )
    return tuple(result)


def concat(shapes: Sequence[Sequence[int]], axis: int) -> Shape:
    if not shapes:
        raise ShapeError("expects at least one operand")
    rank = len(shapes[0])
    if rank == 0:
        raise ShapeError("cannot concatenate rank-0 tensors")
    if any(len(s) != rank for s in shapes):
        ranks = ", ".join(str(len(s)) for s in shapes)
        raise ShapeError(f"expects operands of one rank, got ranks ({ranks})")
    axis = normalize_axis(axis, rank)
    result = list(shapes[0])
    origin = [0] * rank  # the operand each dimension of `result` was taken from
    for i, shape in enumerate(shapes[1:], start=1):
        for d in range(rank):
            if d == axis:
                continue
            joined = join_dims(
                result[d],
                shape[d],
                f"operand {i} differs from operand {origin[d]} in dimension {d} "
                f"({format_dim(shape[d])} vs {format_dim(result[d])}), "
                "which is not the concatenation axis",
            )
            if joined != result[d]:
                origin[d] = i
            result[d] = joined
    along = [s[axis] for s in shapes]
    result[axis] = sum(along) if all(is_static(d) for d in along) else DYNAMIC
    return tuple(result)


def slice_dim(dim: int, start: int, end: int, step: int) -> int:
    """The length of `range(dim)[start:end:step]`, or DYNAMIC."""
    if not is_static(dim):
        return DYNAMIC
    return len(range(*slice(start, end, step).indices(dim)))


def slice_(
    shape: Sequence[int],
    starts: Sequence[int],
    ends: Sequence[int],
    steps: Sequence[int],
) -> Shape:
    """x[s0:e0:t0, ...] with Python slice semantics (negative indices, clamping)."""
    rank = len(shape)
    for name, values in (("starts", starts), ("ends", ends), ("steps", steps)):
        if len(values) != rank:
            raise ShapeError(
                f"expects {name} to have one entry per dimension ({rank}), got {len(values)}"
            )
    if 0 in steps:
        raise ShapeError(f"steps {list(steps)} contain a zero")
    return tuple(slice_dim(*args) for args in zip(shape, starts, ends, steps, strict=True))


def gather(data: Sequence[int], indices: Sequence[int], axis: int) -> Shape:
    """onnx Gather: data[..., indices, ...] along `axis`."""
    if not data:
        raise ShapeError("expects data of rank >= 1")
    axis = normalize_axis(axis, len(data))
    return (*data[:axis], *indices, *data[axis + 1 :])


# ---------------------------------------------------------------------------
# Reductions and normalisations
# ---------------------------------------------------------------------------


def reduce(shape: Sequence[int], axes: Sequence[int], keepdims: bool) -> Shape:
    """Reduce the listed axes (none listed: nothing is reduced, as numpy's axis=())."""
    reduced = set(normalize_axes(axes, len(shape)))
    if keepdims:
        return tuple(1 if i in reduced else d for i, d in enumerate(shape))
    return tuple(d for i, d in enumerate(shape) if i not in reduced)


def softmax(shape: Sequence[int], axis: int) -> Shape:
    if not shape:
        raise ShapeError("expects an operand of rank >= 1")
    normalize_axis(axis, len(shape))
    return tuple(shape)


def layer_norm(shape: Sequence[int], scale: Sequence[int], bias: Sequence[int], axis: int) -> Shape:
    """Normalise over dims axis..rank-1; scale and bias broadcast to those dims."""
    if not shape:
        raise ShapeError("expects an operand of rank >= 1")
    axis = normalize_axis(axis, len(shape))
    normalized = shape[axis:]
    for name, param in (("scale", scale), ("bias", bias)):
        try:
            broadcast_to(param, normalized)
        except ShapeError:
            raise ShapeError(
                f"{name} shape ({format_shape(param)}) does not broadcast to the "
                f"normalized shape ({format_shape(normalized)})"
            ) from None
    try:
        # Where the normalized shape is dynamic, scale and bias must still agree.
        broadcast(scale, bias)
    except ShapeError:
        raise ShapeError(
            f"scale shape ({format_shape(scale)}) and bias shape ({format_shape(bias)}) "
            "do not broadcast to one normalized shape"
        ) from None
    return tuple(shape)


def batch_norm(shape: Sequence[int], *params: Sequence[int]) -> Shape:
    """Inference batch norm: channel dim 1; scale, bias, mean and var are (C,)."""
    if len(shape) < 2:
        raise ShapeError(f"expects an input of rank >= 2 (N, C, ...), got rank {len(shape)}")
    names = ("scale", "bias", "mean", "var")
    # The sizes must agree with each other too, where the channel dimension is dynamic.
    channel, source = shape[1], "the channel dimension"
    for name, param in zip(names, params, strict=True):
        if len(param) != 1:
            raise ShapeError(f"expects {name} of rank 1, got rank {len(param)}")
        joined = join_dims(
            channel,
            param[0],
            f"{name} size ({param[0]}) does not match {source} ({format_dim(channel)})",
        )
        if joined != channel:
            channel, source = joined, f"the {name} size"
    return tuple(shape)


# ---------------------------------------------------------------------------
# Convolution and pooling
# ---------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------
# Agreement between a declared shape and an inferred one
# ---------------------------------------------------------------------------


def compatible(declared: Sequence[int], inferred: Sequence[int]) -> bool:
    """True when the shapes can describe the same tensor (MLIR's verifyCompatibleShape)."""
    if len(declared) != len(inferred):
        return False
    return all(
        not is_static(a) or not is_static(b) or a == b
        for a, b in zip(declared, inferred, strict=True)
    )


# ---------------------------------------------------------------------------
# Refinement: meeting, joining and unifying shapes (used by `shape-inference`)
# ---------------------------------------------------------------------------


def refine(declared: Sequence[int], *known: Sequence[int]) -> Shape:
    """
    `declared` with each dynamic dim replaced by the first static size `known` gives.

    The caller has checked that the shapes are `compatible`; a static declared dim
    always stays, so a refinement never contradicts what was written.
    """
    result = list(declared)
    for i, dim in enumerate(result):
        if not is_static(dim):
            result[i] = next((k[i] for k in known if is_static(k[i])), DYNAMIC)
    return tuple(result)


def join(a: Sequence[int], b: Sequence[int]) -> Shape:
    """The most static shape that describes both (the type of a merge of two values)."""
    if len(a) != len(b):
        raise ShapeError(f"cannot join shapes of ranks {len(a)} and {len(b)}")
    return tuple(x if x == y else DYNAMIC for x, y in zip(a, b, strict=True))


K = TypeVar("K", bound=Hashable)


class DimUnifier(Generic[K]):
    """
    Union-find over dimensions known to be equal, each class with its static size.

    Keys are whatever names a dim (the pass uses `(value, axis)`). A class has at most
    one static size; `unify` refuses to merge two classes of different sizes.
    """

    def __init__(self) -> None:
        self._parent: dict[K, K] = {}
        self._size: dict[K, int] = {}

    def add(self, key: K, size: int = DYNAMIC) -> None:
        """Make `key` known, with its static size if it has one."""
        if key not in self._parent:
            self._parent[key] = key
            self._size[key] = size

    def find(self, key: K) -> K:
        self.add(key)
        root = key
        while (parent := self._parent[root]) != root:
            root = parent
        while key != root:  # path compression keeps later finds short
            key, self._parent[key] = self._parent[key], root
        return root

    def size(self, key: K) -> int:
        """The static size of `key`'s class, or DYNAMIC."""
        return self._size[self.find(key)]

    def unify(self, a: K, b: K) -> bool:
        """Merge the classes of `a` and `b`; False (and no merge) if their sizes differ."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return True
        sa, sb = self._size[ra], self._size[rb]
        if is_static(sa) and is_static(sb) and sa != sb:
            return False
        self._parent[rb] = ra
        self._size[ra] = sa if is_static(sa) else sb
        return True

    def keys(self) -> list[K]:
        return list(self._parent)


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
