"""
Where the GPU's contraction kernels (`tiled_kernel`, `wgmma_kernel`) start their f32
accumulators and how they finish them: a fill's constant, a convolution's bias or the
output's own values to start from; each finished accumulator through the epilogue
`linalg-fuse-elementwise` fused into the generic (its other inputs read at the output
element), rounded to the output's type and stored.

The epilogue of a 16-bit output computes in f32 on the f32 accumulator (`in_f32`) and
is rounded once, at the store, not once per op: its 16-bit inputs are widened as
loaded, its 16-bit constants become f32 ones (their values exact), and its casts
between f32 and 16 bits vanish (autocast's `extf`, ..., `truncf` around f32 math too).
One rounding is also the more accurate (docs/precision.md). An epilogue with no f32
form (a bitcast reads bits) runs as written on the rounded accumulator.

An epilogue input that reads neither the rows nor the columns (a rank-0 constant, as
exporters write GELU's) is loaded once, ahead of the elements (`shared_inputs`), not
once an element; a splat constant of any shape (GELU's 0.5, 1/sqrt(2), 1.0 as some
exporters write them, full size) is no load at all but an immediate. A bias per
column is loaded once a column a thread owns (`column_inputs`), at its column kept
inside N, not once an element. (Done with the epilogue in 16 bits, its software
roundings made ptxas spill the wgmma kernel's erf GELU, 255 registers; in f32 the
fc1 kernel keeps its 212.)
"""

from xdsl.dialects import arith, llvm, memref, scf
from xdsl.dialects.builtin import (
    AnyFloat,
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    MemRefType,
    NoneAttr,
    f32,
    i16,
    i32,
    i64,
)
from xdsl.dialects.linalg.ops import IndexOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.ir.affine import AffineDimExpr
from xdsl.transforms.loop_nest_lowering_utils import indices_for_map

from mlc.lowering.gpu.contraction.emitter import Emitter
from mlc.lowering.gpu.contraction.half_staging import element_address
from mlc.lowering.gpu.contraction.kmajor_operand import constant_global
from mlc.lowering.gpu.contraction.match import HALF_TYPES, Contraction
from mlc.lowering.gpu.fills import filled_with
from mlc.lowering.graph.patterns.ml import dense_splat


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
    """The epilogue's inputs that every element of a block reads alike, at `e`, to be
    given to every element's `computed`: a splat constant as an immediate, and those
    that read no loop but a matmul's batch loops (fixed in a block) loaded at loop
    indices `ivs`; widened when the epilogue computes in f32 (module docstring)."""
    if c.epilogue is None:
        return {}
    args = c.op.body.block.args
    maps = c.op.get_indexing_maps().data
    fixed = set(c.batch) if c.conv is None else set()  # a convolution's vary per element
    wide = in_f32(c)
    given: dict[int, SSAValue] = {}
    for i in range(len(c.op.inputs)):
        if i in (c.a, c.b) or not args[i].uses:
            continue
        if (immediate := _splat_constant(e, c.op.inputs[i], wide)) is not None:
            given[i] = immediate
        elif maps[i].data.used_dims() <= fixed:
            given[i] = _as_computed(e, e.load(c.op, i, ivs), wide)
    return given


def column_inputs(
    e: Emitter, c: Contraction, ivs: list[SSAValue], given: dict[int, SSAValue]
) -> dict[int, SSAValue]:
    """
    The epilogue's inputs that read the column loop alone (a bias), but for those
    `given`, loaded at `e` at loop indices `ivs` (a column kept inside N, so a partial
    tile reads nothing out of bounds; widened as `shared_inputs`): loaded once a column
    a thread owns and given to each of its elements, not once an element.
    """
    if c.epilogue is None or c.conv is not None:  # a convolution's columns are pixels
        return {}
    args = c.op.body.block.args
    maps = c.op.get_indexing_maps().data
    wide = in_f32(c)
    return {
        i: _as_computed(e, e.load(c.op, i, ivs), wide)
        for i in range(len(c.op.inputs))
        if i not in (c.a, c.b, *given) and args[i].uses and maps[i].data.used_dims() == {c.cols}
    }


def _splat_constant(e: Emitter, source: SSAValue, wide: bool) -> SSAValue | None:
    """An `arith.constant` of the one float a splat constant memref `source` holds (in
    f32 if `wide`), or None."""
    found = constant_global(source)
    if found is None or not isinstance(dense := found.initial_value, DenseIntOrFPElementsAttr):
        return None
    element = dense.get_element_type()
    if not isinstance(element, AnyFloat) or (value := dense_splat(dense)) is None:
        return None
    return e(arith.ConstantOp(FloatAttr(float(value), _wide(element) if wide else element)))


def _output_element(c: Contraction) -> Attribute:
    output = c.op.outputs[0].type
    assert isinstance(output, MemRefType)
    return output.element_type


def in_f32(c: Contraction) -> bool:
    """
    Whether the epilogue of a 16-bit output computes in f32 on the f32 accumulator,
    rounded once at the store: every op of it arith or math (or `linalg.index`) with no
    region, no bitcast (a bit pattern has no f32 form).
    """
    if c.epilogue is None or not isinstance(_output_element(c), HALF_TYPES):
        return False
    for inner in c.epilogue.true_region.block.ops:
        if inner.regions or isinstance(inner, arith.BitcastOp):
            return False
        if not isinstance(inner, IndexOp | scf.YieldOp) and inner.dialect_name() not in (
            "arith",
            "math",
        ):
            return False
    return True


def _wide(type_: Attribute) -> Attribute:
    return f32 if isinstance(type_, HALF_TYPES) else type_


def _as_computed(e: Emitter, value: SSAValue, wide: bool) -> SSAValue:
    """An epilogue input as the epilogue computes on it: 16-bit widened once if `wide`."""
    if wide and isinstance(value.type, HALF_TYPES):
        return e(arith.ExtFOp(value, f32))
    return value


def _clone_in_f32(e: Emitter, op: Operation, mapping: dict[SSAValue, SSAValue]) -> None:
    """Epilogue op `op` at `e` on f32 where it was 16-bit (`in_f32`): a 16-bit constant
    as an f32 one (its value exact), a cast to or from 16 bits no op at all."""
    operands = [mapping.get(v, v) for v in op.operands]
    if isinstance(op, arith.ExtFOp | arith.TruncFOp) and operands[0].type == _wide(op.result.type):
        mapping[op.result] = operands[0]
        return
    if isinstance(op, arith.ConstantOp) and isinstance(value := op.value, FloatAttr):
        new = arith.ConstantOp(FloatAttr(value.value.data, _wide(value.type)))
    else:
        new = op.create(
            operands=operands,
            result_types=[_wide(r.type) for r in op.results],
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
    new.location = op.location
    e.keep(new)
    mapping.update(zip(op.results, new.results, strict=True))


def computed(
    e: Emitter,
    c: Contraction,
    value: SSAValue,
    ivs: list[SSAValue],
    given: dict[int, SSAValue] | None = None,
) -> SSAValue:
    """
    Finished accumulator `value` (f32) of the output element at loop indices `ivs`
    through the fused epilogue (its other inputs read at `ivs`, but for those `given`:
    input -> its value there): in f32 when `in_f32` (to be rounded by the store), else
    rounded to the output's type first and computed in it.
    """
    if c.epilogue is None:
        return value
    wide = in_f32(c)
    if not wide:
        value = rounded(e, c, value)
    block = c.op.body.block
    accumulated = c.accumulate[-1].results[0]
    mapping: dict[SSAValue, SSAValue] = {accumulated: value}
    for i, arg in enumerate(block.args[: len(c.op.inputs)]):
        if given is not None and i in given:
            mapping[arg] = given[i]
        elif i not in (c.a, c.b) and arg.uses:
            mapping[arg] = _as_computed(e, e.load(c.op, i, ivs), wide)
    for inner in c.epilogue.true_region.block.ops:
        if isinstance(inner, scf.YieldOp):
            return mapping.get(inner.operands[0], inner.operands[0])
        if isinstance(inner, IndexOp):
            mapping[inner.result] = ivs[inner.dim.value.data]
        elif wide:
            _clone_in_f32(e, inner, mapping)
        else:
            e.keep(inner.clone(value_mapper=mapping))
    raise AssertionError("an epilogue ends with scf.yield")


def rounded(e: Emitter, c: Contraction, value: SSAValue) -> SSAValue:
    """`value` (f32, or already the output's type) in the output's type."""
    element = _output_element(c)
    return value if value.type == element else e(arith.TruncFOp(value, element))


def store_output(
    e: Emitter,
    c: Contraction,
    value: SSAValue,
    ivs: list[SSAValue],
    given: dict[int, SSAValue] | None = None,
) -> None:
    """Finished accumulator `value` of the output element at loop indices `ivs`, stored
    (`computed`'s `given`), rounded once."""
    value = rounded(e, c, computed(e, c, value, ivs, given))
    out = len(c.op.inputs)
    affine_map = c.op.get_indexing_maps().data[out].data
    indices = indices_for_map(e.rewriter, e.point, affine_map, ivs)
    e(memref.StoreOp.get(value, c.op.outputs[0], indices))


def pairs_stored(c: Contraction) -> bool:
    """
    Whether a lane's two adjacent columns can be stored as one word (rounded together
    by `cvt.rn.{f16,bf16}x2.f32`, after an epilogue in f32; f32 as one 8-byte store):
    an output with the identity layout whose last dim is the columns. One-element
    stores halved the wgmma kernel's rate (bench/gpu_epilogue.py). The caller knows
    that a pair's first column is even and N too (alignment).
    """
    output = c.op.outputs[0].type
    assert isinstance(output, MemRefType)
    last = c.op.get_indexing_maps().data[len(c.op.inputs)].data.results[-1]
    return (
        isinstance(output.layout, NoneAttr)
        and isinstance(last, AffineDimExpr)
        and last.position == c.cols
    )


def store_pair(
    e: Emitter,
    c: Contraction,
    values: list[SSAValue],
    places: list[list[SSAValue]],
    given: list[dict[int, SSAValue]],
) -> None:
    """Finished accumulators `values` of columns `col`, `col + 1` of a row (`places`:
    their loop indices; `given`: each one's epilogue inputs loaded ahead, `computed`),
    through the epilogue, rounded and stored at once (`pairs_stored`)."""
    out = len(c.op.inputs)
    element = _output_element(c)
    indices = e.indices(c.op, out, places[0])
    size = 4 if element == f32 else 2
    address = e(arith.IndexCastOp(element_address(e, c.op.outputs[0], indices, size), i64))
    values = [
        computed(e, c, v, ivs, inputs) for v, ivs, inputs in zip(values, places, given, strict=True)
    ]
    if element == f32:  # two f32 (8-byte aligned)
        store = "{ .reg .u64 ga; cvta.to.global.u64 ga, $0; st.global.v2.f32 [ga], {$1, $2}; }"
        operands = [address, *values]
        e(llvm.InlineAsmOp(store, "l,f,f,~{memory}", operands, has_side_effects=True))
        return
    if values[0].type == f32:  # rounded together, once
        kind = "bf16" if isinstance(element, BFloat16Type) else "f16"
        convert = f"cvt.rn.{kind}x2.f32 $0, $1, $2;"  # $1 to the high half
        packed = e(llvm.InlineAsmOp(convert, "=r,f,f", [values[1], values[0]], [i32]))
    else:  # an epilogue computed in 16 bits: two values, the first in the low half
        halves = [e(arith.BitcastOp(v, i16)) for v in values]
        packed = e(llvm.InlineAsmOp("mov.b32 $0, {$1, $2};", "=r,h,h", halves, [i32]))
    store = "{ .reg .u64 ga; cvta.to.global.u64 ga, $0; st.global.b32 [ga], $1; }"
    e(llvm.InlineAsmOp(store, "l,r,~{memory}", [address, packed], has_side_effects=True))
