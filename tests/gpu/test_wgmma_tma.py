"""
16-bit matmuls by the sm_90a wgmma kernel fed by TMA (`MLC_WGMMA=...,tma`:
`convert-contractions-to-gpu{wgmma-tma=true}`, `mlc.lowering.gpu.contraction.wgmma_tma`)
against float64 references of the same f16 and bf16 inputs, fresh random ones each
run: odd shapes (edge tiles in M, N and K: TMA's zero fill past the tensor, K not a
multiple of the 64-deep slice), whole tiles, long K (many rounds through the mbarrier
ring), M below the tile's rows, a fused bias + relu + residual, transposed operands
(K-major B: one box a stage; M-major A: 64-wide panels), other tile shapes, and a
batched matmul the TMA feed declines (cp.async). Two threads calling one program get
their own products, and the maps' device buffers go with the program. On an H100 or
H200 the numerics run; without one, `MLC_TEST_PTX=1` assembles each program's PTX with
ptxas for sm_90a, and the default kernel's register report is checked (no spills).

Tolerance as tests/gpu/test_wgmma_matmul.py: 2 units in the last place of the output
type, relative to the largest output and to each.
"""

import ctypes
import gc
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type, FunctionType, MemRefType

import mlc
from mlc.backend.ptx import to_ptx
from tests.gpu.targets import compile_once, gpu_unavailable_reason, wgmma_choice
from tests.gpu.test_wgmma_matmul import (
    BATCHED,
    ELEMENTS,
    EPILOGUE,
    MATMUL,
    TRANSPOSED,
    _close,
    _f64,
    _random,
    _source,
)

pytestmark = pytest.mark.gpu

HOLDS = ("cp.async.bulk.tensor.2d", "mbarrier.try_wait.parity", "wgmma.mma_async")


def compiled(source: str, choice: str = "tma", holds=HOLDS):
    """`source` for cuda with the TMA-fed kernel (`MLC_WGMMA` `choice`), once."""
    return compile_once(source, sm="sm_90a", wgmma=choice, holds=holds)


@pytest.mark.parametrize("element", ELEMENTS)
def test_kernel_registers_without_spills(element):
    """At 8192 the default 128x256 tile: 384 threads launched with 168 registers (what
    the setmaxnreg split 40 / 232 assumes), no spills; the producer's and consumers'
    branches in the PTX."""
    ptxas = shutil.which("ptxas")
    if ptxas is None:
        pytest.skip("ptxas (CUDA toolkit) not on PATH")
    source = _source(MATMUL, element, M=8192, K=8192, N=8192)
    with wgmma_choice("tma"):
        ptx = to_ptx(mlc.compile(source, target="cuda", emit="nvvm", sm="sm_90a"), "sm_90a")
    for wanted in (*HOLDS, "setmaxnreg.inc.sync.aligned.u32 232", "setmaxnreg.dec", ".maxntid 384"):
        assert wanted in ptx, wanted
    assert "cp.async.cg" not in ptx
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "k.ptx"
        path.write_text(ptx)
        done = subprocess.run(
            [ptxas, "-v", "-arch=sm_90a", str(path), "-o", str(Path(tmp) / "k.cubin")],
            capture_output=True,
            text=True,
        )
    assert done.returncode == 0, done.stderr
    assert "0 bytes spill stores" in done.stderr and "serialized" not in done.stderr
    assert "Used 168 registers" in done.stderr, done.stderr


# Odd shapes (multiples of 8): edge tiles in M (200), N (264, 1000), K (72, 520); whole
# tiles (256 x 512, 1024 x 1024 with K 256); M below the tile's rows (64); long K (4096:
# 64 slices, 16 rounds of the 4-stage ring).
@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize(
    "m, k, n",
    [(200, 72, 264), (1000, 520, 1000), (256, 128, 512), (1024, 256, 1024), (64, 64, 512),
     (128, 4096, 256)],
)  # fmt: skip
def test_matmul(element, m, k, n):
    exe = compiled(_source(MATMUL, element, M=m, K=k, N=n))
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, k), _random(rng, element, k, n)
    _close(exe(a, b), _f64(a) @ _f64(b), element)


@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("m, k, n", [(200, 136, 264), (512, 64, 256)])  # odd, whole
def test_bias_relu_residual_epilogue(element, m, k, n):
    exe = compiled(_source(EPILOGUE, element, M=m, K=k, N=n))
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, k), _random(rng, element, k, n)
    bias, r = _random(rng, element, n), _random(rng, element, m, n)
    want = np.maximum(_f64(a) @ _f64(b) + _f64(bias), 0.0) + _f64(r)
    _close(exe(a, b, bias, r), want, element)


@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("m, k, n", [(136, 200, 264), (256, 64, 256)])
def test_transposed_operands(element, m, k, n):
    exe = compiled(_source(TRANSPOSED, element, M=m, K=k, N=n))
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, k), _random(rng, element, n, k)
    at, b2 = _random(rng, element, k, m), _random(rng, element, k, n)
    c, d, e = exe(a, b, at, b2)
    _close(c, _f64(a) @ _f64(b).T, element)
    _close(d, _f64(at).T @ _f64(b).T, element)
    _close(e, _f64(at).T @ _f64(b2), element)


# Other tiles: 2 consumer warpgroups of 128 columns (setmaxnreg), 1 and 3 consumer
# warpgroups (their launch registers kept).
@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("tile", ["128,128,4,tma", "64,128,3,tma", "192,192,3,tma"])
def test_tile_shapes(element, tile):
    m, k, n = 456, 200, 392
    exe = compiled(_source(MATMUL, element, M=m, K=k, N=n), tile)
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, k), _random(rng, element, k, n)
    _close(exe(a, b), _f64(a) @ _f64(b), element)


@pytest.mark.parametrize("element", ELEMENTS)
def test_batched_takes_cp_async(element):
    """TMA declines a batched matmul (2-D maps): the cp.async kernel computes it."""
    batch, m, k, n = 3, 128, 96, 256
    exe = compiled(_source(BATCHED, element, B=batch, M=m, K=k, N=n), holds=("cp.async.cg",))
    rng = np.random.default_rng()
    a, b = _random(rng, element, batch, m, k), _random(rng, element, batch, k, n)
    _close(exe(a, b), _f64(a) @ _f64(b), element)


def test_driver_encodes_the_checked_maps():
    """On a GPU: the driver takes the maps the kernel's operands get (`TiledMap`) for a
    device buffer, and refuses a misaligned address before it is called."""
    if (reason := gpu_unavailable_reason()) is not None:
        pytest.skip(reason)
    from mlc.backend import cuda
    from mlc.backend.tensor_map import encode
    from mlc.tensor_maps import MAP_BYTES, matrix

    device = cuda.device()
    pointer = device.malloc(200 * 264 * 2)
    try:
        for spec in (matrix("bf16", 200, 264, 128, 64), matrix("f16", 200, 264, 64, 64)):
            assert len(encode(device.libcuda, spec, pointer)) == MAP_BYTES
        with pytest.raises(ValueError, match="not 16-byte aligned"):
            encode(device.libcuda, matrix("bf16", 200, 264, 128, 64), pointer + 2)
    finally:
        device.free(pointer)


def test_two_threads_call_one_program():
    """Two threads calling one program, each on its own inputs (new device buffers each
    call: the maps are encoded again), each get their own product: a call's maps are
    not overwritten by the other's before its launch reads them."""
    m, k, n = 256, 128, 512
    exe = compiled(_source(MATMUL, "bf16", M=m, K=k, N=n))
    from mlc.backend import cuda

    context = cuda.device().context
    rng = np.random.default_rng()
    work = [(_random(rng, "bf16", m, k), _random(rng, "bf16", k, n)) for _ in range(2)]
    wants = [_f64(a) @ _f64(b) for a, b in work]
    failures: list[BaseException] = []

    def calls(i: int) -> None:
        context.push()  # the primary context, current in this thread too
        try:
            for _ in range(50):
                _close(exe(*work[i]), wants[i], "bf16")
        except BaseException as failure:  # reported by the main thread
            failures.append(failure)
        finally:
            context.pop()

    threads = [threading.Thread(target=calls, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[0]


def test_map_buffers_freed_with_the_program():
    """Loading a TMA program and dropping it, 50 times: the memory pool's used bytes
    come back to where they were (its map buffers freed with it)."""
    if (reason := gpu_unavailable_reason()) is not None:
        pytest.skip(reason)
    from mlc.backend import cuda

    m, k, n = 200, 72, 264
    with wgmma_choice("tma"):
        lowered = mlc.compile(
            _source(MATMUL, "bf16", M=m, K=k, N=n), target="cuda", emit="nvvm", sm="sm_90a"
        )
    bf16 = BFloat16Type()
    types = [MemRefType(bf16, [m, k]), MemRefType(bf16, [k, n])]
    signature = {"main": FunctionType.from_lists(types, [MemRefType(bf16, [m, n])])}
    lib = cuda.device().libcuda
    pool, used = ctypes.c_void_p(), ctypes.c_uint64()

    def used_bytes() -> int:
        gc.collect()
        assert lib.cuCtxSynchronize() == 0
        assert lib.cuDeviceGetDefaultMemPool(ctypes.byref(pool), 0) == 0
        assert lib.cuMemPoolGetAttribute(pool, 7, ctypes.byref(used)) == 0  # USED_MEM_CURRENT
        return used.value

    rng = np.random.default_rng()
    a, b = _random(rng, "bf16", m, k), _random(rng, "bf16", k, n)
    loaded = cuda.load(lowered, signature)["main"]
    assert len(list(loaded.program.maps)) == 2
    _close(loaded(a, b), _f64(a) @ _f64(b), "bf16")
    del loaded
    before = used_bytes()
    for _ in range(50):
        cuda.load(lowered, signature)["main"](a, b)
    assert used_bytes() == before
