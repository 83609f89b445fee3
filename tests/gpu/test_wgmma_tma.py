"""
What the TMA feed of the sm_90a wgmma kernel (`MLC_WGMMA=...,tma`, the default:
`convert-contractions-to-gpu{wgmma-tma=true}`, `mlc.lowering.gpu.contraction.wgmma_tma`)
has of its own; its numerics (odd shapes, epilogues, transposed operands, tiles,
batches, tf32) are tests/gpu/test_wgmma_matmul.py's, each fed both ways. Here: the
kernel's registers (the setmaxnreg split, no spills) in bf16, f16, tf32 and batched
(3-D maps); the driver takes the maps mlc checks; two threads calling one program get
their own products; the maps' device buffers go with the program. On an H100 or H200
the GPU parts run; without one, `MLC_TEST_PTX=1` assembles the PTX with ptxas for
sm_90a.
"""

import ctypes
import gc
import shutil
import threading

import numpy as np
import pytest
from xdsl.dialects.builtin import BFloat16Type, FunctionType, MemRefType

import mlc
from mlc.backend.ptx import to_ptx
from tests.gpu.targets import assemble, compile_once, gpu_unavailable_reason, wgmma_choice
from tests.gpu.test_wgmma_matmul import (
    BATCHED,
    ELEMENTS,
    MATMUL,
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


@pytest.mark.parametrize("element", [*ELEMENTS, "tf32", "batched"])
def test_kernel_registers_without_spills(element):
    """At 8192 the default 128x256 tile: 384 threads launched with 168 registers (what
    the setmaxnreg split 40 / 232 assumes), no spills; the producer's and consumers'
    branches in the PTX. tf32 (B transposed K-major first) copies f32 boxes; a batched
    bf16 matmul copies through 3-D maps."""
    if shutil.which("ptxas") is None:  # before compiling: the check needs it
        pytest.skip("ptxas (CUDA toolkit) not on PATH")
    options, copy = {}, "cp.async.bulk.tensor.2d"
    if element == "tf32":
        source = _source(MATMUL, "f32", M=8192, K=8192, N=8192)
        options = {"allow_tf32": True}
    elif element == "batched":
        source = _source(BATCHED, "bf16", B=4, M=4096, K=4096, N=4096)
        copy = "cp.async.bulk.tensor.3d"
    else:
        source = _source(MATMUL, element, M=8192, K=8192, N=8192)
    with wgmma_choice("tma"):
        lowered = mlc.compile(source, target="cuda", emit="nvvm", sm="sm_90a", **options)
    ptx = to_ptx(lowered, "sm_90a")
    wanted = (*HOLDS[1:], copy, "setmaxnreg.inc.sync.aligned.u32 232", "setmaxnreg.dec")
    for text in (*wanted, ".maxntid 384"):
        assert text in ptx, text
    assert "cp.async.cg" not in ptx
    report = assemble(ptx, "sm_90a", verbose=True)
    assert "0 bytes spill stores" in report and "serialized" not in report
    assert "Used 168 registers" in report, report


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
    rng = np.random.default_rng()
    work = [(_random(rng, "bf16", m, k), _random(rng, "bf16", k, n)) for _ in range(2)]
    wants = [_f64(a) @ _f64(b) for a, b in work]
    failures: list[BaseException] = []

    def calls(i: int) -> None:  # the call makes the context current in this thread
        try:
            for _ in range(50):
                _close(exe(*work[i]), wants[i], "bf16")
        except BaseException as failure:  # reported by the main thread
            failures.append(failure)

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
