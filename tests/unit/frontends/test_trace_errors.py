"""
Errors in traced code point at the user's line (STYLE.md R17): each case checks that
the message holds this file's name and the offending line, says what to do, and
names no file of mlc itself.
"""

import inspect
import os

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.frontends.trace import TraceError

MLC_DIR = os.path.dirname(mlc.__file__)
rng = np.random.default_rng()


def f32(*shape: int) -> np.ndarray:
    return rng.standard_normal(shape).astype(np.float32)


def line_of(fn, text: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if text in line)


def trace_error(fn, *args) -> str:
    with pytest.raises(TraceError) as info:
        mlc.trace(fn, *args)
    message = str(info.value)
    assert "\n" not in message
    assert MLC_DIR not in message
    return message


def test_broadcast_mismatch_names_both_shapes_and_the_line():
    def model(x, y):
        z = x * 2.0
        return z + y  # the bad line

    message = trace_error(model, f32(4, 3), f32(3, 4))
    assert f"{__file__}:{line_of(model, 'the bad line')}:" in message
    assert "4x3" in message and "3x4" in message


def test_matmul_mismatch_names_both_shapes():
    def model(x, w):
        return ops.relu(x @ w)

    message = trace_error(model, f32(2, 5), f32(4, 3))
    assert f"{__file__}:{line_of(model, 'x @ w')}:" in message
    assert "contracting dimensions differ" in message and "(2x5), (4x3)" in message


@pytest.mark.parametrize(
    ("fn", "expected"),
    [
        (lambda x: x + 1 if x.sum() > 0 else x, "use ops.cond, ops.where or ops.while_loop"),
        (lambda x: float(x.sum()), r"float\(\) needs the value of a traced array"),
        (lambda x: np.linalg.norm(x), "numpy.norm needs the value of a traced array"),
        (lambda x: x[x > 0], "boolean mask indexing .* use ops.where"),
        (lambda x: x[7], "index 7 is out of bounds for axis 0 with size 4"),
        (lambda x: x[1, 2, 3], "too many indices for an array of rank 2"),
        (lambda x: x[::0], "slice step cannot be zero"),
        (lambda x: x["a"], "only integers, slices, '...' and None index traced arrays"),
        (lambda x: x.reshape(5, -1), "cannot reshape 12 elements"),
        (lambda x: x.sum(axis=2), "axis 2 is out of range for rank 2"),
        (lambda x: x.T.transpose(0, 0), r"perm \[0, 0\] is not a permutation"),
        (lambda x: ops.concatenate([x, x.T]), "operand 1 differs from operand 0"),
        (lambda x: x // 2, "'//' is not supported"),
        (lambda x: x & x, "bitwise_and of float32 arrays: it takes integers or bools"),
        (lambda x: (x > 0) + (x > 1), "add of bool arrays: cast with .astype first"),
        (lambda x: x + "a", "cannot use str as an array"),
        (lambda x: x.astype(np.complex64), "arrays of dtype complex64 cannot be traced"),
        (lambda x: ops.gelu(x, "fast"), 'approximate must be "none" or "tanh"'),
        (lambda x: ops.softmax(x, axis=3), "axis 3 is out of range"),
        (lambda x: ops.conv2d(x[None, None], f32(1, 2, 3, 3)), "input channels"),
        (lambda x: ops.max_pool2d(x, 2), "expects a rank-4 input"),
        (lambda x: (x, {"a": x}), "arrays, or tuples or lists of them"),
        (lambda x: ops.add(x, [x, x]), "join them with ops.concatenate"),
    ],
    ids=lambda v: v if isinstance(v, str) else "",
)
def test_unsupported_constructs_say_what_to_use(fn, expected):
    import re

    message = trace_error(fn, f32(4, 3))
    assert re.search(expected, message), message
    assert f"{__file__}:" in message


def test_assignment_is_refused():
    def model(x):
        x[0] = 1.0
        return x

    message = trace_error(model, f32(2, 2))
    assert f"{__file__}:{line_of(model, 'x[0] = 1.0')}:" in message
    assert "build a new one with ops.where or ops.concatenate" in message


def test_cond_branches_must_agree():
    def model(x):
        return ops.cond(x.sum() > 0, lambda: x, lambda: x[1:])

    message = trace_error(model, f32(3, 2))
    assert "branches return different types for result 0: tensor<3x2xf32> and " in message
    assert f"{__file__}:{line_of(model, 'ops.cond')}:" in message


def test_loop_state_keeps_its_type():
    def model(x):
        return ops.while_loop(lambda s: s.sum() < 10.0, lambda s: ops.concatenate([s, s]), x)

    message = trace_error(model, f32(3))
    assert "changes state entry 0 from tensor<3xf32> to tensor<6xf32>" in message


def test_fori_loop_bounds_must_be_integers():
    message = trace_error(lambda x: ops.fori_loop(0, "n", lambda i, s: s, x), f32(3))
    assert "loop bounds must be integers" in message


def test_predicates_must_be_single_values():
    message = trace_error(lambda x: ops.cond(x > 0, lambda: x, lambda: -x), f32(3))
    assert "ops.cond needs a single value, got an array of shape (3,)" in message


def test_ops_outside_a_trace_say_where_they_work():
    with pytest.raises(TraceError, match=r"call them inside a function given to mlc\.trace"):
        ops.exp(np.ones(3))


def test_arrays_escaping_their_trace_are_refused():
    kept = []
    mlc.trace(lambda x: kept.append(x) or x, f32(2))
    with pytest.raises(TraceError, match="used outside the trace that made it"):
        mlc.trace(lambda y: y + kept[0], f32(2))
