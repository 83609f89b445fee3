"""
`mlc_call_arrays` (`mlc.backend.array_call`): descriptors written natively from the
arrays' own fields match numpy's view of them; its check lets through what
`Signature.check` passes unchanged and refuses the rest, which then gets the full check
(a conversion, or its one-line error); compiled functions of arrays give the results
the runtime's Python path gives, for ranks 0 to 4, several dtypes, read-only arrays and
dropped results handed out again.
"""

import ctypes
import threading

import numpy as np
import pytest

import mlc
from mlc.backend import array_call, runtime

MIXED = """
func.func @main(%a: tensor<?x3x5x2xf32>, %b: tensor<f64>, %c: tensor<4xi32>, %d: tensor<?x7xf64>)
    -> (tensor<?x3x5x2xf32>, tensor<4xi32>, tensor<?x7xf64>) {
  %x = ml.relu %a : (tensor<?x3x5x2xf32>) -> tensor<?x3x5x2xf32>
  %y = ml.neg %c : (tensor<4xi32>) -> tensor<4xi32>
  %z = ml.add %d, %b : (tensor<?x7xf64>, tensor<f64>) -> tensor<?x7xf64>
  func.return %x, %y, %z : tensor<?x3x5x2xf32>, tensor<4xi32>, tensor<?x7xf64>
}
"""


def test_the_layouts_hold_in_this_process():
    assert array_call.native_call() is not None


@pytest.mark.parametrize(
    "array",
    [
        np.arange(24, dtype=np.float32).reshape(2, 3, 4),
        np.arange(24, dtype=np.float64).reshape(2, 3, 4)[:, ::-1, 1:],
        np.zeros((), np.int64),
        np.zeros((0, 5), np.float32),
        np.ones(9, np.int8)[::3],
    ],
    ids=["contiguous", "strided", "rank-0", "empty", "step-3"],
)
def test_descriptor_is_numpys_view(array):
    call, nothing = array_call._engine_call()
    words = (ctypes.c_int64 * (3 + 2 * array.ndim))()
    block = array_call.CallBlock(nothing, words, [(0, array.dtype, array.shape)], 0)
    assert call(block.address, (array,), 0) == 0
    data = array.__array_interface__["data"][0]
    strides = [s // array.itemsize for s in array.strides]
    assert list(words) == [data, data, 0, *array.shape, *strides]


def _expected(a, b, c, d):
    return np.maximum(a, 0), -c, d + b


@pytest.mark.parametrize("path", ["native", "python"])
def test_results_match_on_either_path(path, monkeypatch):
    exe = mlc.compile(MIXED)
    function = exe.entry._native.__self__
    assert isinstance(function, runtime.CompiledFunction)
    if path == "python":  # as where the layouts do not hold: frames without a call block
        monkeypatch.setattr(function, "_call_arrays", None)
        monkeypatch.setattr(function, "_local", threading.local())
    rng = np.random.default_rng()
    for n in (1, 4, 2):
        a = rng.standard_normal((n, 3, 5, 2)).astype(np.float32)
        b = np.array(rng.standard_normal())
        c = rng.integers(-9, 9, 4).astype(np.int32)
        d = rng.standard_normal((n, 7))
        d.flags.writeable = False
        for got, want in zip(exe(a, b, c, d), _expected(a, b, c, d), strict=True):
            np.testing.assert_array_equal(got, want)
    assert (function._frame().block is None) == (path == "python")


def test_dropped_results_are_freed_before_the_next_call():
    exe = mlc.compile(MIXED)
    rng = np.random.default_rng(3)
    args = lambda: (  # noqa: E731
        rng.standard_normal((2, 3, 5, 2)).astype(np.float32),
        np.array(0.5),
        rng.integers(-9, 9, 4).astype(np.int32),
        rng.standard_normal((2, 7)),
    )
    kept = []
    for k in range(40):
        given = args()
        results = exe(*given)
        for got, want in zip(results, _expected(*given), strict=True):
            np.testing.assert_array_equal(got, want)
        if k % 5 == 0:
            kept.append((given, results))
    for given, results in kept:
        for got, want in zip(results, _expected(*given), strict=True):
            np.testing.assert_array_equal(got, want)


STATIC = """
func.func @main(%a: tensor<?x3xf32>, %b: tensor<3xf32>) -> tensor<?x3xf32> {
  %y = ml.add %a, %b : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return %y : tensor<?x3xf32>
}
"""


def test_the_native_check_lets_through_what_needs_nothing():
    function = mlc.compile(STATIC).entry._native.__self__
    a, b = np.ones((5, 3), np.float32), np.arange(3, dtype=np.float32)
    np.testing.assert_array_equal(function.call_if_fits((a, b)), a + b)


@pytest.mark.parametrize(
    "args",
    [
        (np.ones((5, 3), np.float32)[:, ::-1], np.ones(3, np.float32)),  # not contiguous
        (np.ones((5, 3), np.float64), np.ones(3, np.float32)),  # dtype
        (np.ones((5, 3), np.dtype(">f4")), np.ones(3, np.float32)),  # byte order
        (np.ones((5, 4), np.float32), np.ones(3, np.float32)),  # static size
        (np.ones(3, np.float32), np.ones(3, np.float32)),  # rank
        ([[1.0, 2.0, 3.0]], np.ones(3, np.float32)),  # not an array
        (np.ones((5, 3), np.float32).view(np.recarray), np.ones(3, np.float32)),  # subclass
        (np.ones((5, 3), np.float32),),  # count
    ],
    ids=["strided", "dtype", "byte-order", "size", "rank", "list", "subclass", "count"],
)
def test_the_native_check_refuses_the_rest(args):
    exe = mlc.compile(STATIC)
    assert exe.entry._native.__self__.call_if_fits(args) is runtime.REFUSED
    try:
        checked = exe.entry.signature.check(args)
    except (TypeError, ValueError) as error:
        with pytest.raises(type(error), match="@main"):
            exe(*args)
        return
    np.testing.assert_array_equal(exe(*args), np.add(*[np.asarray(c) for c in checked]))
