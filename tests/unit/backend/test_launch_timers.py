"""
Profiling on the cuda target: every kernel launch timed by CUDA events, mapped back to
the ONNX nodes it came from, with the program's results. The lowering is checked
everywhere; the timings need a GPU (`-m gpu`).
"""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

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


SHAPE = [1, 32, 32, 32]  # each convolution's output: enough for the tiled kernel


def _repeated_convs() -> onnx.ModelProto:
    """Two convolutions of one shape (one outlined kernel, `outline-contractions`)."""
    w1, w2 = (RNG.standard_normal((32, 16, 3, 3)).astype(np.float32) for _ in range(2))
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["x", "w2"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
    ]
    graph = helper.make_graph(
        nodes,
        "repeated",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 32, 32])],
        [
            helper.make_tensor_value_info(c, TensorProto.FLOAT, [1, 32, 32, 32])
            for c in ("c1", "c2")
        ],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_each_call_of_an_outlined_contraction_is_timed_as_its_layer():
    exe = mlc.compile(_repeated_convs())
    profiled = str(exe.variant(target="gpu", emit="nvvm", profile=True))  # pyright: ignore
    table = next(line for line in profiled.splitlines() if KERNELS_SYMBOL in line)
    call = "\\22kind\\22:\\22func.call @main_kernel0\\22"
    for node in ("conv1", "conv2"):
        assert f"{call},\\22sources\\22:[\\22{node}\\22]" in table


@pytest.mark.gpu
def test_repeated_convolutions_are_profiled_as_their_nodes():
    if reason := gpu_unavailable_reason():
        pytest.skip(reason)
    exe = mlc.compile(_repeated_convs(), target="cuda")
    x = RNG.standard_normal((1, 16, 32, 32)).astype(np.float32)
    profile = exe.profile(x, repeat=3)
    named = {source for layer in profile.layers for source in layer.sources}
    assert {"conv1", "conv2"} <= named
    for got, want in zip(profile.outputs, exe(x), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
