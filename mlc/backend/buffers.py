"""
A caching allocator for the large buffers of compiled code: results and temporaries.

Fresh large allocations are fresh pages (glibc `mmap`s anything over its threshold and
`munmap`s it on `free`), and the kernel faults them in at about 10 GB/s, a third of
what a memory-bound kernel writing them could run at. As PyTorch's caching allocator
does, a freed large buffer is kept, and the next allocation of about its size gets it
back with its pages already mapped: a result array the user dropped serves the next
call's result, and a temporary freed at the end of one call serves the next call.

In JIT-compiled code (only there: the LLVM IR `mlc-translate` prints still calls the C
library), `malloc` and `free` are bound to `mlc_alloc` and `mlc_free` (`install`):

- below `MIN_CACHED` bytes both are the C library's, which recycles small blocks well;
- `mlc_free` keeps a buffer of at least `MIN_CACHED` bytes (its size from
  `malloc_usable_size`) in one of `SLOTS` slots, evicting (freeing) the least recently
  kept ones while the cache would exceed its limit;
- `mlc_alloc` takes the smallest kept buffer that holds the request and wastes at most
  an eighth of it (plus a page), else calls `malloc`, and from `HUGE_PAGED` bytes
  advises the whole pages of the fresh block huge (`madvise`), as numpy does for its
  large arrays: where transparent huge pages are `madvise` only, a large matmul's
  result and packed B are then mapped by 2 MiB pages, as numpy's operands are.

Every buffer is an ordinary `malloc` block, so freeing one with the C library's `free`
is harmless. A buffer is only kept once its owner freed it: compiled code frees its
temporaries, and a result's memory is freed when the last numpy array viewing it dies
(`mlc.backend.runtime`), never while a view, slice or alias of it lives. One mutex
guards the slots; a forked child starts with it unlocked.

The limit is `MLC_BUFFER_CACHE_MB` (default: an eighth of physical memory, at most
1 GiB; 0 turns the cache off). `release()` frees every kept buffer.
"""

import ctypes
import os
import warnings
from functools import cache

import llvmlite.binding as llvm

from mlc.backend.native import compile_runtime, function_address

LIMIT_VARIABLE = "MLC_BUFFER_CACHE_MB"
MIN_CACHED = 1 << 20  # bytes: smaller blocks are left to the C library
# Bytes from which a fresh buffer's whole pages are advised huge (`MADV_HUGEPAGE` = 14),
# numpy's threshold. 2048 x 2048 x 2048 at one thread, alternating processes, load 7-12:
# 0.93-0.98x numpy with, 0.77-0.89x without (bench/results/matmul-kernel.md, 2026-11-29).
HUGE_PAGED = 4 << 20
SLOTS = 64

RUNTIME_IR = r"""
@lock = internal global [64 x i8] zeroinitializer, align 64
@kept = internal global [SLOTS x ptr] zeroinitializer
@kept_size = internal global [SLOTS x i64] zeroinitializer
@kept_stamp = internal global [SLOTS x i64] zeroinitializer
@kept_bytes = internal global i64 0
@clock = internal global i64 0
@limit = internal global i64 0

declare ptr @malloc(i64)
declare void @free(ptr)
declare i64 @malloc_usable_size(ptr)
declare i32 @madvise(ptr, i64, i32)
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

; `malloc`, served from the kept buffers where one fits.
define ptr @mlc_alloc(i64 %n) {
entry:
  %small = icmp ult i64 %n, MIN_CACHED
  br i1 %small, label %fresh, label %search
search:
  %eighth = lshr i64 %n, 3
  %slack = add i64 %eighth, 4096
  %most = add i64 %n, %slack
  %locked = call i32 @pthread_mutex_lock(ptr @lock)
  br label %scan
scan:
  %k = phi i64 [0, %search], [%k1, %scan]
  %best = phi i64 [-1, %search], [%best1, %scan]
  %best_size = phi i64 [-1, %search], [%best_size1, %scan]
  %slot = getelementptr [SLOTS x ptr], ptr @kept, i64 0, i64 %k
  %buffer = load ptr, ptr %slot
  %size_at = getelementptr [SLOTS x i64], ptr @kept_size, i64 0, i64 %k
  %size = load i64, ptr %size_at
  %occupied = icmp ne ptr %buffer, null
  %holds = icmp uge i64 %size, %n
  %snug = icmp ule i64 %size, %most
  %smaller = icmp ult i64 %size, %best_size
  %fits = and i1 %holds, %snug
  %usable = and i1 %occupied, %fits
  %better = and i1 %usable, %smaller
  %best1 = select i1 %better, i64 %k, i64 %best
  %best_size1 = select i1 %better, i64 %size, i64 %best_size
  %k1 = add i64 %k, 1
  %more = icmp ult i64 %k1, SLOTS
  br i1 %more, label %scan, label %scanned
scanned:
  %none = icmp eq i64 %best1, -1
  br i1 %none, label %miss, label %hit
hit:
  %taken_at = getelementptr [SLOTS x ptr], ptr @kept, i64 0, i64 %best1
  %taken = load ptr, ptr %taken_at
  store ptr null, ptr %taken_at
  %bytes = load i64, ptr @kept_bytes
  %bytes1 = sub i64 %bytes, %best_size1
  store i64 %bytes1, ptr @kept_bytes
  %unlocked = call i32 @pthread_mutex_unlock(ptr @lock)
  ret ptr %taken
miss:
  %unlocked1 = call i32 @pthread_mutex_unlock(ptr @lock)
  br label %fresh
fresh:
  %new = call ptr @malloc(i64 %n)
  %large = icmp uge i64 %n, HUGE_PAGED
  %got = icmp ne ptr %new, null
  %advisable = and i1 %large, %got
  br i1 %advisable, label %advise, label %advised
advise:
  ; MADV_HUGEPAGE (14) on the whole pages of the block
  %at = ptrtoint ptr %new to i64
  %up = add i64 %at, 4095
  %first = and i64 %up, -4096
  %stop = add i64 %at, %n
  %last = and i64 %stop, -4096
  %pages = sub i64 %last, %first
  %from = inttoptr i64 %first to ptr
  %advice = call i32 @madvise(ptr %from, i64 %pages, i32 14)
  br label %advised
advised:
  ret ptr %new
}

; `free`, keeping large buffers (evicting the least recently kept beyond the limit).
define void @mlc_free(ptr %buffer) {
entry:
  %null = icmp eq ptr %buffer, null
  br i1 %null, label %done, label %measure
measure:
  %size = call i64 @malloc_usable_size(ptr %buffer)
  %limit = load atomic i64, ptr @limit monotonic, align 8
  %small = icmp ult i64 %size, MIN_CACHED
  %huge = icmp ugt i64 %size, %limit
  %skip = or i1 %small, %huge
  br i1 %skip, label %release, label %keep
release:
  call void @free(ptr %buffer)
  br label %done
keep:
  %locked = call i32 @pthread_mutex_lock(ptr @lock)
  br label %scan
scan:
  %k = phi i64 [0, %keep], [0, %evict], [%k1, %scan]
  %empty = phi i64 [-1, %keep], [-1, %evict], [%empty1, %scan]
  %oldest = phi i64 [-1, %keep], [-1, %evict], [%oldest1, %scan]
  %oldest_stamp = phi i64 [-1, %keep], [-1, %evict], [%oldest_stamp1, %scan]
  %slot = getelementptr [SLOTS x ptr], ptr @kept, i64 0, i64 %k
  %held = load ptr, ptr %slot
  %stamp_at = getelementptr [SLOTS x i64], ptr @kept_stamp, i64 0, i64 %k
  %stamp = load i64, ptr %stamp_at
  %is_empty = icmp eq ptr %held, null
  %no_empty_yet = icmp eq i64 %empty, -1
  %first_empty = and i1 %is_empty, %no_empty_yet
  %empty1 = select i1 %first_empty, i64 %k, i64 %empty
  %earlier = icmp ult i64 %stamp, %oldest_stamp
  %is_held = xor i1 %is_empty, true
  %older = and i1 %is_held, %earlier
  %oldest1 = select i1 %older, i64 %k, i64 %oldest
  %oldest_stamp1 = select i1 %older, i64 %stamp, i64 %oldest_stamp
  %k1 = add i64 %k, 1
  %more = icmp ult i64 %k1, SLOTS
  br i1 %more, label %scan, label %decide
decide:
  %bytes = load i64, ptr @kept_bytes
  %total = add i64 %bytes, %size
  %room = icmp ule i64 %total, %limit
  %has_slot = icmp ne i64 %empty1, -1
  %fits = and i1 %room, %has_slot
  br i1 %fits, label %put, label %evict
put:
  %put_at = getelementptr [SLOTS x ptr], ptr @kept, i64 0, i64 %empty1
  store ptr %buffer, ptr %put_at
  %put_size = getelementptr [SLOTS x i64], ptr @kept_size, i64 0, i64 %empty1
  store i64 %size, ptr %put_size
  %time = load i64, ptr @clock
  %time1 = add i64 %time, 1
  store i64 %time1, ptr @clock
  %put_stamp = getelementptr [SLOTS x i64], ptr @kept_stamp, i64 0, i64 %empty1
  store i64 %time1, ptr %put_stamp
  store i64 %total, ptr @kept_bytes
  %unlocked = call i32 @pthread_mutex_unlock(ptr @lock)
  br label %done
evict:
  ; full or over the limit: something is kept (size <= limit), so %oldest1 is a slot
  %victim_at = getelementptr [SLOTS x ptr], ptr @kept, i64 0, i64 %oldest1
  %victim = load ptr, ptr %victim_at
  store ptr null, ptr %victim_at
  %victim_size_at = getelementptr [SLOTS x i64], ptr @kept_size, i64 0, i64 %oldest1
  %victim_size = load i64, ptr %victim_size_at
  %bytes1 = sub i64 %bytes, %victim_size
  store i64 %bytes1, ptr @kept_bytes
  call void @free(ptr %victim)
  br label %scan
done:
  ret void
}

; Frees every kept buffer.
define void @mlc_buffers_release() {
entry:
  %locked = call i32 @pthread_mutex_lock(ptr @lock)
  br label %scan
scan:
  %k = phi i64 [0, %entry], [%k1, %scan]
  %slot = getelementptr [SLOTS x ptr], ptr @kept, i64 0, i64 %k
  %held = load ptr, ptr %slot
  call void @free(ptr %held)
  store ptr null, ptr %slot
  %k1 = add i64 %k, 1
  %more = icmp ult i64 %k1, SLOTS
  br i1 %more, label %scan, label %finish
finish:
  store i64 0, ptr @kept_bytes
  %unlocked = call i32 @pthread_mutex_unlock(ptr @lock)
  ret void
}

; Sets the limit (bytes); what is kept is freed first.
define void @mlc_buffers_configure(i64 %limit) {
entry:
  call void @mlc_buffers_release()
  store atomic i64 %limit, ptr @limit monotonic, align 8
  ret void
}

define i64 @mlc_buffers_kept_bytes() {
entry:
  %locked = call i32 @pthread_mutex_lock(ptr @lock)
  %bytes = load i64, ptr @kept_bytes
  %unlocked = call i32 @pthread_mutex_unlock(ptr @lock)
  ret i64 %bytes
}

define void @mlc_buffers_after_fork() {
entry:
  call void @llvm.memset.p0.i64(ptr @lock, i8 0, i64 64, i1 false)
  ret void
}
"""


def runtime_ir() -> str:
    sizes = {"MIN_CACHED": MIN_CACHED, "SLOTS": SLOTS, "HUGE_PAGED": HUGE_PAGED}
    text = RUNTIME_IR
    for name, value in sizes.items():
        text = text.replace(name, str(value))
    return text


def default_limit() -> int:
    """An eighth of physical memory, at most 1 GiB (bytes)."""
    physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    return min(physical // 8, 1 << 30)


def configured_limit() -> int:
    """The limit `MLC_BUFFER_CACHE_MB` asks for (bytes); the default, with a warning,
    for a value that is not a non-negative number."""
    text = os.environ.get(LIMIT_VARIABLE, "").strip()
    if not text:
        return default_limit()
    try:
        megabytes = float(text)
    except ValueError:
        megabytes = -1.0
    if not megabytes >= 0:  # also rejects nan
        warnings.warn(
            f"{LIMIT_VARIABLE} must be a number of megabytes, got '{text}'; using the default",
            RuntimeWarning,
            stacklevel=2,
        )
        return default_limit()
    return int(megabytes * (1 << 20))


_ALLOC = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_int64)
_FREE = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_COUNT = ctypes.CFUNCTYPE(ctypes.c_int64)
_SET = ctypes.CFUNCTYPE(None, ctypes.c_int64)
_ACTION = ctypes.CFUNCTYPE(None)


class _Runtime:
    """The compiled allocator's entry points (its engine lives as long as the process)."""

    def __init__(self) -> None:
        engine = compile_runtime(runtime_ir())
        address = lambda name: function_address(engine, name)  # noqa: E731
        self.alloc_address = address("mlc_alloc")
        self.free_address = address("mlc_free")
        self.alloc = _ALLOC(self.alloc_address)
        self.free = _FREE(self.free_address)
        self.release = _ACTION(address("mlc_buffers_release"))
        self.configure = _SET(address("mlc_buffers_configure"))
        self.kept_bytes = _COUNT(address("mlc_buffers_kept_bytes"))
        self.after_fork = _ACTION(address("mlc_buffers_after_fork"))


@cache
def runtime() -> _Runtime:
    """The allocator of this process, compiled on first use."""
    compiled = _Runtime()
    compiled.configure(configured_limit())
    os.register_at_fork(after_in_child=compiled.after_fork)
    return compiled


@cache
def install() -> None:
    """Bind `malloc`/`free` of code the JIT compiles to the caching allocator (once)."""
    allocator = runtime()
    llvm.add_symbol("malloc", allocator.alloc_address)
    llvm.add_symbol("free", allocator.free_address)


def free(address: int) -> None:
    """Give back a buffer compiled code allocated (kept for reuse if large)."""
    runtime().free(address)


def release() -> None:
    """Free every kept buffer (memory the process holds for reuse goes back to the system)."""
    runtime().release()


def kept_bytes() -> int:
    """Bytes kept for reuse now."""
    return runtime().kept_bytes()


def set_limit(megabytes: float) -> None:
    """Keep at most `megabytes` (0: keep nothing); what is kept now is freed."""
    runtime().configure(int(megabytes * (1 << 20)))
