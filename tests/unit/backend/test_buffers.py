import subprocess
import sys
import threading
from collections.abc import Iterator

import numpy as np
import pytest

import mlc
from mlc.backend import buffers

MB = 1 << 20
N = 1 << 19  # f32 elements: a 2 MiB result, kept when dropped
PROGRAM = f"""
func.func @main(%a: tensor<{N}xf32>, %b: tensor<{N}xf32>) -> tensor<{N}xf32> {{
  %0 = ml.mul %a, %b : (tensor<{N}xf32>, tensor<{N}xf32>) -> tensor<{N}xf32>
  %1 = ml.relu %0 : (tensor<{N}xf32>) -> tensor<{N}xf32>
  return %1 : tensor<{N}xf32>
}}
"""


@pytest.fixture(autouse=True)
def fresh_cache() -> Iterator[None]:
    """Each test starts with an empty cache of 64 MiB, and leaves the default behind."""
    buffers.set_limit(64)
    yield
    buffers.set_limit(buffers.configured_limit() / MB)


@pytest.fixture(scope="module")
def program() -> mlc.Executable:
    return mlc.compile(PROGRAM)


def _inputs(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    return rng.standard_normal(N, dtype=np.float32), rng.standard_normal(N, dtype=np.float32)


def _want(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.maximum(a * b, 0)


def _address(array: np.ndarray) -> int:
    return array.__array_interface__["data"][0]


def test_a_dropped_result_serves_the_next_call(program: mlc.Executable):
    first = program(*_inputs(0))
    address = _address(first)
    del first
    assert buffers.kept_bytes() >= N * 4
    a, b = _inputs(1)
    second = program(a, b)
    assert _address(second) == address
    np.testing.assert_array_equal(second, _want(a, b))


@pytest.mark.parametrize(
    "keep",
    [
        lambda r: r[10:20],  # a slice
        lambda r: r.reshape(2, -1),  # a view
        lambda r: np.asarray(r),  # the same array
        lambda r: memoryview(r),  # a buffer export
        lambda r: r.view(np.int32)[::7],  # a strided view of another dtype
    ],
)
def test_memory_still_referenced_is_never_reused(program: mlc.Executable, keep):
    a, b = _inputs(2)
    result = program(a, b)
    alias = keep(result)
    snapshot = np.array(alias, copy=True)
    address = _address(result)
    del result
    for seed in range(3):
        other = program(*_inputs(10 + seed))
        assert _address(other) != address
    np.testing.assert_array_equal(np.asarray(alias), snapshot)


def test_each_result_of_a_call_is_kept_when_dropped():
    text = f"""
    func.func @main(%a: tensor<{N}xf32>) -> (tensor<{N}xf32>, tensor<{N}xf32>) {{
      %0 = ml.relu %a : (tensor<{N}xf32>) -> tensor<{N}xf32>
      return %0, %0 : tensor<{N}xf32>, tensor<{N}xf32>
    }}
    """
    exe = mlc.compile(text)
    a, _ = _inputs(3)
    x, y = exe(a)
    del x
    kept = buffers.kept_bytes()
    assert kept >= N * 4
    np.testing.assert_array_equal(y, np.maximum(a, 0))
    del y
    assert buffers.kept_bytes() >= kept + N * 4


def test_small_buffers_are_left_to_the_c_library():
    allocator = buffers.runtime()
    pointer = allocator.alloc(buffers.MIN_CACHED // 2)
    assert pointer
    allocator.free(pointer)
    assert buffers.kept_bytes() == 0


def test_best_fit_within_an_eighth():
    allocator = buffers.runtime()
    big, small = allocator.alloc(8 * MB), allocator.alloc(4 * MB)
    allocator.free(big)
    allocator.free(small)
    assert allocator.alloc(4 * MB - 100) == small  # the snug one, not the first
    assert allocator.alloc(5 * MB) != big  # 8 MiB wastes more than an eighth of 5 MiB
    assert allocator.alloc(8 * MB) == big


def test_the_limit_evicts_the_least_recently_kept():
    buffers.set_limit(5)
    allocator = buffers.runtime()
    first, second, third = (allocator.alloc(2 * MB) for _ in range(3))
    for pointer in (first, second, third):
        allocator.free(pointer)
    assert buffers.kept_bytes() <= 5 * MB
    reused = {allocator.alloc(2 * MB) for _ in range(2)}
    assert reused == {second, third}
    for pointer in reused:
        allocator.free(pointer)


def test_every_slot_in_use_evicts(program: mlc.Executable):
    allocator = buffers.runtime()
    pointers = [allocator.alloc(MB) for _ in range(buffers.SLOTS + 5)]
    for pointer in pointers:
        allocator.free(pointer)
    assert buffers.kept_bytes() <= buffers.SLOTS * (MB + 4096)
    assert allocator.alloc(MB) in pointers[5:]


def test_limit_zero_keeps_nothing(program: mlc.Executable):
    buffers.set_limit(0)
    result = program(*_inputs(4))
    del result
    assert buffers.kept_bytes() == 0


def test_release_frees_everything(program: mlc.Executable):
    result = program(*_inputs(5))
    del result
    assert buffers.kept_bytes() > 0
    buffers.release()
    assert buffers.kept_bytes() == 0


def test_concurrent_calls_get_their_own_buffers(program: mlc.Executable):
    failures: list[str] = []

    def work(seed: int) -> None:
        for round_ in range(10):
            a, b = _inputs(seed * 100 + round_)
            result = program(a, b)
            if not np.array_equal(result, _want(a, b)):
                failures.append(f"thread {seed} round {round_}")

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


@pytest.mark.parametrize(("value", "megabytes"), [("0", 0), ("3.5", 3.5), (" 12 ", 12)])
def test_limit_variable(monkeypatch: pytest.MonkeyPatch, value: str, megabytes: float):
    monkeypatch.setenv(buffers.LIMIT_VARIABLE, value)
    assert buffers.configured_limit() == int(megabytes * MB)


@pytest.mark.parametrize("value", ["lots", "-1", "nan"])
def test_bad_limit_variable_warns(monkeypatch: pytest.MonkeyPatch, value: str):
    monkeypatch.setenv(buffers.LIMIT_VARIABLE, value)
    with pytest.warns(RuntimeWarning, match=buffers.LIMIT_VARIABLE):
        assert buffers.configured_limit() == buffers.default_limit()


def test_a_forked_child_allocates():
    code = f"""
import os
import numpy as np
import mlc
exe = mlc.compile('''{PROGRAM}''')
a = np.ones({N}, np.float32)
result = exe(a, a)
del result  # kept, with the lock taken and released
pid = os.fork()
if pid == 0:
    os._exit(0 if float(exe(a, a * 2).sum()) == 2.0 * {N} else 3)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0"


def test_results_alive_at_exit_are_freed_cleanly():
    code = f"""
import numpy as np
import mlc
exe = mlc.compile('''{PROGRAM}''')
a = np.ones({N}, np.float32)
kept = [exe(a, a) for _ in range(3)]  # freed while the interpreter shuts down
view = kept[0][::2]
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert (result.returncode, result.stderr) == (0, "")


def _vm_flags(address: int) -> set[str]:
    """The `VmFlags` of the mapping of this process that holds `address`."""
    inside = False
    with open("/proc/self/smaps") as smaps:
        lines = smaps.read().splitlines()
    for line in lines:
        fields = line.split()
        if "-" in fields[0] and len(fields) >= 5:
            start, end = (int(x, 16) for x in fields[0].split("-"))
            inside = start <= address < end
        elif inside and fields[0] == "VmFlags:":
            return set(fields[1:])
    raise AssertionError(f"no mapping holds {address:#x}")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/smaps")
def test_fresh_buffers_from_4_mib_are_advised_huge_pages():
    """From `HUGE_PAGED` bytes a fresh buffer's whole pages are advised huge (`hg`), as
    numpy's large arrays are; a smaller one is the C library's as it comes. In a fresh
    process: in this one a small buffer may reuse memory a large one had advised."""
    code = """
from mlc.backend import buffers
from tests.unit.backend.test_buffers import MB, _vm_flags
allocator = buffers.runtime()
large, small = allocator.alloc(buffers.HUGE_PAGED + 12345), allocator.alloc(2 * MB)
print("hg" in _vm_flags(-(-large // 4096) * 4096 + MB), "hg" in _vm_flags(small + MB))
"""
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["True", "False"]
