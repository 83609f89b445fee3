"""
What the VJP tests share: build a one-op `ml` function, run the `autodiff` pass on it, run
both functions with a numpy interpreter, and compare the VJP with central differences.

The interpreter runs `ml` ops through constant folding's evaluator
(`mlc.lowering.graph.patterns.evaluate`, the lowering's semantics), plus the ops it does not
fold in numpy (matmul, softmax, layer_norm here; windows, indexing, scans and the math ops
in `numpy_reference`), so a rule is checked in float64 in
milliseconds, without compiling.
"""

from collections.abc import Callable, Sequence

import numpy as np
from hypothesis import settings
from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, tensor
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX as DYNAMIC,
)
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    f64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from mlc.autodiff.differentiate import AutodiffPass
from mlc.autodiff.partition import SplitNames, split
from mlc.dialects import ml
from mlc.lowering.graph.patterns.evaluate import evaluate, numpy_dtype
from tests.unit.autodiff.numpy_reference import reference

hypothesis_settings = settings(database=None, max_examples=25, deadline=None)

Make = Callable[[Builder, Sequence[SSAValue]], SSAValue]


def f64_type(shape: Sequence[int]) -> TensorType[Attribute]:
    return TensorType(f64, list(shape))


def one_op_module(make: Make, types: Sequence[Attribute]) -> ModuleOp:
    """`@f(args of types) -> make(args)`."""
    block = Block(arg_types=types)
    builder = Builder(InsertPoint.at_end(block))
    result = make(builder, block.args)
    block.add_op(func.ReturnOp(result))
    function = func.FuncOp("f", (list(types), [result.type]), Region(block))
    return ModuleOp([function])


def run(function: func.FuncOp, args: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The results of `function` on `args`, op by op in numpy."""
    values: dict[SSAValue, np.ndarray] = dict(zip(function.body.block.args, args, strict=True))
    for op in function.body.block.ops:
        if isinstance(op, func.ReturnOp):
            return [values[v] for v in op.operands]
        value = _value(op, [values[v] for v in op.operands])
        outputs = value if isinstance(value, tuple) else (value,)
        values.update(zip(op.results, outputs, strict=True))
    raise AssertionError("no return")


def _value(op: Operation, args: list[np.ndarray]) -> np.ndarray | tuple[np.ndarray, ...]:
    if (value := reference(op, args)) is not None or (value := _sized(op, args)) is not None:
        return value
    match op:
        case arith.ConstantOp():
            attr = op.value
            assert isinstance(attr, DenseIntOrFPElementsAttr)
            t = attr.get_type()
            dtype = numpy_dtype(t.element_type)
            return np.array(attr.get_values(), dtype).reshape(t.get_shape())
        case ml.MatmulOp():
            return np.matmul(*args)
        case ml.SoftmaxOp():
            x, axis = args[0], op.axis.value.data
            e = np.exp(x - x.max(axis=axis, keepdims=True))
            return e / e.sum(axis=axis, keepdims=True)
        case ml.LayerNormOp():
            x, scale, bias = args
            axes = tuple(range(op.axis.value.data % x.ndim, x.ndim))
            mean = x.mean(axis=axes, keepdims=True)
            var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
            return (x - mean) / np.sqrt(var + op.epsilon.value.data) * scale + bias
        case ml.ReshapeOp() | ml.BroadcastToOp():
            return evaluate(op, args[:1])
        case _:
            return evaluate(op, args)


def _sized(op: Operation, args: list[np.ndarray]) -> np.ndarray | None:
    """The ops that give or take sizes known at run time (dynamic dims); None for others."""
    match op:
        case arith.ConstantOp() if isinstance(op.value, IntegerAttr):
            return np.array(op.value.value.data, np.int64)
        case tensor.DimOp():
            return np.array(args[0].shape[int(args[1])], np.int64)
        case tensor.FromElementsOp():
            return np.array(args, np.int64).reshape(op.result.type.get_shape())
        case arith.MuliOp():
            return args[0] * args[1]
        case arith.IndexCastOp():
            return np.array(args[0], np.int64)
        case ml.BroadcastToOp() if len(args) == 2:
            return np.broadcast_to(args[0], tuple(args[1])).copy()
        case ml.BroadcastToOp() if DYNAMIC in (want := op.result.type.get_shape()):
            lead = len(want) - args[0].ndim  # a dynamic dim is the operand's, aligned right
            sizes = [args[0].shape[d - lead] if n == DYNAMIC else n for d, n in enumerate(want)]
            return np.broadcast_to(args[0], sizes).copy()
        case ml.ReshapeOp() if len(args) == 2:
            return args[0].reshape(tuple(args[1]))
    return None


def functions(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {f.sym_name.data: f for f in module.ops if isinstance(f, func.FuncOp)}


def vjp_module(make: Make, types: Sequence[Attribute], wrt: Sequence[int] = ()) -> ModuleOp:
    module = one_op_module(make, types)
    AutodiffPass(wrt=tuple(wrt), vjp=True).apply(Context(), module)
    module.verify()
    return module


def check_vjp(
    make: Make,
    inputs: Sequence[np.ndarray],
    wrt: Sequence[int] | None = None,
    seed: int = 0,
    rtol: float = 1e-6,
    atol: float = 1e-7,
    eps: float = 1e-6,
    dynamic: Sequence[int] = (),
) -> None:
    """
    The VJP of `make` at `inputs` against central differences of <ct, f(x)>; the first
    dim of each input listed in `dynamic` is typed `?` (its size then known at run time).
    """
    inputs = [np.array(a) for a in inputs]
    types = [
        TensorType(
            _element(a), [DYNAMIC if i in dynamic and d == 0 else n for d, n in enumerate(a.shape)]
        )
        for i, a in enumerate(inputs)
    ]
    wrt = list(wrt) if wrt is not None else [i for i, a in enumerate(inputs) if a.dtype.kind == "f"]
    module = vjp_module(make, types, wrt)
    f, f_vjp = functions(module)["f"], functions(module)["f_vjp"]
    (out,) = run(f, inputs)
    ct = np.random.default_rng(seed).standard_normal(out.shape)
    grads = run(f_vjp, [*inputs, ct])
    assert len(grads) == len(wrt)
    check_split(f_vjp, inputs, ct, grads)
    for g, i in zip(grads, wrt, strict=True):
        assert g.shape == inputs[i].shape, (g.shape, inputs[i].shape)
        np.testing.assert_allclose(g, numeric_vjp(f, inputs, i, ct, eps), rtol=rtol, atol=atol)


def check_split(
    joint: func.FuncOp, inputs: Sequence[np.ndarray], ct: np.ndarray, grads: Sequence[np.ndarray]
) -> None:
    """The forward and backward `autodiff-partition` splits `joint` into give its grads."""
    forward, backward, cut = split(joint, SplitNames("forward", "backward"))
    residuals = run(forward, inputs)
    assert len(residuals) == len(cut.saved)
    for got, want in zip(run(backward, [*residuals, ct]), grads, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-300)


def numeric_vjp(
    f: func.FuncOp, inputs: Sequence[np.ndarray], i: int, ct: np.ndarray, eps: float
) -> np.ndarray:
    """d<ct, f(x)>/d inputs[i] by central differences."""
    grad = np.zeros_like(inputs[i])
    for index in np.ndindex(inputs[i].shape):
        moved = []
        for sign in (1.0, -1.0):
            args = [a.copy() for a in inputs]
            args[i][index] += sign * eps
            moved.append(float(np.sum(ct * run(f, args)[0])))
        grad[index] = (moved[0] - moved[1]) / (2 * eps)
    return grad


def _element(a: np.ndarray) -> Attribute:
    from mlc.frontends.trace.tracer import ELEMENT_TYPES

    return ELEMENT_TYPES[a.dtype]
