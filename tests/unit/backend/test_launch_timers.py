"""
Profiling on the cuda target: every kernel launch timed by CUDA events, mapped back to
the ONNX nodes it came from, with the program's results. The lowering is checked
everywhere; the timings need a GPU (`-m gpu`).
"""

import numpy as np
import pytest

import mlc
from mlc.backend.launch_timers import BEGIN, END
from mlc.lowering.support.kernel_sources import KERNELS_SYMBOL
from tests.gpu.targets import gpu_unavailable_reason
from tests.unit.profiler.test_profiler import COMPUTING, _model

RNG = np.random.default_rng(11)


def test_the_profiling_compile_times_each_launch_and_lists_it():
    exe = mlc.compile(_model())
    plain = str(exe.variant(target="gpu", emit="nvvm"))  # pyright: ignore[reportOptionalCall]
    profiled = str(exe.variant(target="gpu", emit="nvvm", profile=True))  # pyright: ignore
    assert BEGIN not in plain and KERNELS_SYMBOL not in plain
    launches = profiled.count("llvm.call @__mlc_launch_")
    assert launches > 0
    assert profiled.count(f"llvm.call @{BEGIN}(") == launches
    assert profiled.count(f"llvm.call @{END}(") == launches
    table = next(line for line in profiled.splitlines() if KERNELS_SYMBOL in line)
    for node in ("conv", "relu", "fc", "softmax"):
        assert f"\\22{node}\\22" in table


@pytest.fixture(scope="module")
def on_gpu() -> mlc.Executable:
    if reason := gpu_unavailable_reason():
        pytest.skip(reason)
    return mlc.compile(_model(), target="cuda")


@pytest.mark.gpu
def test_launches_are_timed_on_the_gpu_and_mapped_to_their_nodes(on_gpu):
    x = RNG.standard_normal((3, 3, 7, 9)).astype(np.float32)
    profile = on_gpu.profile(x, repeat=5)
    assert profile.target == "cuda"
    named = {source for layer in profile.layers for source in layer.sources}
    assert set(COMPUTING) <= named
    assert all(layer.seconds > 0 for layer in profile.layers)
    assert all(k.runs >= 1 for layer in profile.layers for k in layer.kernels)
    assert 0 < profile.kernel_seconds <= profile.call_seconds
    np.testing.assert_allclose(profile.outputs, on_gpu(x), rtol=1e-5, atol=1e-6)
    starts = [start for _, start, _ in profile.timeline.events]
    assert starts == sorted(starts)  # launches on one stream run in order
    assert all(end >= start for _, start, end in profile.timeline.events)


@pytest.mark.gpu
def test_a_call_launching_more_kernels_than_the_pool_grows_it(on_gpu):
    from mlc.backend.cuda import device
    from mlc.backend.launch_timers import LaunchRecording

    x = RNG.standard_normal((3, 3, 7, 9)).astype(np.float32)
    profiled = on_gpu.variant(profile=True)
    recording = LaunchRecording(kernels=64, device=device(), capacity=1)
    with recording.active():
        profiled(x)
    assert recording.capacity > 1  # grown to the launches it saw
    recording.reset()
    with recording.active():
        profiled(x)
    assert recording.counts().sum() > 1
