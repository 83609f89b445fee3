"""
Where the GPU's contraction kernels (`tiled_kernel`, `wgmma_kernel`) start their f32
accumulators and how they finish them: a fill's constant, a convolution's bias or the
output's own values to start from; each finished accumulator rounded to the output's
type, through the epilogue `linalg-fuse-elementwise` fused into the generic (its other
inputs read at the output element), and stored.

An epilogue input that reads neither the rows nor the columns (a rank-0 constant, as
exporters write GELU's) is loaded once, ahead of the elements (`shared_inputs`), not
once an element. A bias per column is still loaded with its element, after the
previous element's store: loaded ahead too, it let ptxas start many elements' epilogues
at once, and the wgmma kernel's erf GELU then spilled (255 registers against 213).
"""

from xdsl.dialects import arith, memref, scf
from xdsl.dialects.builtin import MemRefType, f32
from xdsl.dialects.linalg.ops import IndexOp
from xdsl.ir import Operation, SSAValue
from xdsl.transforms.loop_nest_lowering_utils import indices_for_map

from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.match import Contraction
from mlc.lowering.gpu.fills import filled_with


def widened(e: Emitter, value: SSAValue) -> SSAValue:
    """A 16-bit accumulator start as the f32 the accumulators are."""
    return value if value.type == f32 else e(arith.ExtFOp(value, f32))


def initial_values(emit: Emitter, c: Contraction, places: list[list[SSAValue]]) -> list[SSAValue]:
    """
    The accumulators' start at each of `places` (the generic's loop indices of an output
    element, K at zero): the fill's constant, a convolution's bias, or the output.
    """
    if c.fill is not None:
        constant = filled_with(c.fill)
        assert constant is not None and isinstance(constant.owner, Operation)
        return [widened(emit, emit(constant.owner.clone()))] * len(places)
    out = len(c.op.inputs)
    if c.conv is not None and (bias := c.conv.bias) is not None:  # a broadcast bias
        at = [emit.indices(c.op, out, ivs) for ivs in places]
        return [widened(emit, emit.load(bias, 0, place)) for place in at]
    return [widened(emit, emit.load(c.op, out, ivs)) for ivs in places]


def shared_inputs(e: Emitter, c: Contraction, ivs: list[SSAValue]) -> dict[int, SSAValue]:
    """The epilogue's inputs that read no loop but a matmul's batch loops (fixed in a
    block), loaded at `e` at loop indices `ivs`, to be given to every element's
    `finished` (module docstring)."""
    if c.epilogue is None:
        return {}
    args = c.op.body.block.args
    maps = c.op.get_indexing_maps().data
    fixed = set(c.batch) if c.conv is None else set()  # a convolution's vary per element
    return {
        i: e.load(c.op, i, ivs)
        for i in range(len(c.op.inputs))
        if i not in (c.a, c.b) and args[i].uses and maps[i].data.used_dims() <= fixed
    }


def finished(
    e: Emitter,
    c: Contraction,
    value: SSAValue,
    ivs: list[SSAValue],
    given: dict[int, SSAValue] | None = None,
) -> SSAValue:
    """Finished accumulator `value` of the output element at loop indices `ivs`: rounded
    to the output's type, then through the fused epilogue (its other inputs read at
    `ivs`, but for those `given`: input -> its value there)."""
    output = c.op.outputs[0].type
    assert isinstance(output, MemRefType)
    if output.element_type != f32:  # f32 accumulators of a 16-bit contraction
        value = e(arith.TruncFOp(value, output.element_type))
    if c.epilogue is None:
        return value
    block = c.op.body.block
    accumulated = c.accumulate[-1].results[0]
    mapping: dict[SSAValue, SSAValue] = {accumulated: value}
    for i, arg in enumerate(block.args[: len(c.op.inputs)]):
        if given is not None and i in given:
            mapping[arg] = given[i]
        elif i not in (c.a, c.b) and arg.uses:
            mapping[arg] = e.load(c.op, i, ivs)
    for inner in c.epilogue.true_region.block.ops:
        if isinstance(inner, scf.YieldOp):
            return mapping.get(inner.operands[0], inner.operands[0])
        if isinstance(inner, IndexOp):
            mapping[inner.result] = ivs[inner.dim.value.data]
            continue
        clone = inner.clone(value_mapper=mapping)
        e.rewriter.insert(clone, e.point)
    raise AssertionError("an epilogue ends with scf.yield")


def store_output(
    e: Emitter,
    c: Contraction,
    value: SSAValue,
    ivs: list[SSAValue],
    given: dict[int, SSAValue] | None = None,
) -> None:
    """Finished accumulator `value` of the output element at loop indices `ivs`, stored
    (`finished`'s `given`)."""
    value = finished(e, c, value, ivs, given)
    out = len(c.op.inputs)
    affine_map = c.op.get_indexing_maps().data[out].data
    indices = indices_for_map(e.rewriter, e.point, affine_map, ivs)
    e(memref.StoreOp.get(value, c.op.outputs[0], indices))
