"""
`Signature.check`: arguments that already conform pass through as they are (the fast
path a GPU call takes before its first launch); anything else still gets the full
check, converted or rejected with its message.
"""

import numpy as np
import pytest

from mlc import compiler
from mlc.compiler.signature import Signature

SOURCE = """
func.func @f(%x: tensor<?x3xf32>, %y: tensor<3xf32>) -> tensor<?x3xf32> {
  %s = ml.add %x, %y : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return %s : tensor<?x3xf32>
}
"""


@pytest.fixture(scope="module")
def signature() -> Signature:
    from xdsl.dialects import func

    module = compiler.load(SOURCE)
    return Signature.of(next(op for op in module.walk() if isinstance(op, func.FuncOp)))


def test_conforming_arguments_pass_as_they_are(signature):
    x, y = np.ones((5, 3), np.float32), np.ones(3, np.float32)
    checked = signature.check([x, y])
    assert checked[0] is x and checked[1] is y


def test_a_strided_view_is_made_contiguous(signature):
    x = np.arange(30, dtype=np.float32).reshape(5, 6)[:, ::2]
    checked = signature.check([x, np.ones(3, np.float32)])
    assert checked[0].flags.c_contiguous
    np.testing.assert_array_equal(checked[0], x)


@pytest.mark.parametrize(
    "x, y, message",
    [
        (np.ones((5, 3), np.float64), np.ones(3, np.float32), "expected dtype float32"),
        (np.ones((5, 4), np.float32), np.ones(3, np.float32), "expected size 3 in dim 1"),
        (np.ones(3, np.float32), np.ones(3, np.float32), "expected rank 2"),
        ([[1.0, 2.0, 3.0]], np.ones(3, np.float32), "expected a numpy array"),
    ],
)
def test_wrong_arguments_are_reported(signature, x, y, message):
    with pytest.raises((TypeError, ValueError), match=message):
        signature.check([x, y])


def test_a_wrong_count_is_reported(signature):
    with pytest.raises(TypeError, match="takes 2 argument"):
        signature.check([np.ones((5, 3), np.float32)])
