from pathlib import Path

import pytest

from mlc.tiling_model import (
    IN_PLACE_B_ROWS,
    TASK_FLOPS,
    Host,
    MatmulTiles,
    TaskSplit,
    balanced_depth,
    balanced_rows,
    columns_balance_better,
    fitted_rows,
    matmul_split,
    matmul_tiles,
    op_weight,
    packs_a,
    parse_size,
    read_caches,
    reads_b_in_place,
    rows_per_block,
    thread_count,
    vector_bits_for,
    vector_length,
)

ZEN4 = Host(vector_bits=512, vector_registers=32, l1=32 * 1024, l2=1024 * 1024)
AVX2 = Host(vector_bits=256, vector_registers=16, l1=32 * 1024, l2=512 * 1024)


@pytest.mark.parametrize(
    ("text", "size"),
    [("32K", 32768), ("1M", 1 << 20), ("512", 512), (" 48K\n", 49152), ("x", None)],
)
def test_parse_size(text: str, size: int | None):
    assert parse_size(text) == size


def test_read_caches_from_sysfs_layout(tmp_path: Path):
    for index, (level, kind, size) in enumerate(
        [
            (1, "Data", "48K"),
            (1, "Instruction", "32K"),
            (2, "Unified", "2048K"),
            (3, "Unified", "96M"),
        ]
    ):
        folder = tmp_path / f"index{index}"
        folder.mkdir()
        (folder / "level").write_text(f"{level}\n")
        (folder / "type").write_text(f"{kind}\n")
        (folder / "size").write_text(f"{size}\n")
    assert read_caches(tmp_path) == {1: 48 * 1024, 2: 2 << 20, 3: 96 << 20}


def test_read_caches_defaults_when_sysfs_is_silent(tmp_path: Path):
    assert read_caches(tmp_path)[1] == 32 * 1024


def test_vector_bits_for_features():
    assert vector_bits_for({"avx512f", "avx2", "avx"}) == 512
    assert vector_bits_for({"avx2", "avx"}) == 256
    assert vector_bits_for({"sse4.2"}) == 128


def test_register_block_fills_the_register_file():
    zen4 = matmul_tiles(4, ZEN4)
    assert (zen4.mr, zen4.nr, zen4.vector) == (8, 32, 16)
    assert zen4.mr * zen4.nr // zen4.vector + 3 <= 32  # accumulators, B vectors, broadcast
    avx2 = matmul_tiles(4, AVX2)
    assert (avx2.mr, avx2.nr, avx2.vector) == (6, 16, 8)
    assert matmul_tiles(8, AVX2).vector == 4


def test_cache_blocks_fit_their_caches():
    for host in (ZEN4, AVX2):
        tiles = matmul_tiles(4, host)
        assert tiles.kc * tiles.nr * 4 <= host.l1 // 2  # packed B micro-panel in L1
        assert tiles.mc * tiles.kc * 4 <= host.l2 // 2  # A block in L2
        assert tiles.mc % tiles.mr == 0


def test_tiles_reject_bad_sizes():
    with pytest.raises(ValueError, match="multiple of the vector length"):
        MatmulTiles(4, 12, 64, 64, 8)
    with pytest.raises(ValueError, match="positive"):
        MatmulTiles(0, 16, 64, 64, 8)


@pytest.mark.parametrize(("m", "threads"), [(1024, 2), (1000, 2), (7, 2), (1, 4), (4096, 3)])
def test_balanced_rows_share_evenly(m: int, threads: int):
    tiles = matmul_tiles(4, AVX2)
    rows = balanced_rows(m, tiles, threads)
    tasks = -(-m // rows)
    assert rows % tiles.mr == 0 and rows <= max(tiles.mc, tiles.mr)
    assert tasks % threads == 0 or tasks < threads or rows == tiles.mr


@pytest.mark.parametrize(
    ("m", "k", "n", "tasks"),
    [(64, 1024, 10, 1), (64, 784, 1024, 2), (16, 144, 256, 1), (1024, 1024, 1024, 6)],
)
def test_small_matmuls_run_in_fewer_tasks(m: int, k: int, n: int, tasks: int):
    # each task worth TASK_FLOPS, else one task on the calling thread; big ones unchanged
    tiles = matmul_tiles(4, AVX2)
    rows = balanced_rows(m, tiles, 2, 2 * k * n)
    assert -(-m // rows) == tasks and rows % tiles.mr == 0
    assert rows == balanced_rows(m, tiles, 2) or m * 2 * k * n // tasks >= TASK_FLOPS


def test_a_is_packed_when_enough_panels_reuse_it():
    tiles = matmul_tiles(4, AVX2)  # NR = 16, KC = 256
    assert packs_a(1024, 1024, tiles) and packs_a(128, 129, tiles) and packs_a(None, None, tiles)
    assert not packs_a(127, 1024, tiles) and not packs_a(16, 1024, tiles)
    assert not packs_a(1024, 128, tiles) and not packs_a(128, 64, tiles)  # short rows


@pytest.mark.parametrize(("n", "k", "m"), [(1024, 1024, None), (1024, 512, 256), (None, None, 7)])
def test_a_read_along_its_rows_is_read_in_place(n: int | None, k: int | None, m: int | None):
    tiles = matmul_tiles(4, AVX2)
    assert packs_a(n, k, tiles, m)  # read across its rows (transposed): packed
    assert not packs_a(n, k, tiles, m, along_rows=True)


def test_a_large_a_read_along_its_rows_is_packed():
    tiles = matmul_tiles(4, AVX2)
    assert packs_a(1024, 1024, tiles, 1024, along_rows=True)  # 4 MiB of f32
    assert not packs_a(1024, 1024, tiles, 256, along_rows=True)  # 1 MiB: in place


@pytest.mark.parametrize(("m", "packs"), [(1, False), (6, False), (7, True), (64, True)])
def test_a_of_one_register_block_is_read_in_place(m: int, packs: bool):
    tiles = matmul_tiles(4, AVX2)  # MR = 6
    assert packs_a(1024, 1024, tiles, m) is packs
    assert packs_a(1024, 1024, tiles, None)  # unknown rows: as before


@pytest.mark.parametrize(
    ("m", "mr"),
    [(16, 4), (32, 4), (10, 5), (7, 4), (6, 6), (12, 6), (64, 6), (1024, 6), (30, 6), (None, 6)],
)
def test_register_block_rows_fit_small_row_counts(m: int | None, mr: int):
    tiles = matmul_tiles(4, AVX2)  # MR = 6
    fitted = fitted_rows(m, tiles)
    assert fitted.mr == mr and fitted.mc % mr == 0
    assert (fitted.nr, fitted.kc, fitted.vector) == (tiles.nr, tiles.kc, tiles.vector)


def test_vector_length():
    assert vector_length(4, ZEN4) == 16
    assert vector_length(2, AVX2) == 16


def test_thread_count_follows_the_environment(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_NUM_THREADS", "3")
    assert thread_count() == 3
    monkeypatch.delenv("MLC_NUM_THREADS")
    import os

    assert thread_count() == len(os.sched_getaffinity(0))
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv("MLC_NUM_THREADS", bad)
        with pytest.raises(ValueError, match="MLC_NUM_THREADS must be a positive integer"):
            thread_count()


def test_rows_per_block_fill_half_of_l2_and_leave_every_thread_a_block():
    machine = Host(l2=512 * 1024)
    # 16 KB rows: 16 of them fill half of a 512 KB L2
    assert rows_per_block(16 * 1024, 2, 4096, machine) == 16
    # few rows: no more than a block per thread
    assert rows_per_block(16 * 1024, 2, 6, machine) == 3
    assert rows_per_block(64, 2, 1, machine) == 1
    # rows wider than half of L2: one row per block; a dynamic row count caps nothing
    assert rows_per_block(1 << 20, 4, 100, machine) == 1
    assert rows_per_block(1024, 2, -1, machine) == 256


@pytest.mark.parametrize(
    ("sizes", "threads", "groups"),
    [
        ((64, 1024, 784), 2, 2),  # 36 + 28 rows: 6 and 5 row tiles; 32 panels each: even
        ((64, 1024, 1024), 2, 2),
        ((64, 10, 1024), 2, 1),  # one panel: nothing to split
        ((64, 1024, 784), 1, 1),
        ((1024, 1024, 1024), 2, 1),  # more rows than one block of A
        ((128, 256, 256), 2, 1),  # 66 + 62 rows: 11 row tiles each, already even
        ((12, 64, 64), 2, 1),  # one task's worth: the calling thread
        ((6, 1024, 256), 2, 2),  # one register block of rows (MR = 6), worth two tasks
        ((3, 1024, 256), 2, 1),  # 1.6 TASK_FLOPS: not worth a second thread
        ((6, 1024, 256), 1, 1),
        ((8, 16, 65536), 2, 1),  # one panel: nothing to split
    ],
)
def test_column_groups_where_rows_split_unevenly(
    sizes: tuple[int, int, int], threads: int, groups: int
):
    tiles = matmul_tiles(4, AVX2)
    split = matmul_split(sizes, tiles, threads)
    assert split.column_groups == groups
    m = sizes[0]
    assert split.rows is not None and split.rows % tiles.mr == 0
    if groups > 1:
        assert split.rows >= m  # every task takes all rows


@pytest.mark.parametrize(
    ("sizes", "threads", "rows", "groups"),
    [
        ((64, 1024, 784), 16, 8, 2),  # 8 blocks of MR rows, each in 2 panel groups: 16 tasks
        ((64, 1024, 784), 8, 8, 1),  # 8 blocks already fill the threads
        ((16, 1024, 784), 16, 8, 8),  # 2 blocks x 8 groups
        ((64, 32, 784), 16, 24, 1),  # one panel: nothing to split
        ((64, 64, 784), 16, 16, 1),  # 2 panels, but half a block's is under TASK_FLOPS
    ],
)
def test_row_blocks_split_by_panels_on_many_threads(
    sizes: tuple[int, int, int], threads: int, rows: int, groups: int
):
    tiles = matmul_tiles(4, ZEN4)  # MR = 8, NR = 32
    split = matmul_split(sizes, tiles, threads)
    assert (split.rows, split.column_groups) == (rows, groups)
    tasks = -(-sizes[0] // rows) * groups
    assert tasks <= threads
    if groups > 1:  # every task is worth waking a thread for
        panels = -(-sizes[1] // tiles.nr)
        share = 2 * sizes[2] * rows * tiles.nr * (panels // groups)
        assert share >= TASK_FLOPS


@pytest.mark.parametrize(
    ("m", "panels", "row_flops", "better"),
    [
        (242, 32, 2 * 512 * 1024, True),  # 16 + 15 row tiles: 512 by rows, 31 x 16 = 496
        (67, 32, 2 * 512 * 1024, True),  # 5 + 4 row tiles
        (256, 32, 2 * 512 * 1024, False),  # 16 + 16: already even
        (266, 32, 2 * 512 * 1024, False),  # 17 + 17 (136 + 130 rows): even in tiles
        (242, 1, 2 * 512 * 1024, False),  # one panel: nothing to share
        (1400, 32, 2 * 512 * 1024, False),  # more rows than one block of A (MC = 1360)
        (7, 32, 2 * 64 * 32, False),  # not worth a task per thread
        (67, 32, 0, True),  # the work unknown: the tiles decide
    ],
)
def test_columns_balance_better(m: int, panels: int, row_flops: int, better: bool):
    tiles = MatmulTiles(8, 32, 192, 1360, 16)  # the AVX-512 host's blocking
    rows = balanced_rows(m, tiles, 2, row_flops)
    assert columns_balance_better(m, rows, panels, tiles, 2, row_flops) is better


def test_dynamic_rows_are_left_to_run_time():
    split = matmul_split((None, 128, 784), matmul_tiles(4, AVX2), 2)
    assert split.rows is None and split.threads == 2 and split.row_flops == 2 * 784 * 128


@pytest.mark.parametrize(
    ("k", "depth"), [(784, 196), (1024, 256), (256, 256), (257, 129), (27, 27)]
)
def test_k_blocks_of_equal_depth(k: int, depth: int):
    tiles = matmul_tiles(4, AVX2)  # KC = 256
    assert balanced_depth(k, tiles) == depth
    assert -(-k // depth) == -(-k // tiles.kc)  # no more blocks than KC-deep ones


def test_one_task_needs_a_static_m_within_one_row_block_and_one_column_group():
    assert TaskSplit(64).one_task(64) and TaskSplit(66).one_task(10)
    assert not TaskSplit(64).one_task(65)  # two row blocks
    assert not TaskSplit(64, column_groups=2).one_task(64)  # two column groups
    assert not TaskSplit(None).one_task(64) and not TaskSplit(64).one_task(None)


def test_transcendentals_and_divisions_weigh_more_than_one_op():
    assert op_weight("arith.addf") == op_weight("memref.load") == 1
    assert op_weight("math.tanh") > op_weight("math.exp") > op_weight("arith.divf") > 1


@pytest.mark.parametrize(
    ("sizes", "in_place"),
    [
        ((64, 1024, 784), True),  # the training MLP's x @ W1
        ((64, 1024, 1024), True),
        ((1, 1024, 1024), True),
        ((IN_PLACE_B_ROWS, 1024, 1024), True),
        ((IN_PLACE_B_ROWS + 1, 1024, 1024), False),  # enough rows to repay the copy
        ((1024, 1024, 1024), False),
        ((64, 1000, 1024), False),  # N ends inside a panel
        ((64, 64, 64), False),  # a B whose copy is a few us
        ((None, 1024, 1024), False),  # a run-time M
        ((64, None, 1024), False),
        ((64, 1024, None), False),
    ],
)
def test_b_read_in_place_at_few_rows(
    sizes: tuple[int | None, int | None, int | None], in_place: bool
):
    m, n, k = sizes
    assert reads_b_in_place(m, n, k, matmul_tiles(4, ZEN4)) is in_place


@pytest.mark.parametrize(
    ("sizes", "threads", "groups"),
    [
        ((64, 1024, 1024), 16, 16),  # a group of 2 panels per thread, all 64 rows
        ((64, 1024, 784), 2, 2),
        ((64, 64, 1024), 16, 2),  # as many groups as panels
        ((4, 256, 256), 2, 1),  # under 2 TASK_FLOPS: the calling thread
        ((64, 1024, 1024), 1, 1),
    ],
)
def test_b_in_place_splits_panels_among_threads(
    sizes: tuple[int, int, int], threads: int, groups: int
):
    tiles = matmul_tiles(4, ZEN4)  # MR = 8, NR = 32
    split = matmul_split(sizes, tiles, threads, b_in_place=True)
    assert split.column_groups == groups
    assert split.rows is not None and split.rows >= sizes[0] and split.rows % tiles.mr == 0


def test_b_in_place_with_more_rows_than_a_block_splits_rows():
    tiles = MatmulTiles(8, 32, 192, 64, 16)  # MC = 64
    split = matmul_split((128, 1024, 1024), tiles, 2, b_in_place=True)
    assert split == matmul_split((128, 1024, 1024), tiles, 2)
