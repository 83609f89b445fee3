"""
Constant folding computes what the compiled program computes.

Each test builds one function with many results, one per folded op kind, from two
random operands. Run compiled, the operands are arguments; folded, they are
constants and `canonicalize` must turn every result into an `arith.constant`. The
two must agree bit for bit for exactly rounded arithmetic, and to within the run
time's libm error for transcendentals (which folding rounds correctly).
"""

from collections.abc import Callable

import numpy as np
import pytest
from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, FunctionType, ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.rewriter import InsertPoint

from mlc.dialects import ml
from mlc.lowering.graph.patterns.fold import to_array, to_attr
from mlc.pipeline import run_pipeline
from tests.e2e.programs import random_array, tensor
from tests.gpu.targets import compile_for

SEED = np.random.SeedSequence().entropy
SHAPE = (3, 4)

# name -> the ops computing one result from the operands (a, b) of a dtype; the last
# op's result is the one compared. `b` is positive for floats, non-zero for integers.
OpBuilder = Callable[[SSAValue, SSAValue, str], list[Operation]]


def _gather(a: SSAValue) -> list[Operation]:
    indices = np.asarray([2, -1, 0], "int64")
    constant = arith.ConstantOp(to_attr(indices, tensor(indices.shape, "int64")))
    return [constant, ml.GatherOp(a, constant.result, axis=1)]


def _select(a: SSAValue, b: SSAValue) -> list[Operation]:
    cond = ml.CmpOp("lt", a, b)
    return [cond, ml.SelectOp(cond.result, a, b)]


COMMON: dict[str, OpBuilder] = {
    "add": lambda a, b, t: [ml.AddOp(a, b)],
    "sub": lambda a, b, t: [ml.SubOp(a, b)],
    "mul": lambda a, b, t: [ml.MulOp(a, b)],
    "div": lambda a, b, t: [ml.DivOp(a, b)],
    "max": lambda a, b, t: [ml.MaxOp(a, b)],
    "min": lambda a, b, t: [ml.MinOp(a, b)],
    "neg": lambda a, b, t: [ml.NegOp(a)],
    "abs": lambda a, b, t: [ml.AbsOp(a)],
    "relu": lambda a, b, t: [ml.ReluOp(a)],
    "cmp_le": lambda a, b, t: [ml.CmpOp("le", a, b)],
    "cmp_ne": lambda a, b, t: [ml.CmpOp("ne", a, b)],
    "select": lambda a, b, t: _select(a, b),
    "to_bool": lambda a, b, t: [ml.CastOp(a, tensor(SHAPE, "bool"))],
    "transpose": lambda a, b, t: [ml.TransposeOp(a, (1, 0))],
    "reshape": lambda a, b, t: [ml.ReshapeOp(a, (2, 6))],
    "broadcast": lambda a, b, t: [ml.BroadcastToOp(a, tensor((2, *SHAPE), t))],
    "concat": lambda a, b, t: [ml.ConcatOp([a, b], axis=0)],
    "slice": lambda a, b, t: [ml.SliceOp(a, (2, 0), (-4, 4), (-1, 3))],
    "gather": lambda a, b, t: _gather(a),
    "reduce_sum": lambda a, b, t: [ml.ReduceSumOp(a, (1,))],
    "reduce_mean": lambda a, b, t: [ml.ReduceMeanOp(a, (0, 1), keepdims=True)],
    "reduce_max": lambda a, b, t: [ml.ReduceMaxOp(a, (0,))],
    "reduce_min": lambda a, b, t: [ml.ReduceMinOp(a, (-1,))],
}

FLOAT_EXACT: dict[str, OpBuilder] = {
    "sqrt": lambda a, b, t: [ml.SqrtOp(b)],
    "rsqrt": lambda a, b, t: [ml.RsqrtOp(b)],
    "to_int": lambda a, b, t: [ml.CastOp(a, tensor(SHAPE, "int32"))],
    "to_float": lambda a, b, t: [ml.CastOp(a, tensor(SHAPE, OTHER_FLOAT[t]))],
}

# The float type each float casts to. Not f64 -> f16: the JIT cannot link the
# `__truncdfhf2` that LLVM calls for it on x86 (a backend limitation).
OTHER_FLOAT = {"float64": "float32", "float32": "float16", "float16": "float64"}

FLOAT_TRANSCENDENTAL: dict[str, OpBuilder] = {
    "exp": lambda a, b, t: [ml.ExpOp(a)],
    "log": lambda a, b, t: [ml.LogOp(b)],
    "tanh": lambda a, b, t: [ml.TanhOp(a)],
    "sigmoid": lambda a, b, t: [ml.SigmoidOp(a)],
    "erf": lambda a, b, t: [ml.ErfOp(a)],
    "gelu": lambda a, b, t: [ml.GeluOp(a)],
    "gelu_tanh": lambda a, b, t: [ml.GeluOp(a, "tanh")],
    "pow": lambda a, b, t: [ml.PowOp(b, a)],
}

# Not integer pow: convert-to-llvm does not lower `math.ipowi` yet (its folding is
# checked against Python integers in tests/unit/lowering/graph/test_fold.py).
INT_ONLY: dict[str, OpBuilder] = {
    "to_float": lambda a, b, t: [ml.CastOp(a, tensor(SHAPE, "float32"))],
    "to_i8": lambda a, b, t: [ml.CastOp(a, tensor(SHAPE, "int8"))],
}


def build(builders: dict[str, OpBuilder], dtype: str, constants=None) -> ModuleOp:
    """One function returning every builder's result: of (a, b), or of constants."""
    t = tensor(SHAPE, dtype)
    arg_types = [] if constants is not None else [t, t]
    function = func.FuncOp("main", (arg_types, []))
    block = function.body.block
    builder = Builder(InsertPoint.at_end(block))
    if constants is None:
        a, b = block.args
    else:
        a, b = (builder.insert(arith.ConstantOp(to_attr(x, t))).result for x in constants)
    results: list[SSAValue] = []
    for make in builders.values():
        ops = make(a, b, dtype)
        for op in ops:
            builder.insert(op)
        results.append(ops[-1].results[0])
    builder.insert(func.ReturnOp(*results))
    function.function_type = FunctionType.from_lists(arg_types, [r.type for r in results])
    return ModuleOp([function])


def folded_values(builders: dict[str, OpBuilder], dtype: str, a, b) -> list[np.ndarray]:
    """The results of `canonicalize` on the constant program, which must all be constants."""
    module = build(builders, dtype, (a, b))
    run_pipeline(module, "canonicalize")
    function = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    values: list[np.ndarray] = []
    for name, value in zip(builders, function.body.block.last_op.operands, strict=True):  # pyright: ignore[reportOptionalMemberAccess]
        owner = value.owner
        assert isinstance(owner, arith.ConstantOp), f"{name} was not folded: {owner}"
        assert isinstance(owner.value, DenseIntOrFPElementsAttr)
        array = to_array(owner.value)
        assert array is not None
        values.append(array)
    return values


def operands(dtype: str, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    a = random_array(rng, SHAPE, dtype, -3, 3)
    if np.issubdtype(np.dtype(dtype), np.integer):
        b = random_array(rng, SHAPE, dtype, 1, 3) * np.where(rng.random(SHAPE) < 0.5, -1, 1)
        return a, b.astype(dtype)
    return a, random_array(rng, SHAPE, dtype, 0.25, 3)


# Float sums are reassociated (`fastmath<reassoc>`): the CPU adds a row left to right, as
# folding does, but the GPU adds it in a butterfly across a warp's lanes, so there the
# two agree to within reordering's error bound, n eps sum|a| for n terms, not bit for bit.
REASSOCIATED = {"reduce_sum", "reduce_mean"}


def reordering_bound(builder: OpBuilder, dtype: str, a, b, terms: int) -> np.ndarray:
    """n eps sum|a| (or mean|a|) for each result of the reduction `builder`."""
    magnitude = folded_values({"bound": builder}, dtype, np.abs(a), b)[0].astype(np.float64)
    return terms * float(np.finfo(dtype).eps) * magnitude


def compare(builders, dtype: str, rng: np.random.Generator, target: str, rtol: float = 0.0) -> None:
    a, b = operands(dtype, rng)
    compiled = compile_for(build(builders, dtype), target)(a, b)
    compiled = compiled if isinstance(compiled, tuple) else (compiled,)
    folded = folded_values(builders, dtype, a, b)
    for name, got, want in zip(builders, folded, compiled, strict=True):
        message = f"{name} ({dtype}, seed {SEED})"
        assert got.dtype == want.dtype and got.shape == want.shape, message
        if target == "cuda" and name in REASSOCIATED and np.issubdtype(got.dtype, np.floating):
            bound = reordering_bound(builders[name], dtype, a, b, a.size // got.size)
            error = np.abs(got.astype(np.float64) - want)
            assert np.all(error <= bound), f"{message}: {error.max()} over {bound.min()}"
        elif rtol:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol, err_msg=message)
        else:
            np.testing.assert_array_equal(got, want, err_msg=message)


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_float_folds_exactly(rng, dtype, target):
    compare({**COMMON, **FLOAT_EXACT}, dtype, rng, target)


# Folding is correctly rounded; the run time's libm (or, for f32 erf, an inline
# approximation) is within a few ulps.
TRANSCENDENTAL_RTOL = {"float32": 2e-6, "float64": 1e-13, "float16": 2e-3}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_float_transcendentals_fold_closely(rng, dtype, target):
    compare(FLOAT_TRANSCENDENTAL, dtype, rng, target, TRANSCENDENTAL_RTOL[dtype])


@pytest.mark.parametrize("dtype", ["int32", "int8", "int64"])
def test_integer_folds_exactly(rng, dtype, target):
    compare({**COMMON, **INT_ONLY}, dtype, rng, target)
