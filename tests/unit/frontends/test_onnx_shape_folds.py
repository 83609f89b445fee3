"""Shape arithmetic folded in numpy agrees with onnx's reference evaluator."""

import numpy as np
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

from mlc.frontends.onnx import shape_folds

SHAPE = np.array([2, 128, 256], dtype=np.int64)


def reference(node, inputs):
    evaluator = ReferenceEvaluator(node, opsets={"": 17})
    feeds = dict(zip(node.input, inputs, strict=True))
    return [np.asarray(v) for v in evaluator.run(None, feeds)]


CASES = [
    ("Gather", {"axis": 0}, [SHAPE, np.array(1, dtype=np.int64)]),
    ("Gather", {"axis": 0}, [SHAPE, np.array([-1, 0], dtype=np.int64)]),
    ("Gather", {"axis": 1}, [np.arange(12, dtype=np.float32).reshape(3, 4), np.array([[3], [1]])]),
    ("Gather", {"axis": -2}, [np.arange(6).reshape(2, 3), np.array([1], dtype=np.int32)]),
    ("Unsqueeze", {}, [np.array(128, dtype=np.int64), np.array([0], dtype=np.int64)]),
    ("Unsqueeze", {}, [np.ones((2, 3)), np.array([-1, 0], dtype=np.int64)]),
    ("Concat", {"axis": 0}, [SHAPE[:1], np.array([4, -1], dtype=np.int64), SHAPE[2:]]),
    ("Concat", {"axis": -1}, [np.ones((2, 1), np.float32), np.zeros((2, 3), np.float32)]),
]


@pytest.mark.parametrize(("op_type", "attributes", "inputs"), CASES)
def test_agrees_with_reference(op_type, attributes, inputs):
    names = [f"x{i}" for i in range(len(inputs))]
    node = helper.make_node(op_type, names, ["y"], **attributes)
    folded = shape_folds.fold(node, inputs)
    assert folded is not None
    (expected,) = reference(node, inputs)
    (got,) = folded
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def test_unsqueeze_axes_attribute_before_opset_13():
    node = helper.make_node("Unsqueeze", ["x"], ["y"], axes=[0, 2])
    x = np.arange(6).reshape(2, 3)
    (got,) = shape_folds.fold(node, [x]) or [None]
    assert got is not None and got.shape == (1, 2, 1, 3)
    np.testing.assert_array_equal(got.reshape(2, 3), x)


@pytest.mark.parametrize(
    ("op_type", "attributes", "inputs"),
    [
        ("Gather", {"axis": 0}, [SHAPE, np.array([3], dtype=np.int64)]),  # out of range
        ("Gather", {"axis": 1}, [SHAPE, np.array([0], dtype=np.int64)]),  # no such axis
        ("Unsqueeze", {}, [SHAPE, np.array([0, 0], dtype=np.int64)]),  # repeated axis
        ("Concat", {"axis": 0}, [SHAPE, np.ones((1, 2), np.int64)]),  # ranks differ
        ("Concat", {"axis": 0}, [SHAPE, np.ones(2, np.float32)]),  # types differ
        ("Add", {}, [SHAPE, SHAPE]),  # not shape arithmetic
    ],
)
def test_left_to_the_reference_evaluator(op_type, attributes, inputs):
    node = helper.make_node(op_type, [f"x{i}" for i in range(len(inputs))], ["y"], **attributes)
    assert shape_folds.fold(node, inputs) is None
