"""
The model zoo (tests/zoo/, written by `python bench/zoo.py export`): small random-weight
models of the families people export from timm, torchvision, transformers and torch.nn,
from both of torch's exporters, against onnxruntime's outputs stored beside them, on two
input sets of different batch (and sequence) sizes through one compiled model.

`make test` compiles one model of five kinds (`QUICK`); `MLC_ZOO=all` (`make zoo`) runs the
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

# The models `make test` compiles: a CNN, an encoder and a decoder (both exporters among
# them), the recurrent and the mixture-of-experts ones. Each is distinct: resnet's pooling
# and convolutions, bert's masks and Erf GELU over three inputs, gpt2's causal attention
# with GatherND, Split and Tanh, lstm's LSTM, moe's TopK and ScatterElements routing.
QUICK = [
    "resnet-torchscript",
    "bert-torchscript",
    "gpt2-dynamo",
    "lstm-torchscript",
    "moe-dynamo",
]
# Kinds only `MLC_ZOO=all` compiles (10-20 s each on two cores): their ops are each
# checked by the onnx op suites, the whole models on every merge.
FULL_ONLY = {
    "vision transformer": "vit-timm-dynamo: bert's encoder layers over image patches",
    "decoder (GQA, rotary)": "llama-torchscript: gpt2's decoder with rotary Sin/Cos, RMSNorm",
    "encoder-decoder": "t5-torchscript: relative position buckets, cross attention",
    "speech encoder": "wav2vec2-dynamo: convolutions, InstanceNormalization, an encoder",
}

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
    kinds = [MODELS[name]["kind"] for name in QUICK]
    assert len(set(kinds)) == len(kinds)  # one model of each kind
    assert set(kinds) | set(FULL_ONLY) == {m["kind"] for m in MODELS.values()}
    assert not set(kinds) & set(FULL_ONLY)


@pytest.mark.parametrize(("name", "target"), params("cpu") + params("cuda"))
def test_zoo_model_matches_onnxruntime(name, target):
    if target == "cuda" and (reason := gpu_unavailable_reason()):
        # Lowering a model for the GPU takes a minute on a small CPU; the GPU run checks it.
        pytest.skip(reason)
    zoo.check_outputs(compile_for(str(ZOO / f"{name}.onnx"), target), name)
