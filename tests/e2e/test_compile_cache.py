"""
The on-disk cache of compiled modules: hits across processes, survives corrupted and
truncated entries, concurrent writers, an unwritable folder, `MLC_CACHE=0`, pruning.
"""

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import mlc
from mlc import compiler
from mlc.backend import cache
from mlc.backend.jit import CompiledObject

PROGRAM = """
func.func @main(%x: tensor<?x3xf32>, %y: tensor<3xf32>) -> tensor<?x3xf32> {
  %s = ml.add %x, %y : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %r = ml.relu %s : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %r : tensor<?x3xf32>
}
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh cache folder and an empty in-memory cache, so `compile` goes to disk."""
    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("MLC_CACHE", raising=False)
    compiler._cache.clear()  # pyright: ignore[reportPrivateUsage]
    yield tmp_path
    compiler._cache.clear()  # pyright: ignore[reportPrivateUsage]


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"*{cache.SUFFIX}"))


def check_runs(exe: mlc.Executable) -> None:
    rng = np.random.default_rng()
    x = rng.standard_normal((5, 3)).astype(np.float32)
    y = rng.standard_normal(3).astype(np.float32)
    np.testing.assert_allclose(exe(x, y), np.maximum(x + y, 0), rtol=1e-6)


def compile_fresh() -> mlc.Executable:
    """Compile `PROGRAM` as a new process would: nothing in memory."""
    compiler._cache.clear()  # pyright: ignore[reportPrivateUsage]
    return mlc.compile(PROGRAM)


def test_second_compile_loads_from_disk(cache_dir: Path):
    first = compile_fresh()
    assert not first.from_cache and len(entries(cache_dir)) == 1
    second = compile_fresh()
    assert second.from_cache and second is not first
    check_runs(second)
    assert "define" in second.llvm_ir  # the optimised IR comes back from the bitcode
    assert "stage llvm" in first.compile_times and "stage llvm" not in second.compile_times


def test_hit_in_a_new_process(cache_dir: Path):
    compile_fresh()
    script = (
        "import json, sys, time, mlc\n"
        "start = time.perf_counter()\n"
        "exe = mlc.compile(sys.stdin.read())\n"
        "print(json.dumps({'hit': exe.from_cache, 's': time.perf_counter() - start}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input=PROGRAM, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout)["hit"]


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "garbage"])
def test_damaged_entry_is_recompiled(cache_dir: Path, damage: str):
    compile_fresh()
    (path,) = entries(cache_dir)
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[len(data) // 3] ^= 0x40
    elif damage == "empty":
        data = bytearray()
    else:
        data = bytearray(b"\x7fELF" + os.urandom(300))
    path.write_bytes(data)
    exe = compile_fresh()
    assert not exe.from_cache
    check_runs(exe)
    assert compile_fresh().from_cache  # rewritten whole


def test_disabled_by_environment(cache_dir: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_CACHE", "0")
    check_runs(compile_fresh())
    assert not compile_fresh().from_cache
    assert not entries(cache_dir)


def test_unwritable_folder_still_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MLC_CACHE_DIR", str(blocker / "mlc"))
    check_runs(compile_fresh())
    compiler._cache.clear()  # pyright: ignore[reportPrivateUsage]


def test_key_depends_on_program_target_and_options():
    base = cache.key("ir", "cpu", "a,b")
    assert base == cache.key("ir", "cpu", "a,b")
    assert len({base, cache.key("ir2", "cpu", "a,b"), cache.key("ir", "gpu", "a,b")}) == 3
    assert cache.key("ir", "cpu", "a,b,c") != base


def test_decode_rejects_every_truncation_and_corruption():
    compiled = CompiledObject(os.urandom(200), os.urandom(100))
    data = cache.encode(compiled)
    assert cache.decode(data) == compiled
    assert all(cache.decode(data[:n]) is None for n in range(len(data)))
    for i in range(0, len(data), 7):
        flipped = bytearray(data)
        flipped[i] ^= 1
        assert cache.decode(bytes(flipped)) is None


def test_concurrent_writers_never_expose_half_an_entry(cache_dir: Path):
    objects = [CompiledObject(os.urandom(50_000), bytes([i]) * 1000) for i in range(4)]
    seen: list[CompiledObject | None] = []

    def write(compiled: CompiledObject) -> None:
        for _ in range(20):
            cache.store("k", compiled)

    def read() -> None:
        for _ in range(200):
            seen.append(cache.load("k"))

    threads = [threading.Thread(target=write, args=(o,)) for o in objects]
    threads.append(threading.Thread(target=read))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(entry is None or entry in objects for entry in seen)
    assert cache.load("k") in objects
    assert not list(cache_dir.glob(".*.tmp"))


def test_prune_drops_least_recently_used(tmp_path: Path):
    for i, name in enumerate(["old", "mid", "new"]):
        path = tmp_path / f"{name}{cache.SUFFIX}"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1000 + i, 1000 + i))
    cache.prune(tmp_path, 250)
    assert [p.stem for p in entries(tmp_path)] == ["mid", "new"]
    cache.prune(tmp_path, 0)
    assert not entries(tmp_path)
