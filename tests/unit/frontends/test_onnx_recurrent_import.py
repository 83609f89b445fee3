"""
LSTM, GRU and RNN as `mlc.import_onnx` builds them: one input-projection matmul per
direction before its `scf.for`, whose body holds the recurrent matmul, the gates and the
insert of the step's rows into Y; and the one-line errors for attributes it cannot take.
(The numerics: tests/e2e/onnx/test_onnx_recurrent.py.)
"""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import scf, tensor
from xdsl.dialects.builtin import ModuleOp

import mlc
from mlc.diagnostics import DiagnosticError
from mlc.dialects import ml
from mlc.frontends.onnx.ops.recurrent import ACTIVATIONS
from mlc.ir import print_module

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def model(op, direction="forward", seq=5, outputs=("Y", "Y_h"), lengths=None, batch=2, **attrs):
    """A one-node model of X [seq, batch, 3], hidden 4, weights and biases as initializers."""
    nd, gates = (2 if direction == "bidirectional" else 1), GATES[op]
    rng = np.random.default_rng(0)
    weights = {
        "W": rng.standard_normal((nd, gates * 4, 3)),
        "R": rng.standard_normal((nd, gates * 4, 4)),
        "B": rng.standard_normal((nd, 8 * gates)),
    }
    initializers = [numpy_helper.from_array(w.astype(np.float32), n) for n, w in weights.items()]
    names = ["X", "W", "R", "B"]
    if lengths is not None:
        names.append("lengths")
        initializers.append(numpy_helper.from_array(np.array(lengths, np.int32), "lengths"))
    node = helper.make_node(
        op, names, list(outputs), hidden_size=4, direction=direction, name="rnn", **attrs
    )
    ranks = {"Y": 4, "Y_h": 3, "Y_c": 3}
    results = [
        helper.make_tensor_value_info(n, TensorProto.FLOAT, [f"{n}{i}" for i in range(ranks[n])])
        for n in outputs
        if n
    ]
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [seq, batch, 3])
    graph = helper.make_graph([node], "g", [x], results, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 22)], ir_version=10)


def loops(module: ModuleOp) -> list[scf.ForOp]:
    return [op for op in module.walk() if isinstance(op, scf.ForOp)]


def count(ops, kind) -> int:
    return sum(isinstance(op, kind) for op in ops)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_one_projection_before_each_direction_loop(op):
    module = mlc.import_onnx(model(op, "bidirectional"))
    found = loops(module)
    assert len(found) == 2
    top = list(found[0].parent_block().ops)
    assert count(top, ml.MatmulOp) == 2  # the input projection of each direction
    for loop in found:
        body = list(loop.body.block.ops)
        recurrent = 2 if op == "GRU" else 1  # GRU: (r * h) @ Rh^T after the reset gate
        assert count(body, ml.MatmulOp) == recurrent
        assert count(body, tensor.ExtractSliceOp) == 1  # the step's projected input
        assert count(body, tensor.InsertSliceOp) == 1  # the step's rows of Y


def test_weights_are_transposed_and_biases_summed_at_import():
    text = print_module(mlc.import_onnx(model("LSTM")))
    assert "ml.transpose" not in text
    assert "(tensor<10x3xf32>, tensor<3x16xf32>) -> tensor<10x16xf32>" in text  # X @ W^T
    assert "(tensor<2x4xf32>, tensor<4x16xf32>) -> tensor<2x16xf32>" in text  # h @ R^T


def test_a_batch_of_one_multiplies_r_by_a_column():
    text = print_module(mlc.import_onnx(model("GRU", batch=1)))
    assert "(tensor<8x4xf32>, tensor<4x1xf32>) -> tensor<8x1xf32>" in text  # Rzr @ h^T
    assert "(tensor<4x4xf32>, tensor<4x1xf32>) -> tensor<4x1xf32>" in text  # Rh @ (r * h)^T


def test_linear_before_reset_keeps_one_recurrent_matmul():
    (loop,) = loops(mlc.import_onnx(model("GRU", linear_before_reset=1)))
    assert count(loop.body.block.ops, ml.MatmulOp) == 1


def test_lengths_mask_the_steps_unless_all_are_full():
    (masked,) = loops(mlc.import_onnx(model("RNN", lengths=[5, 3])))
    assert count(masked.body.block.ops, ml.SelectOp) == 2  # Y's rows and h
    (full,) = loops(mlc.import_onnx(model("RNN", lengths=[5, 5])))
    assert count(full.body.block.ops, ml.SelectOp) == 0


def test_y_left_out_is_not_carried():
    (loop,) = loops(mlc.import_onnx(model("LSTM", outputs=("", "Y_h", "Y_c"))))
    assert count(loop.body.block.ops, tensor.InsertSliceOp) == 0
    assert len(loop.results) == 2  # h and c


def test_ops_in_the_loop_carry_the_node_location():
    text = print_module(mlc.import_onnx(model("GRU")), debuginfo=True)
    body = text[text.index("scf.for") :]
    assert "ml.matmul" in body and 'loc("rnn"("g":0:0))' in body


def test_every_onnx_activation_imports():
    names = ["Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu"]
    names += ["ScaledTanh", "HardSigmoid", "Elu", "Softsign", "Softplus"]
    assert {n.lower() for n in names} == set(ACTIVATIONS)
    for name in names:
        mlc.import_onnx(model("RNN", activations=[name]))


def import_error(proto) -> str:
    with pytest.raises(DiagnosticError) as info:
        mlc.import_onnx(proto)
    text = str(info.value)
    assert "\n" not in text and ".py" not in text
    assert text.startswith("g: node 'rnn' (")
    return text


def test_unsupported_activation_is_named():
    assert "unsupported activation 'Swish'" in import_error(model("RNN", activations=["Swish"]))


def test_activation_count_must_fit_the_directions():
    text = import_error(model("LSTM", activations=["Sigmoid", "Tanh"]))
    assert "expected 3 activations (3 per direction), got 2" in text


def test_unknown_direction():
    assert "unknown direction 'sideways'" in import_error(model("GRU", "sideways"))
