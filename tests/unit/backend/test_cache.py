"""
The disk cache's cheap keys and reads: digests remembered by file stamp (and computed
again when a file changes or is too fresh to trust), entries whose constants are read
aligned and used in place.
"""

import hashlib
import os
from pathlib import Path

import numpy as np
import pytest

from mlc import resources
from mlc.backend import cache
from mlc.backend.compiled import CompiledObject
from mlc.compiler.source import Source


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("MLC_CACHE_DIR", str(folder))
    monkeypatch.delenv("MLC_CACHE", raising=False)
    return folder


def test_remembered_while_the_stamps_stay(cache_dir: Path):
    calls: list[int] = []

    def compute() -> str:
        calls.append(1)
        return f"digest{len(calls)}"

    old = 0  # changed long ago
    assert cache.remembered("x", "stamps-a", compute, old) == "digest1"
    assert cache.remembered("x", "stamps-a", compute, old) == "digest1"
    assert cache.remembered("x", "stamps-b", compute, old) == "digest2"  # the file changed
    assert len(calls) == 2


def test_a_fresh_file_is_never_remembered(cache_dir: Path):
    calls: list[int] = []

    def compute() -> str:
        calls.append(1)
        return "d"

    for _ in range(2):
        cache.remembered("y", "s", compute, newest_ns=10**20)  # changed "now"
    assert len(calls) == 2


def test_remembered_with_the_cache_off(cache_dir: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_CACHE", "0")
    assert cache.remembered("z", "s", lambda: "d", 0) == "d"
    assert not cache_dir.exists()


def test_file_digest_follows_the_file(cache_dir: Path, tmp_path: Path, monkeypatch):
    monkeypatch.setattr(cache, "RACY_NS", -(10**15))  # trust stamps however fresh
    path = tmp_path / "p.mlir"
    reads: list[int] = []
    original = Source.data

    def counted(self: Source) -> bytes | None:
        reads.append(1)
        return original(self)

    monkeypatch.setattr(Source, "data", counted)
    for text in ("func.func @a() {\n}\n", "func.func @b() {\n}\n"):  # same size
        path.write_text(text)
        expected = hashlib.sha256(b"mlir\0" + text.encode()).hexdigest()
        before = len(reads)
        assert Source.of(str(path)).digest() == expected
        assert Source.of(str(path)).digest() == expected
        assert len(reads) == before + 1  # hashed once, then remembered
        stamp = cache.stamp(path)
        os.utime(path, ns=(stamp[1] + 10**9, stamp[1] + 10**9))  # any later write moves it
    assert Source.of(str(tmp_path / "missing.mlir")).digest() is None


def test_entry_constants_are_aligned_and_adopted(cache_dir: Path):
    weights = {
        f"w_{i}_{os.urandom(4).hex()}": np.random.default_rng(i).standard_normal(n).astype(dtype)
        for i, (n, dtype) in enumerate([(37, np.float32), (300, np.float64), (5, np.int8)])
    }
    program = b"x" * 13  # odd sizes before the constants
    cache.store("k", cache.Entry(CompiledObject(os.urandom(101), os.urandom(7)), program, weights))
    entry = cache.load("k")
    assert entry is not None and entry.program == program
    for handle, array in entry.resources.items():
        np.testing.assert_array_equal(array, weights[handle])
        assert array.ctypes.data % resources.ALIGNMENT == 0 and not array.flags.writeable
        resources.restore(handle, array)
        assert resources.lookup(handle) is array  # kept where it lies, not copied
