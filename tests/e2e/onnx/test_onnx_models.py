"""
The example ONNX models (`examples/onnx_models.py`) through `mlc.compile` for the CPU
and `cuda`, against onnxruntime at rtol 1e-4 / atol 1e-5, on fresh random inputs.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

import mlc
from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")
sys.path.insert(0, str(Path(__file__).parents[3] / "examples"))
import onnx_models  # noqa: E402


def reference(model, x):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {"input": x})[0]


def input_shape(model):
    return [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]


# The CNN on `cuda` is tests/gpu/test_conv_gemm.py's (at batch 8).
MODELS = {
    "mlp": onnx_models.mlp,
    "cnn-batch2": lambda: onnx_models.cnn(batch=2),
    "transformer_block": onnx_models.transformer_block,
}


@pytest.mark.parametrize(
    ("name", "target"),
    [(name, "cpu") for name in MODELS]
    + [pytest.param(name, "cuda", marks=pytest.mark.gpu) for name in ("mlp", "transformer_block")],
)
def test_model_matches_onnxruntime(name, target):
    build = MODELS[name]
    model = build()
    exe = compile_for(model, target)
    rng = np.random.default_rng()
    for _ in range(2):
        x = rng.standard_normal(input_shape(model)).astype(np.float32)
        np.testing.assert_allclose(exe(x), reference(model, x), rtol=1e-4, atol=1e-5)


def test_mlp_shapes_and_weights_stay_out_of_llvm_ir():
    exe = mlc.compile(onnx_models.mlp())
    assert exe.entry.signature.inputs[0].get_shape() == (64, 784)
    # 1.85 M weights are bound to external globals, not written into the IR
    assert len(exe.llvm_ir) < 500_000
    assert "__resource_fc1.weight_" in exe.llvm_ir


def test_shape_subgraph_folds_to_static_reshapes():
    module = mlc.import_onnx(onnx_models.transformer_block(seq=8, hidden=16, heads=2))
    names = {op.name for op in module.walk()}
    assert "ml.reshape" in names
    reshapes = [op for op in module.walk() if op.name == "ml.reshape"]
    assert all(len(op.operands) == 1 for op in reshapes)  # static: no run-time shape


def test_models_write_to_a_folder(tmp_path: Path):
    assert onnx_models.main([str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == [
        "cnn.onnx",
        "mlp.onnx",
        "transformer_block.onnx",
    ]
    exe = mlc.compile(tmp_path / "mlp.onnx")
    x = np.random.default_rng().standard_normal((64, 784)).astype(np.float32)
    np.testing.assert_allclose(exe(x), reference(onnx_models.mlp(), x), rtol=1e-4, atol=1e-5)
