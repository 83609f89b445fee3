"""
The `cuda` target end to end: host control flow around kernels (loops, `scf.while` on a
value read back from the device, branches), `GPUArray` arguments and results, argument
checks, constants, caching, and the example programs (their PTX is assembled in
test_ptx_architectures.py). Numerical tests skip with the reason where there is no GPU
or no pycuda.
"""

import gc
import threading

import numpy as np
import pytest
from xdsl.dialects.builtin import Float32Type, FunctionType, MemRefType

import mlc
from tests.e2e.graph_programs import PROGRAMS
from tests.e2e.test_compile_cpu import (
    IF_PROGRAM,
    SCALE_LOOP,
    TIED_DIMS,
    WHILE_LOOP,
    scale_loop_reference,
)
from tests.gpu.targets import gpu_unavailable_reason

pytestmark = pytest.mark.gpu

EXAMPLES = ["examples/mlp.mlir", "examples/transformer_block.mlir", "examples/convnet.mlir",
            "examples/pagerank.mlir"]  # fmt: skip


@pytest.fixture
def gpu():
    if (reason := gpu_unavailable_reason()) is not None:
        pytest.skip(reason)


def test_no_gpu_is_one_clear_error():
    if gpu_unavailable_reason() is None:
        pytest.skip("a GPU is present")
    with pytest.raises(mlc.compiler.CompileError, match="target 'cuda' needs") as info:
        mlc.compile(IF_PROGRAM, target="cuda")
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("size, n", [(1, 3), (5, 0), (7, 4), (33, 2)])
def test_host_for_loop_launches_kernels_each_iteration(gpu, size, n):
    exe = mlc.compile(SCALE_LOOP, target="cuda")
    x = np.random.default_rng().standard_normal((size, size)).astype(np.float32)
    np.testing.assert_allclose(exe(x, n), scale_loop_reference(x, n), rtol=1e-5, atol=1e-6)
    assert mlc.compile(SCALE_LOOP, target="cuda") is exe


def test_while_condition_read_back_from_the_device(gpu):
    exe = mlc.compile(WHILE_LOOP, target="cuda")
    x = np.random.default_rng().uniform(0.1, 1.0, 8).astype(np.float32)
    v, k = exe(x, 1000.0)
    want_v, want_k = x.copy(), 0
    while want_v.sum() < 1000.0:
        want_v, want_k = want_v + want_v, want_k + 1
    assert k == want_k
    np.testing.assert_allclose(v, want_v, rtol=1e-6)


def test_if_on_the_host(gpu):
    exe = mlc.compile(IF_PROGRAM, target="cuda")
    x = np.linspace(-1, 1, 11, dtype=np.float32)
    np.testing.assert_allclose(exe(x, True), np.exp(x), rtol=1e-6)
    np.testing.assert_array_equal(exe(x, False), x)


def test_argument_checks_match_the_cpu_path(gpu):
    exe, exe_cpu = mlc.compile(TIED_DIMS, target="cuda"), mlc.compile(TIED_DIMS)
    rng = np.random.default_rng()
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in [(4, 4), (4,), (4, 4)])
    u = a + a.T + b
    np.testing.assert_allclose(exe(a, b, c), (u @ c) @ (u @ c), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(exe(a[:1], b, c), exe_cpu(a[:1], b, c), rtol=1e-4, atol=1e-4)
    with pytest.raises(mlc.RuntimeCheckError, match=r":4:3: error: 'ml.add' op .* must be 1 or 4"):
        exe(a[:3, :3], b[:3], c[:3])
    with pytest.raises(TypeError, match=r"expected dtype float32"):
        exe(a.astype(np.float64), b, c)
    with pytest.raises(TypeError, match=r"takes 3 argument"):
        exe(a, b)


def test_gpuarrays_in_and_out_without_copies(gpu):
    import pycuda.gpuarray as gpuarray

    exe = mlc.compile("examples/mlp.mlir", target="cuda")
    rng = np.random.default_rng()
    shapes = [(37, 784), (784, 128), (128,), (128, 10), (10,)]
    host = [(rng.standard_normal(s) * 0.1).astype(np.float32) for s in shapes]
    want = mlc.compile("examples/mlp.mlir")(*host)
    result = exe(*[gpuarray.to_gpu(a) for a in host])
    assert type(result).__name__ == "GPUArray"
    np.testing.assert_allclose(result.get(), want, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(exe(*host), want, rtol=1e-4, atol=1e-6)  # numpy in, numpy out


@pytest.mark.parametrize("path", EXAMPLES)
def test_examples_match_the_cpu(gpu, path):
    cpu = mlc.compile(path)
    exe = mlc.compile(path, target="cuda")
    rng = np.random.default_rng()
    args = []
    for type_ in cpu.entry.signature.inputs:
        shape = [d if d >= 0 else 17 for d in type_.get_shape()]
        args.append(rng.uniform(0.0, 0.1, shape).astype(np.float32))
    want = cpu(*args)
    got = exe(*args)
    np.testing.assert_allclose(got, want, rtol=2e-4, atol=1e-5)


def test_many_calls_keep_device_memory_flat(gpu):
    import pycuda.driver as driver

    exe = mlc.compile(SCALE_LOOP, target="cuda")
    x = np.ones((256, 256), np.float32)
    for _ in range(20):
        exe(x, 3)
    driver.Context.synchronize()
    free_before, _ = driver.mem_get_info()
    for _ in range(500):
        exe(x, 3)
    driver.Context.synchronize()
    free_after, _ = driver.mem_get_info()
    assert free_before - free_after < 64 * 2**20


def test_calls_from_another_thread(gpu):
    """A thread that never touched CUDA calls a program: the call makes the primary
    context current there itself."""
    exe = mlc.compile(SCALE_LOOP, target="cuda")
    x = np.random.default_rng().standard_normal((9, 9)).astype(np.float32)
    results: list = []
    thread = threading.Thread(target=lambda: results.append(exe(x, 2)))
    thread.start()
    thread.join()
    assert len(results) == 1
    np.testing.assert_allclose(results[0], scale_loop_reference(x, 2), rtol=1e-5, atol=1e-6)


SCALE = """
func.func @main(%x: tensor<64x64xf32>) -> tensor<64x64xf32> {
  %y = ml.add %x, %x : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %z = ml.exp %y : (tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %z : tensor<64x64xf32>
}
"""


def test_dropped_programs_give_their_kernels_back(gpu, monkeypatch):
    """Programs loaded and dropped, 100 at a time, four times: each unloads its module
    when dropped, so the device memory that loaded kernels hold is reused, not lost (a
    long-running process that compiles many programs stays flat). The driver keeps some
    of what the first round freed; the rounds after take nothing more. Free device
    memory is the whole GPU's: where other test processes share it, only the unloads
    are counted."""
    import os

    import pycuda.driver as driver

    from mlc.backend import cuda
    from mlc.backend.cuda_device import device

    lowered = mlc.compile(SCALE, target="cuda", emit="nvvm")
    memref = MemRefType(Float32Type(), [64, 64])
    signature = {"main": FunctionType.from_lists([memref], [memref])}
    x = np.ones((64, 64), np.float32)
    libcuda = device().libcuda
    unload = libcuda.cuModuleUnload
    unloaded: list[int] = []

    def counted(module):
        unloaded.append(1)
        return unload(module)

    monkeypatch.setattr(libcuda, "cuModuleUnload", counted, raising=False)

    def free_bytes() -> int:
        gc.collect()
        driver.Context.synchronize()
        return driver.mem_get_info()[0]

    def load_and_drop() -> int:
        """The device memory 100 loaded programs hold."""
        before = free_bytes()
        held = [cuda.load(lowered, signature)["main"] for _ in range(100)]
        held[0](x)
        taken = before - free_bytes()
        del held
        gc.collect()
        return taken

    cuda.load(lowered, signature)["main"](x)  # the pool's first buffers, kept
    gc.collect()
    unloaded.clear()
    takes = [load_and_drop()]
    assert len(unloaded) == 100  # every dropped program unloaded its module
    after_first = free_bytes()
    takes += [load_and_drop() for _ in range(3)]
    assert len(unloaded) == 400
    if "PYTEST_XDIST_WORKER" in os.environ:
        return  # other processes allocate on the same GPU meanwhile
    # Kernels take device memory (none where the driver still holds what earlier
    # modules freed) and give it back when dropped: three more rounds lose at most
    # half of one round's take, where 100 modules kept a round would lose three.
    assert after_first - free_bytes() <= max(takes) / 2


def test_graph_passes_false_reaches_the_gpu_pipeline(gpu):
    # The chain in the loop is reordered and hoisted by the graph passes alone: without
    # them the kernels differ (and test_graph_pipeline_cpu compares the two on cuda).
    source = PROGRAMS["chain_in_loop"]
    optimized = mlc.compile(source, target="cuda")
    plain = mlc.compile(source, target="cuda", graph_passes=False)
    assert optimized.ptx != plain.ptx
