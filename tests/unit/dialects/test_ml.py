"""
Tests for the Python API of the `ml` dialect (`mlc.dialects.ml`).

Every op is built from SSA values (block arguments) with its result type inferred;
written result types may refine a `?` but not contradict the inferred type; the
traits that xDSL's passes trust are checked, as are the element-type rules, the
op-specific verifiers, the generic and pretty forms, and xDSL's `cse` and `dce`
working on `ml` ops through those traits.
"""

from collections.abc import Callable
from typing import overload

import pytest
from _pytest.mark import ParameterSet
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.parser import Parser
from xdsl.traits import Commutative, is_side_effect_free, is_speculatable
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import VerifyException

from mlc.diagnostics import verify_module
from mlc.dialects.ml import (
    ML,
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
from mlc.shapes import ShapeError

CTX = make_context()
BIG = 2**63 - 1  # the "to the end" bound of a slice
C3 = "tensor<3xf32>"  # a per-channel parameter of batch_norm


def ty(text: str) -> Attribute:
    """A type from its MLIR spelling, e.g. `tensor<?x8xf32>`."""
    return Parser(CTX, text).parse_type()


# Overloads by count, so that `Op(*args(t0, t1))` type-checks against the builder's arity.
V = SSAValue


@overload
def args(t0: str, t1: str, /) -> tuple[V, V]: ...
@overload
def args(t0: str, t1: str, t2: str, /) -> tuple[V, V, V]: ...
@overload
def args(t0: str, t1: str, t2: str, t3: str, t4: str, /) -> tuple[V, V, V, V, V]: ...
@overload
def args(*types: str) -> tuple[V, ...]: ...
def args(*types: str) -> tuple[V, ...]:
    """Fresh SSA values of the given types: the arguments of a detached block."""
    return tuple(Block(arg_types=[ty(t) for t in types]).args)


def arg(type_: str) -> SSAValue:
    return args(type_)[0]


def as_function(op: MLOp) -> func.FuncOp:
    """A function whose arguments are the op's operands and that returns its result."""
    operands = list(dict.fromkeys(op.operands))
    body = Block(arg_types=[v.type for v in operands])
    op = op.clone(value_mapper=dict(zip(operands, body.args, strict=True)))
    body.add_ops([op, func.ReturnOp(op.results[0])])
    signature = ([v.type for v in operands], [op.results[0].type])
    return func.FuncOp("f", signature, Region(body))


def verify_error(op: MLOp, fragment: str) -> None:
    """Expect `op.verify()` to fail with a message containing `fragment`."""
    with pytest.raises(VerifyException) as info:
        op.verify()
    assert fragment in str(info.value)


# ---------------------------------------------------------------------------
# The dialect
# ---------------------------------------------------------------------------

# The op table of the architecture's contract (ARCHITECTURE.md, "The `ml` dialect").
CONTRACT_OPS = {
    *("ml.add", "ml.sub", "ml.mul", "ml.div", "ml.pow", "ml.max", "ml.min"),
    *("ml.cmp", "ml.select"),
    *("ml.neg", "ml.abs", "ml.exp", "ml.log", "ml.sqrt", "ml.rsqrt", "ml.tanh"),
    *("ml.sigmoid", "ml.relu", "ml.erf", "ml.gelu", "ml.cast"),
    *("ml.matmul", "ml.transpose", "ml.reshape", "ml.broadcast_to", "ml.concat"),
    *("ml.slice", "ml.gather"),
    *("ml.reduce_sum", "ml.reduce_mean", "ml.reduce_max", "ml.reduce_min"),
    *("ml.softmax", "ml.layer_norm", "ml.batch_norm"),
    *("ml.conv2d", "ml.max_pool2d", "ml.avg_pool2d"),
}

# Beyond the contract: the 1-D and 3-D forms of the window ops.
WINDOW_OPS = {f"ml.{op}{n}d" for op in ("conv", "max_pool", "avg_pool") for n in (1, 3)}
# Beyond the contract: index reductions and scans along an axis.
SCAN_OPS = {"ml.argmax", "ml.argmin", "ml.cumsum"}

# Beyond the contract: the indexing ops.
INDEXING_OPS = {
    *("ml.gather_elements", "ml.gather_nd", "ml.scatter_elements", "ml.scatter_nd"),
    "ml.top_k",
}

# Beyond the contract: trigonometric, rounding, remainder and bitwise ops.
MATH_OPS = {op.name for op in ml_math.OPS}
# Beyond the contract: fused attention.
ATTENTION_OPS = {"ml.attention"}

ML_OP_NAMES = {op.name for op in ML.operations}


def test_dialect_name():
    assert ML.name == "ml"


def test_dialect_has_exactly_the_contract_ops_and_the_window_ops():
    extra = WINDOW_OPS | SCAN_OPS | INDEXING_OPS | MATH_OPS | ATTENTION_OPS
    assert ML_OP_NAMES == CONTRACT_OPS | extra
    assert len(list(ML.operations)) == len(CONTRACT_OPS) + len(WINDOW_OPS) + len(SCAN_OPS) + len(
        INDEXING_OPS
    ) + len(MATH_OPS) + len(ATTENTION_OPS)


def test_every_op_is_an_ml_op():
    assert all(issubclass(op, MLOp) for op in ML.operations)


# ---------------------------------------------------------------------------
# Building every op with an inferred result type
# ---------------------------------------------------------------------------

# (op name, builder, expected result type). Builders give no result type, except
# where the result type is the op's own choice (cast, broadcast_to).
BUILDS: list[tuple[str, Callable[[], MLOp], str]] = [
    ("ml.add", lambda: AddOp(*args("tensor<4x1xf32>", "tensor<8xf32>")), "tensor<4x8xf32>"),
    ("ml.sub", lambda: SubOp(*args("tensor<?x8xf32>", "tensor<1x8xf32>")), "tensor<?x8xf32>"),
    ("ml.mul", lambda: MulOp(*args("tensor<4x8xf32>", "tensor<f32>")), "tensor<4x8xf32>"),
    ("ml.div", lambda: DivOp(*args("tensor<4x8xi32>", "tensor<4x1xi32>")), "tensor<4x8xi32>"),
    ("ml.pow", lambda: PowOp(*args("tensor<4xf64>", "tensor<f64>")), "tensor<4xf64>"),
    ("ml.max", lambda: MaxOp(*args("tensor<?x4xf32>", "tensor<3x1xf32>")), "tensor<3x4xf32>"),
    ("ml.min", lambda: MinOp(*args("tensor<4xui8>", "tensor<4xui8>")), "tensor<4xui8>"),
    (
        "ml.cmp",
        lambda: CmpOp("lt", *args("tensor<4x1xf32>", "tensor<3xf32>")),
        "tensor<4x3xi1>",
    ),
    (
        "ml.select",
        lambda: SelectOp(*args("tensor<4x1xi1>", "tensor<3xf32>", "tensor<f32>")),
        "tensor<4x3xf32>",
    ),
    ("ml.neg", lambda: NegOp(arg("tensor<4xi32>")), "tensor<4xi32>"),
    ("ml.abs", lambda: AbsOp(arg("tensor<?xf32>")), "tensor<?xf32>"),
    ("ml.exp", lambda: ExpOp(arg("tensor<4xf32>")), "tensor<4xf32>"),
    ("ml.log", lambda: LogOp(arg("tensor<4xf64>")), "tensor<4xf64>"),
    ("ml.sqrt", lambda: SqrtOp(arg("tensor<2x?xf32>")), "tensor<2x?xf32>"),
    ("ml.rsqrt", lambda: RsqrtOp(arg("tensor<4xf32>")), "tensor<4xf32>"),
    ("ml.tanh", lambda: TanhOp(arg("tensor<4xf16>")), "tensor<4xf16>"),
    ("ml.sigmoid", lambda: SigmoidOp(arg("tensor<4xbf16>")), "tensor<4xbf16>"),
    ("ml.relu", lambda: ReluOp(arg("tensor<?x16xf32>")), "tensor<?x16xf32>"),
    ("ml.erf", lambda: ErfOp(arg("tensor<f32>")), "tensor<f32>"),
    ("ml.gelu", lambda: GeluOp(arg("tensor<4xf32>"), "tanh"), "tensor<4xf32>"),
    (
        "ml.cast",
        lambda: CastOp(arg("tensor<?x4xf32>"), ty("tensor<?x4xi1>")),
        "tensor<?x4xi1>",
    ),
    (
        "ml.matmul",
        lambda: MatmulOp(*args("tensor<?x3x4x8xf32>", "tensor<8x2xf32>")),
        "tensor<?x3x4x2xf32>",
    ),
    (
        "ml.transpose",
        lambda: TransposeOp(arg("tensor<2x3x4xi1>"), [2, 0, 1]),
        "tensor<4x2x3xi1>",
    ),
    ("ml.reshape", lambda: ReshapeOp(arg("tensor<2x3x4xf32>"), [-1, 4]), "tensor<6x4xf32>"),
    (
        "ml.broadcast_to",
        lambda: BroadcastToOp(arg("tensor<3x1xf32>"), ty("tensor<2x3x4xf32>")),
        "tensor<2x3x4xf32>",
    ),
    (
        "ml.concat",
        lambda: ConcatOp(args("tensor<2x3xf32>", "tensor<2x5xf32>", "tensor<2x?xf32>"), 1),
        "tensor<2x?xf32>",
    ),
    (
        "ml.slice",
        lambda: SliceOp(arg("tensor<4x6xf32>"), [0, 1], [4, BIG], [2, 1]),
        "tensor<2x5xf32>",
    ),
    (
        "ml.gather",
        lambda: GatherOp(*args("tensor<100x16xf32>", "tensor<2x5xi64>"), 0),
        "tensor<2x5x16xf32>",
    ),
    (
        "ml.gather_elements",
        lambda: GatherElementsOp(*args("tensor<3x5xf32>", "tensor<3x2xi64>"), 1),
        "tensor<3x2xf32>",
    ),
    (
        "ml.gather_nd",
        lambda: GatherNdOp(*args("tensor<4x5x6xf32>", "tensor<4x1xi32>"), 1),
        "tensor<4x6xf32>",
    ),
    (
        "ml.scatter_elements",
        lambda: ScatterElementsOp(
            *args("tensor<3x5xf32>", "tensor<3x2xi64>", "tensor<3x2xf32>"), 1, "add"
        ),
        "tensor<3x5xf32>",
    ),
    (
        "ml.scatter_nd",
        lambda: ScatterNdOp(*args("tensor<4x5x6xf32>", "tensor<3x2xi32>", "tensor<3x6xf32>")),
        "tensor<4x5x6xf32>",
    ),
    ("ml.top_k", lambda: TopKOp(arg("tensor<5x?xf32>"), 2), "tensor<5x2xf32>"),
    ("ml.reduce_sum", lambda: ReduceSumOp(arg("tensor<4x8xf32>"), [1]), "tensor<4xf32>"),
    (
        "ml.reduce_mean",
        lambda: ReduceMeanOp(arg("tensor<4x8xf32>"), [-1], keepdims=True),
        "tensor<4x1xf32>",
    ),
    ("ml.reduce_max", lambda: ReduceMaxOp(arg("tensor<4x8xf32>"), [0, 1]), "tensor<f32>"),
    ("ml.reduce_min", lambda: ReduceMinOp(arg("tensor<?x8xi32>"), [0]), "tensor<8xi32>"),
    ("ml.softmax", lambda: SoftmaxOp(arg("tensor<2x10xf32>")), "tensor<2x10xf32>"),
    (
        "ml.layer_norm",
        lambda: LayerNormOp(*args("tensor<2x8x16xf32>", "tensor<16xf32>", "tensor<16xf32>")),
        "tensor<2x8x16xf32>",
    ),
    (
        "ml.batch_norm",
        lambda: BatchNormOp(*args("tensor<1x3x8x8xf32>", C3, C3, C3, C3)),
        "tensor<1x3x8x8xf32>",
    ),
    (
        "ml.conv2d",
        lambda: Conv2dOp(
            *args("tensor<1x3x32x32xf32>", "tensor<16x3x3x3xf32>", "tensor<16xf32>"),
            strides=(2, 2),
            pads=(1, 1, 1, 1),
        ),
        "tensor<1x16x16x16xf32>",
    ),
    (
        "ml.max_pool2d",
        lambda: MaxPool2dOp(arg("tensor<1x16x32x32xf32>"), [2, 2], strides=(2, 2)),
        "tensor<1x16x16x16xf32>",
    ),
    (
        "ml.avg_pool2d",
        lambda: AvgPool2dOp(arg("tensor<1x16x8x8xf32>"), [3, 3], pads=(1, 1, 1, 1)),
        "tensor<1x16x8x8xf32>",
    ),
    (
        "ml.conv1d",
        lambda: Conv1dOp(*args("tensor<2x3x9xf32>", "tensor<4x3x3xf32>"), strides=(2,)),
        "tensor<2x4x4xf32>",
    ),
    (
        "ml.conv3d",
        lambda: Conv3dOp(
            *args("tensor<1x4x5x?x7xf64>", "tensor<6x2x3x3x1xf64>"),
            pads=(1, 0, 0, 1, 0, 0),
            dilations=(1, 2, 1),
            groups=2,
        ),
        "tensor<1x6x5x?x7xf64>",
    ),
    (
        "ml.max_pool1d",
        lambda: MaxPool1dOp(arg("tensor<1x2x9xi32>"), [3], strides=(3,), dilations=(2,)),
        "tensor<1x2x2xi32>",
    ),
    (
        "ml.max_pool3d",
        lambda: MaxPool3dOp(arg("tensor<1x2x8x8x8xf32>"), [2, 2, 2], strides=(2, 2, 2)),
        "tensor<1x2x4x4x4xf32>",
    ),
    (
        "ml.avg_pool1d",
        lambda: AvgPool1dOp(arg("tensor<1x2x8xf16>"), [3], pads=(1, 1)),
        "tensor<1x2x8xf16>",
    ),
    (
        "ml.avg_pool3d",
        lambda: AvgPool3dOp(arg("tensor<?x2x8x8x8xf32>"), [3, 2, 2], dilations=(2, 1, 1)),
        "tensor<?x2x4x7x7xf32>",
    ),
    ("ml.argmax", lambda: ArgMaxOp(arg("tensor<4x8xf32>"), 1), "tensor<4xi64>"),
    ("ml.argmin", lambda: ArgMinOp(arg("tensor<?x8xi32>"), -1, True, True), "tensor<?x1xi64>"),
    ("ml.cumsum", lambda: CumSumOp(arg("tensor<4x?xf16>"), 1, True, True), "tensor<4x?xf16>"),
]


BUILDS += [
    *(
        (cls.name, (lambda cls=cls: cls(arg("tensor<?x3xf16>"))), "tensor<?x3xf16>")
        for cls in (*ml_math.TRIGONOMETRIC, *ml_math.ROUNDING)
    ),
    ("ml.rem", lambda: ml_math.RemOp(*args("tensor<4x1xi32>", "tensor<3xi32>")), "tensor<4x3xi32>"),
    *(
        (
            cls.name,
            (lambda cls=cls: cls(*args("tensor<?x1xui8>", "tensor<5xui8>"))),
            "tensor<?x5xui8>",
        )
        for cls in (*ml_math.BITWISE[:3], *ml_math.BITWISE[4:])
    ),
    ("ml.bitwise_not", lambda: ml_math.BitwiseNotOp(arg("tensor<4xi1>")), "tensor<4xi1>"),
    (
        "ml.attention",
        lambda: AttentionOp(
            *args("tensor<?x8x5x16xf32>", "tensor<?x2x7x16xf32>", "tensor<?x2x7x4xf32>"),
            scale=0.25,
        ),
        "tensor<?x8x5x4xf32>",
    ),
]


def test_builds_cover_every_op():
    assert {name for name, _, _ in BUILDS} == ML_OP_NAMES


@pytest.mark.parametrize(("name", "build", "expected"), BUILDS, ids=[b[0] for b in BUILDS])
def test_build_infers_result_type(name: str, build: Callable[[], MLOp], expected: str):
    op = build()
    assert op.name == name
    assert len(op.results) == (2 if name == "ml.top_k" else 1)  # values and indices
    assert op.results[0].type == ty(expected)
    assert op.infer_result_type() == ty(expected)
    op.verify()


@pytest.mark.parametrize(("name", "build", "expected"), BUILDS, ids=[b[0] for b in BUILDS])
def test_built_op_round_trips(name: str, build: Callable[[], MLOp], expected: str):
    """A built op, put in a function, prints and parses back to the same text."""
    text = print_module(ModuleOp([as_function(build())]))
    assert name in text
    assert expected in text
    for generic in (False, True):
        reparsed = parse_module(print_module(parse_module(text), generic=generic))
        assert print_module(reparsed) == text


def test_builder_reports_shape_errors():
    with pytest.raises(ShapeError, match=r"shapes \(4, 5\) are not broadcast-compatible"):
        AddOp(*args("tensor<4xf32>", "tensor<5xf32>"))
    with pytest.raises(ShapeError, match="contracting dimensions differ"):
        MatmulOp(*args("tensor<4x8xf32>", "tensor<7x2xf32>"))


def test_builder_defaults():
    x = arg("tensor<1x3x8x8xf32>")
    conv = Conv2dOp(x, arg("tensor<4x3x3x3xf32>"))
    assert conv.strides.get_values() == (1, 1)
    assert conv.dilations.get_values() == (1, 1)
    assert conv.pads.get_values() == (0, 0, 0, 0)
    assert conv.groups.value.data == 1
    assert conv.bias is None
    pool = MaxPool2dOp(x, [2, 2])
    assert pool.strides.get_values() == (1, 1)
    assert pool.pads.get_values() == (0, 0, 0, 0)
    assert GeluOp(arg("tensor<4xf32>")).approximate.data == "none"
    assert SoftmaxOp(arg("tensor<4xf32>")).axis.value.data == -1
    ln = LayerNormOp(*args("tensor<2x4xf32>", "tensor<4xf32>", "tensor<4xf32>"))
    assert ln.axis.value.data == -1
    assert ln.epsilon.value.data == pytest.approx(1e-5)
    reduce = ReduceSumOp(arg("tensor<2x4xf32>"), [0])
    assert not reduce.keepdims.value.data


def test_reshape_needs_a_shape_or_result_type():
    with pytest.raises(ValueError, match="either a new shape or a result type"):
        ReshapeOp(arg("tensor<2x3xf32>"))
    with pytest.raises(ValueError, match="either a new shape or a result type"):
        ReshapeOp(arg("tensor<2x3xf32>"), [6], result_type=ty("tensor<6xf32>"))


# ---------------------------------------------------------------------------
# Written result types: refinements are accepted, contradictions rejected
# ---------------------------------------------------------------------------

REFINEMENTS: list[tuple[str, Callable[[str], MLOp], str]] = [
    # (id, builder taking the written result type, a type that refines a `?`)
    ("add", lambda r: AddOp(*args("tensor<?x8xf32>", "tensor<?x8xf32>"), ty(r)), "tensor<4x8xf32>"),
    ("cmp", lambda r: CmpOp("eq", *args("tensor<?xi32>", "tensor<1xi32>"), ty(r)), "tensor<3xi1>"),
    ("exp", lambda r: ExpOp(arg("tensor<?x?xf32>"), ty(r)), "tensor<2x3xf32>"),
    (
        "matmul",
        lambda r: MatmulOp(*args("tensor<?x8xf32>", "tensor<8x?xf32>"), ty(r)),
        "tensor<4x16xf32>",
    ),
    ("transpose", lambda r: TransposeOp(arg("tensor<?x3xf32>"), [1, 0], ty(r)), "tensor<3x5xf32>"),
    (
        "concat",
        lambda r: ConcatOp(args("tensor<?x3xf32>", "tensor<2x3xf32>"), 0, ty(r)),
        "tensor<7x3xf32>",
    ),
    (
        "slice",
        lambda r: SliceOp(arg("tensor<?x6xf32>"), [0, 0], [BIG, 6], [1, 2], ty(r)),
        "tensor<9x3xf32>",
    ),
    (
        "gather",
        lambda r: GatherOp(*args("tensor<?x16xf32>", "tensor<?xi32>"), 0, ty(r)),
        "tensor<5x16xf32>",
    ),
    (
        "reduce_sum",
        lambda r: ReduceSumOp(arg("tensor<?x8xf32>"), [1], False, ty(r)),
        "tensor<4xf32>",
    ),
    (
        "conv2d",
        lambda r: Conv2dOp(*args("tensor<?x3x?x?xf32>", "tensor<16x3x3x3xf32>"), result_type=ty(r)),
        "tensor<1x16x30x30xf32>",
    ),
    (
        "max_pool2d",
        lambda r: MaxPool2dOp(arg("tensor<?x?x8x8xf32>"), [2, 2], result_type=ty(r)),
        "tensor<1x4x7x7xf32>",
    ),
    (
        "reshape",
        lambda r: ReshapeOp(arg("tensor<?x4xf32>"), shape=arg("tensor<2xi64>"), result_type=ty(r)),
        "tensor<?x2xf32>",
    ),
]


@pytest.mark.parametrize(
    ("build", "refined"), [r[1:] for r in REFINEMENTS], ids=[r[0] for r in REFINEMENTS]
)
def test_refining_result_type_is_accepted(build: Callable[[str], MLOp], refined: str):
    op = build(refined)
    assert op.results[0].type == ty(refined)
    op.verify()


def test_written_type_may_be_more_dynamic_than_inferred():
    AddOp(*args("tensor<4x8xf32>", "tensor<8xf32>"), ty("tensor<?x?xf32>")).verify()
    MatmulOp(*args("tensor<4x8xf32>", "tensor<8x16xf32>"), ty("tensor<4x?xf32>")).verify()


CONTRADICTIONS: list[tuple[str, Callable[[], MLOp], str]] = [
    (
        "static dim",
        lambda: AddOp(*args("tensor<?x8xf32>", "tensor<4x8xf32>"), ty("tensor<5x8xf32>")),
        "result type tensor<5x8xf32> contradicts the inferred type tensor<4x8xf32>",
    ),
    (
        "rank",
        lambda: AddOp(*args("tensor<4x8xf32>", "tensor<4x8xf32>"), ty("tensor<32xf32>")),
        "contradicts the inferred type tensor<4x8xf32>",
    ),
    (
        "element type",
        lambda: AddOp(*args("tensor<4xf32>", "tensor<4xf32>"), ty("tensor<4xf64>")),
        "result element type f64 does not match the expected f32",
    ),
    (
        "cmp result is i1",
        lambda: CmpOp("lt", *args("tensor<4xf32>", "tensor<4xf32>"), ty("tensor<4xf32>")),
        "result element type f32 does not match the expected i1",
    ),
    (
        "matmul n",
        lambda: MatmulOp(*args("tensor<?x8xf32>", "tensor<8x16xf32>"), ty("tensor<4x15xf32>")),
        "contradicts the inferred type tensor<?x16xf32>",
    ),
    (
        "transpose",
        lambda: TransposeOp(arg("tensor<?x3xf32>"), [1, 0], ty("tensor<4x5xf32>")),
        "contradicts the inferred type tensor<3x?xf32>",
    ),
    (
        "reduce keepdims",
        lambda: ReduceSumOp(arg("tensor<?x8xf32>"), [1], False, ty("tensor<4x1xf32>")),
        "contradicts the inferred type tensor<?xf32>",
    ),
    (
        "conv2d channels",
        lambda: Conv2dOp(
            *args("tensor<?x3x?x?xf32>", "tensor<16x3x3x3xf32>"),
            result_type=ty("tensor<1x8x30x30xf32>"),
        ),
        "contradicts the inferred type tensor<?x16x?x?xf32>",
    ),
    (
        "slice",
        lambda: SliceOp(arg("tensor<4x?xf32>"), [0, 0], [4, 3], [2, 1], ty("tensor<4x3xf32>")),
        "contradicts the inferred type tensor<2x?xf32>",
    ),
    (
        "reshape count",
        lambda: ReshapeOp(arg("tensor<2x3xf32>"), result_type=ty("tensor<4x2xf32>")),
        "element counts differ: (2x3) has 6, (4x2) has 8",
    ),
    (
        "broadcast_to",
        lambda: BroadcastToOp(arg("tensor<3xf32>"), ty("tensor<2x4xf32>")),
        "dimension 0 is 3, expected 1 or 4",
    ),
    (
        "not a tensor",
        lambda: ExpOp(arg("tensor<4xf32>"), ty("memref<4xf32>")),
        "memref<4xf32>",
    ),
]


@pytest.mark.parametrize(
    ("build", "message"), [c[1:] for c in CONTRADICTIONS], ids=[c[0] for c in CONTRADICTIONS]
)
def test_contradicting_result_type_is_rejected(build: Callable[[], MLOp], message: str):
    verify_error(build(), message)


# ---------------------------------------------------------------------------
# Traits
# ---------------------------------------------------------------------------

COMMUTATIVE = {"ml.add", "ml.mul", "ml.max", "ml.min"}
COMMUTATIVE |= {"ml.bitwise_and", "ml.bitwise_or", "ml.bitwise_xor"}


# Ops that can hit undefined behaviour on some operand values must not be speculated.
# (the ml.div and ml.rem cases divide integers)
NOT_SPECULATABLE = {"ml.gather", "ml.div", "ml.rem", *INDEXING_OPS}


@pytest.mark.parametrize(("name", "build", "expected"), BUILDS, ids=[b[0] for b in BUILDS])
def test_every_op_is_side_effect_free(name: str, build: Callable[[], MLOp], expected: str):
    op = build()
    assert is_side_effect_free(op)
    assert is_speculatable(op) == (name not in NOT_SPECULATABLE)


def test_integer_division_is_not_speculatable():
    assert is_speculatable(DivOp(*args("tensor<4xf32>", "tensor<4xf32>")))
    assert not is_speculatable(DivOp(*args("tensor<4xi32>", "tensor<4xi32>")))


@pytest.mark.parametrize(("name", "build", "expected"), BUILDS, ids=[b[0] for b in BUILDS])
def test_commutative_ops(name: str, build: Callable[[], MLOp], expected: str):
    assert build().has_trait(Commutative) == (name in COMMUTATIVE)


# ---------------------------------------------------------------------------
# Element types
# ---------------------------------------------------------------------------

FLOATS = ("f16", "bf16", "f32", "f64")
INTEGERS = ("i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64")
NOT_ML = ("si32", "index", "i4", "f80")  # element types no ml op takes


def batch_norm_of(e: str) -> MLOp:
    c = f"tensor<3x{e}>"
    return BatchNormOp(*args(f"tensor<1x3x4x4x{e}>", c, c, c, c))


# (op name, builder for data operands of element type `e`, the kind of element types it takes)
ELEMENT_RULES: list[tuple[str, Callable[[str], MLOp], str]] = [
    *(
        (cls.name, (lambda e, cls=cls: cls(*args(f"tensor<4x{e}>", f"tensor<4x{e}>"))), "numeric")
        for cls in (AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp)
    ),
    ("ml.cmp", lambda e: CmpOp("eq", *args(f"tensor<4x{e}>", f"tensor<4x{e}>")), "any"),
    (
        "ml.select",
        lambda e: SelectOp(*args("tensor<4xi1>", f"tensor<4x{e}>", f"tensor<4x{e}>")),
        "any",
    ),
    *(
        (cls.name, (lambda e, cls=cls: cls(arg(f"tensor<4x{e}>"))), "numeric")
        for cls in (NegOp, AbsOp, ReluOp)
    ),
    *(
        (cls.name, (lambda e, cls=cls: cls(arg(f"tensor<4x{e}>"))), "float")
        for cls in (ExpOp, LogOp, SqrtOp, RsqrtOp, TanhOp, SigmoidOp, ErfOp, GeluOp, SoftmaxOp)
    ),
    ("ml.cast", lambda e: CastOp(arg(f"tensor<4x{e}>"), ty("tensor<4xf32>")), "any"),
    ("ml.matmul", lambda e: MatmulOp(*args(f"tensor<2x4x{e}>", f"tensor<4x3x{e}>")), "numeric"),
    ("ml.transpose", lambda e: TransposeOp(arg(f"tensor<2x4x{e}>"), [1, 0]), "any"),
    ("ml.reshape", lambda e: ReshapeOp(arg(f"tensor<2x4x{e}>"), [8]), "any"),
    (
        "ml.broadcast_to",
        lambda e: BroadcastToOp(arg(f"tensor<4x{e}>"), ty(f"tensor<2x4x{e}>")),
        "any",
    ),
    ("ml.concat", lambda e: ConcatOp(args(f"tensor<4x{e}>", f"tensor<4x{e}>"), 0), "any"),
    ("ml.slice", lambda e: SliceOp(arg(f"tensor<4x{e}>"), [1], [3], [1]), "any"),
    ("ml.gather", lambda e: GatherOp(*args(f"tensor<4x{e}>", "tensor<2xi32>"), 0), "any"),
    (
        "ml.gather_elements",
        lambda e: GatherElementsOp(*args(f"tensor<4x{e}>", "tensor<2xi32>"), 0),
        "any",
    ),
    ("ml.gather_nd", lambda e: GatherNdOp(*args(f"tensor<4x{e}>", "tensor<2x1xi64>")), "any"),
    (
        "ml.scatter_elements",
        lambda e: ScatterElementsOp(*args(f"tensor<4x{e}>", "tensor<2xi32>", f"tensor<2x{e}>"), 0),
        "any",
    ),
    (
        "ml.scatter_nd",
        lambda e: ScatterNdOp(*args(f"tensor<4x{e}>", "tensor<2x1xi64>", f"tensor<2x{e}>")),
        "any",
    ),
    ("ml.top_k", lambda e: TopKOp(arg(f"tensor<4x{e}>"), 2), "numeric"),
    *(
        (cls.name, (lambda e, cls=cls: cls(arg(f"tensor<2x4x{e}>"), [1])), "numeric")
        for cls in (ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp)
    ),
    (
        "ml.layer_norm",
        lambda e: LayerNormOp(*args(f"tensor<2x4x{e}>", f"tensor<4x{e}>", f"tensor<4x{e}>")),
        "float",
    ),
    (
        "ml.batch_norm",
        batch_norm_of,
        "float",
    ),
    (
        "ml.conv2d",
        lambda e: Conv2dOp(*args(f"tensor<1x3x8x8x{e}>", f"tensor<4x3x3x3x{e}>", f"tensor<4x{e}>")),
        "float",
    ),
    ("ml.max_pool2d", lambda e: MaxPool2dOp(arg(f"tensor<1x3x8x8x{e}>"), [2, 2]), "numeric"),
    ("ml.avg_pool2d", lambda e: AvgPool2dOp(arg(f"tensor<1x3x8x8x{e}>"), [2, 2]), "float"),
    (
        "ml.conv1d",
        lambda e: Conv1dOp(*args(f"tensor<1x3x8x{e}>", f"tensor<4x3x3x{e}>")),
        "float",
    ),
    (
        "ml.conv3d",
        lambda e: Conv3dOp(*args(f"tensor<1x3x4x4x4x{e}>", f"tensor<4x3x2x2x2x{e}>")),
        "float",
    ),
    ("ml.max_pool1d", lambda e: MaxPool1dOp(arg(f"tensor<1x3x8x{e}>"), [2]), "numeric"),
    ("ml.max_pool3d", lambda e: MaxPool3dOp(arg(f"tensor<1x3x4x4x4x{e}>"), [2, 2, 2]), "numeric"),
    ("ml.avg_pool1d", lambda e: AvgPool1dOp(arg(f"tensor<1x3x8x{e}>"), [2]), "float"),
    ("ml.avg_pool3d", lambda e: AvgPool3dOp(arg(f"tensor<1x3x4x4x4x{e}>"), [2, 2, 2]), "float"),
    ("ml.argmax", lambda e: ArgMaxOp(arg(f"tensor<2x4x{e}>"), 1), "numeric"),
    ("ml.argmin", lambda e: ArgMinOp(arg(f"tensor<2x4x{e}>"), 0), "numeric"),
    ("ml.cumsum", lambda e: CumSumOp(arg(f"tensor<2x4x{e}>"), 1), "numeric"),
]

ELEMENT_RULES += [
    *(
        (cls.name, (lambda e, cls=cls: cls(arg(f"tensor<4x{e}>"))), "float")
        for cls in (*ml_math.TRIGONOMETRIC, *ml_math.ROUNDING)
    ),
    ("ml.rem", lambda e: ml_math.RemOp(*args(f"tensor<4x{e}>", f"tensor<4x{e}>")), "numeric"),
    *(
        (cls.name, (lambda e, cls=cls: cls(*args(f"tensor<4x{e}>", f"tensor<4x{e}>"))), "integer")
        for cls in ml_math.BITWISE[:3]
    ),
    ("ml.bitwise_not", lambda e: ml_math.BitwiseNotOp(arg(f"tensor<4x{e}>")), "integer"),
    (
        "ml.attention",
        lambda e: AttentionOp(*args(*[f"tensor<2x3x4x{e}>"] * 3), scale=0.5),
        "float",
    ),
    *(
        (cls.name, (lambda e, cls=cls: cls(*args(f"tensor<4x{e}>", f"tensor<4x{e}>"))), "int")
        for cls in ml_math.BITWISE[4:]
    ),
]

ACCEPTED = {
    "integer": (*INTEGERS, "i1"),
    "int": INTEGERS,
    "any": (*FLOATS, *INTEGERS, "i1"),
    "numeric": (*FLOATS, *INTEGERS),
    "float": FLOATS,
}
EXPECTED_MESSAGE = {
    "integer": "expected an integer element type (i1 included)",
    "int": "expected an integer element type (not i1)",
    "any": "expected an ml element type",
    "numeric": "expected a numeric element type (not i1)",
    "float": "expected a floating-point element type",
}


def test_element_rules_cover_every_op():
    assert {name for name, _, _ in ELEMENT_RULES} == ML_OP_NAMES


def element_cases(accepted: bool) -> list[ParameterSet]:
    everything = (*FLOATS, *INTEGERS, "i1", *NOT_ML)
    return [
        pytest.param(name, build, kind, element, id=f"{name}-{element}")
        for name, build, kind in ELEMENT_RULES
        for element in everything
        if (element in ACCEPTED[kind]) == accepted
    ]


@pytest.mark.parametrize(("name", "build", "kind", "element"), element_cases(True))
def test_element_type_accepted(name: str, build: Callable[[str], MLOp], kind: str, element: str):
    build(element).verify()


@pytest.mark.parametrize(("name", "build", "kind", "element"), element_cases(False))
def test_element_type_rejected(name: str, build: Callable[[str], MLOp], kind: str, element: str):
    index = 1 if name == "ml.select" else 0  # select's operand #0 is the i1 condition
    message = f"operand #{index} has element type {element}, {EXPECTED_MESSAGE[kind]}"
    verify_error(build(element), message)


def test_float_only_op_rejects_i32():
    verify_error(ExpOp(arg("tensor<4xi32>")), "expected a floating-point element type")


def test_numeric_op_rejects_i1():
    verify_error(AddOp(*args("tensor<4xi1>", "tensor<4xi1>")), "expected a numeric element type")


def test_add_accepts_ui8():
    op = AddOp(*args("tensor<4xui8>", "tensor<1xui8>"))
    op.verify()
    assert op.result.type == ty("tensor<4xui8>")


MIXED: list[tuple[str, Callable[[], MLOp], str]] = [
    ("add", lambda: AddOp(*args("tensor<4xf32>", "tensor<4xi32>")), "(f32, i32)"),
    ("add signedness", lambda: AddOp(*args("tensor<4xi8>", "tensor<4xui8>")), "(i8, ui8)"),
    ("pow", lambda: PowOp(*args("tensor<4xf32>", "tensor<f64>")), "(f32, f64)"),
    ("cmp", lambda: CmpOp("lt", *args("tensor<4xf32>", "tensor<4xf16>")), "(f32, f16)"),
    (
        "select",
        lambda: SelectOp(*args("tensor<4xi1>", "tensor<4xf32>", "tensor<4xbf16>")),
        "(f32, bf16)",
    ),
    ("matmul", lambda: MatmulOp(*args("tensor<2x4xf32>", "tensor<4x3xf16>")), "(f32, f16)"),
    (
        "concat",
        lambda: ConcatOp(args("tensor<4xf32>", "tensor<4xf32>", "tensor<4xi64>"), 0),
        "(f32, f32, i64)",
    ),
    (
        "layer_norm",
        lambda: LayerNormOp(*args("tensor<2x4xf32>", "tensor<4xf16>", "tensor<4xf32>")),
        "(f32, f16, f32)",
    ),
    (
        "batch_norm",
        lambda: BatchNormOp(
            *args(
                "tensor<1x3x4xf32>",
                "tensor<3xf32>",
                "tensor<3xf32>",
                "tensor<3xf32>",
                "tensor<3xf64>",
            )
        ),
        "(f32, f32, f32, f32, f64)",
    ),
    (
        "conv2d bias",
        lambda: Conv2dOp(*args("tensor<1x3x8x8xf32>", "tensor<4x3x3x3xf32>", "tensor<4xf16>")),
        "(f32, f32, f16)",
    ),
]


@pytest.mark.parametrize(("build", "listed"), [m[1:] for m in MIXED], ids=[m[0] for m in MIXED])
def test_mixed_element_types_rejected(build: Callable[[], MLOp], listed: str):
    verify_error(build(), f"expects operands of one element type, got {listed}")


def test_select_cond_must_be_i1():
    op = SelectOp(*args("tensor<4xi8>", "tensor<4xf32>", "tensor<4xf32>"))
    verify_error(op, "expects cond to be a tensor of i1, got tensor<4xi8>")


@pytest.mark.parametrize("element", ["i32", "i64"])
def test_gather_indices_accepted(element: str):
    GatherOp(*args("tensor<5x2xf32>", f"tensor<3x{element}>"), 1).verify()


@pytest.mark.parametrize("element", ["i8", "i16", "ui32", "ui64", "f32", "i1"])
def test_gather_indices_rejected(element: str):
    op = GatherOp(*args("tensor<5x2xf32>", f"tensor<3x{element}>"), 1)
    verify_error(op, f"expects indices to be a tensor of i32 or i64, got tensor<3x{element}>")


def test_gather_takes_any_data_element_type():
    GatherOp(*args("tensor<5xi1>", "tensor<3xi64>"), 0).verify()


@pytest.mark.parametrize("element", [*FLOATS, *INTEGERS, "i1"])
def test_cast_to_every_ml_element_type(element: str):
    op = CastOp(arg("tensor<2x?xf32>"), ty(f"tensor<2x?x{element}>"))
    op.verify()
    assert op.infer_result_type() == ty(f"tensor<2x?x{element}>")


@pytest.mark.parametrize("element", ["si32", "index"])
def test_cast_to_non_ml_element_type_rejected(element: str):
    op = CastOp(arg("tensor<4xf32>"), ty(f"tensor<4x{element}>"))
    verify_error(op, f"result has element type {element}, which is not an ml element type")


def test_cast_keeps_shape():
    verify_error(
        CastOp(arg("tensor<4xf32>"), ty("tensor<5xi32>")),
        "result type tensor<5xi32> contradicts the inferred type tensor<4xi32>",
    )


# ---------------------------------------------------------------------------
# Op-specific verifiers
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("predicate", CmpOp.PREDICATES)
def test_cmp_predicates(predicate: str):
    CmpOp(predicate, *args("tensor<4xf32>", "tensor<4xf32>")).verify()


def test_cmp_unknown_predicate():
    op = CmpOp("lte", *args("tensor<4xf32>", "tensor<4xf32>"))
    verify_error(op, 'unknown predicate "lte", expected one of "eq", "ne", "lt", "le", "gt", "ge"')


def test_cmp_on_i1():
    CmpOp("ne", *args("tensor<4xi1>", "tensor<4xi1>")).verify()


def test_gelu_unknown_approximate():
    verify_error(GeluOp(arg("tensor<4xf32>"), "fast"), 'unknown approximate "fast"')


def test_reshape_dynamic_result_needs_shape_operand():
    op = ReshapeOp(arg("tensor<?x4xf32>"), result_type=ty("tensor<?x2xf32>"))
    verify_error(op, "expects a shape operand for the dynamic result type tensor<?x2xf32>")


@pytest.mark.parametrize("shape_type", ["tensor<3xi64>", "tensor<2xi32>", "tensor<?xi64>"])
def test_reshape_shape_operand_type(shape_type: str):
    x, shape = args("tensor<?x4xf32>", shape_type)
    op = ReshapeOp(x, shape=shape, result_type=ty("tensor<?x2xf32>"))
    verify_error(op, f"expects the shape operand to be tensor<2xi64>, got {shape_type}")


def test_reshape_inferred_dimension():
    op = ReshapeOp(arg("tensor<2x3x4xf32>"), [2, -1])
    assert op.result.type == ty("tensor<2x12xf32>")
    assert op.shape is None


def test_broadcast_to_dynamic_dims():
    # A `?` result dim is fine where the operand's aligned dim is `?` too ...
    BroadcastToOp(arg("tensor<?x1xf32>"), ty("tensor<2x?x4xf32>")).verify()
    # ... and anywhere when a shape operand gives the sizes at run time.
    x, shape = args("tensor<3x1xf32>", "tensor<3xi64>")
    BroadcastToOp(x, ty("tensor<?x3x?xf32>"), shape).verify()
    op = BroadcastToOp(arg("tensor<3x1xf32>"), ty("tensor<2x3x?xf32>"))
    verify_error(op, "expects a shape operand: result dimension 2 is dynamic")
    x, shape = args("tensor<3xf32>", "tensor<3xi64>")
    verify_error(
        BroadcastToOp(x, ty("tensor<2x?xf32>"), shape),
        "expects the shape operand to be tensor<2xi64>, got tensor<3xi64>",
    )


# Shape-rule violations reach `verify()` as VerifyException when a result type is written
# (the builders would raise ShapeError while inferring it).
SHAPE_VIOLATIONS: list[tuple[str, Callable[[], MLOp], str]] = [
    (
        "transpose perm",
        lambda: TransposeOp(arg("tensor<2x3xf32>"), [0, 0], ty("tensor<2x2xf32>")),
        "perm [0, 0] is not a permutation of the 2 dimensions",
    ),
    (
        "slice zero step",
        lambda: SliceOp(arg("tensor<4xf32>"), [0], [4], [0], ty("tensor<4xf32>")),
        "steps [0] contain a zero",
    ),
    (
        "slice entries",
        lambda: SliceOp(arg("tensor<4x4xf32>"), [0], [4], [1], ty("tensor<4x4xf32>")),
        "expects starts to have one entry per dimension (2), got 1",
    ),
    (
        "reduce axes",
        lambda: ReduceSumOp(arg("tensor<4x4xf32>"), [1, -1], False, ty("tensor<4xf32>")),
        "axes [1, -1] name a dimension twice",
    ),
    (
        "concat axis",
        lambda: ConcatOp(args("tensor<4xf32>", "tensor<4xf32>"), 1, ty("tensor<8xf32>")),
        "axis 1 is out of range for rank 1",
    ),
    (
        "concat dims",
        lambda: ConcatOp(args("tensor<4x2xf32>", "tensor<4x3xf32>"), 0, ty("tensor<8x2xf32>")),
        "operand 1 differs from operand 0 in dimension 1 (3 vs 2)",
    ),
    (
        "gather axis",
        lambda: GatherOp(*args("tensor<4xf32>", "tensor<2xi64>"), 1, ty("tensor<2xf32>")),
        "axis 1 is out of range for rank 1",
    ),
    (
        "softmax axis",
        lambda: SoftmaxOp(arg("tensor<4xf32>"), 1, ty("tensor<4xf32>")),
        "axis 1 is out of range for rank 1",
    ),
    (
        "layer_norm scale",
        lambda: LayerNormOp(
            *args("tensor<2x4xf32>", "tensor<3xf32>", "tensor<4xf32>"),
            result_type=ty("tensor<2x4xf32>"),
        ),
        "scale shape (3) does not broadcast to the normalized shape (4)",
    ),
    (
        "batch_norm channels",
        lambda: BatchNormOp(
            *args("tensor<1x3x4xf32>", C3, C3, C3, "tensor<4xf32>"),
            result_type=ty("tensor<1x3x4xf32>"),
        ),
        "var size (4) does not match the channel dimension (3)",
    ),
    (
        "matmul contraction",
        lambda: MatmulOp(*args("tensor<4x8xf32>", "tensor<7x2xf32>"), ty("tensor<4x2xf32>")),
        "contracting dimensions differ: lhs dimension 1 is 8, rhs dimension 0 is 7",
    ),
    (
        "conv2d groups",
        lambda: Conv2dOp(
            *args("tensor<1x4x8x8xf32>", "tensor<6x2x3x3xf32>"),
            groups=4,
            result_type=ty("tensor<1x6x6x6xf32>"),
        ),
        "output channels (6) are not divisible by groups (4)",
    ),
    (
        "conv2d strides",
        lambda: Conv2dOp(
            *args("tensor<1x4x8x8xf32>", "tensor<6x4x3x3xf32>"),
            strides=(1, 1, 1),
            result_type=ty("tensor<1x6x6x6xf32>"),
        ),
        "expects 2 strides, got 3",
    ),
    (
        "pool pads",
        lambda: AvgPool2dOp(
            arg("tensor<1x4x8x8xf32>"),
            [2, 2],
            pads=(2, 0, 0, 0),
            result_type=ty("tensor<1x4x9x7xf32>"),
        ),
        "pads [2, 0, 0, 0] must be smaller than the kernel [2, 2]",
    ),
    (
        "attention heads",
        lambda: AttentionOp(
            *args("tensor<6x4x8xf32>", "tensor<4x4x8xf32>", "tensor<4x4x8xf32>"),
            scale=1.0,
            result_type=ty("tensor<6x4x8xf32>"),
        ),
        "query heads (6) must be a multiple of the key/value heads (4)",
    ),
    (
        "attention mask",
        lambda: AttentionOp(
            *args("tensor<2x4x8xf32>", "tensor<2x5x8xf32>", "tensor<2x5x8xf32>", "tensor<4x3xi1>"),
            scale=1.0,
            result_type=ty("tensor<2x4x8xf32>"),
        ),
        "mask (4x3) does not broadcast to the scores (2x4x5)",
    ),
]


@pytest.mark.parametrize(
    ("build", "message"), [v[1:] for v in SHAPE_VIOLATIONS], ids=[v[0] for v in SHAPE_VIOLATIONS]
)
def test_shape_violation_is_a_verify_error(build: Callable[[], MLOp], message: str):
    verify_error(build(), message)


# ---------------------------------------------------------------------------
# Text forms
# ---------------------------------------------------------------------------


def test_contract_generic_form():
    """The generic form that tests outside the project write (ARCHITECTURE.md)."""
    source = """
    func.func @f(%0: tensor<4x8xf32>, %1: tensor<8x16xf32>) -> tensor<4x16xf32> {
      %2 = "ml.matmul"(%0, %1) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
      func.return %2 : tensor<4x16xf32>
    }
    """
    module = parse_module(source)
    assert verify_module(module) == []
    matmul = next(op for op in module.walk() if isinstance(op, MatmulOp))
    assert matmul.result.type == ty("tensor<4x16xf32>")
    pretty = print_module(module)
    assert "ml.matmul %0, %1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>" in pretty
    generic = print_module(module, generic=True)
    assert (
        '"ml.matmul"(%0, %1) : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>' in generic
    )
    assert print_module(parse_module(generic)) == pretty


def test_properties_in_generic_form():
    module = parse_module(
        """
        func.func @f(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
          %t = "ml.transpose"(%x) <{perm = array<i64: 1, 0>}> : (tensor<2x3xf32>) -> tensor<3x2xf32>
          func.return %t : tensor<3x2xf32>
        }
        """
    )
    assert verify_module(module) == []
    text = print_module(module)
    assert (
        "ml.transpose %x {perm = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>" in text
    )


def test_parsed_conv2d_has_default_attributes():
    module = parse_module(
        """
        func.func @f(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32> {
          %y = ml.conv2d %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
          func.return %y : tensor<1x4x6x6xf32>
        }
        """
    )
    assert verify_module(module) == []
    conv = next(op for op in module.walk() if isinstance(op, Conv2dOp))
    assert conv.strides.get_values() == (1, 1)
    assert conv.dilations.get_values() == (1, 1)
    assert conv.pads.get_values() == (0, 0, 0, 0)
    assert conv.groups.value.data == 1
    assert conv.bias is None


def test_parse_reports_contradicting_result_type():
    module = parse_module(
        """
        func.func @f(%a: tensor<4xf32>) -> tensor<5xf32> {
          %b = "ml.exp"(%a) : (tensor<4xf32>) -> tensor<5xf32>
          func.return %b : tensor<5xf32>
        }
        """
    )
    [diagnostic] = verify_module(module)
    assert diagnostic.message == (
        "'ml.exp' op result type tensor<5xf32> contradicts the inferred type tensor<4xf32>"
    )
    assert diagnostic.location is not None
    assert diagnostic.location.line == 3


# ---------------------------------------------------------------------------
# xDSL's cse and dce on ml ops
# ---------------------------------------------------------------------------

CSE_INPUT = """
func.func @f(%a: tensor<4x2xf32>, %b: tensor<2x3xf32>) -> (tensor<4x3xi1>, tensor<4x3xi1>) {
  %0 = ml.matmul %a, %b : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %1 = ml.matmul %a, %b : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  %2 = ml.cmp "lt", %0, %1 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  %3 = ml.cmp "gt", %0, %1 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
  func.return %2, %3 : tensor<4x3xi1>, tensor<4x3xi1>
}
"""

CSE_OUTPUT = """builtin.module {
  func.func @f(%a: tensor<4x2xf32>, %b: tensor<2x3xf32>) -> (tensor<4x3xi1>, tensor<4x3xi1>) {
    %0 = ml.matmul %a, %b : (tensor<4x2xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
    %1 = ml.cmp "lt", %0, %0 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
    %2 = ml.cmp "gt", %0, %0 : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
    func.return %1, %2 : tensor<4x3xi1>, tensor<4x3xi1>
  }
}
"""


def test_cse_merges_identical_ml_ops():
    """Equal ops merge; ops that differ only in a property (the predicate) do not."""
    module = parse_module(CSE_INPUT)
    CommonSubexpressionElimination().apply(CTX, module)
    assert print_module(module) == CSE_OUTPUT
    assert verify_module(module) == []


DCE_INPUT = """
func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ml.exp %x : (tensor<4xf32>) -> tensor<4xf32>
  %1 = ml.mul %0, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = ml.reduce_sum %1 {axes = array<i64: 0>, keepdims = true} : (tensor<4xf32>) -> tensor<1xf32>
  %3 = ml.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %3 : tensor<4xf32>
}
"""

DCE_OUTPUT = """builtin.module {
  func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
    %0 = ml.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    func.return %0 : tensor<4xf32>
  }
}
"""


def test_dce_removes_dead_ml_ops():
    """A dead chain of pure ops goes, the live op stays."""
    module = parse_module(DCE_INPUT)
    DeadCodeElimination().apply(CTX, module)
    assert print_module(module) == DCE_OUTPUT


def test_cse_then_dce_in_nested_regions():
    """An op in an `scf.if` reuses the equal op that dominates it; its dead user goes."""
    module = parse_module(
        """
        func.func @f(%c: i1, %x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
          %0 = ml.relu %x : (tensor<4xf32>) -> tensor<4xf32>
          %1 = scf.if %c -> (tensor<4xf32>) {
            %2 = ml.relu %x : (tensor<4xf32>) -> tensor<4xf32>
            %3 = ml.tanh %2 : (tensor<4xf32>) -> tensor<4xf32>
            scf.yield %2 : tensor<4xf32>
          } else {
            scf.yield %x : tensor<4xf32>
          }
          func.return %0, %1 : tensor<4xf32>, tensor<4xf32>
        }
        """
    )
    CommonSubexpressionElimination().apply(CTX, module)
    DeadCodeElimination().apply(CTX, module)
    text = print_module(module)
    assert text.count("ml.relu") == 1
    assert "ml.tanh" not in text
    assert "scf.yield %0 : tensor<4xf32>" in text
    assert verify_module(module) == []
