"""
bf16 in LLVM without LLVM's `bfloat`: stored as i16, computed in f32.

llvmlite has no `bfloat` type, and LLVM lowers bfloat math to compiler-rt calls on most
hosts anyway, so convert-to-llvm gives bf16 the LLVM type i16 (its bit pattern) and
computes every bf16 operation in f32, rounded back once per result, as ml_dtypes (and
numpy's f16) do:

    %z = arith.addf %x, %y : bf16
==>  (`widen_bf16_arithmetic`, before the conversion)
    %x32 = arith.extf %x : bf16 to f32
    %y32 = arith.extf %y : bf16 to f32
    %z32 = arith.addf %x32, %y32 : f32
    %z = arith.truncf %z32 : f32 to bf16

so only moves (loads, stores, selects, block arguments: plain i16 in LLVM), constants
(their bit patterns) and the two conversions are left, which the patterns lower inline
with integer operations (no library call, so the JIT needs no compiler-rt):

- extend: the 16 bits become the high half of an f32 (exact);
- truncate from f32: round to nearest even on the bit pattern (add 0x7fff and the lowest
  kept bit, drop 16 bits; overflow carries into inf), NaN kept quiet (as ml_dtypes);
- truncate from f64: rounded to odd as f32 first (`mlc.lowering.convert_to_llvm.half`),
  which makes the second rounding exact.

The same holds on the GPU, whose kernels go through this conversion.
"""

from typing import cast

import ml_dtypes
import numpy as np
from xdsl.dialects import arith, llvm, scf, vector
from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseIntOrFPElementsAttr,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    ModuleOp,
    TensorType,
    VectorType,
    f32,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from mlc.lowering.convert_to_llvm.common import Builder
from mlc.lowering.convert_to_llvm.half import round_to_odd_f32
from mlc.lowering.support.op_walk import walk_ops

# arith ops that compute on floats (their operands widen, float results round back).
_ARITH_COMPUTE: tuple[type[Operation], ...] = (
    arith.AddfOp,
    arith.SubfOp,
    arith.MulfOp,
    arith.DivfOp,
    arith.MaxnumfOp,
    arith.MinnumfOp,
    arith.MaximumfOp,
    arith.MinimumfOp,
    arith.NegfOp,
    arith.CmpfOp,
    arith.FPToSIOp,
    arith.FPToUIOp,
    arith.SIToFPOp,
    arith.UIToFPOp,
)

_VECTOR_COMPUTE: tuple[type[Operation], ...] = (vector.FMAOp, vector.ReductionOp)


def is_bf16(type_: Attribute) -> bool:
    """Whether `type_` is bf16 or a vector of bf16."""
    if isinstance(type_, VectorType):
        type_ = type_.element_type
    return isinstance(type_, BFloat16Type)


def is_bf16_cast(op: Operation) -> bool:
    """
    Whether `op` is a cast from or to bf16 while convert-to-llvm runs, when the operand may
    already have its LLVM type (i16): an `extf` from an integer can only be from bf16.
    """
    if not isinstance(op, arith.ExtFOp | arith.TruncFOp | arith.BitcastOp):
        return False
    source, result = op.operands[0].type, op.results[0].type
    if is_bf16(source) or is_bf16(result):
        return True
    element = source.element_type if isinstance(source, VectorType) else source
    return isinstance(op, arith.ExtFOp) and isinstance(element, IntegerType)


def with_element(type_: Attribute, element: Attribute) -> Attribute:
    """`type_` (a scalar or a vector) with its element type replaced."""
    if isinstance(type_, VectorType):
        return VectorType(element, type_.get_shape())
    return element


def _computes(op: Operation) -> bool:
    if not (isinstance(op, _ARITH_COMPUTE + _VECTOR_COMPUTE) or op.dialect_name() == "math"):
        return False
    return any(is_bf16(v.type) for v in (*op.operands, *op.results))


def _widen(op: Operation) -> None:
    """Recreate `op` on f32 between an extension of its operands and a truncation."""
    before: list[Operation] = []
    operands: list[SSAValue] = []
    for operand in op.operands:
        if is_bf16(operand.type):
            wide = arith.ExtFOp(operand, with_element(operand.type, f32))
            before.append(wide)
            operands.append(wide.result)
        else:
            operands.append(operand)
    result_types = [with_element(r.type, f32) if is_bf16(r.type) else r.type for r in op.results]
    new = op.create(
        operands=operands,
        result_types=result_types,
        properties=dict(op.properties),
        attributes=dict(op.attributes),
    )
    after: list[Operation] = []
    values: list[SSAValue] = []
    for old, wide in zip(op.results, new.results, strict=True):
        if is_bf16(old.type):
            narrow = arith.TruncFOp(wide, old.type)
            after.append(narrow)
            values.append(narrow.result)
        else:
            values.append(wide)
    for created in (*before, new, *after):
        created.location = op.location  # pyright: ignore[reportAttributeAccessIssue]
    Rewriter.insert_op([*before, new, *after], InsertPoint.before(op))
    for old, value in zip(op.results, values, strict=True):
        old.replace_all_uses_with(value)
    Rewriter.erase_op(op)


def widen_bf16_arithmetic(module: ModuleOp) -> None:
    """Compute every arith/math/vector operation on bf16 in f32 (the module docstring)."""
    for op in [op for op in walk_ops(module) if _computes(op)]:
        _widen(op)


def _accumulation(loop: scf.ForOp, index: int) -> arith.AddfOp | None:
    """The `addf` that is all a bf16 iter_arg of `loop` does: `yield arg + x`, or None."""
    arg = loop.body.block.args[index + 1]
    if not is_bf16(arg.type) or arg.uses.get_length() != 1:
        return None
    add = next(iter(arg.uses)).operation
    if not isinstance(add, arith.AddfOp) or add.result.uses.get_length() != 1:
        return None
    use = next(iter(add.result.uses))
    if not isinstance(use.operation, scf.YieldOp) or use.index != index:
        return None
    return add


def _widened(value: SSAValue, before: Operation) -> SSAValue:
    """`value` in f32: a bf16 product computed in f32 (not rounded), else an extension."""
    owner = value.owner
    if isinstance(owner, arith.MulfOp) and value.uses.get_length() == 1:
        wide = [_extend(v, before) for v in owner.operands]
        product = arith.MulfOp(*wide, flags=owner.fastmath)
        product.location = owner.location  # pyright: ignore[reportAttributeAccessIssue]
        Rewriter.insert_op(product, InsertPoint.before(before))
        return product.result
    return _extend(value, before)


def _extend(value: SSAValue, before: Operation) -> SSAValue:
    wide = arith.ExtFOp(value, with_element(value.type, f32))
    wide.location = before.location  # pyright: ignore[reportAttributeAccessIssue]
    Rewriter.insert_op(wide, InsertPoint.before(before))
    return wide.result


def _widen_loop(loop: scf.ForOp, adds: dict[int, arith.AddfOp]) -> None:
    inits = [_extend(init, loop) if i in adds else init for i, init in enumerate(loop.iter_args)]
    block = loop.body.block
    yield_op = block.last_op
    assert isinstance(yield_op, scf.YieldOp)
    for i, add in adds.items():
        old = block.args[i + 1]
        new = block.insert_arg(with_element(old.type, f32), i + 1)
        term = add.rhs if add.lhs is old else add.lhs
        total = arith.AddfOp(new, _widened(term, add), flags=add.fastmath)
        total.location = add.location  # pyright: ignore[reportAttributeAccessIssue]
        Rewriter.insert_op(total, InsertPoint.before(add))
        yield_op.operands[i] = total.result
        Rewriter.erase_op(add)
        if isinstance(term.owner, arith.MulfOp) and not term.uses:
            Rewriter.erase_op(term.owner)  # its f32 twin took its place
        block.erase_arg(old)
    new_loop = scf.ForOp(loop.lb, loop.ub, loop.step, inits, loop.detach_region(loop.body))
    new_loop.location = loop.location  # pyright: ignore[reportAttributeAccessIssue]
    Rewriter.insert_op(new_loop, InsertPoint.before(loop))
    narrowed: list[Operation] = []
    for i, (old, result) in enumerate(zip(loop.results, new_loop.results, strict=True)):
        if i in adds:
            narrow = arith.TruncFOp(result, old.type)
            narrow.location = loop.location  # pyright: ignore[reportAttributeAccessIssue]
            narrowed.append(narrow)
            result = narrow.result
        old.replace_all_uses_with(result)
    Rewriter.insert_op(narrowed, InsertPoint.after(new_loop))
    Rewriter.erase_op(loop)


def widen_bf16_accumulators(module: ModuleOp) -> None:
    """
    Sum bf16 loop accumulators in f32 (`scf.for` iter_args that only `yield arg + x`,
    a product `x` multiplied in f32 too), rounded once after the loop: the GPU's
    register-tiled matmuls carry their sums so, and then sum as the CPU's kernel does.
    """
    for loop in [op for op in walk_ops(module) if isinstance(op, scf.ForOp)]:
        adds = {i: add for i in range(len(loop.iter_args)) if (add := _accumulation(loop, i))}
        if adds:
            _widen_loop(loop, adds)


def bf16_bits(values: object) -> np.ndarray:
    """The bit patterns (uint16) of float values rounded to bf16."""
    array = np.asarray(values, dtype=np.float32).astype(ml_dtypes.bfloat16)
    return array.view(np.uint16)


def constant_bits(value: Attribute, type_: Attribute) -> Attribute:
    """A bf16 constant's value (a float or a dense vector) as i16 bit patterns."""
    if isinstance(value, FloatAttr):
        bits = int(bf16_bits(value.value.data))
        return IntegerAttr(bits - (1 << 16) if bits >= 1 << 15 else bits, i16)
    assert isinstance(value, DenseIntOrFPElementsAttr) and isinstance(type_, VectorType)
    bits = bf16_bits(value.get_values()).view(np.int16)
    wide = cast(VectorType, with_element(type_, i16))
    return DenseIntOrFPElementsAttr.from_list(wide, [int(b) for b in bits])


def dense_bits(value: DenseIntOrFPElementsAttr, shape: list[int]) -> DenseIntOrFPElementsAttr:
    """A bf16 global's data as i16 bit patterns (a flat array of `shape`'s size)."""
    bits = bf16_bits(value.get_values()).view(np.int16)
    return DenseIntOrFPElementsAttr.from_list(TensorType(i16, shape), [int(b) for b in bits])


def _splat(b: Builder, value: int, type_: Attribute) -> SSAValue:
    """An integer constant of `type_`'s element type, a splat vector where `type_` is one."""
    if isinstance(type_, VectorType):
        element = type_.element_type
        assert isinstance(element, IntegerType)
        attr = DenseIntOrFPElementsAttr.from_list(type_, [value] * type_.get_shape()[0])
        return b.emit(llvm.ConstantOp.create(result_types=[type_], properties={"value": attr}))
    assert isinstance(type_, IntegerType)
    return b.emit(llvm.ConstantOp(IntegerAttr(value, type_), type_))


def extend_to_f32(b: Builder, bits: SSAValue) -> SSAValue:
    """bf16 (as i16 bits, scalar or vector) -> f32, exactly."""
    type_ = bits.type
    wide = b.emit(llvm.ZExtOp(bits, with_element(type_, i32)))
    high = b.emit(llvm.ShlOp(wide, _splat(b, 16, with_element(type_, i32))))
    return b.emit(llvm.BitcastOp(high, with_element(type_, f32)))


def truncate_f32(b: Builder, x: SSAValue) -> SSAValue:
    """f32 (scalar or vector) -> bf16 bits, round to nearest even, NaN kept quiet."""
    type_ = x.type
    wide = with_element(type_, i32)
    bits = b.emit(llvm.BitcastOp(x, wide))
    kept = b.emit(llvm.LShrOp(bits, _splat(b, 16, wide)))
    odd = b.emit(llvm.AndOp(kept, _splat(b, 1, wide)))
    biased = b.emit(llvm.AddOp(bits, b.emit(llvm.AddOp(odd, _splat(b, 0x7FFF, wide)))))
    rounded = b.emit(llvm.LShrOp(biased, _splat(b, 16, wide)))
    quiet = b.emit(llvm.OrOp(kept, _splat(b, 0x40, wide)))
    # NaN: the magnitude's bits above inf's (an integer compare: llvm.fcmp takes no vectors)
    magnitude = b.emit(llvm.AndOp(bits, _splat(b, 0x7FFFFFFF, wide)))
    unsigned_greater = IntegerAttr(8, i64)
    is_nan = b.emit(llvm.ICmpOp(magnitude, _splat(b, 0x7F800000, wide), unsigned_greater))
    # rounded, or quiet where NaN, without select (llvm.select takes no vector condition)
    nan_mask = b.emit(llvm.SubOp(_splat(b, 0, wide), b.emit(llvm.ZExtOp(is_nan, wide))))
    differ = b.emit(llvm.AndOp(b.emit(llvm.XOrOp(rounded, quiet)), nan_mask))
    chosen = b.emit(llvm.XOrOp(rounded, differ))
    return b.emit(llvm.TruncOp(chosen, with_element(type_, i16)))


def convert_extend(b: Builder, x: SSAValue, result: Attribute) -> SSAValue:
    """`arith.extf` from bf16 to f32 or f64."""
    wide = extend_to_f32(b, x)
    element = result.element_type if isinstance(result, VectorType) else result
    if isinstance(element, Float32Type):
        return wide
    return b.emit(llvm.FPExtOp(wide, result))


def convert_truncate(b: Builder, x: SSAValue) -> SSAValue:
    """`arith.truncf` from f32 or f64 to bf16."""
    element = x.type.element_type if isinstance(x.type, VectorType) else x.type
    if not isinstance(element, Float32Type):
        assert not isinstance(x.type, VectorType), "f64 vectors of bf16 are not built"
        x = round_to_odd_f32(b, x)
    return truncate_f32(b, x)
