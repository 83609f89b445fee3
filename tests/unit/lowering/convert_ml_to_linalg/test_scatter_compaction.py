"""
NonZero's compacting scatter as one loop of writes (`scatter_compaction`, the form the
GPU takes with `scatter-atomic`) run as written on the CPU: the scatter's whole result,
the spare column included (the last clear element's coordinates), equals the general
lowering's, and NonZero equals onnxruntime's, for empty, sparse and full masks of
static and run-time shapes.
"""

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import FunctionType

import mlc
from mlc.dialects import ml
from mlc.lowering.convert_ml_to_linalg import ConvertMLToLinalgPass
from tests.e2e.onnx.test_onnx_data_sized import non_zero_model, sparse

ort = pytest.importorskip("onnxruntime")

CASES = [((3, 5), 0.3), ((2, 3, 4), 0.5), ((9,), 0.0), ((4, 4), 1.0), ((0, 3), 0.5), ((), 1.0)]


def imported(shape, dynamic: bool):
    return non_zero_model(np.zeros(shape, np.float32), known=False, dynamic=dynamic)


def returning_the_scatter(model):
    """The `mlc` stage of NonZero's import, returning its scatter's whole result."""
    module = mlc.compile(model, emit="mlc")
    (scatter,) = [op for op in module.walk() if isinstance(op, ml.ScatterElementsOp)]
    main = next(op for op in module.ops if isinstance(op, func.FuncOp))
    ret = main.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    ret.operands = [scatter.result]
    inputs = main.function_type.inputs.data
    main.function_type = FunctionType.from_lists(inputs, [scatter.result.type])
    return module


def lowered(module, atomic: bool):
    ConvertMLToLinalgPass(scatter_group_pairs=-1, scatter_atomic=atomic).apply(Context(), module)
    return module


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize(("shape", "density"), CASES)
def test_whole_scatter_matches_the_general_form(shape, density, dynamic):
    x = sparse(np.random.default_rng(), shape, np.float32, density)
    model = imported(shape, dynamic)
    compacted = lowered(returning_the_scatter(model), atomic=True)
    assert str(compacted).count("mlc.atomic_updates") == 1  # one loop, no winners' table
    want = mlc.compile(returning_the_scatter(model))(x)
    np.testing.assert_array_equal(mlc.compile(compacted)(x), want)


@pytest.mark.parametrize(("shape", "density"), CASES)
def test_non_zero_matches_onnxruntime(shape, density):
    x = sparse(np.random.default_rng(), shape, np.float32, density)
    model = imported(shape, dynamic=True)
    module = lowered(mlc.compile(model, emit="mlc"), atomic=True)
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    (want,) = session.run(None, {"x": x})
    got = mlc.compile(module)(x)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
