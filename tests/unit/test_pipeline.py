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
    assert "convert-ml-to-linalg{online-softmax=true}" in gpu
    assert "online-softmax" not in pipeline.stage_text("linalg", target="cpu")
    assert any("online-softmax=true" in line for line in pipeline.describe("gpu"))
    # mlc-translate --mlir-to-ptx lowers ml input through the same stages.
    from xdsl.dialects.builtin import ModuleOp, TensorType, f32

    from mlc.dialects import ml
    from tests.e2e.programs import program

    module = program([TensorType(f32, [4, 8])], lambda x: ml.SoftmaxOp(x, axis=-1))
    assert isinstance(module, ModuleOp)
    assert pipeline.remaining_gpu_pipelines(module)[1] == gpu
