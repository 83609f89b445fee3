"""
What the benchmarks ran on, and the limits they are measured against.

- `describe()`: CPU model, usable cores, the vector flags that matter, cache sizes, and
  the versions of every system compared, so a results file says where it came from.
- `fma_peak()`: f32 FMA throughput of the host, from a micro-kernel generated here with
  llvmlite: independent FMA chains on the widest vectors the host has (enough chains to
  hide the FMA latency), one copy per core, run from threads through ctypes (which
  releases the GIL).
- `copy_bandwidth()`: memory bandwidth as `np.copyto` into a preallocated buffer far
  larger than the last-level cache, on one thread and split over all cores.
"""

import ctypes
import os
import platform
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np

FLAGS = ("avx512f", "avx512bw", "avx512_bf16", "avx2", "fma", "f16c", "neon", "asimd")


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _cpuinfo() -> dict[str, str]:
    info: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            name, _, value = line.partition(":")
            info.setdefault(name.strip(), value.strip())
    except OSError:
        pass
    return info


def _caches() -> str:
    """Per-core cache sizes, e.g. 'L1d 32K, L1i 32K, L2 512K, L3 32768K'."""
    found: list[str] = []
    for index in sorted(Path("/sys/devices/system/cpu/cpu0/cache").glob("index*")):
        try:
            level, kind, size = (
                (index / name).read_text().strip() for name in ("level", "type", "size")
            )
        except OSError:
            continue
        suffix = {"Data": "d", "Instruction": "i"}.get(kind, "")
        found.append(f"L{level}{suffix} {size}")
    return ", ".join(found) or "unknown"


def _version(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def describe() -> list[str]:
    """Markdown bullet lines: machine, versions, date."""
    info = _cpuinfo()
    flags = set(info.get("flags", info.get("Features", "")).split())
    have = [flag for flag in FLAGS if flag in flags] or ["none of " + ", ".join(FLAGS)]
    versions = ", ".join(
        f"{name} {_version(package)}"
        for name, package in [
            ("mlc", "mlc"),
            ("numpy", "numpy"),
            ("onnxruntime", "onnxruntime"),
            ("IREE compiler", "iree-base-compiler"),
            ("IREE runtime", "iree-base-runtime"),
            ("llvmlite", "llvmlite"),
            ("xdsl", "xdsl"),
            ("onnx", "onnx"),
        ]
    )
    llvm_version = ".".join(map(str, llvm.llvm_version_info))
    return [
        f"- CPU: {info.get('model name', platform.processor() or platform.machine())}, "
        f"{cores()} usable cores of {os.cpu_count()}, host CPU `{_host_cpu()}`",
        f"- Flags: {', '.join(have)}; caches: {_caches()}",
        f"- Versions: {versions}, LLVM {llvm_version}, Python {platform.python_version()}",
        f"- Date: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; {load()}",
    ]


def load() -> str:
    """The load averages: other work on the machine skews every timing taken meanwhile."""
    if not hasattr(os, "getloadavg"):
        return "load average unknown"
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.1f} / {five:.1f} / {fifteen:.1f} (1/5/15 min), {cores()} cores"


def _host_cpu() -> str:
    llvm.initialize_native_target()
    return llvm.get_host_cpu_name()


def _vector_width() -> int:
    """f32 lanes of the widest vector registers LLVM will use on this host."""
    llvm.initialize_native_target()
    features = llvm.get_host_cpu_features()
    if features.get("avx512f"):
        return 16
    if features.get("avx") or features.get("avx2"):
        return 8
    return 4


def _fma_kernel_ir(lanes: int, chains: int) -> str:
    """`float fma_kernel(i64 n)`: `chains` independent vector FMA chains, `n` steps each."""
    vec = f"<{lanes} x float>"
    splat = lambda x: f"<{', '.join(f'float {x}' for _ in range(lanes))}>"  # noqa: E731
    lines = [
        f"declare {vec} @llvm.fma.v{lanes}f32({vec}, {vec}, {vec})",
        "define float @fma_kernel(i64 %n) {",
        "entry:",
        "  br label %loop",
        "loop:",
        "  %i = phi i64 [0, %entry], [%i1, %loop]",
    ]
    for c in range(chains):
        lines.append(f"  %a{c} = phi {vec} [{splat(f'{c}.0')}, %entry], [%b{c}, %loop]")
    for c in range(chains):
        lines.append(
            f"  %b{c} = call {vec} @llvm.fma.v{lanes}f32({vec} %a{c}, {vec} {splat('0.5')}, "
            f"{vec} {splat('0.25')})"
        )
    lines += [
        "  %i1 = add i64 %i, 1",
        "  %go = icmp slt i64 %i1, %n",
        "  br i1 %go, label %loop, label %done",
        "done:",
    ]
    total = "%b0"
    for c in range(1, chains):
        lines.append(f"  %s{c} = fadd {vec} {total}, %b{c}")
        total = f"%s{c}"
    lines += [f"  %r = extractelement {vec} {total}, i32 0", "  ret float %r", "}"]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Limit:
    """A measured limit: its value (GFLOP/s or GB/s) and how it was measured."""

    value: float
    how: str


def _parallel_rate(work: Callable[[int], float], threads: int, repeats: int) -> float:
    """Best over `repeats` of (units done by `work(0..threads-1)`, concurrently) / wall time."""
    best = 0.0
    for _ in range(repeats):
        done = [0.0] * threads

        def run(slot: int) -> None:
            done[slot] = work(slot)

        pool = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
        start = time.perf_counter()
        for thread in pool:
            thread.start()
        for thread in pool:
            thread.join()
        best = max(best, sum(done) / (time.perf_counter() - start))
    return best


def fma_peak(seconds: float = 0.2, repeats: int = 5) -> Limit:
    """The host's f32 FMA GFLOP/s on all cores (see the module docstring)."""
    from mlc.backend.jit import JITModule

    lanes = _vector_width()
    chains = 16 if lanes == 16 else 10  # latency x throughput, within the register file
    jit = JITModule(_fma_kernel_ir(lanes, chains))
    kernel = jit.scalar_function("fma_kernel", [ctypes.c_int64], ctypes.c_float)
    flops_per_step = 2 * lanes * chains
    start = time.perf_counter()
    kernel(1_000_000)
    steps = max(1000, int(1_000_000 * seconds / (time.perf_counter() - start)))
    n = cores()

    def work(_slot: int) -> float:
        kernel(steps)
        return steps * flops_per_step

    rate = _parallel_rate(work, n, repeats)
    return Limit(
        rate / 1e9,
        f"{chains} independent FMA chains on <{lanes} x float>, {n} threads, best of {repeats}",
    )


def copy_bandwidth(mib: int = 256, repeats: int = 7) -> Limit:
    """GB/s (bytes read + written) of `np.copyto` into a preallocated buffer, best setup."""
    src = np.ones(mib * 2**20 // 4, np.float32)
    dst = np.zeros_like(src)
    np.copyto(dst, src)  # fault the pages in
    n = cores()
    parts = list(zip(np.array_split(dst, n), np.array_split(src, n), strict=True))

    def copy_part(slot: int) -> float:
        d, s = parts[slot]
        np.copyto(d, s)
        return 2.0 * s.nbytes

    def copy_all(_slot: int) -> float:
        np.copyto(dst, src)
        return 2.0 * src.nbytes

    single = _parallel_rate(copy_all, 1, repeats)
    threaded = _parallel_rate(copy_part, n, repeats)
    how = (
        f"np.copyto of {mib} MiB into a preallocated buffer: 1 thread {single / 1e9:.1f}, "
        f"{n} threads {threaded / 1e9:.1f} GB/s"
    )
    return Limit(max(single, threaded) / 1e9, how)
