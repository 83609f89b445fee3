"""
ONNX models with bfloat16 and float16 inputs, outputs and initializers (small ones
inlined, large ones kept as resources), Cast and CastLike to and from them, against
numpy with ml_dtypes' bfloat16 (each op computed in f32 and rounded once).
"""

import ml_dtypes
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import mlc

BF16 = np.dtype(ml_dtypes.bfloat16)
SEED = np.random.SeedSequence().entropy


def f32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32)


def model(nodes, inputs, outputs, initializers) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "half", inputs, outputs, initializers)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    onnx.checker.check_model(proto)
    return proto


def test_bf16_and_f16_end_to_end() -> None:
    rng = np.random.default_rng(SEED)
    w = rng.standard_normal((37, 21)).astype(BF16)  # 777 elements: a resource
    b = rng.standard_normal(21).astype(np.float16)  # inlined
    nodes = [
        helper.make_node("Cast", ["x"], ["xb"], to=TensorProto.BFLOAT16),
        helper.make_node("MatMul", ["xb", "w"], ["y"]),
        helper.make_node("Add", ["y", "s"], ["ys"]),
        helper.make_node("Cast", ["ys"], ["yh"], to=TensorProto.FLOAT16),
        helper.make_node("Add", ["yh", "b"], ["z"]),
        helper.make_node("CastLike", ["z", "w"], ["zb"]),
        helper.make_node("Relu", ["zb"], ["out"]),
        helper.make_node("Cast", ["out"], ["out32"], to=TensorProto.FLOAT),
    ]
    proto = model(
        nodes,
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 37]),
            helper.make_tensor_value_info("s", TensorProto.BFLOAT16, ["n", 21]),
        ],
        [
            helper.make_tensor_value_info("out", TensorProto.BFLOAT16, ["n", 21]),
            helper.make_tensor_value_info("z", TensorProto.FLOAT16, ["n", 21]),
            helper.make_tensor_value_info("out32", TensorProto.FLOAT, ["n", 21]),
        ],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")],
    )
    x = rng.standard_normal((5, 37)).astype(np.float32)
    s = rng.standard_normal((5, 21)).astype(BF16)
    out, z, out32 = mlc.compile(proto)(x, s)

    y = f32(x.astype(BF16)) @ f32(w)  # summed in f32, rounded once
    ys = (f32(y.astype(BF16)) + f32(s)).astype(BF16)
    want_z = ys.astype(np.float16) + b
    assert out.dtype == BF16 and z.dtype == np.float16 and out32.dtype == np.float32
    # The f32 sum may round to the other bf16 neighbour: allow an ulp on the way.
    np.testing.assert_allclose(f32(z), f32(want_z), rtol=2**-6, atol=2**-6, err_msg=f"{SEED}")
    np.testing.assert_array_equal(f32(out), np.maximum(f32(z.astype(BF16)), 0))
    np.testing.assert_array_equal(out32, f32(out))


def test_import_keeps_bf16_types() -> None:
    w = np.arange(6, dtype=np.float32).reshape(2, 3).astype(BF16)
    proto = model(
        [helper.make_node("Mul", ["x", "w"], ["y"])],
        [helper.make_tensor_value_info("x", TensorProto.BFLOAT16, [2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [2, 3])],
        [numpy_helper.from_array(w, "w")],
    )
    printed = mlc.print_module(mlc.import_onnx(proto))
    assert "tensor<2x3xbf16>" in printed
    assert "dense<[[0.000000e+00, 1.000000e+00, 2.000000e+00]" in printed
