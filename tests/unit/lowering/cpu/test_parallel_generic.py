"""
The blocks `linalg-tile` splits a generic into, as `convert-to-llvm` weighs them.

`convert-to-llvm` runs an `scf.parallel` on the thread pool only if its trip count
times the work of one iteration reaches `PARALLEL_THRESHOLD`, counting a loop whose
bounds it cannot read as 1024 iterations. Blocks of a dynamic size hid the work of a
split elementwise generic behind that guess: two blocks of 8M elements weighed as two
of 1024, and the elementwise chain ran on one thread.
"""

import pytest
from xdsl.dialects import arith, scf

from mlc.ir import parse_module
from mlc.lowering.convert_to_llvm.parallel_work import weigh, work
from mlc.pipeline import run_pipeline
from mlc.tiling_model import PARALLEL_THRESHOLD

CHAIN = """
func.func @f(%a: memref<{n}xf32>, %b: memref<{n}xf32>, %o: memref<{n}xf32>) {{
  linalg.generic {{indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>,
                                   affine_map<(d0) -> (d0)>],
                  iterator_types = ["parallel"]}}
      ins(%a, %b : memref<{n}xf32>, memref<{n}xf32>) outs(%o : memref<{n}xf32>) {{
  ^bb0(%x: f32, %y: f32, %z: f32):
    %p = arith.mulf %x, %y : f32
    %zero = arith.constant 0.0 : f32
    %r = arith.maximumf %p, %zero : f32
    linalg.yield %r : f32
  }}
  func.return
}}
"""


def split_loop(n: int, threads: int) -> scf.ParallelOp:
    module = parse_module(CHAIN.format(n=n))
    run_pipeline(
        module,
        f"linalg-tile{{threads={threads}}},convert-linalg-to-loops,lower-affine,canonicalize,cse",
    )
    (loop,) = [op for op in module.walk() if isinstance(op, scf.ParallelOp)]
    return loop


@pytest.mark.parametrize(("n", "threads"), [(1 << 24, 2), (1 << 20, 4), (600_000, 3)])
def test_static_blocks_carry_their_work(n: int, threads: int):
    loop = split_loop(n, threads)
    step = loop.step[0].owner
    assert isinstance(step, arith.ConstantOp)
    assert step.value.value.data == n // threads  # pyright: ignore[reportAttributeAccessIssue]
    assert threads * work(loop.body.block) >= PARALLEL_THRESHOLD


def test_rows_that_do_not_divide_keep_a_constant_block():
    # a prime extent: blocks of ceil(n / threads), the last one shorter; the rows of a
    # block are read through the `min` (3 ops a row: load, max, store, ...)
    loop = split_loop(100_003, 2)
    step = loop.step[0].owner
    assert isinstance(step, arith.ConstantOp)
    assert step.value.value.data == 50_002  # pyright: ignore[reportAttributeAccessIssue]
    fixed, per_step = weigh(loop.body.block, loop.step[0])
    assert per_step == 0 and 50_002 <= fixed < 50_002 * 10
    assert 2 * fixed >= PARALLEL_THRESHOLD
