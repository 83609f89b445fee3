"""The multiply-accumulate body both GPU contraction matchers read."""

# ruff: noqa: E501  (IR lines as they are written in .mlir files)

from xdsl.dialects import scf
from xdsl.dialects.linalg.ops import GenericOp

from mlc.ir import parse_module
from mlc.lowering.gpu.contraction.accumulation import accumulation, fused_epilogue, reads_loop

MAPS = "affine_map<(d0, d1, d2) -> (d0, d1)>, affine_map<(d0, d1, d2) -> (d1, d2)>, affine_map<(d0, d1, d2) -> (d0, d2)>"


def generic(body: str) -> GenericOp:
    source = f"""
    func.func @f(%a: memref<8x4xf32>, %b: memref<4x6xf32>, %c: memref<8x6xf32>) {{
      linalg.generic {{indexing_maps = [{MAPS}], iterator_types = ["parallel", "reduction", "parallel"]}} ins(%a, %b : memref<8x4xf32>, memref<4x6xf32>) outs(%c : memref<8x6xf32>) {{
      ^bb0(%u: f32, %w: f32, %acc: f32):
        {body}
      }}
      func.return
    }}"""
    (op,) = [op for op in parse_module(source).walk() if isinstance(op, GenericOp)]
    return op


def test_a_plain_matmul_body_accumulates_with_no_epilogue():
    op = generic(
        "%p = arith.mulf %u, %w : f32\n%s = arith.addf %acc, %p : f32\nlinalg.yield %s : f32"
    )
    found = accumulation(op)
    assert found is not None
    x, y, ops, accumulated = found
    assert (x, y) == (0, 1) and [o.name for o in ops] == ["arith.mulf", "arith.addf"]
    assert fused_epilogue(op, accumulated) is None


def test_an_epilogue_on_the_last_iteration_is_the_yielded_branch():
    op = generic(
        "%p = arith.mulf %u, %w : f32\n%s = arith.addf %acc, %p : f32\n"
        "%k = linalg.index 1 : index\n%last = arith.constant 3 : index\n"
        "%end = arith.cmpi eq, %k, %last : index\n"
        "%r = scf.if %end -> (f32) {\n%z = arith.constant 0.0 : f32\n%m = arith.maximumf %s, %z : f32\nscf.yield %m : f32\n"
        "} else {\nscf.yield %s : f32\n}\nlinalg.yield %r : f32"
    )
    found = accumulation(op)
    assert found is not None
    assert isinstance(fused_epilogue(op, found[3]), scf.IfOp)


def test_a_sum_of_squares_is_no_accumulation_of_two_inputs():
    op = generic(
        "%p = arith.mulf %u, %u : f32\n%s = arith.addf %acc, %p : f32\nlinalg.yield %s : f32"
    )
    assert accumulation(op) is None


def test_which_loops_an_operand_reads():
    op = generic(
        "%p = arith.mulf %u, %w : f32\n%s = arith.addf %acc, %p : f32\nlinalg.yield %s : f32"
    )
    assert [reads_loop(op, 0, d) for d in range(3)] == [True, True, False]
    assert [reads_loop(op, 2, d) for d in range(3)] == [True, False, True]
