"""
Small results the caller dropped are handed out again (`mlc.backend.runtime._Kept`):
never while anything still refers to them, to their memory or to their owner, and never
changed in shape, dtype or writability.
"""

import threading
import weakref

import numpy as np
import pytest

import mlc
from mlc.backend import runtime

RELU = """
func.func @main(%x: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %y = ml.relu %x : (tensor<?x?xf32>) -> tensor<?x?xf32>
  func.return %y : tensor<?x?xf32>
}
"""

TWICE = """
func.func @main(%x: tensor<?xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %y = ml.relu %x : (tensor<?xf32>) -> tensor<?xf32>
  func.return %y, %y : tensor<?xf32>, tensor<?xf32>
}
"""


@pytest.fixture
def built(monkeypatch):
    """Counts the result arrays the runtime makes (rather than hands out again)."""
    made = []
    make = runtime._result_array

    def counting(*args):
        made.append(args[0])
        return make(*args)

    monkeypatch.setattr(runtime, "_result_array", counting)
    return made


def _inputs(n=3, shape=(4, 5)):
    rng = np.random.default_rng(0)
    return [rng.standard_normal(shape).astype(np.float32) for _ in range(n)]


def test_a_dropped_result_is_handed_out_again(built):
    exe = mlc.compile(RELU)
    x, y, _ = _inputs()
    exe(x)
    exe(x)  # a first call may take the block other allocations freed
    built.clear()
    for _ in range(5):
        np.testing.assert_array_equal(exe(y), np.maximum(y, 0))
    assert len(built) == 0


def test_a_held_result_keeps_its_values(built):
    exe = mlc.compile(RELU)
    x, y, z = _inputs()
    exe(x)
    built.clear()
    first = exe(x)  # the dropped one again
    second = exe(y)
    view = second[1:]
    del second
    third = exe(z)
    np.testing.assert_array_equal(first, np.maximum(x, 0))
    np.testing.assert_array_equal(view, np.maximum(y, 0)[1:])
    np.testing.assert_array_equal(third, np.maximum(z, 0))
    assert len(built) == 2  # while `first` and `view` lived


@pytest.mark.parametrize(
    "change",
    [
        lambda a: setattr(a, "shape", (20,)),
        lambda a: setattr(a, "dtype", np.int32),
        lambda a: a.flags.__setattr__("writeable", False),
    ],
    ids=["shape", "dtype", "read-only"],
)
def test_a_result_changed_in_place_is_not_handed_out(change):
    exe = mlc.compile(RELU)
    x, y, _ = _inputs()
    first = exe(x)
    change(first)
    del first
    second = exe(y)
    assert second.shape == (4, 5) and second.dtype == np.float32 and second.flags.writeable
    np.testing.assert_array_equal(second, np.maximum(y, 0))


def test_a_weakly_referenced_result_is_not_handed_out():
    exe = mlc.compile(RELU)
    x, y, _ = _inputs()
    first = exe(x)
    ref = weakref.ref(first)
    del first
    second = exe(y)
    assert ref() is None  # it died, as without the reuse, rather than came back
    np.testing.assert_array_equal(second, np.maximum(y, 0))


def test_one_buffer_returned_twice():
    exe = mlc.compile(TWICE)
    rng = np.random.default_rng(1)
    for _ in range(4):
        x = rng.standard_normal(7).astype(np.float32)
        a, b = exe(x)
        np.testing.assert_array_equal(a, np.maximum(x, 0))
        np.testing.assert_array_equal(b, np.maximum(x, 0))
        del a  # `b` still views the buffer
        x2 = rng.standard_normal(7).astype(np.float32)
        c, d = exe(x2)
        np.testing.assert_array_equal(b, np.maximum(x, 0))
        np.testing.assert_array_equal(c, np.maximum(x2, 0))
        del b, c, d


def test_threads_keep_their_own_results():
    exe = mlc.compile(RELU)
    failures = []

    def work(seed):
        rng = np.random.default_rng(seed)
        held = []
        for k in range(200):
            x = rng.standard_normal((3, 8)).astype(np.float32)
            result = exe(x)
            if not np.array_equal(result, np.maximum(x, 0)):
                failures.append(seed)
            if k % 7 == 0:
                held.append((x, result))
        for x, result in held:
            if not np.array_equal(result, np.maximum(x, 0)):
                failures.append(seed)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures
