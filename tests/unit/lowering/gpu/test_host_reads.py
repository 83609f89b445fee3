"""
The host code of the GPU target reads nothing back from the device while a call's
kernels are being launched: `bound-device-sizes` keeps NonZero's count on the device,
`defer-device-checks` moves the index checks' reads after the last launch. Checked on
the lowered host IR of a NonZero -> Gather -> MatMul program and of the sparse MoE
layer, whose host code must still compile (to an object: the CUDA driver's symbols
are bound only where a GPU is).
"""

import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from xdsl.dialects import func, gpu, memref

import mlc
from mlc.backend.cuda import host_module
from mlc.backend.jit import compile_object
from mlc.pipeline import lower
from mlc.registry import make_context, parse_pipeline

sys.path.insert(0, str(Path(__file__).parents[4] / "examples"))
import sparse_moe


def routed_rows(tokens: int = 64, dim: int = 16, out: int = 8) -> onnx.ModelProto:
    """`sum(x[nonzero(x[:, 0] > 0)] @ w)`: a matmul on a count of rows known at run time."""
    w = np.random.default_rng(0).standard_normal((dim, out)).astype(np.float32)
    constants = {
        "start": np.array([0]),
        "stop": np.array([1]),
        "axis1": np.array([1]),
        "axis0": np.array([0]),
        "zero": np.array(0, np.float32),
        "w": w,
    }
    nodes = [
        helper.make_node("Slice", ["x", "start", "stop", "axis1"], ["column"]),
        helper.make_node("Greater", ["column", "zero"], ["positive"]),
        helper.make_node("Squeeze", ["positive", "axis1"], ["mask"]),
        helper.make_node("NonZero", ["mask"], ["found"]),
        helper.make_node("Squeeze", ["found", "axis0"], ["rows"]),
        helper.make_node("Gather", ["x", "rows"], ["picked"], axis=0),
        helper.make_node("MatMul", ["picked", "w"], ["y"]),
        helper.make_node("ReduceSum", ["y"], ["total"], keepdims=0),
    ]
    graph = helper.make_graph(
        nodes,
        "routed_rows",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [tokens, dim])],
        [helper.make_tensor_value_info("total", TensorProto.FLOAT, [])],
        [numpy_helper.from_array(v, k) for k, v in constants.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def sparse_layer(tokens: int = 64) -> onnx.ModelProto:
    """The sparse MoE layer (2 experts, top-1) on a static batch of `tokens`."""
    model = sparse_moe.sparse_moe("dynamo", sparse_moe.random_weights(16, 32, 2, seed=0), 1)
    shape = model.graph.input[0].type.tensor_type.shape
    shape.ClearField("dim")
    for size in (1, tokens, 16):
        shape.dim.add().dim_value = size
    return model


def host_ops(module) -> list:
    (main,) = [op for op in module.ops if isinstance(op, func.FuncOp)]
    return list(main.body.block.ops)


def reads_between_launches(ops: list) -> int:
    """
    The host's `memref.load`s (each a device-to-host copy, which waits for the kernels
    launched before it) between its first launch and its last.
    """
    launches = [
        i for i, op in enumerate(ops) if any(isinstance(o, gpu.LaunchFuncOp) for o in op.walk())
    ]
    return sum(isinstance(op, memref.LoadOp) for op in ops[launches[0] : launches[-1]])


def sparse_layer_any_tokens() -> onnx.ModelProto:
    """The sparse MoE layer on a batch and sequence known at run time (as the bench's)."""
    return sparse_moe.sparse_moe("dynamo", sparse_moe.random_weights(16, 32, 2, seed=0), 1)


@pytest.mark.parametrize("program", [routed_rows, sparse_layer, sparse_layer_any_tokens])
def test_no_device_read_while_launching(program):
    module = mlc.import_onnx(program())
    lower(module, target="gpu", emit="gpu")
    ops = host_ops(module)
    assert reads_between_launches(ops) == 0
    assert any(isinstance(op, memref.LoadOp) for op in ops)  # the checks read at the end


def test_without_the_passes_the_count_is_read_mid_call():
    """The check above has teeth: the count is read before launches without them."""
    module = mlc.import_onnx(routed_rows())
    lower(module, target="gpu", emit="parallel-loops")
    stage = "fuse-row-epilogues,convert-parallel-loops-to-gpu,gpu-kernel-outlining"
    for each in parse_pipeline(stage):
        each.apply(make_context(), module)
    assert reads_between_launches(host_ops(module)) >= 2  # the count and a check


def test_bounded_host_code_compiles():
    module = mlc.import_onnx(sparse_layer())
    lower(module, target="gpu")
    assert compile_object(host_module(module))
