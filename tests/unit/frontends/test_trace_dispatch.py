"""
`mlc.frontends.trace.dispatch`: what traced arrays' operators and numpy's hooks call.

The tables are filled by the op functions as they are defined; these tests pin their
contents (a function that loses its registration would send `np.<name>` on a traced
array to a graph break instead) and check that `from mlc import ops` alone fills them.
"""

import subprocess
import sys

import numpy as np

import mlc
from mlc import ops
from mlc.frontends.trace.dispatch import ARRAY_FUNCTIONS, METHODS, UFUNCS

NUMPY_UFUNCS = {
    "add": ops.add,
    "subtract": ops.subtract,
    "multiply": ops.multiply,
    "divide": ops.divide,
    "true_divide": ops.divide,
    "power": ops.power,
    "negative": ops.negative,
    "absolute": ops.abs,
    "exp": ops.exp,
    "log": ops.log,
    "sqrt": ops.sqrt,
    "tanh": ops.tanh,
    "maximum": ops.maximum,
    "minimum": ops.minimum,
    "equal": ops.equal,
    "not_equal": ops.not_equal,
    "less": ops.less,
    "less_equal": ops.less_equal,
    "greater": ops.greater,
    "greater_equal": ops.greater_equal,
    "logical_and": ops.logical_and,
    "logical_or": ops.logical_or,
    "logical_xor": ops.logical_xor,
    "logical_not": ops.logical_not,
    "matmul": ops.matmul,
    "sin": ops.sin,
    "cos": ops.cos,
    "tan": ops.tan,
    "arcsin": ops.arcsin,
    "arccos": ops.arccos,
    "arctan": ops.arctan,
    "sinh": ops.sinh,
    "cosh": ops.cosh,
    "arcsinh": ops.arcsinh,
    "arccosh": ops.arccosh,
    "arctanh": ops.arctanh,
    "floor": ops.floor,
    "ceil": ops.ceil,
    "rint": ops.rint,
    "isnan": ops.isnan,
    "isinf": ops.isinf,
    "isfinite": ops.isfinite,
    "sign": ops.sign,
    "fmod": ops.fmod,
    "remainder": ops.remainder,
    "bitwise_and": ops.bitwise_and,
    "bitwise_or": ops.bitwise_or,
    "bitwise_xor": ops.bitwise_xor,
    "left_shift": ops.left_shift,
    "right_shift": ops.right_shift,
    "invert": ops.invert,
    "bitwise_not": ops.invert,
}

NUMPY_FUNCTIONS = {
    "sum": ops.sum,
    "mean": ops.mean,
    "max": ops.max,
    "amax": ops.max,
    "min": ops.min,
    "amin": ops.min,
    "transpose": ops.transpose,
    "reshape": ops.reshape,
    "concatenate": ops.concatenate,
    "where": ops.where,
    "matmul": ops.matmul,
    "take": ops.take,
    "maximum": ops.maximum,
    "minimum": ops.minimum,
    "argmax": ops.argmax,
    "argmin": ops.argmin,
    "cumsum": ops.cumsum,
    "take_along_axis": ops.take_along_axis,
    "round": ops.round,
    "around": ops.round,
}


def test_numpy_names_reach_the_ops_functions():
    assert UFUNCS == NUMPY_UFUNCS
    assert ARRAY_FUNCTIONS == NUMPY_FUNCTIONS
    assert METHODS["astype"] is ops.cast
    assert set(METHODS) == {"astype", "__getitem__"}


def test_importing_ops_alone_fills_the_tables():
    code = (
        "from mlc import ops\n"
        "from mlc.frontends.trace import dispatch\n"
        "print(len(dispatch.UFUNCS), len(dispatch.ARRAY_FUNCTIONS), len(dispatch.METHODS))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(len(NUMPY_UFUNCS)), str(len(NUMPY_FUNCTIONS)), "2"]


def test_operators_numpy_functions_and_ops_record_the_same_program():
    def by_operators(x):
        return -abs(x) + x * 2, (x > 0) & (x <= 1), x.T.sum(axis=0), x.astype(np.int32)

    def by_numpy(x):
        return (
            np.add(np.negative(np.abs(x)), np.multiply(x, 2)),
            np.logical_and(np.greater(x, 0), np.less_equal(x, 1)),
            np.sum(np.transpose(x), axis=0),
            x.astype(np.int32),
        )

    def by_ops(x):
        return (
            ops.add(ops.negative(ops.abs(x)), ops.multiply(x, 2)),
            ops.logical_and(ops.greater(x, 0), ops.less_equal(x, 1)),
            ops.sum(ops.transpose(x), axis=0),
            ops.cast(x, np.int32),
        )

    x = np.ones((2, 3), np.float32)
    programs = []
    for fn in (by_operators, by_numpy, by_ops):
        fn.__name__ = "f"
        programs.append(str(mlc.trace(fn, x)))
    assert programs[0] == programs[1] == programs[2]
    assert "ml.reduce_sum" in programs[0]


def test_functional_scatters_and_jax_names_take_no_numpy_name():
    # numpy's put_along_axis writes into its argument: ours returns the new array, so
    # np.put_along_axis on a traced array must not reach it and silently do nothing
    for function in (ops.put_along_axis, ops.scatter_add, ops.top_k, ops.scan):
        assert function not in ARRAY_FUNCTIONS.values() and function not in UFUNCS.values()
