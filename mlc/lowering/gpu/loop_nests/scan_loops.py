"""
A scan generic (`ml.cumsum`'s, `convert_ml_to_linalg/scan.py`): one reduction dim, some
outputs independent of it (the running totals) and the others at maps that read it (the
sums of each step). Its running totals ride in `iter_args` through the `scf.for` over the
scan dim, starting at an absorbed fill's constant (`mlc.lowering.gpu.fills`) or a load,
the step outputs are stored each iteration and the totals once after:

    linalg.generic {maps = [id, (d0, d1) -> (d0, 0), id], ["parallel", "reduction"]}
        ins(%x) outs(%acc, %sums)
==>
    scf.parallel (%i) = (%c0) to (%m) step (%c1) {
      %total = scf.for %j = %c0 to %n step %c1 iter_args(%a = %zero) -> (f32) {
        %next = arith.addf %a, (memref.load %x[%i, %j])
        memref.store %next, %sums[%i, %j]
        scf.yield %next
      }
      memref.store %total, %acc[%i, %c0]
      scf.reduce
    }

The running total in a register (not loaded and stored through `%acc` every step) is
what lets `convert-parallel-loops-to-gpu` split a row among a warp's lanes
(`mlc.lowering.gpu.loop_mapping.warp_scan`).
"""

from collections.abc import Sequence

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.linalg.ops import GenericOp
from xdsl.ir import Attribute, SSAValue
from xdsl.rewriter import InsertPoint

from mlc.lowering.gpu.loop_nests.loop_emitter import LoopEmitter, clone_body, for_nest


def lower_scan(
    op: GenericOp,
    emit: LoopEmitter,
    bounds: Sequence[SSAValue],
    reduction: Sequence[int],
    ivs: list[SSAValue | None],
    carried: Sequence[int],
    starts: dict[int, Attribute],
) -> None:
    """The body of the parallel loop at `emit` for a scan generic (module docstring);
    `starts` gives the constant a carried output starts at, by output index."""
    n_in, n_out = len(op.inputs), len(op.outputs)
    (dim,) = reduction
    outer = [emit.index(0) if iv is None else iv for iv in ivs]  # the scan dim ignored
    init = [
        emit(arith.ConstantOp(starts[i])).results[0]
        if i in starts
        else emit.loads(op, outer, [n_in + i])[0]
        for i in carried
    ]
    (loop,), totals = for_nest(emit, bounds, [dim], ivs, init)
    inner = [iv for iv in ivs if iv is not None]
    args = emit.loads(op, inner, range(n_in))
    block_args = op.body.block.args[n_in:]
    running = iter(totals)
    for i in range(n_out):
        if i in carried:
            args.append(next(running))
        elif block_args[i].uses:  # a step output the body reads: its old element
            args += emit.loads(op, inner, [n_in + i])
        else:
            args.append(block_args[i])  # unused: any value stands in
    results = clone_body(emit, op.body.block, args, inner)
    stepped = [i for i in range(n_out) if i not in carried]
    _store(op, emit, inner, stepped, results)
    emit(scf.YieldOp(*(results[i] for i in carried)))
    emit.point = InsertPoint.after(loop)
    _store(op, emit, outer, carried, {i: loop.results[n] for n, i in enumerate(carried)})


def _store(
    op: GenericOp,
    emit: LoopEmitter,
    ivs: Sequence[SSAValue],
    outputs: Sequence[int],
    values: Sequence[SSAValue] | dict[int, SSAValue],
) -> None:
    """Store output `i`'s value `values[i]` at `ivs`, for each `i` of `outputs`."""
    maps = op.get_indexing_maps().data
    for i in outputs:
        at = len(op.inputs) + i
        indices = emit.indices(maps[at].data, ivs)
        emit(memref.StoreOp.get(values[i], op.operands[at], indices))
