"""
A cumsum of a broadcast integer constant (a run-time `arange`) lowered as a count
(`scan.counted`, no scan), against numpy, on lengths known only at run time.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper

import mlc

TYPES = {np.int64: TensorProto.INT64, np.int32: TensorProto.INT32}


def counting_model(step: int, dtype, exclusive: int, reverse: int):
    """`CumSum(Expand(step, Shape(x)))` along axis 1 of a `[rows, n]` input."""
    value = helper.make_tensor("step", TYPES[dtype], [], [step])
    axis = helper.make_tensor("axis", TensorProto.INT64, [], [1])
    nodes = [
        helper.make_node("Shape", ["x"], ["shape"]),
        helper.make_node("Expand", ["step", "shape"], ["steps"]),
        helper.make_node(
            "CumSum", ["steps", "axis"], ["out"], exclusive=exclusive, reverse=reverse
        ),
    ]
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["rows", "n"])],
        [helper.make_tensor_value_info("out", TYPES[dtype], ["rows", "n"])],
        [value, axis],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


@pytest.mark.parametrize(
    ("step", "dtype", "exclusive", "reverse"), [(1, np.int64, 1, 0), (-3, np.int32, 0, 1)]
)
def test_cumsum_of_a_broadcast_constant_counts(step, dtype, exclusive, reverse):
    model = counting_model(step, dtype, exclusive, reverse)
    linalg = str(mlc.compile(model, emit="linalg"))
    assert '"reduction"' not in linalg  # no scan loop
    exe = mlc.compile(model)
    for n in (1, 7, 130):
        x = np.zeros((3, n), np.float32)
        steps = np.full((3, n), step, dtype)
        sums = np.cumsum(steps[:, ::-1], 1)[:, ::-1] if reverse else np.cumsum(steps, 1)
        want = sums - steps if exclusive else sums
        np.testing.assert_array_equal(exe(x), want.astype(dtype))
