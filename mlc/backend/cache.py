"""
The on-disk cache of compiled modules: a second `mlc.compile` of a program, in any
process, loads its machine code instead of lowering and compiling it again.

An entry is one file, `<dir>/<key>.mlco`, named by a key that hashes everything the
machine code depends on: the program's IR, the target and the pass pipeline, mlc's
version and a digest of its sources (so editing a pass never serves stale code), the
xDSL, llvmlite and LLVM versions, and the host's triple, CPU name and features. Its layout:

    b"MLCCACHE" | format (u32) | crc32(body) (u32) | body
    body = 5 sections, each as its length (u64) then its bytes: the object file, the
           optimised IR as LLVM bitcode, the program's description (opaque here: the
           compiler's JSON), the constants the code reads (`resources`: a JSON index
           of handle, dtype, shape and offset, padding, then the bytes, each at an
           offset of the file that is a multiple of 64), and the further parts of a
           program compiled in parts (each part's object and bitcode, each as its
           length then its bytes; empty for one part)

An entry is mapped into memory (page-aligned), so its constants are used where they lie
(`resources.restore` adopts an aligned read-only array): a hit on a model with 100 MB of
weights checks the file once and copies nothing. The checksum is zlib's CRC-32
(accidental damage, not an adversary: 3x faster than sha256 here).

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
import mmap
import os
import struct
import tempfile
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

import llvmlite
import llvmlite.binding as llvm
import numpy as np
import xdsl

from mlc.backend.compiled import CompiledObject
from mlc.version import __version__

MAGIC = b"MLCCACHE"
FORMAT = 4
SECTIONS = 5
SUFFIX = ".mlco"
_HEADER = struct.Struct("<8sII")
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
    """A digest of mlc's own sources: any edit to a pass changes every key. Read once
    per set of file stamps (`remembered`), as each file's stamp says whether it changed."""
    root = Path(__file__).resolve().parent.parent
    paths = sorted(root.rglob("*.py"))

    def digest_all() -> str:
        digest = hashlib.sha256()
        for path in paths:
            digest.update(str(path.relative_to(root)).encode())
            digest.update(path.read_bytes())
        return digest.hexdigest()

    try:
        stamps = [(str(path.relative_to(root)), *stamp(path)) for path in paths]
    except OSError:
        return digest_all()
    name = hashlib.sha256(str(root).encode()).hexdigest()  # one memo per installation
    return remembered(f"mlc-{name[:32]}", repr(stamps), digest_all, max(s[4] for s in stamps))


RACY_NS = 2_000_000_000  # a file changed this recently may change again unseen


def stamp(path: str | os.PathLike[str]) -> tuple[int, int, int, int, int]:
    """What changes when a file's bytes do: size, modification and change times, inode
    and device (the change time, unlike the other, cannot be set back by a program)."""
    status = os.stat(path)
    return (status.st_size, status.st_mtime_ns, status.st_ino, status.st_ctime_ns, status.st_dev)


def remembered(name: str, stamps: str, compute: Callable[[], str], newest_ns: int) -> str:
    """
    `compute()` (a digest of some files, one line of text), remembered in the cache
    folder under `name` with `stamps`, the files' `stamp`s: given back while the stamps
    are the same, computed and remembered again when they differ.

    A result is remembered only if the newest change (`newest_ns`, a change time) came
    `RACY_NS` before `compute` started: a file written again within the file system's
    timestamp granularity might keep its stamp (git's "racily clean" entries). So a
    file written just now is hashed each time until it has aged two seconds.
    """
    if not enabled():
        return compute()
    path = directory() / "stamps" / name
    try:
        kept_stamps, value = path.read_text().split("\n")
        if kept_stamps == stamps:
            return value
    except (OSError, ValueError, UnicodeDecodeError):
        pass
    started = time.time_ns()
    value = compute()
    if newest_ns < started - RACY_NS and "\n" not in stamps + value:
        try:
            write_atomically(path, f"{stamps}\n{value}".encode())
        except OSError:
            pass  # a cache that cannot be written is skipped
    return value


def write_atomically(path: Path, data: bytes) -> None:
    """`data` into `path` by a rename (readers see the old file or the new one); errors
    are the caller's."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        os.unlink(temporary)
        raise


def _xdsl_version() -> str:
    """xDSL's version, from the name of its `dist-info` folder where there is one:
    `importlib.metadata`, which `xdsl.__version__` asks, takes ~0.1 s to import."""
    site = Path(xdsl.__file__).resolve().parent.parent
    found = sorted(site.glob("xdsl-*.dist-info"))
    if len(found) == 1:
        return found[0].name.removesuffix(".dist-info").removeprefix("xdsl-")
    return str(xdsl.__version__)


@cache
def host_identity() -> str:
    """What the machine code depends on besides the program: compilers and CPU."""
    llvm.initialize_native_target()
    parts = [
        f"mlc {__version__} {_source_digest()} xdsl {_xdsl_version()}",
        f"llvmlite {llvmlite.__version__} llvm {'.'.join(map(str, llvm.llvm_version_info))}",
        f"{llvm.get_default_triple()} {llvm.get_host_cpu_name()}",
        llvm.get_host_cpu_features().flatten(),
    ]
    return "\n".join(parts)


def key(ir_text: str, target: str, options: str) -> str:
    """The cache key of a program (printed IR) compiled for `target` with `options`."""
    digest = hashlib.sha256()
    for part in (f"format {FORMAT}", host_identity(), target, options, ir_text):
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


def _pack_resources(resources: dict[str, np.ndarray], at: int) -> bytes:
    """The resources section, which starts at offset `at` of the entry: its arrays each
    at an offset of the entry that is a multiple of `_ALIGN`."""
    index: list[dict[str, object]] = []
    blob = bytearray()
    for handle, array in resources.items():
        blob += bytes(-len(blob) % _ALIGN)
        index.append(
            {"handle": handle, "dtype": array.dtype.str, "shape": array.shape, "at": len(blob)}
        )
        blob += np.ascontiguousarray(array).tobytes()
    header = json.dumps(index).encode()
    padding = bytes(-(at + _LENGTH.size + len(header)) % _ALIGN)
    return _LENGTH.pack(len(header)) + header + padding + bytes(blob)


def _unpack_resources(data: memoryview, at: int) -> dict[str, np.ndarray] | None:
    """The arrays of the resources section `data`, at offset `at` of the entry."""
    (size,) = _LENGTH.unpack_from(data)
    start = _LENGTH.size + size
    blob = data[start + (-(at + start) % _ALIGN) :]
    resources: dict[str, np.ndarray] = {}
    try:
        for item in json.loads(bytes(data[_LENGTH.size : start])):
            dtype = np.dtype(item["dtype"])
            count = int(np.prod(item["shape"], dtype=np.int64))
            array = np.frombuffer(blob, dtype, count, item["at"]).reshape(item["shape"])
            array.setflags(write=False)
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
        b"".join(
            _LENGTH.pack(len(data)) + data
            for part in entry.compiled.parts
            for data in (part.object_code, part.bitcode)
        ),
    ]
    at = _HEADER.size + sum(_LENGTH.size + len(section) for section in sections[:3])
    sections.insert(3, _pack_resources(entry.resources, at + _LENGTH.size))
    body = b"".join(_LENGTH.pack(len(section)) + section for section in sections)
    return _HEADER.pack(MAGIC, FORMAT, zlib.crc32(body)) + body


def decode(data: bytes | memoryview) -> Entry | None:
    """The entry in `data`; None unless intact and of this format. Its constants are
    views of `data` (aligned as in the file where `data` is aligned to 64 bytes)."""
    if len(data) < _HEADER.size:
        return None
    magic, version, checksum = _HEADER.unpack_from(data)
    body = memoryview(data)[_HEADER.size :]
    if magic != MAGIC or version != FORMAT or zlib.crc32(body) != checksum:
        return None
    sections: list[tuple[int, memoryview]] = []
    at = 0
    for _ in range(SECTIONS):
        if at + _LENGTH.size > len(body):
            return None
        (size,) = _LENGTH.unpack_from(body, at)
        at += _LENGTH.size
        if at + size > len(body):
            return None
        sections.append((_HEADER.size + at, body[at : at + size]))
        at += size
    resources = _unpack_resources(sections[3][1], sections[3][0]) if len(sections[3][1]) else {}
    if resources is None:
        return None
    parts = _unpack_parts(sections[4][1])
    if parts is None:
        return None
    compiled = CompiledObject(bytes(sections[0][1]), bytes(sections[1][1]), parts)
    return Entry(compiled, bytes(sections[2][1]), resources)


def _read(path: Path) -> memoryview:
    """
    The bytes of the file at `path`, mapped into memory (read-only, page-aligned, paged
    in at once where the system can: Linux's `MAP_POPULATE`), else read into a buffer
    aligned to `_ALIGN` bytes. A mapping stays valid when a writer replaces the entry
    (a rename: the mapped file lives on) or `prune` deletes it.
    """
    with open(path, "rb", buffering=0) as file:
        size = os.fstat(file.fileno()).st_size
        if size:
            try:
                flags = mmap.MAP_SHARED | getattr(mmap, "MAP_POPULATE", 0)
                mapped = mmap.mmap(file.fileno(), size, flags=flags, prot=mmap.PROT_READ)
                return memoryview(mapped)
            except (AttributeError, TypeError, ValueError, OSError):
                pass  # no such mapping here (Windows): read it
        raw = np.empty(size + _ALIGN, np.uint8)
        start = -raw.ctypes.data % _ALIGN
        data = memoryview(raw[start : start + size])  # pyright: ignore[reportArgumentType]
        done = 0
        while done < size and (count := file.readinto(data[done:])):
            done += count
    return data[:done]


def load(cache_key: str) -> Entry | None:
    """The entry for `cache_key`, or None (missing, corrupted, or the cache is off)."""
    if not enabled():
        return None
    path = _path(cache_key)
    try:
        data = _read(path)
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
        write_atomically(_path(cache_key), encode(entry))
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
