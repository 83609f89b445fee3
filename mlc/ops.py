"""
`from mlc import ops`: the functions traced programs are written with.

Each records `ml` ops on traced arrays (numpy arrays and Python numbers mixed in
become constants) and behaves as its numpy namesake where numpy has one: type
promotion, `axis=None` reducing everything, `keepdims`, numpy's result dtypes
(`sum` of int32 is int64, `exp` of an int array is float64). The structured
control flow (`cond`, `while_loop`, `fori_loop`) records `scf` ops. Called outside
`mlc.trace` / `mlc.jit`, they raise: they build programs, they do not compute.

This module is the public namespace only: the functions live in the tracing frontend
(`mlc.frontends.trace.functions`, by family), where traced arrays' operators reach
them too.
"""

from mlc.frontends.trace.functions.control_flow import cond, fori_loop, while_loop
from mlc.frontends.trace.functions.elementwise import (
    abs,
    add,
    divide,
    equal,
    erf,
    exp,
    gelu,
    greater,
    greater_equal,
    less,
    less_equal,
    log,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    maximum,
    minimum,
    multiply,
    negative,
    not_equal,
    power,
    relu,
    sigmoid,
    sqrt,
    subtract,
    tanh,
    where,
)
from mlc.frontends.trace.functions.movement import (
    concatenate,
    reshape,
    take,
    take_along_axis,
    transpose,
)
from mlc.frontends.trace.functions.nn import (
    avg_pool2d,
    conv2d,
    layer_norm,
    matmul,
    max_pool2d,
    softmax,
)
from mlc.frontends.trace.functions.reductions import max, mean, min, sum
from mlc.frontends.trace.functions.scans import argmax, argmin, cumsum
from mlc.frontends.trace.recording import cast

__all__ = [
    "abs",
    "add",
    "argmax",
    "argmin",
    "avg_pool2d",
    "cast",
    "concatenate",
    "cond",
    "conv2d",
    "cumsum",
    "divide",
    "equal",
    "erf",
    "exp",
    "fori_loop",
    "gelu",
    "greater",
    "greater_equal",
    "layer_norm",
    "less",
    "less_equal",
    "log",
    "logical_and",
    "logical_not",
    "logical_or",
    "logical_xor",
    "matmul",
    "max",
    "max_pool2d",
    "maximum",
    "mean",
    "min",
    "minimum",
    "multiply",
    "negative",
    "not_equal",
    "power",
    "relu",
    "reshape",
    "sigmoid",
    "softmax",
    "sqrt",
    "subtract",
    "sum",
    "take",
    "take_along_axis",
    "tanh",
    "transpose",
    "where",
    "while_loop",
]
