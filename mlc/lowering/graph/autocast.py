"""
autocast: run f32 matmuls and convolutions in bf16 or f16, as torch's autocast does.

    %y = ml.matmul %x, %w : (tensor<8x64xf32>, tensor<64x32xf32>) -> tensor<8x32xf32>
    %r = ml.relu %y : (tensor<8x32xf32>) -> tensor<8x32xf32>
    %s = ml.softmax %r {axis = 1} : (tensor<8x32xf32>) -> tensor<8x32xf32>
==>  (precision=bf16; %w a constant)
    %x16 = ml.cast %x : (tensor<8x64xf32>) -> tensor<8x64xbf16>
    %w16 = arith.constant dense<...> : tensor<64x32xbf16>           // cast at compile time
    %y = ml.matmul %x16, %w16 : (...) -> tensor<8x32xbf16>          // sums in f32
    %r = ml.relu %y : (tensor<8x32xbf16>) -> tensor<8x32xbf16>      // stays 16-bit
    %r32 = ml.cast %r : (tensor<8x32xbf16>) -> tensor<8x32xf32>
    %s = ml.softmax %r32 {axis = 1} : (tensor<8x32xf32>) -> tensor<8x32xf32>

The rule, one forward sweep in program order:

- a matmul or convolution (`ml.matmul`, `ml.conv1d/2d/3d`; ONNX's Gemm and Einsum
  import as matmuls) with an f32 result runs in the 16-bit type: its float operands are
  cast down (a constant is converted now, so the compiled program holds 16-bit
  weights), its result is 16-bit. The 16-bit matmul sums in f32 and rounds once;
  a fused `ml.attention` is taken alike (its softmax runs in f32 inside the op, so
  `mlc.compile` runs this pass after `fuse-attention`);
- an op of `NARROW_OK` (elementwise arithmetic that autocast runs in its inputs' type,
  and data movement) stays 16-bit when every float tensor operand is 16-bit from this
  pass or a constant (cast down with it); a mixed op runs in f32 (autocast's promotion
  to the widest input);
- every other user (softmax, normalisations, reductions, exp, log, ... and
  `func.return`) reads an f32 cast of the 16-bit value, so statistics and the function's
  interface stay f32.

f64, integer and already 16-bit programs are left as they are.
"""

from dataclasses import dataclass
from typing import Any

import numpy as np
from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    BFloat16Type,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    Float16Type,
    Float32Type,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from mlc import resources
from mlc.dialects import ml
from mlc.dtypes import DTYPES
from mlc.lowering.graph.patterns.fold import to_array

PRECISIONS: dict[str, Attribute] = {"bf16": BFloat16Type(), "f16": Float16Type()}

CONTRACTIONS: tuple[type[Operation], ...] = (ml.MatmulOp, ml.ConvOp, ml.AttentionOp)

NARROW_OK: tuple[type[Operation], ...] = (
    ml.AddOp,
    ml.SubOp,
    ml.MulOp,
    ml.DivOp,
    ml.MaxOp,
    ml.MinOp,
    ml.NegOp,
    ml.AbsOp,
    ml.ReluOp,
    ml.GeluOp,
    ml.TanhOp,
    ml.SigmoidOp,
    ml.SelectOp,
    ml.CmpOp,
    ml.TransposeOp,
    ml.ReshapeOp,
    ml.BroadcastToOp,
    ml.ConcatOp,
    ml.SliceOp,
    ml.GatherOp,
    ml.MaxPoolOp,
)


def is_f32_tensor(value: SSAValue) -> bool:
    type_ = value.type
    return isinstance(type_, TensorType) and isinstance(type_.element_type, Float32Type)


def with_element(type_: Attribute, element: Attribute) -> Attribute:
    assert isinstance(type_, TensorType)
    return TensorType(element, type_.get_shape())


def constant_array(value: SSAValue) -> np.ndarray[Any, Any] | None:
    """The elements of an f32 `arith.constant` tensor, or None."""
    owner = value.owner
    if not isinstance(owner, arith.ConstantOp):
        return None
    attr = owner.value
    if isinstance(attr, DenseIntOrFPElementsAttr):
        return to_array(attr)
    if isinstance(attr, DenseResourceAttr):
        return resources.lookup(attr.resource_handle.data)
    return None


class Autocaster:
    """One sweep over a function's ops (see the module docstring)."""

    def __init__(self, narrow: Attribute):
        self.narrow = narrow
        self.dtype = DTYPES[str(narrow)]
        # f32 value -> its 16-bit twin, for results this pass made 16-bit
        self.twin: dict[SSAValue, SSAValue] = {}
        self.created_casts: list[ml.CastOp] = []
        self.cast_of: dict[SSAValue, SSAValue] = {}  # one cast down per f32 value

    def narrow_operand(self, value: SSAValue, before: Operation) -> SSAValue | None:
        """`value` in 16 bits, if it is 16-bit from this pass or a constant; else None."""
        if value in self.twin:
            return self.twin[value]
        array = constant_array(value)
        if array is None:
            return None
        owner = value.owner
        assert isinstance(owner, arith.ConstantOp)
        type_ = with_element(value.type, self.narrow)
        narrow = array.astype(self.dtype)
        attr: Attribute
        if isinstance(owner.value, DenseResourceAttr):
            name = owner.value.resource_handle.data.rsplit("_", 1)[0]
            attr = resources.elements_attr(narrow, name)
        elif narrow.size > 1 and (narrow.view(np.uint16) == narrow.view(np.uint16).flat[0]).all():
            # one value throughout: a splat, which stores one element
            attr = DenseIntOrFPElementsAttr(type_, BytesAttr(narrow.ravel()[:1].tobytes()))  # pyright: ignore[reportArgumentType]
        else:
            attr = resources.elements_attr(narrow, "autocast")
        constant = arith.ConstantOp(attr, type_)
        constant.location = owner.location  # pyright: ignore[reportAttributeAccessIssue]
        Rewriter.insert_op(constant, InsertPoint.before(before))
        return constant.result

    def cast_down(self, value: SSAValue, before: Operation) -> SSAValue:
        if (narrow := self.narrow_operand(value, before)) is not None:
            return narrow
        if value in self.cast_of:
            return self.cast_of[value]
        cast = ml.CastOp(value, with_element(value.type, self.narrow))
        cast.location = before.location  # pyright: ignore[reportAttributeAccessIssue]
        Rewriter.insert_op(cast, InsertPoint.before(before))
        self.cast_of[value] = cast.result
        return cast.result

    def rebuild(self, op: Operation, operands: list[SSAValue]) -> None:
        """`op` on 16-bit `operands`, its f32 results 16-bit; f32 casts for other users."""
        result_types = [
            with_element(r.type, self.narrow) if is_f32_tensor(r) else r.type for r in op.results
        ]
        new = op.create(
            operands=operands,
            result_types=result_types,
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        new.location = op.location  # pyright: ignore[reportAttributeAccessIssue]
        Rewriter.insert_op(new, InsertPoint.before(op))
        for old, result in zip(op.results, new.results, strict=True):
            if not is_f32_tensor(old):
                old.replace_all_uses_with(result)
                continue
            wide = ml.CastOp(result, old.type)
            wide.location = op.location  # pyright: ignore[reportAttributeAccessIssue]
            Rewriter.insert_op(wide, InsertPoint.after(new))
            old.replace_all_uses_with(wide.result)
            self.twin[wide.result] = result
            self.created_casts.append(wide)
        Rewriter.erase_op(op)

    def visit(self, op: Operation) -> None:
        floats = [v for v in op.operands if is_f32_tensor(v)]
        if isinstance(op, CONTRACTIONS) and any(is_f32_tensor(r) for r in op.results):
            operands = [self.cast_down(v, op) if is_f32_tensor(v) else v for v in op.operands]
            self.rebuild(op, operands)
        elif isinstance(op, NARROW_OK) and floats and any(v in self.twin for v in floats):
            narrowed = {v: self.narrow_operand(v, op) for v in floats}
            if all(n is not None for n in narrowed.values()):
                operands = [narrowed.get(v) or v for v in op.operands]
                self.rebuild(op, operands)

    def finish(self) -> None:
        """Erase the f32 casts nobody reads (every user took the 16-bit value)."""
        for cast in reversed(self.created_casts):
            if not cast.result.uses:
                Rewriter.erase_op(cast)


@dataclass(frozen=True)
class AutocastPass(ModulePass):
    """Run f32 matmuls and convolutions in bf16 or f16, statistics in f32 (module docstring)."""

    name = "autocast"

    precision: str = "bf16"

    def __post_init__(self) -> None:
        if self.precision not in PRECISIONS:
            known = ", ".join(PRECISIONS)
            raise ValueError(f"precision must be one of {known}, got '{self.precision}'")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        caster = Autocaster(PRECISIONS[self.precision])
        for inner in list(op.walk()):  # the ops the sweep builds are not visited
            if inner is not op:
                caster.visit(inner)
        caster.finish()
