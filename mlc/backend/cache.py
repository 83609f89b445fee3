"""
The on-disk cache of compiled modules: a second `mlc.compile` of a program, in any
process, loads its machine code instead of lowering and compiling it again.

An entry is one file, `<dir>/<key>.mlco`, named by a key that hashes everything the
machine code depends on: the program's IR, the target and the pass pipeline, mlc's
version and a digest of its sources (so editing a pass never serves stale code), the
xDSL, llvmlite and LLVM versions, and the host's triple, CPU name and features. Its layout:

    b"MLCCACHE" | format (u32) | sha256(body) | body
    body = 5 sections, each as its length (u64) then its bytes: the object file, the
           optimised IR as LLVM bitcode, the program's description (opaque here: the
           compiler's JSON), the constants the code reads (`resources`: a JSON index
           of handle, dtype, shape and offset, then the bytes, each at a 64-byte offset),
           and the further parts of a program compiled in parts (each part's object
           and bitcode, each as its length then its bytes; empty for one part)

A program compiled from source text or an ONNX model is keyed by that source, so a hit
needs no frontend at all: its description (signatures) and its weights, which the
frontend would have made, come from the entry.

The checksum is verified before LLVM sees a byte (LLVM aborts the process on a
malformed object file): a corrupted or truncated entry is a miss, deleted and
recompiled. Writers put an entry in place with an atomic rename of a temporary file
in the same folder, so concurrent compiles of one program never see half an entry;
the last rename wins, and both wrote the same bytes' worth of code.

Where: `$MLC_CACHE_DIR`, else `$XDG_CACHE_HOME/mlc`, else `~/.cache/mlc`. `MLC_CACHE=0`
turns the cache off. The folder is kept under `MLC_CACHE_MAX_MB` (default 1024) by
deleting the least recently used entries after each write; a hit refreshes an entry's
time. A cache that cannot be written (read-only, full disk) is skipped: compiling never
fails because of it.
"""

import hashlib
import json
import os
import struct
import tempfile
from dataclasses import dataclass, field
from functools import cache
from importlib import metadata
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm
import numpy as np

from mlc.backend.compiled import CompiledObject
from mlc.version import __version__

MAGIC = b"MLCCACHE"
FORMAT = 3
SECTIONS = 5
SUFFIX = ".mlco"
_HEADER = struct.Struct("<8sI32s")
_LENGTH = struct.Struct("<Q")
_OFF = ("0", "false", "no", "off")


def enabled() -> bool:
    """False when `MLC_CACHE` says off (0, false, no, off)."""
    return os.environ.get("MLC_CACHE", "1").strip().lower() not in _OFF


def directory() -> Path:
    """The cache folder (not created until something is stored)."""
    if explicit := os.environ.get("MLC_CACHE_DIR"):
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "mlc"


def max_bytes() -> int:
    """The size the folder is pruned to, from `MLC_CACHE_MAX_MB`."""
    try:
        return int(float(os.environ.get("MLC_CACHE_MAX_MB", "1024")) * 2**20)
    except ValueError:
        return 2**30


@cache
def _source_digest() -> str:
    """A digest of mlc's own sources: any edit to a pass changes every key."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


@cache
def _host() -> str:
    """What the machine code depends on besides the program: compilers and CPU."""
    llvm.initialize_native_target()
    parts = [
        f"mlc {__version__} {_source_digest()} xdsl {metadata.version('xdsl')}",
        f"llvmlite {llvmlite.__version__} llvm {'.'.join(map(str, llvm.llvm_version_info))}",
        f"{llvm.get_default_triple()} {llvm.get_host_cpu_name()}",
        llvm.get_host_cpu_features().flatten(),
    ]
    return "\n".join(parts)


def key(ir_text: str, target: str, options: str) -> str:
    """The cache key of a program (printed IR) compiled for `target` with `options`."""
    digest = hashlib.sha256()
    for part in (f"format {FORMAT}", _host(), target, options, ir_text):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()


def _path(cache_key: str) -> Path:
    return directory() / f"{cache_key}{SUFFIX}"


@dataclass(frozen=True, eq=False)  # arrays have no single truth value
class Entry:
    """What one cache entry holds (see the module docstring)."""

    compiled: CompiledObject
    program: bytes = b""
    resources: dict[str, np.ndarray] = field(default_factory=dict[str, np.ndarray])


_ALIGN = 64


def _pack_resources(resources: dict[str, np.ndarray]) -> bytes:
    index: list[dict[str, object]] = []
    blob = bytearray()
    for handle, array in resources.items():
        blob += bytes(-len(blob) % _ALIGN)
        index.append(
            {"handle": handle, "dtype": array.dtype.str, "shape": array.shape, "at": len(blob)}
        )
        blob += np.ascontiguousarray(array).tobytes()
    header = json.dumps(index).encode()
    return _LENGTH.pack(len(header)) + header + bytes(blob)


def _unpack_resources(data: memoryview) -> dict[str, np.ndarray] | None:
    (size,) = _LENGTH.unpack_from(data)
    blob = data[_LENGTH.size + size :]
    resources: dict[str, np.ndarray] = {}
    try:
        for item in json.loads(bytes(data[_LENGTH.size : _LENGTH.size + size])):
            dtype = np.dtype(item["dtype"])
            count = int(np.prod(item["shape"], dtype=np.int64))
            array = np.frombuffer(blob, dtype, count, item["at"]).reshape(item["shape"])
            resources[item["handle"]] = array
    except (ValueError, TypeError, KeyError):
        return None
    return resources


def _unpack_parts(data: memoryview) -> tuple[CompiledObject, ...] | None:
    """The parts packed in `data` (object, bitcode, object, ...); None if malformed."""
    fields: list[bytes] = []
    at = 0
    while at < len(data):
        if at + _LENGTH.size > len(data):
            return None
        (size,) = _LENGTH.unpack_from(data, at)
        at += _LENGTH.size
        if at + size > len(data):
            return None
        fields.append(bytes(data[at : at + size]))
        at += size
    if len(fields) % 2:
        return None
    return tuple(CompiledObject(code, bitcode) for code, bitcode in zip(*[iter(fields)] * 2))


def encode(entry: Entry) -> bytes:
    """An entry's bytes (see the module docstring for the layout)."""
    sections = [
        entry.compiled.object_code,
        entry.compiled.bitcode,
        entry.program,
        _pack_resources(entry.resources),
        b"".join(
            _LENGTH.pack(len(data)) + data
            for part in entry.compiled.parts
            for data in (part.object_code, part.bitcode)
        ),
    ]
    body = b"".join(_LENGTH.pack(len(section)) + section for section in sections)
    return _HEADER.pack(MAGIC, FORMAT, hashlib.sha256(body).digest()) + body


def decode(data: bytes) -> Entry | None:
    """The entry in `data`; None unless intact and of this format."""
    if len(data) < _HEADER.size:
        return None
    magic, version, checksum = _HEADER.unpack_from(data)
    body = memoryview(data)[_HEADER.size :]
    if magic != MAGIC or version != FORMAT or hashlib.sha256(body).digest() != checksum:
        return None
    sections: list[memoryview] = []
    at = 0
    for _ in range(SECTIONS):
        if at + _LENGTH.size > len(body):
            return None
        (size,) = _LENGTH.unpack_from(body, at)
        at += _LENGTH.size
        if at + size > len(body):
            return None
        sections.append(body[at : at + size])
        at += size
    resources = _unpack_resources(sections[3]) if len(sections[3]) else {}
    if resources is None:
        return None
    parts = _unpack_parts(sections[4])
    if parts is None:
        return None
    compiled = CompiledObject(bytes(sections[0]), bytes(sections[1]), parts)
    return Entry(compiled, bytes(sections[2]), resources)


def load(cache_key: str) -> Entry | None:
    """The entry for `cache_key`, or None (missing, corrupted, or the cache is off)."""
    if not enabled():
        return None
    path = _path(cache_key)
    try:
        data = path.read_bytes()
    except OSError:
        return None
    entry = decode(data)
    try:
        if entry is None:
            path.unlink()  # corrupted or truncated: recompiled and rewritten by the caller
        else:
            os.utime(path)  # recently used: pruned last
    except OSError:
        pass
    return entry


def store(cache_key: str, entry: Entry) -> None:
    """Write the entry for `cache_key` atomically; a cache that cannot be written is skipped."""
    if not enabled():
        return
    folder = directory()
    try:
        folder.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(handle, "wb") as out:
                out.write(encode(entry))
            os.replace(temporary, _path(cache_key))
        except BaseException:
            os.unlink(temporary)
            raise
        prune(folder, max_bytes())
    except OSError:
        return


def prune(folder: Path, limit: int) -> None:
    """Delete the least recently used entries until the folder holds at most `limit` bytes."""
    entries: list[tuple[float, int, Path]] = []
    for path in folder.glob(f"*{SUFFIX}"):
        try:
            stat = path.stat()
        except OSError:
            continue  # deleted by another process meanwhile
        entries.append((stat.st_mtime, stat.st_size, path))
    total = sum(size for _, size, _ in entries)
    for _, size, path in sorted(entries):
        if total <= limit:
            return
        path.unlink(missing_ok=True)
        total -= size
