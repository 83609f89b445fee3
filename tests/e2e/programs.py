"""Build small `ml` programs with the dialect's builders, for numerical tests."""

from collections.abc import Callable, Sequence

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    FunctionType,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint

ELEMENT_TYPES: dict[str, Attribute] = {
    "float16": Float16Type(),
    "bfloat16": BFloat16Type(),
    "float32": Float32Type(),
    "float64": Float64Type(),
    "bool": IntegerType(1),
    "int8": IntegerType(8),
    "int32": IntegerType(32),
    "int64": IntegerType(64),
}


def tensor(shape: Sequence[int], dtype: str, dynamic: bool = False) -> TensorType:
    """A tensor type; with `dynamic`, every dim other than 1 is `?`."""
    dims = [DYNAMIC_INDEX if dynamic and d != 1 else d for d in shape]
    return TensorType(ELEMENT_TYPES[np.dtype(dtype).name], dims)


def program(
    arg_types: Sequence[Attribute],
    build: Callable[..., Operation | Sequence[Operation] | SSAValue],
    name: str = "main",
) -> ModuleOp:
    """
    A module with one function `@name(args) -> result`, whose body `build(*args)` makes.

    `build` returns the op whose results the function returns, or a list of ops (the
    last one's results are returned), or a value.
    """
    block_ops: list[Operation] = []

    def add(item: Operation | Sequence[Operation] | SSAValue) -> list[SSAValue]:
        if isinstance(item, SSAValue):
            return [item]
        ops = [item] if isinstance(item, Operation) else list(item)
        block_ops.extend(ops)
        return list(ops[-1].results)

    function = func.FuncOp(name, (list(arg_types), []))
    results = add(build(*function.body.block.args))
    builder = Builder(InsertPoint.at_end(function.body.block))
    for op in block_ops:
        builder.insert(op)
    builder.insert(func.ReturnOp(*results))
    function.function_type = FunctionType.from_lists(list(arg_types), [r.type for r in results])
    return ModuleOp([function])


def random_array(rng: np.random.Generator, shape: Sequence[int], dtype: str, low=-3, high=3):
    """Fresh random data of a dtype: floats in [low, high), ints in [low, high]."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(low, high + 1, size=shape).astype(dtype)
    return rng.uniform(low, high, size=shape).astype(dtype)


def matmul_text(case: tuple[int | None, int, int, bool, bool], name: str, element: str) -> str:
    """
    `@name(%a, %b, %bias)`: `a @ b` of `element`s, for `case` = (M, K, N, epilogue,
    transposed B); M None is dynamic, the epilogue adds the bias then a relu.
    """
    m, k, n, epilogue, transposed = case
    rows = "?" if m is None else str(m)
    a, out, bias = (f"tensor<{s}x{element}>" for s in (f"{rows}x{k}", f"{rows}x{n}", str(n)))
    b = f"tensor<{n}x{k}x{element}>" if transposed else f"tensor<{k}x{n}x{element}>"
    lines = [f"func.func @{name}(%a: {a}, %b: {b}, %bias: {bias}) -> {out} {{"]
    operand = "%b"
    if transposed:
        moved = f"tensor<{k}x{n}x{element}>"
        lines.append(f"  %t = ml.transpose %b {{perm = array<i64: 1, 0>}} : ({b}) -> {moved}")
        operand = "%t"
    lines.append(f"  %m = ml.matmul %a, {operand} : ({a}, tensor<{k}x{n}x{element}>) -> {out}")
    result = bias_relu(lines, "%m", out, bias) if epilogue else "%m"
    return "\n".join([*lines, f"  func.return {result} : {out}", "}"])


def bias_relu(lines: list[str], value: str, out: str, bias: str) -> str:
    """Append `relu(value + %bias)` to `lines`; return the result's name."""
    lines.append(f"  %s = ml.add {value}, %bias : ({out}, {bias}) -> {out}")
    lines.append(f"  %r = ml.relu %s : ({out}) -> {out}")
    return "%r"
