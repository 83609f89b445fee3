"""
The thread pool behind `scf.parallel`: `mlc_parallel_for(chunk, lo, hi, ctx)`, native code.

`convert-to-llvm` outlines the body of an outermost parallel loop into a chunk function
`chunk(lo, hi, ctx)` that runs iterations `[lo, hi)` (mlc.lowering.convert_to_llvm.
parallel), and calls `mlc_parallel_for` when the loop has enough work. A thread pool in
Python cost tens of microseconds per loop (a ctypes callback, futures, the GIL), more
than a matrix-vector product gains from a second core, so the pool is a small runtime
written in LLVM IR (`RUNTIME_IR`), compiled once per process into its own engine and
bound as a symbol before any program is JIT-compiled: compiled code calls it with no
Python involved.

How a loop runs: `[lo, hi)` is split into one contiguous range ("part") per thread, so
each thread touches one block of rows. The caller publishes the job (chunk, context,
range, parts) and bumps a generation counter; workers, started with `pthread_create`
the first time they are needed, notice the new generation by spinning (about 3 ms, as
onnxruntime's and OpenBLAS's workers do: a worker that slept must be woken by the
kernel, which on a 2-core VM took several context switches per call) and otherwise
sleep on a condition variable. Everyone, the caller included, then claims
parts through one atomic work index until none is left, and the caller returns when
all parts are done. The work index carries the generation in its high 32 bits, so a
worker still busy with an old job can never claim a part of the next one.

Which loops are shared: the compiler cannot weigh loops whose bounds the body computes.
So each call site passes a counter of its loop's measured work (ns per iteration x 256;
0 before its first run, or null: shared); parts are timed, and a loop whose other threads
would save less than `tiling_model.dispatch_round_trip_ns()` ns runs alone, timed.

Threads: `MLC_NUM_THREADS` if it holds a positive integer, else the cores this process
may run on (`sched_getaffinity`), read at every loop as `mlc.tiling_model.
thread_count()` reads them at compile time (a malformed value falls back to all cores:
the loop must run). The pool serves one loop at a time: a loop that finds it busy (a
loop started inside a chunk, or by a second Python thread) runs serially on its own
thread, so a thread never waits on the pool it is serving. Which thread runs a part
never changes what it computes, so results do not depend on the number of threads.

Lifetime: at interpreter exit the workers are woken, told to stop and joined (so no
thread runs the runtime's code while its engine is torn down); loops after that run
serially. In a child of `os.fork` the pool starts empty (the parent's workers do not
exist there).
"""

import atexit
import ctypes
import os
import platform
from functools import cache

import llvmlite.binding as llvm

from mlc.backend.native import compile_runtime, function_address
from mlc.tiling_model import dispatch_round_trip_ns

SYMBOL = "mlc_parallel_for"  # as mlc.lowering.convert_to_llvm.parallel calls it
MAX_WORKERS = 255  # threads besides the caller
WORKER_SPINS = 131072  # pause instructions a worker spins before sleeping (~3 ms)
CALLER_SPINS = 4096  # pause instructions the caller spins before yielding its core

_PAUSE = {
    "x86_64": "call void @llvm.x86.sse2.pause()",
    "aarch64": 'call void asm sideeffect "yield", ""()',
}

# pthread_mutex_t and pthread_cond_t are at most 48 bytes on Linux and all-zero
# initialised (PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER): 64 zero bytes each.
RUNTIME_IR = r"""
@generation = internal global i64 0, align 64
@work_index = internal global i64 0, align 64
@parts_done = internal global i64 0, align 64
@job_ns = internal global i64 0, align 64
@job_chunk = internal global ptr null, align 64
@job_context = internal global ptr null
@job_lo = internal global i64 0
@job_hi = internal global i64 0
@job_parts = internal global i64 0
@busy = internal global i32 0, align 64
@stopping = internal global i32 0
@workers = internal global i64 0
@sleepers = internal global i64 0, align 64
@mutex = internal global [64 x i8] zeroinitializer, align 64
@wake = internal global [64 x i8] zeroinitializer, align 64
@thread_ids = internal global [MAX_WORKERS x i64] zeroinitializer
@variable = internal constant [16 x i8] c"MLC_NUM_THREADS\00"

declare i32 @pthread_create(ptr, ptr, ptr, ptr)
declare i32 @pthread_join(i64, ptr)
declare i32 @pthread_mutex_lock(ptr)
declare i32 @pthread_mutex_unlock(ptr)
declare i32 @pthread_cond_wait(ptr, ptr)
declare i32 @pthread_cond_broadcast(ptr)
declare i32 @sched_yield()
declare i32 @clock_gettime(i32, ptr)
declare i32 @sched_getaffinity(i32, i64, ptr)
declare ptr @getenv(ptr)
declare i64 @strtol(ptr, ptr, i32)
declare i64 @llvm.ctpop.i64(i64)
declare void @llvm.x86.sse2.pause()
declare void @llvm.memset.p0.i64(ptr, i8, i64, i1)

; Threads for the next loop: MLC_NUM_THREADS if a positive integer, else the usable cores.
define i64 @mlc_thread_count() {
entry:
  %end = alloca ptr
  %text = call ptr @getenv(ptr @variable)
  %unset = icmp eq ptr %text, null
  br i1 %unset, label %cores, label %parse
parse:
  %first = load i8, ptr %text
  %empty = icmp eq i8 %first, 0
  br i1 %empty, label %cores, label %number
number:
  %value = call i64 @strtol(ptr %text, ptr %end, i32 10)
  %stop = load ptr, ptr %end
  %last = load i8, ptr %stop
  %whole = icmp eq i8 %last, 0
  %positive = icmp sgt i64 %value, 0
  %good = and i1 %whole, %positive
  br i1 %good, label %given, label %cores
given:
  ret i64 %value
cores:
  %set = alloca [16 x i64], align 8
  call void @llvm.memset.p0.i64(ptr %set, i8 0, i64 128, i1 false)
  %failed = call i32 @sched_getaffinity(i32 0, i64 128, ptr %set)
  %error = icmp ne i32 %failed, 0
  br i1 %error, label %one, label %count
one:
  ret i64 1
count:
  %w = phi i64 [0, %cores], [%w1, %count]
  %sum = phi i64 [0, %cores], [%sum1, %count]
  %word_at = getelementptr i64, ptr %set, i64 %w
  %word = load i64, ptr %word_at
  %bits = call i64 @llvm.ctpop.i64(i64 %word)
  %sum1 = add i64 %sum, %bits
  %w1 = add i64 %w, 1
  %more = icmp ult i64 %w1, 16
  br i1 %more, label %count, label %counted
counted:
  %at_least_one = call i64 @llvm.umax.i64(i64 %sum1, i64 1)
  ret i64 %at_least_one
}
declare i64 @llvm.umax.i64(i64, i64)

define internal i64 @now_ns() { ; CLOCK_MONOTONIC (1 on Linux), in ns
entry:
  %time = alloca [2 x i64], align 8
  %failed = call i32 @clock_gettime(i32 1, ptr %time)
  %seconds = load i64, ptr %time
  %nanoseconds_at = getelementptr [2 x i64], ptr %time, i64 0, i64 1
  %nanoseconds = load i64, ptr %nanoseconds_at
  %scaled = mul i64 %seconds, 1000000000
  %now = add i64 %scaled, %nanoseconds
  ret i64 %now
}

; Claims and runs parts of the job of generation %gen until none is left.
define internal void @run_parts(i64 %gen) {
entry:
  %tag = shl i64 %gen, 32
  %chunk = load atomic ptr, ptr @job_chunk acquire, align 8
  %context = load atomic ptr, ptr @job_context acquire, align 8
  %lo = load atomic i64, ptr @job_lo acquire, align 8
  %hi = load atomic i64, ptr @job_hi acquire, align 8
  %parts = load atomic i64, ptr @job_parts acquire, align 8
  %first = load atomic i64, ptr @work_index monotonic, align 8
  br label %claim
claim:
  %current = phi i64 [%first, %entry], [%seen, %take], [%next, %run]
  %current_tag = and i64 %current, -4294967296
  %part = and i64 %current, 4294967295
  %mine = icmp eq i64 %current_tag, %tag
  %left = icmp ult i64 %part, %parts
  %go = and i1 %mine, %left
  br i1 %go, label %take, label %finished
take:
  %claimed = add i64 %current, 1
  %pair = cmpxchg ptr @work_index, i64 %current, i64 %claimed acq_rel monotonic
  %seen = extractvalue { i64, i1 } %pair, 0
  %won = extractvalue { i64, i1 } %pair, 1
  br i1 %won, label %run, label %claim
run:
  %count = sub i64 %hi, %lo
  %base = udiv i64 %count, %parts
  %extra = urem i64 %count, %parts
  %earlier = mul i64 %part, %base
  %spread = call i64 @llvm.umin.i64(i64 %part, i64 %extra)
  %offset = add i64 %earlier, %spread
  %begin = add i64 %lo, %offset
  %long = icmp ult i64 %part, %extra
  %bonus = zext i1 %long to i64
  %length = add i64 %base, %bonus
  %end = add i64 %begin, %length
  %start = call i64 @now_ns()
  call void %chunk(i64 %begin, i64 %end, ptr %context)
  %stop = call i64 @now_ns()
  %took = sub i64 %stop, %start
  %timed = atomicrmw add ptr @job_ns, i64 %took monotonic
  %done_before = atomicrmw add ptr @parts_done, i64 1 release
  %next = load atomic i64, ptr @work_index monotonic, align 8
  br label %claim
finished:
  ret void
}
declare i64 @llvm.umin.i64(i64, i64)

; A worker: wait for a new generation (spin, then sleep), run its parts, repeat; until
; told to stop. %start is the generation current when it was created.
define internal ptr @worker(ptr %start) {
entry:
  %initial = ptrtoint ptr %start to i64
  br label %wait
wait:
  %known = phi i64 [%initial, %entry], [%gen, %work]
  br label %spin
spin:
  %spins = phi i64 [0, %wait], [%spins1, %pause]
  %now = load atomic i64, ptr @generation acquire, align 8
  %new = icmp ne i64 %now, %known
  br i1 %new, label %awake, label %pause
pause:
  PAUSE
  %spins1 = add i64 %spins, 1
  %patient = icmp ult i64 %spins1, WORKER_SPINS
  br i1 %patient, label %spin, label %sleep
sleep:
  %locked = call i32 @pthread_mutex_lock(ptr @mutex)
  %sleeping = atomicrmw add ptr @sleepers, i64 1 seq_cst
  br label %recheck
recheck:
  %latest = load atomic i64, ptr @generation seq_cst, align 8
  %moved = icmp ne i64 %latest, %known
  br i1 %moved, label %rise, label %doze
doze:
  %waited = call i32 @pthread_cond_wait(ptr @wake, ptr @mutex)
  br label %recheck
rise:
  %awoken = atomicrmw sub ptr @sleepers, i64 1 seq_cst
  %unlocked = call i32 @pthread_mutex_unlock(ptr @mutex)
  br label %awake
awake:
  %stop = load atomic i32, ptr @stopping seq_cst, align 4
  %stopped = icmp ne i32 %stop, 0
  br i1 %stopped, label %exit, label %work
work:
  %gen = load atomic i64, ptr @generation acquire, align 8
  call void @run_parts(i64 %gen)
  br label %wait
exit:
  ret ptr null
}

; Starts workers until there are %wanted (fewer if the system refuses a thread).
define internal void @grow(i64 %wanted, i64 %gen) {
entry:
  %initial = load i64, ptr @workers
  br label %check
check:
  %have = phi i64 [%initial, %entry], [%more, %started]
  %enough = icmp uge i64 %have, %wanted
  br i1 %enough, label %done, label %start
start:
  %slot = getelementptr [MAX_WORKERS x i64], ptr @thread_ids, i64 0, i64 %have
  %argument = inttoptr i64 %gen to ptr
  %failed = call i32 @pthread_create(ptr %slot, ptr null, ptr @worker, ptr %argument)
  %error = icmp ne i32 %failed, 0
  br i1 %error, label %done, label %started
started:
  %more = add i64 %have, 1
  store i64 %more, ptr @workers
  br label %check
done:
  ret void
}

; Runs chunk(a, b, context) over a split of [lo, hi) into one part per thread, or on the
; caller alone where the measured work at %site says sharing saves less than it costs.
define void @mlc_parallel_for(ptr %chunk, i64 %lo, i64 %hi, ptr %context, ptr %site) {
entry:
  %count = sub i64 %hi, %lo
  %nothing = icmp sle i64 %count, 0
  br i1 %nothing, label %return, label %size
size:
  %threads = call i64 @mlc_thread_count()
  %capped = call i64 @llvm.umin.i64(i64 %threads, i64 MAX_THREADS)
  %parts = call i64 @llvm.umin.i64(i64 %capped, i64 %count)
  %alone = icmp ule i64 %parts, 1
  br i1 %alone, label %serial, label %weigh
weigh:
  %measured = icmp ne ptr %site, null
  br i1 %measured, label %estimate, label %acquire
estimate:
  %per_iteration = load atomic i64, ptr %site monotonic, align 8
  %unknown = icmp eq i64 %per_iteration, 0
  %bounded = call i64 @llvm.umin.i64(i64 %per_iteration, i64 274877906944)
  %iterations = call i64 @llvm.umin.i64(i64 %count, i64 16777216)
  %work_256 = mul i64 %bounded, %iterations
  %work = lshr i64 %work_256, 8
  %others = sub i64 %parts, 1
  %saved_parts = mul i64 %work, %others
  %round_trips = mul i64 %parts, ROUND_TRIP_NS
  %worth = icmp uge i64 %saved_parts, %round_trips
  %share_it = or i1 %unknown, %worth
  br i1 %share_it, label %acquire, label %timed_serial
timed_serial:
  %serial_start = call i64 @now_ns()
  call void %chunk(i64 %lo, i64 %hi, ptr %context)
  %serial_stop = call i64 @now_ns()
  %serial_ns = sub i64 %serial_stop, %serial_start
  call void @record(ptr %site, i64 %serial_ns, i64 %count)
  br label %return
acquire:
  %pair = cmpxchg ptr @busy, i32 0, i32 1 acquire monotonic
  %free = extractvalue { i32, i1 } %pair, 1
  br i1 %free, label %open, label %serial
open:
  %stop = load atomic i32, ptr @stopping acquire, align 4
  %stopped = icmp ne i32 %stop, 0
  br i1 %stopped, label %release_serial, label %publish
release_serial:
  store atomic i32 0, ptr @busy release, align 4
  br label %serial
publish:
  %old = load atomic i64, ptr @generation monotonic, align 8
  %helpers = sub i64 %parts, 1
  call void @grow(i64 %helpers, i64 %old)
  %gen0 = add i64 %old, 1
  %gen = and i64 %gen0, 4294967295
  %tag = shl i64 %gen, 32
  store atomic i64 %tag, ptr @work_index seq_cst, align 8
  store atomic ptr %chunk, ptr @job_chunk release, align 8
  store atomic ptr %context, ptr @job_context release, align 8
  store atomic i64 %lo, ptr @job_lo release, align 8
  store atomic i64 %hi, ptr @job_hi release, align 8
  store atomic i64 %parts, ptr @job_parts release, align 8
  store atomic i64 0, ptr @parts_done release, align 8
  store atomic i64 0, ptr @job_ns release, align 8
  store atomic i64 %gen, ptr @generation seq_cst, align 8
  %sleeping = load atomic i64, ptr @sleepers seq_cst, align 8
  %asleep = icmp ne i64 %sleeping, 0
  br i1 %asleep, label %wake_up, label %share
wake_up:
  %locked = call i32 @pthread_mutex_lock(ptr @mutex)
  %woken = call i32 @pthread_cond_broadcast(ptr @wake)
  %unlocked = call i32 @pthread_mutex_unlock(ptr @mutex)
  br label %share
share:
  call void @run_parts(i64 %gen)
  br label %join
join:
  %spins = phi i64 [0, %share], [%spins1, %pause], [%spins1, %yield]
  %done = load atomic i64, ptr @parts_done acquire, align 8
  %all = icmp eq i64 %done, %parts
  br i1 %all, label %finish, label %waiting
waiting:
  %spins1 = add i64 %spins, 1
  %patient = icmp ult i64 %spins1, CALLER_SPINS
  br i1 %patient, label %pause, label %yield
pause:
  PAUSE
  br label %join
yield:
  %yielded = call i32 @sched_yield()
  br label %join
finish:
  %job_work = load atomic i64, ptr @job_ns acquire, align 8
  store atomic i32 0, ptr @busy release, align 4
  br i1 %measured, label %remember, label %return
remember:
  call void @record(ptr %site, i64 %job_work, i64 %count)
  br label %return
serial:
  call void %chunk(i64 %lo, i64 %hi, ptr %context)
  br label %return
return:
  ret void
}

; Stores %ns of work over %count iterations at %site: ns per iteration times 256, >= 1.
define internal void @record(ptr %site, i64 %ns, i64 %count) {
entry:
  %scaled = shl i64 %ns, 8
  %each = udiv i64 %scaled, %count
  %known = call i64 @llvm.umax.i64(i64 %each, i64 1)
  store atomic i64 %known, ptr %site monotonic, align 8
  ret void
}

; Wakes the workers, tells them to stop and joins them; later loops run serially.
define void @mlc_pool_shutdown() {
entry:
  br label %acquire
acquire:
  %pair = cmpxchg ptr @busy, i32 0, i32 1 acquire monotonic
  %free = extractvalue { i32, i1 } %pair, 1
  br i1 %free, label %stop, label %yield
yield:
  %yielded = call i32 @sched_yield()
  br label %acquire
stop:
  store atomic i32 1, ptr @stopping seq_cst, align 4
  %old = load atomic i64, ptr @generation monotonic, align 8
  %gen0 = add i64 %old, 1
  %gen = and i64 %gen0, 4294967295
  store atomic i64 %gen, ptr @generation seq_cst, align 8
  %locked = call i32 @pthread_mutex_lock(ptr @mutex)
  %woken = call i32 @pthread_cond_broadcast(ptr @wake)
  %unlocked = call i32 @pthread_mutex_unlock(ptr @mutex)
  %count = load i64, ptr @workers
  br label %join
join:
  %k = phi i64 [0, %stop], [%k1, %joined]
  %left = icmp ult i64 %k, %count
  br i1 %left, label %one, label %finish
one:
  %slot = getelementptr [MAX_WORKERS x i64], ptr @thread_ids, i64 0, i64 %k
  %id = load i64, ptr %slot
  %result = call i32 @pthread_join(i64 %id, ptr null)
  br label %joined
joined:
  %k1 = add i64 %k, 1
  br label %join
finish:
  store i64 0, ptr @workers
  store atomic i32 0, ptr @busy release, align 4
  ret void
}

; In a child of fork: no workers exist, and the locks may have been held by a thread
; that does not exist either.
define void @mlc_pool_after_fork() {
entry:
  store i64 0, ptr @workers
  store i64 0, ptr @sleepers
  store i32 0, ptr @busy
  call void @llvm.memset.p0.i64(ptr @mutex, i8 0, i64 64, i1 false)
  call void @llvm.memset.p0.i64(ptr @wake, i8 0, i64 64, i1 false)
  ret void
}
"""


def runtime_ir(machine: str | None = None) -> str:
    """`RUNTIME_IR` for a machine (`platform.machine()`): its spin-wait hint and limits."""
    pause = _PAUSE.get(machine or platform.machine(), "")
    return (
        RUNTIME_IR.replace("PAUSE", pause)
        .replace("MAX_WORKERS", str(MAX_WORKERS))
        .replace("MAX_THREADS", str(MAX_WORKERS + 1))
        .replace("WORKER_SPINS", str(WORKER_SPINS))
        .replace("CALLER_SPINS", str(CALLER_SPINS))
        .replace("ROUND_TRIP_NS", str(dispatch_round_trip_ns()))
    )


_CHUNK = ctypes.CFUNCTYPE(None, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)
_ENTRY = ctypes.CFUNCTYPE(
    None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p
)
_COUNT = ctypes.CFUNCTYPE(ctypes.c_int64)
_ACTION = ctypes.CFUNCTYPE(None)


class _Runtime:
    """The compiled runtime's entry points (its engine lives as long as the process)."""

    def __init__(self) -> None:
        engine = compile_runtime(runtime_ir())
        self.parallel_for = function_address(engine, SYMBOL)
        self.call = _ENTRY(self.parallel_for)
        self.thread_count = _COUNT(function_address(engine, "mlc_thread_count"))
        self.shutdown = _ACTION(function_address(engine, "mlc_pool_shutdown"))
        self.after_fork = _ACTION(function_address(engine, "mlc_pool_after_fork"))


@cache
def runtime() -> _Runtime:
    """The runtime of this process, compiled on first use (about 10 ms)."""
    compiled = _Runtime()
    atexit.register(compiled.shutdown)
    os.register_at_fork(after_in_child=compiled.after_fork)
    return compiled


@cache
def install() -> None:
    """Make `mlc_parallel_for` visible to code the JIT compiles (once per process)."""
    llvm.add_symbol(SYMBOL, runtime().parallel_for)


def parallel_for(chunk: int, lo: int, hi: int, context: int, site: int | None = None) -> None:
    """Run the chunk function at address `chunk` over `[lo, hi)` on the pool (for tests);
    `site`, the address of an int64, holds the loop's measured work (None: unmeasured)."""
    runtime().call(chunk, lo, hi, context, site)


def thread_count() -> int:
    """The threads the next parallel loop will use, as the runtime reads them."""
    return runtime().thread_count()
