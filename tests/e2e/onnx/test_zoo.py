"""
The model zoo (tests/zoo/, written by `python bench/zoo.py export`): small random-weight
models of the families people export from timm, torchvision, transformers and torch.nn,
from both of torch's exporters, against onnxruntime's outputs stored beside them, on two
input sets of different batch (and sequence) sizes through one compiled model.

`make test` compiles one model of each kind (`QUICK`); `MLC_ZOO=all` (`make zoo`) runs the
whole zoo. A model that does not compile yet is an expected failure that names what is
missing, so the test turns red when it starts to pass and the list is kept honest.
"""

import json
import os
import sys
from pathlib import Path

import pytest

import mlc
from tests.gpu.targets import compile_for, gpu_unavailable_reason

sys.path.insert(0, str(Path(__file__).parents[3] / "bench"))
import zoo

ZOO = zoo.ZOO
MODELS = {m["name"]: m for m in json.loads(zoo.MANIFEST.read_text())["models"]}

# One model of each kind for `make test`, both exporters among them.
QUICK = [
    "resnet-torchscript",
    "vit-timm-dynamo",
    "bert-torchscript",
    "gpt2-dynamo",
    "llama-torchscript",
    "t5-torchscript",
    "wav2vec2-dynamo",
    "lstm-torchscript",
    "moe-dynamo",
]

# What each model that does not compile yet is missing.
MISSING: dict[str, str] = {}


def selected() -> list[str]:
    return sorted(MODELS) if os.environ.get("MLC_ZOO") == "all" else QUICK


def expected_failure(name: str) -> list:
    """A compile error for a model listed in MISSING; a wrong result is never expected."""
    if name not in MISSING:
        return []
    return [pytest.mark.xfail(reason=MISSING[name], raises=mlc.CompileError, strict=True)]


def params(target: str) -> list:
    marks = [pytest.mark.gpu] if target == "cuda" else []
    return [
        pytest.param(
            name,
            target,
            id=f"{name}-{target}",
            marks=[*marks, *expected_failure(name)],
        )
        for name in selected()
    ]


def test_manifest_lists_every_file():
    files = {p.stem for p in ZOO.glob("*.onnx")}
    assert files == set(MODELS)
    assert all((ZOO / f"{name}.npz").exists() for name in MODELS)
    assert set(QUICK) <= set(MODELS)
    assert {MODELS[name]["kind"] for name in QUICK} == {m["kind"] for m in MODELS.values()}


@pytest.mark.parametrize(("name", "target"), params("cpu") + params("cuda"))
def test_zoo_model_matches_onnxruntime(name, target):
    if target == "cuda" and (reason := gpu_unavailable_reason()):
        # Lowering a model for the GPU takes a minute on a small CPU; the GPU run checks it.
        pytest.skip(reason)
    zoo.check_outputs(compile_for(str(ZOO / f"{name}.onnx"), target), name)
