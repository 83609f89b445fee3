"""
`mlc.profiler.costs`: each `ml` op priced on the layer of the kernel it was fused into,
found by lowering, where source names alone cannot tell (a traced line's forward matmul
and its gradient's matmuls share `file:line`; a weight gradient fused with the
optimiser's update names both lines).
"""

import pytest
from xdsl.dialects.builtin import ModuleOp

from mlc import cost_model
from mlc.ir import parse_module
from mlc.profiler.costs import layer_costs

# A dense layer's forward and backward on one line (net.py:1), the momentum update on
# another (opt.py:2), as `mlc.optim` traces them.
STEP = """
func.func @step(%x: tensor<8x16xf32>, %w: tensor<16x32xf32>, %v: tensor<16x32xf32>,
                %dy: tensor<8x32xf32>) -> (tensor<8x32xf32>, tensor<8x16xf32>, tensor<16x32xf32>) {
  %y = ml.matmul %x, %w : (tensor<8x16xf32>, tensor<16x32xf32>) -> tensor<8x32xf32>
      loc("net.py":1:4)
  %r = ml.relu %y : (tensor<8x32xf32>) -> tensor<8x32xf32> loc("net.py":1:4)
  %wt = ml.transpose %w {perm = array<i64: 1, 0>} : (tensor<16x32xf32>) -> tensor<32x16xf32>
      loc("net.py":1:4)
  %dx = ml.matmul %dy, %wt : (tensor<8x32xf32>, tensor<32x16xf32>) -> tensor<8x16xf32>
      loc("net.py":1:4)
  %xt = ml.transpose %x {perm = array<i64: 1, 0>} : (tensor<8x16xf32>) -> tensor<16x8xf32>
      loc("net.py":1:4)
  %dw = ml.matmul %xt, %dy : (tensor<16x8xf32>, tensor<8x32xf32>) -> tensor<16x32xf32>
      loc("net.py":1:4)
  %mu = arith.constant dense<9.000000e-01> : tensor<f32>
  %m = ml.mul %mu, %v : (tensor<f32>, tensor<16x32xf32>) -> tensor<16x32xf32> loc("opt.py":2:1)
  %nv = ml.add %m, %dw : (tensor<16x32xf32>, tensor<16x32xf32>) -> tensor<16x32xf32>
      loc("opt.py":2:1)
  func.return %r, %dx, %nv : tensor<8x32xf32>, tensor<8x16xf32>, tensor<16x32xf32>
}
"""

# The kernels' sources as the compiled step has them: the forward matmul with its ReLU
# and the input gradient name the line; the weight gradient, its momentum fused as an
# epilogue, names both lines.
NET, BOTH = ("net.py:1",), ("net.py:1", "opt.py:2")
MATMUL = 2 * 8 * 16 * 32  # each of the three matmuls: M x N x K multiply-adds


def _step() -> ModuleOp:
    return parse_module(STEP)


@pytest.mark.parametrize("target", ["cpu", "cuda"])
def test_each_matmul_is_priced_on_the_kernel_it_runs_in(target: str):
    net, both = layer_costs(_step(), [NET, BOTH], target)
    assert net.ops.count("ml.matmul") == 2  # the forward and the input gradient
    assert both.ops.count("ml.matmul") == 1  # the weight gradient, with the update
    assert {"ml.mul", "ml.add"} <= set(both.ops) and "ml.relu" in net.ops
    assert net.flops == 2 * MATMUL + 8 * 32  # and the ReLU
    assert both.flops == MATMUL + 2 * 16 * 32  # and the update's multiply and add


def test_every_op_is_priced_once():
    module = _step()
    costs = layer_costs(module, [NET, BOTH])
    total = sum(cost_model.flops(op) or 0 for op in module.walk() if op.name.startswith("ml."))
    assert sum(c.flops or 0 for c in costs) == total


def test_a_layer_that_is_no_kernel_of_an_op_gets_none_of_it():
    # A layer of the update alone (no such kernel: it is fused into the weight gradient)
    # is priced nothing; the source-name rule alone gave every op of net.py:1 to the
    # layer of the most sources, the matmuls' 4 MFLOP layer at 6.66 TFLOP/s.
    net, update, both = layer_costs(_step(), [NET, ("opt.py:2",), BOTH])
    assert update.flops == 0 and not update.ops
    assert net.ops.count("ml.matmul") == 2 and both.ops.count("ml.matmul") == 1


def test_kernels_fused_after_the_linalg_stage_go_to_the_layer_that_includes_them():
    # One kernel of every generic (a row block, as `linalg-tile` fuses): its sources
    # include each generic's, and every op is priced there.
    (other,) = layer_costs(_step(), [("net.py:1", "opt.py:2", "elsewhere.py:3")])
    assert other.ops.count("ml.matmul") == 3


DYNAMIC = """
func.func @net(%x: tensor<?x16xf32>, %w: tensor<16x32xf32>) -> tensor<?x32xf32> {
  %y = ml.matmul %x, %w : (tensor<?x16xf32>, tensor<16x32xf32>) -> tensor<?x32xf32>
      loc("net.py":1:4)
  %r = ml.relu %y : (tensor<?x32xf32>) -> tensor<?x32xf32> loc("net.py":1:4)
  func.return %r : tensor<?x32xf32>
}
"""


def test_a_dynamic_program_is_priced_at_the_call_shapes():
    import numpy as np

    from mlc.profiler.costs import at_call_shapes

    module = parse_module(DYNAMIC)
    (unknown,) = layer_costs(module, [NET])
    assert unknown.flops is None  # the batch is not known until a call
    args = [np.zeros((8, 16), np.float32), np.zeros((16, 32), np.float32)]
    (known,) = layer_costs(at_call_shapes(module, "net", args), [NET])
    assert known.flops == MATMUL + 8 * 32
    assert "?" in str(module)  # the program itself is left as it was
    wrong = [np.zeros((8, 15), np.float32), args[1]]  # a call the signature refuses
    assert at_call_shapes(module, "net", wrong) is module
    assert at_call_shapes(module, "other", args) is module
