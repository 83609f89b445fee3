"""
Importing NonZero of an input known only at run time (`mlc/frontends/onnx/ops/data_sized.py`):
a `[rank, ?]` result from a scatter to cumsum positions and a slice of a run-time count,
every op at the node's location, and the `?` flowing into the ops that use it.
"""

from onnx import TensorProto, helper
from xdsl.dialects import func

import mlc
from mlc.dialects import ml


def non_zero_then_gather(dims):
    nodes = [
        helper.make_node("NonZero", ["x"], ["n"], name="where"),
        helper.make_node("Gather", ["x", "n"], ["y"], name="rows", axis=0),
    ]
    graph = helper.make_graph(
        nodes,
        "nz",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["a", "b", "c"])],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    proto.ir_version = 8
    return proto


def function_ops(module):
    (main,) = [op for op in module.walk() if isinstance(op, func.FuncOp)]
    return list(main.body.block.ops)


def test_run_time_non_zero_is_a_scatter_to_a_run_time_count():
    ops = function_ops(mlc.import_onnx(non_zero_then_gather(["n", 3])))
    names = [op.name for op in ops]
    assert "ml.cumsum" in names and "ml.scatter_elements" in names
    (sliced,) = [op for op in ops if op.name == "tensor.extract_slice"]
    assert str(sliced.results[0].type) == "tensor<2x?xi64>"
    (gather,) = [op for op in ops if isinstance(op, ml.GatherOp)]
    assert str(gather.results[0].type) == "tensor<2x?x3xf32>"


def test_run_time_non_zero_ops_keep_the_node_location():
    ops = function_ops(mlc.import_onnx(non_zero_then_gather([4, "m"])))
    gather = next(i for i, op in enumerate(ops) if isinstance(op, ml.GatherOp))
    for op in ops[:gather]:
        assert 'loc("where"' in str(op.location), op.name


def test_static_input_gives_a_run_time_sized_result():
    ops = function_ops(mlc.import_onnx(non_zero_then_gather([4, 5])))
    (sliced,) = [op for op in ops if op.name == "tensor.extract_slice"]
    assert str(sliced.results[0].type) == "tensor<2x?xi64>"
