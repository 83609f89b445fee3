"""
The host model behind `linalg-tile`: what the CPU offers, and the tile sizes that fit it.

Heuristics live here, apart from the rewrites (R13), so each choice is a pure function
with its own tests, and a pass option can always pin it. The model is first-order, as
BLIS's analytical one (Low et al., "Analytical modeling is enough for high-performance
BLIS", 2016):

- the vector width is the widest the host's features allow (AVX-512: 512 bits, AVX:
  256, otherwise 128);
- the register block is MR x NR accumulators with NR = 2 vectors: MR rows so that the
  accumulators, two B vectors and a broadcast A value fill at most the vector register
  file (32 registers with AVX-512, 16 otherwise), capped at 8 rows;
- a matmul with few rows gets a register block of fewer rows (down to 4, which still
  covers the FMA latency) where MR would pad more than a tenth of them (`fitted_rows`);
- KC (the depth of one pass over the packed B micro-panel, KC x NR) keeps that panel in
  half of L1, leaving the other half for A's rows and the C tile;
- MC (rows per parallel task) keeps an MC x KC block of A in half of L2, and is a
  multiple of MR.

Cache sizes come from `/sys/devices/system/cpu/cpu0/cache/index*/size` (level 1 data,
2 and 3), with defaults of 32 KiB / 512 KiB / 8 MiB where the system does not say.
"""

import os
import warnings
from dataclasses import dataclass
from functools import cache
from pathlib import Path

THREADS_VARIABLE = "MLC_NUM_THREADS"
DEFAULT_CACHES = {1: 32 * 1024, 2: 512 * 1024, 3: 8 * 1024 * 1024}
CACHE_DIR = Path("/sys/devices/system/cpu/cpu0/cache")

# Work (in scalar operations) below which a parallel loop runs on the calling thread:
# about 20 us of code, the cost of waking the thread pool and joining it.
PARALLEL_THRESHOLD = 50_000

# What sharing a loop with the thread pool costs (ns). The runtime (`mlc.backend.parallel`)
# times each loop's work and shares it again only while the time the other threads would
# take off it exceeds this. An empty loop's round trip is 0.1 us (`bench/parallel_dispatch.py`),
# but a loop with work waits for its slowest part, on a worker whose core and caches were
# elsewhere: on the 2-core VM, densenet's 6 small loops at batch 1 (2-8 iterations of
# 0.1-1 us) cost 30 us more on two threads than on one (bench/results/cpu-models.md).
DISPATCH_ROUND_TRIP_NS = 5_000
DISPATCH_VARIABLE = "MLC_DISPATCH_NS"

# What one op costs in the work counts above, by name, where it is not about one
# instruction: the inline f32 exp (`convert_to_llvm.math`) is ~25 vector instructions,
# the inline tanh ~15 and a division, a vector division about as slow as 8 adds. An LSTM
# step's gates (8 x 256, three sigmoids and two tanh each) are then worth two threads.
OP_WEIGHTS = {
    "arith.divf": 8,
    "math.exp": 16,
    "math.tanh": 24,
    "math.erf": 32,
    "math.log": 16,
}


def op_weight(name: str) -> int:
    """The work of one op named `name` (`OP_WEIGHTS`, else 1)."""
    return OP_WEIGHTS.get(name, 1)


# Floating-point operations a matmul task should be worth: about 20 us of one core's
# FMAs (50 GFLOP/s), what handing it to another thread costs.
TASK_FLOPS = 1_000_000

# Column panels of B (NR wide) from which packing a transposed A's blocks pays: the copy
# costs about as much as the FMAs of a few panels, and saves every panel's reads of MR
# values a row of A apart (1024 x 1024 at one thread: 61 -> 71 GFLOP/s with the kernel of
# 2026-11-23; 1024 x 1024 x 48: 2.8x slower with the copy). Rows of at most half a K
# block lie close enough together to be read in place (128 x 64 x 128: 0.94x with the
# copy). An A read along its rows is not packed at all (`packs_a`).
PACK_A_PANELS = 8

# The largest A (elements: 1 MiB of f32, half of L2) read in place along its rows by
# `packs_a`: a run-time M (a MoE expert's tokens) or a small static one. Past it the
# blocks are packed again: 1024 x 1024 x 1024 on two threads ran at 0.69x numpy read in
# place and 0.92x packed (2026-11-29, quiet, the AVX-512 host).
IN_PLACE_A_ELEMENTS = 1 << 18

# B read in place by the micro-kernel (`reads_b_in_place`): matmuls of at most this many
# rows, whose B (elements) is at least `IN_PLACE_B_ELEMENTS`. Packing B copies all of it
# on every call (the weights of a training step are new every step), in a parallel loop
# of its own; at few rows that copy costs about as much as the FMAs. In place, each
# thread reads its own panels' K blocks once and the other row tiles find them in L2.
# Same process, packed against in place, mins under load 10-14 on the 2-core VM
# (2026-11-29): two threads 64 x 784 x 1024 2087 -> 1370 us, 64 x 1024 x 1024 2580 ->
# 1861, 256 x 256 x 256 581 -> 297, 256 x 1024 x 1024 3266 -> 2869; one thread level
# to 3% faster; 512 x 1024 x 1024 level on both, so the rule stops below it. A B under
# 256 KiB of f32 is packed as before: its copy is a few us, the call's fixed costs
# dominate (8 x 256 x 64: 29 -> 26 us in place, numpy 5).
IN_PLACE_B_ROWS = 256
IN_PLACE_B_ELEMENTS = 1 << 16

# Matmuls of at most this many columns run as plain loops, not the kernel: its panel would
# be mostly masked lanes. The rule was "fewer columns than one vector", which on AVX-512
# (16 lanes) left N = 5..15 to loops whose vectorised j remainder runs scalar:
# bench/results/matmul-kernel.md, 1 thread, 15:23-15:24 UTC 2026-11-23, 256x256x13 went
# from 0.14x to 0.73x numpy and 1024x784x10 from 0.29x to 1.35x; 256x256x3 stays on the
# loops (0.40x), where the kernel took 29 us against their 20 (the rule toggled by hand).
PLAIN_LOOP_COLUMNS = 4

# The fewest rows a register block is cut to (`fitted_rows`): MR x 2 accumulators must
# cover the FMA latency (4 cycles at 2 FMAs a cycle: 8 in flight).
MIN_MR = 4


@dataclass(frozen=True)
class Host:
    """What the tile model needs to know about a CPU."""

    vector_bits: int = 256
    vector_registers: int = 16
    l1: int = DEFAULT_CACHES[1]
    l2: int = DEFAULT_CACHES[2]
    l3: int = DEFAULT_CACHES[3]


@dataclass(frozen=True)
class MatmulTiles:
    """The blocking of `C += A @ B`: register block MR x NR, depth KC, rows per task MC."""

    mr: int
    nr: int
    kc: int
    mc: int
    vector: int  # elements per vector register

    def __post_init__(self) -> None:
        if min(self.mr, self.nr, self.kc, self.mc, self.vector) < 1:
            raise ValueError(f"tile sizes must be positive, got {self}")
        if self.nr % self.vector:
            raise ValueError(f"NR ({self.nr}) must be a multiple of the vector length")


def parse_size(text: str) -> int | None:
    """`32K` -> 32768, `1M` -> 1048576, `512` -> 512; None if unreadable."""
    text = text.strip().upper()
    scale = {"K": 1024, "M": 1024 * 1024}.get(text[-1:], 1)
    digits = text[:-1] if text[-1:] in "KM" else text
    return int(digits) * scale if digits.isdigit() else None


def read_caches(root: Path = CACHE_DIR) -> dict[int, int]:
    """Data/unified cache sizes by level, from sysfs, with defaults for the missing ones."""
    caches = dict(DEFAULT_CACHES)
    for index in sorted(root.glob("index*")):
        try:
            level = int((index / "level").read_text())
            kind = (index / "type").read_text().strip()
            size = parse_size((index / "size").read_text())
        except (OSError, ValueError):
            continue
        if kind != "Instruction" and size is not None and level in caches:
            caches[level] = size
    return caches


def vector_bits_for(features: set[str]) -> int:
    """The widest vector the host can use, in bits, from LLVM feature names."""
    if "avx512f" in features:
        return 512
    if "avx" in features:
        return 256
    return 128


@cache
def host() -> Host:
    """The machine we run on (cached: it does not change while the process lives)."""
    import llvmlite.binding as llvm  # the model itself needs no LLVM; only detection does

    features = {name for name, on in llvm.get_host_cpu_features().items() if on}
    caches = read_caches()
    bits = vector_bits_for(features)
    return Host(bits, 32 if bits == 512 else 16, caches[1], caches[2], caches[3])


def matmul_tiles(element_bytes: int, machine: Host | None = None) -> MatmulTiles:
    """The register and cache blocking of a matmul with elements of `element_bytes`."""
    machine = machine or host()
    vector = max(1, machine.vector_bits // (8 * element_bytes))
    nr = 2 * vector
    # MR rows x 2 accumulators, plus 2 B vectors and 1 broadcast A value.
    mr = max(1, min(8, (machine.vector_registers - 3) // 2))
    kc = max(16, (machine.l1 // 2) // (nr * element_bytes) // 16 * 16)
    mc = max(mr, (machine.l2 // 2) // (kc * element_bytes) // mr * mr)
    return MatmulTiles(mr, nr, kc, mc, vector)


def fitted_rows(m: int | None, tiles: MatmulTiles) -> MatmulTiles:
    """
    `tiles` with a register block of fewer rows where MR would waste more than a tenth
    of `m` rows on padding: the MR in [MIN_MR, MR] that pads `m` least (the largest
    of equals). A 16- or 32-channel convolution at MR = 6 computes 18 or 36 rows; at
    MR = 4 exactly its rows, still with the 8 accumulators that cover the FMA latency.
    """
    if m is None or m < 1 or tiles.mr <= MIN_MR:
        return tiles

    def padded(mr: int) -> int:
        return -(-m // mr) * mr

    if 10 * (padded(tiles.mr) - m) <= m:
        return tiles
    best = min(range(tiles.mr, MIN_MR - 1, -1), key=padded)
    return MatmulTiles(best, tiles.nr, tiles.kc, max(best, tiles.mc // best * best), tiles.vector)


def narrow_tiles(m: int | None, tiles: MatmulTiles) -> MatmulTiles:
    """
    The blocking of a convolution of at most `PLAIN_LOOP_COLUMNS` columns (a 2x2 or 1x1
    output): one panel of 4 columns in one 4-lane vector, so that the register block
    wastes no lanes on columns that do not exist, as `tiles`' panel of two full vectors
    would (28 of 32 at 2x2); the plain loops a matmul that narrow takes run a
    convolution's window scalar.
    """
    vector = min(4, tiles.vector)
    kc = max(16, tiles.kc * tiles.nr // vector // 16 * 16)
    return fitted_rows(m, MatmulTiles(tiles.mr, vector, kc, tiles.mc, vector))


def packs_a(
    n: int | None,
    k: int | None,
    tiles: MatmulTiles,
    m: int | None = None,
    along_rows: bool = False,
) -> bool:
    """
    Whether a matmul with `n` columns and depth `k` (None: unknown) packs its A blocks.
    Not where its `m` rows are one register block: its A block (MR x KC) then stays in
    L1 while every panel reads it, and the copy would be paid on every call (an LSTM
    step's `h @ R^T`, 8 rows, once per step). Not where the kernel reads A `along_rows`
    (row-major, contiguous along k): its MR rows are MR sequential streams that L1 and
    the prefetchers keep up with, so the copy, paid for every K block of every task,
    buys nothing, up to `IN_PLACE_A_ELEMENTS` of A. One thread, medians of alternating
    runs against onnxruntime on the AVX-512 host (bench/results/moe-lstm.md,
    2026-11-29): a MoE expert's 256 x 512 x 1024 went 0.92x -> 1.00x onnxruntime and
    256 x 1024 x 512 1.00x -> 1.05x, 64 x 1024 x 1024 0.98x -> 1.10x read in place.
    """
    if along_rows and (m is None or k is None or m * k <= IN_PLACE_A_ELEMENTS):
        return False
    wide = n is None or n >= PACK_A_PANELS * tiles.nr
    one_block = m is not None and m <= tiles.mr
    return wide and not one_block and (k is None or k > tiles.kc // 2)


def reads_b_in_place(m: int | None, n: int | None, k: int | None, tiles: MatmulTiles) -> bool:
    """
    Whether the micro-kernel of an `m` x `n` x `k` matmul reads a row-major B in place,
    a panel's k rows `n` apart, instead of packing it (`IN_PLACE_B_ROWS`): only for
    static sizes, and an `n` of whole panels (a partial one would read past the row).
    """
    if m is None or n is None or k is None or n % tiles.nr:
        return False
    return m <= IN_PLACE_B_ROWS and k * n >= IN_PLACE_B_ELEMENTS


def vector_length(element_bytes: int, machine: Host | None = None) -> int:
    """Elements of `element_bytes` in one of the host's vector registers."""
    machine = machine or host()
    return max(1, machine.vector_bits // (8 * element_bytes))


def thread_count() -> int:
    """
    Threads a parallel loop may use: `MLC_NUM_THREADS` if set, else the usable cores.

    Read on every call, so a change of the variable takes effect at the next loop.
    """
    text = os.environ.get(THREADS_VARIABLE, "").strip()
    if text:
        if not text.isdigit() or int(text) < 1:
            raise ValueError(f"{THREADS_VARIABLE} must be a positive integer, got '{text}'")
        return int(text)
    return len(os.sched_getaffinity(0))


def dispatch_round_trip_ns() -> int:
    """
    The round trip the thread pool weighs a loop's saving against: `MLC_DISPATCH_NS` if
    it holds a positive integer, else `DISPATCH_ROUND_TRIP_NS`.

    A variable, because the right value is the host's: at batch 8 on the 2-core VM most
    of MobileNetV2's kernel time (66%, 231 of 351 us on one thread) is in loops of under
    10 us, which the default keeps on one thread at two; whether sharing them pays
    depends on how quickly the other core answers, which only a quiet host shows.
    Read once per process, as the pool's runtime is compiled once; a malformed value
    warns and keeps the default (the runtime must be built).
    """
    text = os.environ.get(DISPATCH_VARIABLE, "").strip()
    if not text:
        return DISPATCH_ROUND_TRIP_NS
    if not text.isdigit() or int(text) < 1:
        warnings.warn(
            f"{DISPATCH_VARIABLE} must be a positive integer (ns), got '{text}': "
            f"using {DISPATCH_ROUND_TRIP_NS}",
            stacklevel=2,
        )
        return DISPATCH_ROUND_TRIP_NS
    return int(text)


def balanced_rows(m: int, tiles: MatmulTiles, threads: int, row_flops: int = 0) -> int:
    """
    Rows per parallel task for `m` rows: at most MC, a multiple of MR, in a number of
    tasks that the threads share evenly (a task is the unit the runtime hands out),
    and, when the work of a row (`row_flops`) is known, tasks of at least `TASK_FLOPS`
    (a multiple of the threads where there are that many; one, run on the calling
    thread, where a task would not pay for waking another).
    """
    tasks = -(-m // tiles.mc)
    tasks = -(-tasks // threads) * threads
    worth = m * row_flops // TASK_FLOPS
    if row_flops and worth < tasks:
        tasks = max(1, worth if worth < threads else worth // threads * threads)
    rows = -(-m // tasks)
    return max(tiles.mr, -(-rows // tiles.mr) * tiles.mr)


@dataclass(frozen=True)
class TaskSplit:
    """
    How a matmul's parallel loop cuts the work into tasks: blocks of `rows` rows of C
    (None: chosen at run time from M by the same rules as `balanced_rows` and
    `columns_balance_better`, for `threads` and `row_flops`), each block's column
    panels split into `column_groups` tasks of adjacent panels.
    """

    rows: int | None
    column_groups: int = 1
    threads: int = 1
    """The threads the matmul runs on (B's packing is cut into at least as many parts)."""
    row_flops: int = 0

    def one_task(self, m: int | None) -> bool:
        """Whether an `m`-row matmul (None: dynamic) runs as a single task."""
        if m is None or self.rows is None:
            return False
        return self.column_groups == 1 and m <= self.rows


def matmul_split(
    sizes: tuple[int | None, int | None, int | None],
    tiles: MatmulTiles,
    threads: int,
    b_in_place: bool = False,
) -> TaskSplit:
    """
    The tasks of an M x N x K matmul (None: dynamic) on `threads` threads.

    Blocks of rows (`balanced_rows`), unless M fits one block of A (MC rows) and its
    row tiles split unevenly among the threads where the column panels split evenly:
    then every task takes all rows and a share of the panels. 64 x 784 x 1024 on two
    threads: 36 + 28 rows leave one thread 6 row tiles of 64 panels and the other
    5 (the last one partial); 32 panels each are 11 x 32 row-tile panels per thread.
    Rows too few to make a task per thread (an LSTM step's 8 x 256 x 1024, or the
    training MLP's 64 rows on sixteen threads: 8 blocks of MR rows) split each block's
    panels too, into as many groups as fill the threads where each share is worth
    `TASK_FLOPS` (16 tasks of 8 rows x 16 panels, not 8 tasks with half the cores idle).
    Where B is read in place (`reads_b_in_place`), the tasks take all rows and a group of
    panels each, so that each thread reads its own columns of B from memory once.
    """
    m, n, k = sizes
    row_flops = 2 * k * n if k is not None and n is not None else 0
    if m is None:
        return TaskSplit(None, 1, threads, row_flops)
    if b_in_place and n is not None and threads > 1 and m <= tiles.mc:
        groups = min(-(-n // tiles.nr), threads, m * row_flops // TASK_FLOPS)
        if groups > 1:
            return TaskSplit(-(-m // tiles.mr) * tiles.mr, groups, threads, row_flops)
    rows = balanced_rows(m, tiles, threads, row_flops)
    tasks = -(-m // rows)
    if n is None or threads < 2 or m > tiles.mc:
        return TaskSplit(rows, 1, threads, row_flops)
    panels = -(-n // tiles.nr)
    if tasks < threads:  # too few row blocks: each split by panels, each share worth a task
        worth = m * row_flops // TASK_FLOPS
        groups = min(panels, threads // tasks, worth // tasks)
        if groups < 2:
            return TaskSplit(rows, 1, threads, row_flops)
        block = rows if tasks > 1 else -(-m // tiles.mr) * tiles.mr
        return TaskSplit(block, groups, threads, row_flops)
    if not columns_balance_better(m, rows, panels, tiles, threads, row_flops):
        return TaskSplit(rows, 1, threads, row_flops)
    return TaskSplit(-(-m // tiles.mr) * tiles.mr, threads, threads, row_flops)


def columns_balance_better(
    m: int, rows: int, panels: int, tiles: MatmulTiles, threads: int, row_flops: int = 0
) -> bool:
    """
    Whether `m` rows (at most MC) in tasks of all rows and a share of the `panels` leave
    the busiest of `threads` threads fewer MR x NR register tiles than tasks of `rows`
    rows do (a partial row tile costs a whole one), each share worth `TASK_FLOPS` where
    the work of a row (`row_flops`) is known. `matmul_nest` computes the same when the
    kernel runs, for a dynamic M: a MoE expert's 242 tokens on two threads are 16 + 15
    row tiles of 32 panels (512 tiles for the busier thread) by rows, 31 row tiles of 16
    panels (496) by columns.
    """
    if m > tiles.mc or panels < threads:
        return False
    if row_flops and m * row_flops // TASK_FLOPS < threads:
        return False
    tasks = -(-m // rows)
    by_rows = -(-tasks // threads) * -(-rows // tiles.mr) * panels
    by_columns = -(-m // tiles.mr) * -(-panels // threads)
    return by_columns < by_rows


def balanced_depth(k: int, tiles: MatmulTiles) -> int:
    """
    The depth of a K block for a static K: as few blocks as KC-deep ones, all of about
    the same depth (784 = 4 x 196, not 3 x 256 + 16: a 16-deep block costs a whole
    write-back of every tile of C for little work).
    """
    blocks = max(1, -(-k // tiles.kc))
    return max(1, -(-k // blocks))


def rows_per_block(row_bytes: int, threads: int, rows: int, machine: Host | None = None) -> int:
    """
    Rows per block of a row-blocked run of generics (`mlc.lowering.cpu.row_blocks`): as many
    rows of `row_bytes` as fill half of L2, so that a block read once is still there
    when the next generic reads it, but no more than leave every thread a block (of
    `rows` in all, when static).
    """
    machine = machine or host()
    block = max(1, (machine.l2 // 2) // max(1, row_bytes))
    if rows > 0:
        block = min(block, max(1, -(-rows // threads)))
    return block


def tile_candidates(
    tiles: MatmulTiles, k: int | None, machine: Host | None = None
) -> list[MatmulTiles]:
    """
    The blockings `autotune-tiles` times for a matmul the model gives `tiles` (first, so
    that a tie keeps the model's): register blocks of 4, 6 and 8 rows (as many as the
    registers hold: MR x 2 accumulators plus 3) and K blocks of the model's depth, half
    and twice it (within K). The choices the model settles by rule of thumb: how many
    rows amortise a B panel's loads, and how deep a block stays in L1 beside its panel.
    """
    machine = machine or host()
    most_rows = max(1, (machine.vector_registers - 3) * tiles.vector // tiles.nr)
    rows = sorted({tiles.mr, *(mr for mr in (MIN_MR, 6, 8) if mr <= most_rows)})
    depths = [tiles.kc, tiles.kc // 2, 2 * tiles.kc]
    if k is not None:
        depths = [d for d in depths if d <= max(k, tiles.kc)]
    found = [tiles]
    for mr in rows:
        for kc in depths:
            if kc >= 16:
                mc = max(mr, tiles.mc // mr * mr)
                candidate = MatmulTiles(mr, tiles.nr, kc, mc, tiles.vector)
                if candidate not in found:
                    found.append(candidate)
    return found
