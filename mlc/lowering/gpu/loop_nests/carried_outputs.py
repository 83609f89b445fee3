"""
A generic whose outputs its reductions carry (`convert-linalg-to-parallel-loops`): each
output of the iteration (one, or a register tile's) is read once before the `scf.for`
loops over the reduction dims, carried through them in `iter_args` and stored once after.

The carried value starts at an absorbed fill's constant instead of a load
(`mlc.lowering.gpu.fills.absorbable_fills`). An epilogue that `linalg-fuse-elementwise`
fused into a contraction's last iteration is peeled: the loops carry `c + a * b` alone
and the epilogue runs once on each total after them, so that no branch sits in the loop
and a warp can share it.
"""

import math
from collections.abc import Sequence

from xdsl.dialects import arith, scf
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from mlc.lowering.gpu.loop_analysis import static_size
from mlc.lowering.gpu.loop_nests.loop_emitter import LoopEmitter, clone_body, for_nest
from mlc.lowering.gpu.loop_nests.register_tile import RegisterTile
from mlc.lowering.linalg.contraction import Epilogue, epilogue_of, multiply_add
from mlc.lowering.support.loop_builder import Ops


def peeled_epilogue(op: GenericOp, reduction: Sequence[int]) -> Epilogue | None:
    """
    The epilogue `linalg-fuse-elementwise` fused into a contraction's last iteration
    (`mlc.lowering.linalg.contraction.epilogue_of`), when the reduction sizes are static
    (module docstring), else None.
    """
    if len(op.inputs) < 2 or len(op.outputs) != 1:
        return None
    if (found := multiply_add(op.body.block)) is None:
        return None
    rest, total = found
    sizes = {d: static_size(op, [d]) for d in reduction}
    if any(math.isinf(size) for size in sizes.values()):
        return None
    return epilogue_of(op, rest, total, {d: int(size) for d, size in sizes.items()})


def lower_carried(
    op: GenericOp,
    emit: LoopEmitter,
    bounds: Sequence[SSAValue],
    reduction: Sequence[int],
    ivs: list[SSAValue | None],
    tile: RegisterTile | None,
    starts: dict[int, Attribute],
) -> None:
    """
    The body of the parallel loop at `emit`: the reduction loops carrying the outputs
    at each point of `tile` (or the one output), then their stores; `starts` gives the
    constant an output starts at, by output index, instead of a load.
    """
    n_out = len(op.outputs)
    # Output maps ignore the reduction dims: any index stands in for them here.
    zero = emit.index(0)
    outer = [zero if iv is None else iv for iv in ivs]
    points = tile.points(emit, outer) if tile else [(outer, None)]
    init = [value for point, _ in points for value in _starts(op, emit, point, starts)]
    epilogue = peeled_epilogue(op, reduction)
    loops, carried = for_nest(emit, bounds, reduction, ivs, init)
    results: list[SSAValue] = []
    for n, (point, _) in enumerate(points):
        inner = [ivs[d] if d in reduction else iv for d, iv in enumerate(point)]
        accumulators = carried[n * n_out : (n + 1) * n_out]
        results += _step(op, emit, inner, accumulators, epilogue)
    for loop in reversed(loops):
        emit(scf.YieldOp(*results))
        results = list(loop.results)
        emit.point = InsertPoint.after(loop)
    emit.point = InsertPoint.after(loops[0])
    for n, (point, inside) in enumerate(points):
        values = results[n * n_out : (n + 1) * n_out]
        if epilogue is not None:
            ops = Ops()
            values = [epilogue.apply(ops, point, values[0])]
            for new_op in ops.ops:
                emit(new_op)
        _guarded_stores(op, emit, point, values, inside)


def _starts(
    op: GenericOp, emit: LoopEmitter, point: Sequence[SSAValue], starts: dict[int, Attribute]
) -> list[SSAValue]:
    """The outputs' values at `point` before the reduction: a fill's constant, or loaded."""
    n_in, n_out = len(op.inputs), len(op.outputs)
    read = [n_in + i for i in range(n_out) if i not in starts]
    loaded = iter(emit.loads(op, point, read))
    return [
        emit(arith.ConstantOp(starts[i])).results[0] if i in starts else next(loaded)
        for i in range(n_out)
    ]


def _step(
    op: GenericOp,
    emit: LoopEmitter,
    inner: Sequence[SSAValue],
    accumulators: Sequence[SSAValue],
    epilogue: Epilogue | None,
) -> list[SSAValue]:
    """One iteration's body at `inner`; with a peeled epilogue, `c + a * b` alone."""
    block = op.body.block
    if epilogue is None:
        inputs = emit.loads(op, inner, range(len(op.inputs)))
        return clone_body(emit, block, [*inputs, *accumulators], inner)
    a, b = emit.loads(op, inner, (0, 1))
    mapping = {block.args[0]: a, block.args[1]: b, block.args[-1]: accumulators[0]}
    for body_op in list(block.ops)[:2]:  # `multiply_add`'s mulf and addf
        emit.keep_location(body_op.clone(value_mapper=mapping))
    return [mapping[epilogue.accumulated]]


def _guarded_stores(
    op: GenericOp,
    emit: LoopEmitter,
    point: Sequence[SSAValue],
    values: Sequence[SSAValue],
    inside: SSAValue | None,
) -> None:
    """The stores of `values` at `point`, under `scf.if inside` unless None."""
    if inside is None:
        emit.stores(op, point, values)
        return
    then = Block()
    emit(scf.IfOp(inside, [], Region(then)))
    after = emit.point
    emit.point = InsertPoint.at_end(then)
    emit.stores(op, point, values)
    emit(scf.YieldOp())
    emit.point = after
