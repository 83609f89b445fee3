"""
Sequential loops that run on the device: an `scf.for` marked `mlc.sequential` (the
grouping loops of a scatter, `convert_ml_to_linalg/scatter_grouped.py`) becomes the body
of a one-iteration `scf.parallel`, so `convert-parallel-loops-to-gpu` makes it a kernel
whose one thread walks the loop, instead of host code copying each element it touches
to and from the device.

    %n = scf.for %t = %c0 to %T step %c1 iter_args(%s = %buf) -> (memref<?xi64>) {
      ... memref.store ..., %s[...] ; scf.yield %s } {mlc.sequential}
==>
    scf.parallel (%z) = (%c0) to (%c1) step (%c1) {
      scf.for %t = %c0 to %T step %c1 { ... memref.store ..., %buf[...] }
      scf.reduce
    }

Buffers it carries must be updated in place (yielded unchanged) and its other results
unused after it; a loop that does otherwise stays on the host (correct, slower).
"""

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp
from xdsl.ir import Block, Region
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.lowering.support.locations import located_builder

SEQUENTIAL = "mlc.sequential"  # the mark `convert_ml_to_linalg.scatter_grouped` sets


def _movable(loop: scf.ForOp) -> bool:
    if loop.parent_op() is None or any(isinstance(p, scf.ParallelOp) for p in _ancestors(loop)):
        return False
    body = loop.body.block
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    for i, init in enumerate(loop.iter_args):
        if isinstance(init.type, MemRefType):
            if yielded.operands[i] is not body.args[i + 1]:
                return False
        elif loop.results[i].uses:
            return False
    return True


def _ancestors(loop: scf.ForOp):
    op = loop.parent_op()
    while op is not None:
        yield op
        op = op.parent_op()


def _wrap(loop: scf.ForOp) -> None:
    body = loop.body.block
    yielded = body.last_op
    assert isinstance(yielded, scf.YieldOp)
    inits = list(loop.iter_args)
    keep = [i for i, v in enumerate(inits) if not isinstance(v.type, MemRefType)]
    for i, init in enumerate(inits):
        if i not in keep:
            body.args[i + 1].replace_all_uses_with(init)
            loop.results[i].replace_all_uses_with(init)
    kept_yield = [yielded.operands[i] for i in keep]
    build = located_builder(InsertPoint.before(yielded), loop.location)
    build.insert(scf.YieldOp(*kept_yield))
    Rewriter.erase_op(yielded)
    for i in reversed(range(len(inits))):
        if i not in keep:
            body.erase_arg(body.args[i + 1])
    outside = located_builder(InsertPoint.before(loop), loop.location)
    zero = outside.insert(arith.ConstantOp(IntegerAttr(0, IndexType()))).result
    one = outside.insert(arith.ConstantOp(IntegerAttr(1, IndexType()))).result
    region = loop.detach_region(loop.body)
    inner = scf.ForOp(loop.lb, loop.ub, loop.step, [inits[i] for i in keep], region)
    inner.location = loop.location  # pyright: ignore[reportAttributeAccessIssue]
    block = Block(arg_types=[IndexType()])
    block.add_ops([inner, scf.ReduceOp()])
    outside.insert(scf.ParallelOp([zero], [one], [one], Region(block)))
    Rewriter.erase_op(loop)


def wrap_sequential_loops(module: ModuleOp) -> None:
    """Every movable `mlc.sequential` loop of `module` into a one-iteration parallel loop."""
    loops = [
        op for op in module.walk() if isinstance(op, scf.ForOp) and SEQUENTIAL in op.attributes
    ]
    for loop in loops:
        if _movable(loop):
            _wrap(loop)
