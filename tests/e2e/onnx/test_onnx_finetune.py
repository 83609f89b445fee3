"""
Fine-tuning an imported ONNX model: `import_onnx(..., params_as_args=True)` makes its
weights arguments, a cross-entropy loss is added around `@main`, the `autodiff` pass
gives its gradient (checked against central differences), and a few Adam steps lower
the loss.
"""

import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import Block, Region
from xdsl.rewriter import InsertPoint

import mlc
from mlc.autodiff.differentiate import AutodiffPass
from mlc.dialects import ml
from mlc.frontends.onnx import onnx_params
from tests.finite_differences import numeric_grad


def small_cnn(rng, dtype=np.float64, batch: int | str = 5) -> onnx.ModelProto:
    """Conv 1->2 (3x3, pad 1) -> Relu -> MaxPool 2 -> Flatten -> Gemm (3 classes)."""
    elem = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    weights = {
        "conv.w": rng.standard_normal((2, 1, 3, 3)) * 0.5,
        "conv.b": rng.standard_normal(2) * 0.1,
        "fc.w": rng.standard_normal((3, 18)) * 0.3,
        "fc.b": rng.standard_normal(3) * 0.1,
    }
    nodes = [
        helper.make_node("Conv", ["x", "conv.w", "conv.b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["p"], ["f"]),
        helper.make_node("Gemm", ["f", "fc.w", "fc.b"], ["logits"], transB=1),
    ]
    graph = helper.make_graph(
        nodes,
        "cnn",
        [helper.make_tensor_value_info("x", elem, [batch, 1, 6, 6])],
        [helper.make_tensor_value_info("logits", elem, [batch, 3])],
        [numpy_helper.from_array(w.astype(dtype), name) for name, w in weights.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def with_loss(module: ModuleOp) -> ModuleOp:
    """Add `@loss(main's args..., labels) = mean cross-entropy of main's logits`."""
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    logits_type = main.function_type.outputs.data[0]
    inputs = [*main.function_type.inputs.data, logits_type]
    block = Block(arg_types=inputs)
    body = main.clone()
    mapping = dict(zip(body.body.block.args, block.args[:-1], strict=True))
    for op in list(body.body.block.ops)[:-1]:
        block.add_op(op.clone(value_mapper=mapping))
    logits = mapping[body.body.block.last_op.operands[0]]
    b = Builder(InsertPoint.at_end(block))

    def emit(op):
        return b.insert(op).results[0]

    top = emit(ml.ReduceMaxOp(logits, [1], True))
    shifted = emit(ml.SubOp(logits, top))
    total = emit(ml.ReduceSumOp(emit(ml.ExpOp(shifted)), [1], True))
    log_probs = emit(ml.SubOp(shifted, emit(ml.LogOp(total))))
    picked = emit(ml.ReduceSumOp(emit(ml.MulOp(block.args[-1], log_probs)), [1], False))
    loss = emit(ml.NegOp(emit(ml.ReduceMeanOp(picked, [0], False))))
    block.add_op(func.ReturnOp(loss))
    result = TensorType(logits_type.element_type, [])
    module.body.block.add_op(func.FuncOp("loss", (inputs, [result]), Region(block)))
    return module


def test_weights_become_leading_arguments_in_initializer_order():
    model = small_cnn(np.random.default_rng(0))
    main = next(iter(mlc.import_onnx(model, params_as_args=True).ops))
    assert [a.name_hint for a in main.body.block.args] == ["conv.w", "conv.b", "fc.w", "fc.b", "x"]
    assert list(onnx_params(model)) == ["conv.w", "conv.b", "fc.w", "fc.b"]
    only_fc = lambda name, array: name.startswith("fc.")  # noqa: E731
    main = next(iter(mlc.import_onnx(model, params_as_args=only_fc).ops))
    assert [a.name_hint for a in main.body.block.args] == ["fc.w", "fc.b", "x"]
    assert len(next(iter(mlc.import_onnx(model).ops)).body.block.args) == 1


@pytest.mark.skipif(
    os.environ.get("MLC_TEST_SLOW") != "1", reason="compiles for 16 s: MLC_TEST_SLOW=1 runs it"
)
def test_fine_tune_a_small_onnx_cnn():
    """With a dynamic batch (`N`): the gradients' shapes (the window rules' zero blocks,
    the mean's count) are read at run time, so one compile serves batches 5 and 2."""
    rng = np.random.default_rng()
    model = small_cnn(rng, batch="N")
    module = with_loss(mlc.import_onnx(model, params_as_args=True))
    params = list(onnx_params(model).values())
    AutodiffPass(function="loss", wrt=tuple(range(len(params))), with_value=True).apply(
        Context(), module
    )
    exe = mlc.compile(module)
    for batch in (2, 5):
        x = rng.standard_normal((batch, 1, 6, 6))
        labels = np.eye(3)[rng.integers(0, 3, batch)]
        value, *grads = exe["loss_grad"](*params, x, labels)
        for i, g in enumerate(grads):
            want = numeric_grad(exe["loss"], [*params, x, labels], i)
            np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-8)
    opt = mlc.optim.Adam(lr=0.05)
    state = opt.init(params)
    losses = [float(value)]
    for _ in range(5):
        params, state = opt.update(params, grads, state)
        value, *grads = exe["loss_grad"](*params, x, labels)
        losses.append(float(value))
    assert losses[-1] < losses[0]
    logits = mlc.compile(mlc.import_onnx(model, params_as_args=True))(*params, x)
    assert logits.shape == (5, 3)
