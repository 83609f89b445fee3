"""The mechanics of fusing generics on tensors: maps seen across a fusion, merged inputs."""

# ruff: noqa: E501  (IR lines as they are written in .mlir files)

from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir.affine import AffineMap

from mlc.ir import parse_module
from mlc.lowering.linalg.generic_fusion import FusedOperands, fuse_producer, loops_seen

# A transpose-like producer `t[j, i] = exp(x[i, j])` read by a consumer over (i, j) as t[j, i].
SOURCE = """
func.func @f(%x: tensor<3x5xf32>, %b: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %e = tensor.empty() : tensor<5x3xf32>
  %t = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d1, d0)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%x : tensor<3x5xf32>) outs(%e : tensor<5x3xf32>) {
  ^bb0(%v: f32, %o: f32):
    %r = math.exp %v : f32
    linalg.yield %r : f32
  } -> tensor<5x3xf32>
  %s = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>, affine_map<(d0, d1) -> (d0, d1)>], iterator_types = ["parallel", "parallel"]} ins(%t, %b : tensor<5x3xf32>, tensor<5x3xf32>) outs(%e : tensor<5x3xf32>) {
  ^bb0(%u: f32, %w: f32, %o: f32):
    %r = arith.addf %u, %w : f32
    linalg.yield %r : f32
  } -> tensor<5x3xf32>
  func.return %s : tensor<5x3xf32>
}
"""


def generics() -> list[GenericOp]:
    return [op for op in parse_module(SOURCE).walk() if isinstance(op, GenericOp)]


def test_loops_seen_are_the_producer_loops_in_consumer_loops():
    producer, consumer = generics()
    seen = loops_seen(producer, consumer, 0)
    assert seen == AffineMap.from_callable(lambda i, j: (i, j))


def test_fused_operands_are_kept_once_per_value_and_map():
    producer, _ = generics()
    operands = FusedOperands([], [])
    transposed = AffineMap.from_callable(lambda i, j: (j, i))
    first = operands.add(producer.inputs[0], transposed)
    assert operands.add(producer.inputs[0], transposed) == first
    assert operands.add(producer.inputs[0], AffineMap.identity(2)) != first
    assert len(operands.values) == 2


def test_fuse_producer_reads_its_inputs_through_the_composed_maps():
    producer, consumer = generics()
    x, b = producer.inputs[0], consumer.inputs[1]
    seen = loops_seen(producer, consumer, 0)
    assert seen is not None
    fuse_producer(producer, consumer, 0, seen)
    block = producer.parent_block()
    assert block is not None
    (new,) = [op for op in block.ops if isinstance(op, GenericOp) and op is not producer]
    assert list(new.inputs) == [x, b] and not producer.res[0].uses
    maps = [m.data for m in new.indexing_maps.data]
    assert maps[0] == AffineMap.from_callable(lambda i, j: (j, i))
    assert [op.name for op in new.body.block.ops] == ["math.exp", "arith.addf", "linalg.yield"]
