"""`kmajor_operand`: a tf32 wgmma operand contiguous along its extent made K-major."""

import numpy as np
from xdsl.dialects import memref
from xdsl.dialects.builtin import MemRefType, StringAttr, UnitAttr, f32
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir.affine import AffineDimExpr
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from mlc import resources
from mlc.ir import parse_module
from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.kmajor_operand import make_k_major, transposable

GENERIC = """
func.func @f(%a: memref<8x5xf32>, %c: memref<8x6xf32>) {
  %b = memref.get_global @NAME : memref<5x6xf32>
  linalg.generic {indexing_maps = [affine_map<(i, k, j) -> (i, k)>, \
affine_map<(i, k, j) -> (k, j)>, affine_map<(i, k, j) -> (i, j)>], \
iterator_types = ["parallel", "reduction", "parallel"]} \
ins(%a, %b : memref<8x5xf32>, memref<5x6xf32>) outs(%c : memref<8x6xf32>) {
  ^bb0(%x: f32, %y: f32, %acc: f32):
    %p = arith.mulf %x, %y : f32
    %s = arith.addf %acc, %p : f32
    linalg.yield %s : f32
  }
  func.return
}
"""


def test_constant_weight_is_transposed_at_compile_time():
    """A held resource: a new resource of its transpose, the map's last results swapped."""
    weight = np.random.default_rng().standard_normal((5, 6)).astype(np.float32)
    name = resources.symbol_name(resources.register(weight, "w"))
    module = parse_module(GENERIC.replace("NAME", f'"{name}"'))
    type_ = MemRefType(f32, [5, 6])
    glob = memref.GlobalOp.get(
        StringAttr(name), type_, UnitAttr(), StringAttr("public"), UnitAttr(), 64
    )
    module.body.block.insert_op_before(glob, module.body.block.first_op)
    (op,) = [o for o in module.walk() if isinstance(o, GenericOp)]
    assert transposable(op, 1, 1) is None
    frees = make_k_major(Emitter(PatternRewriter(op), InsertPoint.before(op), op), op, 1)
    assert frees == []  # no temporary, no kernel
    getter = op.operands[1].owner
    assert isinstance(getter, memref.GetGlobalOp)
    handle = getter.name_.root_reference.data.removeprefix(resources.PREFIX)
    np.testing.assert_array_equal(resources.lookup(handle), weight.T)
    assert op.operands[1].type == MemRefType(f32, [6, 5])
    results = op.get_indexing_maps().data[1].data.results
    assert results == (AffineDimExpr(2), AffineDimExpr(1))  # (j, k): K-major
    assert not [o for o in module.walk() if isinstance(o, memref.AllocOp)]


def test_transposable_only_with_k_second_to_last():
    source = GENERIC.replace("(k, j)>, affine_map", "(j, k)>, affine_map")
    source = source.replace("memref<5x6xf32>", "memref<6x5xf32>").replace("@NAME", '@"x"')
    (op,) = [o for o in parse_module(source).walk() if isinstance(o, GenericOp)]
    assert transposable(op, 1, 1) is not None  # (j, k): swapping would not put K last
