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
from pathlib import Path

import numpy as np
import pytest

import mlc
from tests.gpu.targets import compile_for, gpu_unavailable_reason

ZOO = Path(__file__).parents[2] / "zoo"
MANIFEST = json.loads((ZOO / "manifest.json").read_text())
MODELS = {m["name"]: m for m in MANIFEST["models"]}

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


def load_sets(name: str) -> list[tuple[dict[str, np.ndarray], list[np.ndarray]]]:
    """Each input set of a model, with onnxruntime's outputs for it."""
    data = np.load(ZOO / f"{name}.npz")
    sets: dict[int, tuple[dict, dict]] = {}
    for key in data.files:
        index, role, what = key.split("/", 2)
        inputs, outputs = sets.setdefault(int(index), ({}, {}))
        (inputs if role == "in" else outputs)[what] = data[key]
    return [
        (inputs, [outputs[k] for k in sorted(outputs, key=int)])
        for _, (inputs, outputs) in sorted(sets.items())
    ]


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
    model = MODELS[name]
    exe = compile_for(str(ZOO / f"{name}.onnx"), target)
    for inputs, expected in load_sets(name):
        got = exe(*[inputs[n] for n in model["inputs"]])
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(expected)
        for g, e in zip(got, expected):
            assert g.shape == e.shape
            np.testing.assert_allclose(g, e, rtol=2e-3, atol=2e-4)
