"""
`CompileOptions`: `mlc.compile`'s keyword arguments checked once, with the same
one-line errors as `mlc.compile` gives; what the options put into the cache key.
"""

import dataclasses

import pytest

import mlc
from mlc.compiler.options import CompileOptions, ir_cache_key

PROGRAM = """
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %r = ml.relu %x : (tensor<3xf32>) -> tensor<3xf32>
  func.return %r : tensor<3xf32>
}
"""

BAD = [
    (dict(target="cpu", allow_tf32=True), "allow_tf32 applies to the GPU targets"),
    (dict(target="cpu", emit="llvm", sm="sm_80"), "sm chooses the GPU architecture"),
    (dict(target="cuda", sm="sm_80"), "sm chooses the GPU architecture"),
    (dict(target="gpu", emit="nvvm", sm="sm_61"), "unknown GPU architecture 'sm_61'"),
    (dict(target="tpu"), "unknown target 'tpu' \\(known: cpu, gpu, cuda\\)"),
    (dict(target="cpu", emit="asm"), "unknown stage 'asm' for target 'cpu'"),
    (dict(target="gpu", emit="loops"), "unknown stage 'loops' for target 'gpu'"),
    (dict(target="cpu", precision="fp8"), 'precision must be one of "f32", "tf32", "bf16"'),
    # the first rule broken is the one reported, as before
    (dict(target="tpu", allow_tf32=True, sm="sm_61"), "allow_tf32 applies to the GPU"),
]


@pytest.mark.parametrize("kwargs, message", BAD)
def test_bad_options_are_one_line_value_errors(kwargs, message):
    kwargs = dict(kwargs)
    with pytest.raises(ValueError, match=message) as info:
        CompileOptions.of(kwargs.pop("target"), **kwargs)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("kwargs, message", BAD)
def test_compile_reports_them_before_reading_the_source(kwargs, message):
    with pytest.raises(ValueError, match=message):
        mlc.compile("this is not MLIR", **kwargs)


def test_good_options_hold_what_was_asked():
    options = CompileOptions.of("gpu", emit="nvvm", allow_tf32=True, sm="sm_75")
    assert (options.target, options.emit, options.allow_tf32, options.sm) == (
        "gpu",
        "nvvm",
        True,
        "sm_75",
    )
    assert options.on_gpu and options.graph_passes
    assert options.stages == ("mlc", "linalg", "parallel-loops", "gpu", "nvvm")
    assert "tf32=true" in options.stage_text("parallel-loops")
    assert "sm=75" in options.stage_text("parallel-loops")
    with pytest.raises(dataclasses.FrozenInstanceError):
        options.target = "cpu"  # pyright: ignore[reportAttributeAccessIssue]


def test_the_constructor_checks_too():
    with pytest.raises(ValueError, match="allow_tf32 applies"):
        CompileOptions("cpu", allow_tf32=True)
    with pytest.raises(ValueError, match="unknown GPU architecture"):
        CompileOptions("cuda", sm="sm_5")
    # an executable's architecture is its device's: set by the compiler, not the user
    assert CompileOptions.of("cuda").for_architecture("sm_90").sm == "sm_90"


def test_threads_are_read_once(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_NUM_THREADS", "3")
    options = CompileOptions.of("cpu")
    monkeypatch.setenv("MLC_NUM_THREADS", "5")
    assert options.threads == 3
    assert options.pipeline_text().endswith(";O2;threads 3")


def test_every_option_is_part_of_the_key():
    keys = {
        ir_cache_key(PROGRAM, options)
        for options in [
            CompileOptions("cpu", threads=1),
            CompileOptions("cpu", threads=2),
            CompileOptions("cpu", graph_passes=False, threads=1),
            CompileOptions("cuda", threads=1),
            CompileOptions("cuda", allow_tf32=True, threads=1),
            CompileOptions("cuda", sm="sm_75", threads=1),
            CompileOptions("cpu", precision="bf16", threads=1),
            CompileOptions("cpu", precision="f16", threads=1),
        ]
    }
    assert len(keys) == 8
    assert ir_cache_key(PROGRAM, CompileOptions("cpu", threads=1)) in keys


def test_precision_chooses_autocast_or_tf32():
    bf16 = CompileOptions.of("cpu", precision="bf16")
    # after fuse-attention, so that attention is fused from f32 matmuls, then narrowed
    assert "fuse-attention,autocast{precision=bf16}," in bf16.stage_text("mlc")
    unoptimised = CompileOptions.of("cpu", precision="f16", graph_passes=False)
    assert unoptimised.stage_text("mlc").startswith("autocast{precision=f16},")
    assert not CompileOptions.of("cpu", precision="f32").stage_text("mlc").startswith("autocast")
    # tf32: the GPU's allow_tf32; on the CPU f32 in full, so the same program and key
    assert CompileOptions.of("cuda", precision="tf32").allow_tf32
    cpu_tf32 = CompileOptions.of("cpu", precision="tf32")
    assert not cpu_tf32.allow_tf32
    assert cpu_tf32.pipeline_text() == CompileOptions.of("cpu").pipeline_text()


def test_wgmma_choice_from_the_environment(monkeypatch):
    """`MLC_WGMMA` reaches the contraction pass's options and the cache key; unset, the
    pipeline text is the default one; a bad value is a one-line error."""
    default = CompileOptions("cuda", threads=1)
    assert "wgmma" not in default.stage_text("parallel-loops")
    monkeypatch.setenv("MLC_WGMMA", "off")
    off = CompileOptions("cuda", threads=1)
    assert 'convert-contractions-to-gpu{wgmma="off"}' in off.stage_text("parallel-loops")
    monkeypatch.setenv("MLC_WGMMA", "128,128,4")
    tile = CompileOptions("cuda", threads=1)
    assert 'wgmma="auto" wgmma-tile=128,128,4' in tile.stage_text("parallel-loops")
    assert len({default.pipeline_text(), off.pipeline_text(), tile.pipeline_text()}) == 3
    monkeypatch.setenv("MLC_WGMMA", "128,256,4,tma")  # operands copied by TMA
    tma_tile = CompileOptions("cuda", threads=1).stage_text("parallel-loops")
    assert 'wgmma="auto" wgmma-tile=128,256,4 wgmma-tma=true' in tma_tile
    monkeypatch.setenv("MLC_WGMMA", "tma")
    assert 'wgmma="auto" wgmma-tma=true' in CompileOptions("cuda", threads=1).stage_text(
        "parallel-loops"
    )
    monkeypatch.setenv("MLC_WGMMA", "cp.async")  # every thread's cp.async copies
    assert 'wgmma="auto" wgmma-tma=false' in CompileOptions("cuda", threads=1).stage_text(
        "parallel-loops"
    )
    monkeypatch.setenv("MLC_WGMMA", "128,128,4,cp.async")
    assert "wgmma-tile=128,128,4 wgmma-tma=false" in CompileOptions("cuda", threads=1).stage_text(
        "parallel-loops"
    )
    monkeypatch.setenv("MLC_WGMMA", "off,tma")
    with pytest.raises(ValueError, match="MLC_WGMMA must be"):
        CompileOptions("cuda", threads=1)
    monkeypatch.setenv("MLC_WGMMA", "fast")
    with pytest.raises(ValueError, match="MLC_WGMMA must be auto, off or ROWS,COLS,STAGES"):
        CompileOptions("cuda", threads=1)
