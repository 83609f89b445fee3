"""
Random well-typed `ml` programs print, parse and print again to the same text.

Hypothesis builds `func.func`s from the op builders of `mlc.dialects.ml` (result
types inferred), drawing from every op family, with dynamic dimensions (`?`) and
several element types. Each module must verify, print deterministically, and
satisfy print(parse(print(m))) == print(m) in the custom and the generic form; the
two forms must also describe the same IR (parsing one and printing the other gives
the other's text).
"""

import math
from collections.abc import Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    ModuleOp,
    Signedness,
    TensorType,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, Region, SSAValue

from mlc import shapes as shape_rules
from mlc.diagnostics import verify_module
from mlc.dialects.ml import (
    AbsOp,
    AddOp,
    ArgMaxOp,
    ArgMinOp,
    AttentionOp,
    AvgPool1dOp,
    AvgPool2dOp,
    AvgPool3dOp,
    BatchNormOp,
    BroadcastToOp,
    CastOp,
    CmpOp,
    ConcatOp,
    Conv1dOp,
    Conv2dOp,
    Conv3dOp,
    CumSumOp,
    DivOp,
    ErfOp,
    ExpOp,
    GatherElementsOp,
    GatherNdOp,
    GatherOp,
    GeluOp,
    LayerNormOp,
    LogOp,
    MatmulOp,
    MaxOp,
    MaxPool1dOp,
    MaxPool2dOp,
    MaxPool3dOp,
    MinOp,
    MLOp,
    MulOp,
    NegOp,
    PowOp,
    ReduceMaxOp,
    ReduceMeanOp,
    ReduceMinOp,
    ReduceSumOp,
    ReluOp,
    ReshapeOp,
    RsqrtOp,
    ScatterElementsOp,
    ScatterNdOp,
    SelectOp,
    SigmoidOp,
    SliceOp,
    SoftmaxOp,
    SqrtOp,
    SubOp,
    TanhOp,
    TopKOp,
    TransposeOp,
)
from mlc.dialects.ml import math as ml_math
from mlc.ir import parse_module, print_module
from mlc.registry import make_context

DYN = DYNAMIC_INDEX
I64_MIN, I64_MAX = -(2**63), 2**63 - 1

FLOATS: tuple[Attribute, ...] = (
    Float16Type(),
    BFloat16Type(),
    Float32Type(),
    Float64Type(),
)
INTEGERS: tuple[Attribute, ...] = (
    IntegerType(8),
    i32,
    i64,
    IntegerType(16, Signedness.UNSIGNED),
)
NUMERIC = FLOATS + INTEGERS
ANY = (*NUMERIC, i1)

BINARY = (AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, ml_math.RemOp)
NUMERIC_UNARY = (NegOp, AbsOp, ReluOp)
FLOAT_UNARY = (
    *(ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp, SigmoidOp, ErfOp),
    *ml_math.TRIGONOMETRIC,
    *ml_math.ROUNDING,
)
REDUCTIONS = (ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp)

# One context for every parse: building one per example would dominate the run time.
CTX = make_context()

Shape = tuple[int, ...]
Draw = st.DrawFn


# ---------------------------------------------------------------------------
# A function body under construction
# ---------------------------------------------------------------------------


class Body:
    """The block being filled: its arguments appear on demand, its values are reused."""

    def __init__(self, draw: Draw):
        self.draw = draw
        self.block = Block()
        self.values: list[SSAValue] = []

    def fresh(self, element: Attribute, shape: Sequence[int]) -> SSAValue:
        arg = self.block.insert_arg(TensorType(element, shape), len(self.block.args))
        self.values.append(arg)
        return arg

    def value(self, element: Attribute, shape: Sequence[int]) -> SSAValue:
        """A value of this type: an earlier one if there is one, or a new argument."""
        wanted = TensorType(element, shape)
        same = [v for v in self.values if v.type == wanted]
        if same and self.draw(st.booleans()):
            return self.draw(st.sampled_from(same))
        return self.fresh(element, shape)

    def any_value(
        self, elements: Sequence[Attribute], min_rank: int = 0, max_rank: int = 4
    ) -> SSAValue:
        """A value of one of `elements` and a rank in range, earlier ones preferred."""
        fits = [
            v
            for v in self.values
            if isinstance(v.type, TensorType)
            and v.type.element_type in elements  # pyright: ignore[reportUnknownMemberType]
            and min_rank <= v.type.get_num_dims() <= max_rank
        ]
        if fits and self.draw(st.integers(0, 3)):
            return self.draw(st.sampled_from(fits))
        element = self.draw(st.sampled_from(elements))
        return self.fresh(element, self.draw(shapes(min_rank, max_rank)))

    def add(self, op: MLOp) -> SSAValue:
        self.block.add_op(op)
        self.values.append(op.results[0])
        return op.results[0]


def shape_of(value: SSAValue) -> Shape:
    assert isinstance(value.type, TensorType)
    return value.type.get_shape()


def element_of(value: SSAValue) -> Attribute:
    assert isinstance(value.type, TensorType)
    element: Attribute = value.type.element_type  # pyright: ignore[reportUnknownMemberType]
    return element


def dims(static: bool = False) -> st.SearchStrategy[int]:
    return st.sampled_from((1, 2, 3, 4) if static else (1, 2, 3, 4, DYN))


def shapes(min_rank: int = 0, max_rank: int = 4, static: bool = False) -> st.SearchStrategy[Shape]:
    return st.lists(dims(static), min_size=min_rank, max_size=max_rank).map(tuple)


@st.composite
def broadcast_partner(draw: Draw, shape: Shape, max_rank: int = 4) -> Shape:
    """A shape that broadcasts with `shape`: dims equal, 1 or `?`, ranks may differ."""
    kept = draw(st.integers(0, len(shape)))
    tail = [
        draw(st.sampled_from((d, 1, DYN) if d != 1 else (1, 2, 3, DYN)))
        for d in shape[len(shape) - kept :]
    ]
    extra = draw(shapes(0, max(0, max_rank - kept))) if kept == len(shape) else ()
    return (*extra, *tail)


def axis_in(draw: Draw, rank: int) -> int:
    return draw(st.integers(-rank, rank - 1))


# ---------------------------------------------------------------------------
# One builder per op family: each adds one or two ops to the body
# ---------------------------------------------------------------------------


def binary(body: Body, draw: Draw) -> None:
    lhs = body.any_value(NUMERIC)
    rhs = body.value(element_of(lhs), draw(broadcast_partner(shape_of(lhs))))
    if draw(st.booleans()):
        lhs, rhs = rhs, lhs
    body.add(draw(st.sampled_from(BINARY))(lhs, rhs))


def cmp_select(body: Body, draw: Draw) -> None:
    lhs = body.any_value(ANY)
    rhs = body.value(element_of(lhs), draw(broadcast_partner(shape_of(lhs))))
    cond = body.add(CmpOp(draw(st.sampled_from(CmpOp.PREDICATES)), lhs, rhs))
    element = draw(st.sampled_from(ANY))
    a = body.value(element, draw(broadcast_partner(shape_of(cond))))
    both = shape_rules.broadcast(shape_of(cond), shape_of(a))
    b = body.value(element, draw(broadcast_partner(both)))
    body.add(SelectOp(cond, a, b))


def unary(body: Body, draw: Draw) -> None:
    if draw(st.booleans()):
        body.add(draw(st.sampled_from(NUMERIC_UNARY))(body.any_value(NUMERIC)))
    elif draw(st.booleans()):
        body.add(draw(st.sampled_from(FLOAT_UNARY))(body.any_value(FLOATS)))
    else:
        approximate = draw(st.sampled_from(GeluOp.APPROXIMATIONS))
        body.add(GeluOp(body.any_value(FLOATS), approximate))


def bitwise(body: Body, draw: Draw) -> None:
    """and/or/xor/not on integers or i1; shifts on integers."""
    if draw(st.booleans()):
        body.add(ml_math.BitwiseNotOp(body.any_value(ANY[len(FLOATS) :])))
        return
    shift = draw(st.booleans())
    lhs = body.any_value(INTEGERS if shift else ANY[len(FLOATS) :])
    rhs = body.value(element_of(lhs), draw(broadcast_partner(shape_of(lhs))))
    ops = ml_math.BITWISE[4:] if shift else ml_math.BITWISE[:3]
    body.add(draw(st.sampled_from(ops))(lhs, rhs))


def cast(body: Body, draw: Draw) -> None:
    x = body.any_value(ANY)
    body.add(CastOp(x, TensorType(draw(st.sampled_from(ANY)), shape_of(x))))


def matmul(body: Body, draw: Draw) -> None:
    a = body.any_value(NUMERIC, min_rank=2)
    *batch, _, k = shape_of(a)
    inner = draw(st.sampled_from((k, DYN)))
    b_batch = draw(broadcast_partner(tuple(batch), max_rank=2))
    b = body.value(element_of(a), (*b_batch, inner, draw(dims())))
    body.add(MatmulOp(a, b))


def transpose(body: Body, draw: Draw) -> None:
    x = body.any_value(ANY)
    body.add(TransposeOp(x, draw(st.permutations(range(len(shape_of(x)))))))


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]


def reshape(body: Body, draw: Draw) -> None:
    element = draw(st.sampled_from(ANY))
    x = body.value(element, draw(shapes(0, 4, static=True)))
    remaining = math.prod(shape_of(x))
    target: list[int] = []
    for _ in range(draw(st.integers(0, 3))):
        d = draw(st.sampled_from(divisors(remaining)))
        target.append(d)
        remaining //= d
    target.append(remaining)
    if draw(st.booleans()):
        target[draw(st.integers(0, len(target) - 1))] = -1
    body.add(ReshapeOp(x, new_shape=target))


def broadcast_to(body: Body, draw: Draw) -> None:
    x = body.any_value(ANY, max_rank=3)
    leading = draw(shapes(0, 4 - len(shape_of(x)), static=True))
    # A 1 stretches to any size; a `?` stays `?` (the operand's size) or is pinned.
    choices = {1: (1, 2, 3), DYN: (DYN, 2)}
    kept = [draw(st.sampled_from(choices.get(d, (d,)))) for d in shape_of(x)]
    target = (*leading, *kept)
    if draw(st.booleans()):
        # With a run-time shape operand, any result dimension may be dynamic.
        target = tuple(DYN if draw(st.booleans()) else d for d in target)
        shape = body.value(i64, (len(target),))
        body.add(BroadcastToOp(x, TensorType(element_of(x), target), shape))
    else:
        body.add(BroadcastToOp(x, TensorType(element_of(x), target)))


def concat(body: Body, draw: Draw) -> None:
    first = body.any_value(ANY, min_rank=1)
    shape = shape_of(first)
    axis = axis_in(draw, len(shape))
    inputs = [first]
    for _ in range(draw(st.integers(0, 2))):
        other = [
            draw(dims()) if i == axis % len(shape) else draw(st.sampled_from((d, DYN)))
            for i, d in enumerate(shape)
        ]
        inputs.append(body.value(element_of(first), other))
    body.add(ConcatOp(draw(st.permutations(inputs)), axis))


def slice_(body: Body, draw: Draw) -> None:
    x = body.any_value(ANY)
    bounds = st.one_of(st.integers(-6, 6), st.sampled_from((I64_MIN, I64_MAX)))
    rank = len(shape_of(x))
    starts = draw(st.lists(bounds, min_size=rank, max_size=rank))
    ends = draw(st.lists(bounds, min_size=rank, max_size=rank))
    steps = draw(st.lists(st.integers(-3, 3).filter(bool), min_size=rank, max_size=rank))
    body.add(SliceOp(x, starts, ends, steps))


def gather(body: Body, draw: Draw) -> None:
    data = body.any_value(ANY, min_rank=1, max_rank=3)
    indices = body.value(draw(st.sampled_from((i32, i64))), draw(shapes(0, 2)))
    body.add(GatherOp(data, indices, axis_in(draw, len(shape_of(data)))))


def gather_elements(body: Body, draw: Draw) -> None:
    data = body.any_value(ANY, min_rank=1, max_rank=3)
    shape = shape_of(data)
    axis = axis_in(draw, len(shape))
    index_shape = [draw(st.integers(0, 3)) if k == axis else d for k, d in enumerate(shape)]
    indices = body.value(draw(st.sampled_from((i32, i64))), index_shape)
    body.add(GatherElementsOp(data, indices, axis))


def gather_nd(body: Body, draw: Draw) -> None:
    data = body.any_value(ANY, min_rank=1, max_rank=3)
    rank = len(shape_of(data))
    k = draw(st.integers(1, rank))
    indices = body.value(draw(st.sampled_from((i32, i64))), [*draw(shapes(0, 2)), k])
    body.add(GatherNdOp(data, indices))


def scatter_elements(body: Body, draw: Draw) -> None:
    data = body.any_value(NUMERIC, min_rank=1, max_rank=3)
    shape = shape_of(data)
    axis = axis_in(draw, len(shape))
    index_shape = [draw(st.integers(0, 3)) if k == axis else d for k, d in enumerate(shape)]
    indices = body.value(draw(st.sampled_from((i32, i64))), index_shape)
    updates = body.value(data.type.element_type, index_shape)
    reduction = draw(st.sampled_from(("none", "add", "mul", "max", "min")))
    body.add(ScatterElementsOp(data, indices, updates, axis, reduction))


def scatter_nd(body: Body, draw: Draw) -> None:
    data = body.any_value(NUMERIC, min_rank=1, max_rank=3)
    shape = shape_of(data)
    k = draw(st.integers(1, len(shape)))
    outer = draw(shapes(0, 2))
    indices = body.value(draw(st.sampled_from((i32, i64))), [*outer, k])
    updates = body.value(data.type.element_type, [*outer, *shape[k:]])
    body.add(ScatterNdOp(data, indices, updates, draw(st.sampled_from(("none", "add")))))


def top_k(body: Body, draw: Draw) -> None:
    x = body.any_value(NUMERIC, min_rank=1, max_rank=3)
    shape = shape_of(x)
    axis = axis_in(draw, len(shape))
    size = shape[axis] if shape[axis] >= 0 else 0
    k = draw(st.integers(0, size))
    body.add(TopKOp(x, k, axis, draw(st.booleans()), draw(st.booleans())))


def reduction(body: Body, draw: Draw) -> None:
    x = body.any_value(NUMERIC)
    rank = len(shape_of(x))
    axes = draw(st.lists(st.integers(0, rank - 1), unique=True)) if rank else []
    axes = [a - rank if draw(st.booleans()) else a for a in axes]
    body.add(draw(st.sampled_from(REDUCTIONS))(x, axes, draw(st.booleans())))


def scan(body: Body, draw: Draw) -> None:
    """argmax / argmin along a non-empty axis, or a cumsum."""
    x = body.any_value(NUMERIC, min_rank=1)
    axis = axis_in(draw, len(shape_of(x)))
    if shape_of(x)[axis] == 0 or draw(st.booleans()):
        body.add(CumSumOp(x, axis, draw(st.booleans()), draw(st.booleans())))
        return
    op = draw(st.sampled_from((ArgMaxOp, ArgMinOp)))
    body.add(op(x, axis, draw(st.booleans()), draw(st.booleans())))


def softmax(body: Body, draw: Draw) -> None:
    x = body.any_value(FLOATS, min_rank=1)
    body.add(SoftmaxOp(x, axis_in(draw, len(shape_of(x)))))


def attention(body: Body, draw: Draw) -> None:
    element = draw(st.sampled_from(FLOATS))
    batch = draw(shapes(0, 2))
    kv_heads, group = draw(dims(static=True)), draw(dims(static=True))
    sq, sk, d, dv = (draw(dims()) for _ in range(4))
    q = body.value(element, (*batch, kv_heads * group, sq, d))
    k = body.value(element, (*batch, kv_heads, sk, d))
    v = body.value(element, (*batch, kv_heads, sk, dv))
    mask = None
    if draw(st.booleans()):
        scores = (*batch, kv_heads * group, sq, sk)
        kept = draw(st.integers(0, len(scores)))
        tail = [draw(st.sampled_from((n, 1))) for n in scores[len(scores) - kept :]]
        mask = body.value(draw(st.sampled_from((element, i1))), tail)
    scale = draw(st.sampled_from((0.125, 1.0)) | st.floats(1e-3, 10.0))
    body.add(AttentionOp(q, k, v, mask, scale=scale, causal=draw(st.booleans())))


def epsilons() -> st.SearchStrategy[float]:
    return st.sampled_from((1e-5, 1e-3, 0.1)) | st.floats(1e-8, 1e-1)


def layer_norm(body: Body, draw: Draw) -> None:
    x = body.any_value(FLOATS, min_rank=1)
    axis = axis_in(draw, len(shape_of(x)))
    normalized = shape_of(x)[axis:]

    def param() -> SSAValue:
        kept = draw(st.integers(0, len(normalized)))
        tail = normalized[len(normalized) - kept :]
        return body.value(element_of(x), [draw(st.sampled_from((d, 1))) for d in tail])

    body.add(LayerNormOp(x, param(), param(), axis, draw(epsilons())))


def batch_norm(body: Body, draw: Draw) -> None:
    x = body.any_value(FLOATS, min_rank=2)
    channels = shape_of(x)[1]
    # Where the channel dimension is `?`, the four sizes must still agree.
    size = channels if channels != DYN else draw(dims())
    params = [body.value(element_of(x), (draw(st.sampled_from((size, DYN))),)) for _ in range(4)]
    body.add(BatchNormOp(x, *params, epsilon=draw(epsilons())))


def spatial(draw: Draw, kernel: int, dilation: int, pad_lo: int, pad_hi: int) -> int:
    """An input size the window fits, or `?`."""
    smallest = max(1, dilation * (kernel - 1) + 1 - pad_lo - pad_hi)
    return draw(st.sampled_from((DYN, smallest, smallest + 1, smallest + 3)))


CONVS = {1: Conv1dOp, 2: Conv2dOp, 3: Conv3dOp}
POOLS = {
    1: ((MaxPool1dOp, NUMERIC), (AvgPool1dOp, FLOATS)),
    2: ((MaxPool2dOp, NUMERIC), (AvgPool2dOp, FLOATS)),
    3: ((MaxPool3dOp, NUMERIC), (AvgPool3dOp, FLOATS)),
}


def conv(body: Body, draw: Draw) -> None:
    n = draw(st.integers(1, 3))
    element = draw(st.sampled_from(FLOATS))
    groups = draw(st.integers(1, 3))
    per_group_in = draw(st.integers(1, 2))
    out_channels = groups * draw(st.integers(1, 2))
    kernel = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    strides = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    dilations = draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    pads = draw(st.lists(st.integers(0, 2), min_size=2 * n, max_size=2 * n))
    sizes = [spatial(draw, kernel[d], dilations[d], pads[d], pads[d + n]) for d in range(n)]
    channels = draw(st.sampled_from((groups * per_group_in, DYN)))
    x = body.value(element, (draw(dims()), channels, *sizes))
    weights = body.value(element, (out_channels, per_group_in, *kernel))
    bias = None
    if draw(st.booleans()):
        bias = body.value(element, (draw(st.sampled_from((out_channels, DYN))),))
    op = CONVS[n](x, weights, bias, strides=strides, dilations=dilations, pads=pads, groups=groups)
    body.add(op)


def pool(body: Body, draw: Draw) -> None:
    n = draw(st.integers(1, 3))
    op, elements = draw(st.sampled_from(POOLS[n]))
    kernel = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    strides = draw(st.lists(st.integers(1, 3), min_size=n, max_size=n))
    dilations = draw(st.lists(st.integers(1, 2), min_size=n, max_size=n))
    extents = [(k - 1) * d + 1 for k, d in zip(kernel, dilations, strict=True)]
    pads = [draw(st.integers(0, extents[i % n] - 1)) for i in range(2 * n)]
    sizes = [spatial(draw, kernel[d], dilations[d], pads[d], pads[d + n]) for d in range(n)]
    x = body.value(draw(st.sampled_from(elements)), (draw(dims()), draw(dims()), *sizes))
    body.add(op(x, kernel, strides=strides, dilations=dilations, pads=pads))


FAMILIES = (
    binary,
    bitwise,
    cmp_select,
    unary,
    cast,
    matmul,
    transpose,
    reshape,
    broadcast_to,
    concat,
    slice_,
    gather,
    gather_elements,
    gather_nd,
    scatter_elements,
    scatter_nd,
    top_k,
    reduction,
    scan,
    softmax,
    layer_norm,
    batch_norm,
    conv,
    pool,
    attention,
)


@st.composite
def functions(draw: Draw, name: str) -> func.FuncOp:
    body = Body(draw)
    for family in draw(st.lists(st.sampled_from(FAMILIES), min_size=1, max_size=6)):
        family(body, draw)
    results = [v for v in body.values if v.owner is not body.block]
    returned = draw(st.lists(st.sampled_from(results), min_size=1, max_size=2))
    body.block.add_op(func.ReturnOp(*returned))
    inputs = [a.type for a in body.block.args]
    return func.FuncOp(name, (inputs, [v.type for v in returned]), Region(body.block))


class Program:
    """A generated module; Hypothesis shows a failing one as its text."""

    def __init__(self, module: ModuleOp):
        self.module = module

    def __repr__(self) -> str:
        return "\n" + print_module(self.module, generic=True)


@st.composite
def programs(draw: Draw) -> Program:
    count = draw(st.integers(1, 2))
    return Program(ModuleOp([draw(functions(f"f{i}")) for i in range(count)]))


# ---------------------------------------------------------------------------
# The properties
# ---------------------------------------------------------------------------


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(programs())
def test_random_ml_programs_verify_and_roundtrip(program: Program):
    module = program.module
    assert verify_module(module) == []

    custom = print_module(module)
    generic = print_module(module, generic=True)
    assert print_module(module) == custom, "printing is not deterministic"
    assert print_module(module, generic=True) == generic, "printing is not deterministic"

    from_custom = parse_module(custom, ctx=CTX)
    from_generic = parse_module(generic, ctx=CTX)
    assert verify_module(from_custom) == []
    assert verify_module(from_generic) == []
    assert print_module(from_custom) == custom
    assert print_module(from_generic, generic=True) == generic
    # Both forms describe the same IR.
    assert print_module(from_generic) == custom
    assert print_module(from_custom, generic=True) == generic
    # A re-parsed module prints deterministically too.
    assert print_module(from_custom) == print_module(from_custom)


def test_properties_equal_to_their_default_are_not_stored():
    """Built with explicit defaults, an op is the IR its custom text parses to."""
    block = Block(arg_types=[TensorType(Float32Type(), (1, 2, 5, 5))] * 2)
    x, w = block.args
    gelu = GeluOp(x, "none")
    conv = Conv2dOp(x, w, strides=(1, 1), dilations=(1, 1), pads=(0, 0, 0, 0), groups=1)
    pool = MaxPool2dOp(x, (2, 2), strides=(1, 1), pads=(0, 0, 0, 0))
    assert not gelu.properties
    assert not conv.properties
    assert set(pool.properties) == {"kernel"}
    assert (gelu.approximate.data, conv.groups.value.data) == ("none", 1)
    strided = Conv2dOp(x, w, strides=(2, 2), groups=1)
    assert set(strided.properties) == {"strides"}

    block.add_ops([gelu, conv, pool, strided, func.ReturnOp(strided.results[0])])
    inputs = [a.type for a in block.args]
    function = func.FuncOp("f", (inputs, [strided.results[0].type]), Region(block))
    module = ModuleOp([function])
    generic = print_module(module, generic=True)
    reparsed = parse_module(print_module(module), ctx=CTX)
    assert print_module(reparsed, generic=True) == generic


def test_every_family_is_drawn():
    """The families cover every op of the dialect (no op is left out of the test)."""
    from mlc.dialects.ml import ML

    built = {
        *BINARY,
        CmpOp,
        SelectOp,
        *NUMERIC_UNARY,
        *FLOAT_UNARY,
        *ml_math.BITWISE,
        GeluOp,
        CastOp,
        MatmulOp,
        TransposeOp,
        ReshapeOp,
        BroadcastToOp,
        ConcatOp,
        SliceOp,
        GatherOp,
        GatherElementsOp,
        GatherNdOp,
        ScatterElementsOp,
        ScatterNdOp,
        TopKOp,
        *REDUCTIONS,
        ArgMaxOp,
        ArgMinOp,
        CumSumOp,
        SoftmaxOp,
        LayerNormOp,
        BatchNormOp,
        *CONVS.values(),
        *(op for ops in POOLS.values() for op, _ in ops),
        AttentionOp,
    }
    assert {op.name for op in ML.operations} == {op.name for op in built}
