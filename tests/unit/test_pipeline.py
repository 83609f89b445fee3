"""
The stages of each target: which pass pipelines `mlc.compile` runs, and where the GPU
target lowers a stage differently from the CPU.
"""

import pytest

from mlc import pipeline
from mlc.registry import parse_pipeline


@pytest.mark.parametrize("target", ["cpu", "gpu", "cuda"])
def test_every_stage_parses(target):
    for stage in pipeline.stages_for(target):
        assert parse_pipeline(pipeline.stage_text(stage, target=target))


def test_softmax_is_online_on_the_gpu_only():
    gpu = pipeline.stage_text("linalg", target="cuda")
    linalg = "convert-ml-to-linalg{online-softmax=true scatter-group-pairs=-1 scatter-atomic=true}"
    assert linalg in gpu
    assert "online-softmax" not in pipeline.stage_text("linalg", target="cpu")
    assert "scatter-group-pairs" not in pipeline.stage_text("linalg", target="cpu")
    assert any("online-softmax=true" in line for line in pipeline.describe("gpu"))
    # mlc-translate --mlir-to-ptx lowers ml input through the same stages.
    from xdsl.dialects.builtin import ModuleOp, TensorType, f32

    from mlc.dialects import ml
    from tests.e2e.programs import program

    module = program([TensorType(f32, [4, 8])], lambda x: ml.SoftmaxOp(x, axis=-1))
    assert isinstance(module, ModuleOp)
    assert pipeline.remaining_gpu_pipelines(module)[1] == gpu


@pytest.mark.parametrize(
    "given, expected",
    [
        ("", "convert-contractions-to-gpu{tf32=true sm=75}"),
        ("{tile=64,128,8,8,8 few-blocks=4}", "{tile=64,128,8,8,8 few-blocks=4 tf32=true sm=75}"),
        ("{sm=90}", "{sm=90 tf32=true}"),
    ],
)
def test_contraction_options_merge_with_those_the_stage_gives(given, expected):
    # A stage whose contraction pass already has options (a test's tile shape) keeps
    # them, and gets the architecture and tf32 in the same braces: one option dict.
    text = f"bufferize,convert-contractions-to-gpu{given},cse"
    merged = pipeline.contraction_options(text, allow_tf32=True, sm="sm_75")
    assert merged.endswith(f"{expected.removeprefix('convert-contractions-to-gpu')},cse")
    assert parse_pipeline(merged)


def test_contraction_options_touch_only_the_contraction_pass():
    # every other pass of the stage, options and all, comes back as it was given
    text = "linalg-fuse-elementwise,convert-contractions-to-gpu,linalg-tile{tile-sizes=8,16}"
    merged = pipeline.contraction_options(text, allow_tf32=True, sm="sm_90")
    assert merged == (
        "linalg-fuse-elementwise,convert-contractions-to-gpu{tf32=true sm=90},"
        "linalg-tile{tile-sizes=8,16}"
    )
    assert pipeline.contraction_options("cse,bufferize", allow_tf32=True) == "cse,bufferize"
    gpu = pipeline.stage_text("parallel-loops", target="gpu", sm="sm_75")
    assert gpu.count("convert-contractions-to-gpu{sm=75}") == 1 and parse_pipeline(gpu)


def test_attention_pass_gets_the_architecture_not_tf32():
    text = "convert-attention-to-gpu,decompose-attention,convert-contractions-to-gpu"
    merged = pipeline.contraction_options(text, allow_tf32=True, sm="sm_75")
    assert merged == (
        "convert-attention-to-gpu{sm=75},decompose-attention,"
        "convert-contractions-to-gpu{tf32=true sm=75}"
    )
    assert pipeline.contraction_options(text, allow_tf32=True).startswith(
        "convert-attention-to-gpu,"
    )
