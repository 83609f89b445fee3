"""
Retype unsigned integers as signless once the `ml` ops are lowered.

`arith` computes on signless integers only; the `ml` lowerings have already chosen the
unsigned forms (`divui`, `cmpi ult`, `extui`, `uitofp`, ...) where an element type was
`ui8`..`ui64`, so the types need not say it any more. Every value, block argument,
function signature and constant of the module becomes signless: `tensor<4xui8>` is
`tensor<4xi8>`, the same bits. The caller-facing signature keeps the unsigned dtypes
(mlc.compiler reads it before lowering), so numpy still sees `uint8` arrays.
"""

from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
)
from xdsl.ir import Attribute, SSAValue

from mlc.lowering.convert_ml_to_linalg.common import signless


def signless_types(module: ModuleOp) -> None:
    """Make every unsigned integer type of `module` signless (see the module docstring)."""
    for op in module.walk():
        for value in op.results:
            retype(value)
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    retype(arg)
        if isinstance(op, func.FuncOp):
            inputs = [signless(t) for t in op.function_type.inputs]
            outputs = [signless(t) for t in op.function_type.outputs]
            op.function_type = FunctionType.from_lists(inputs, outputs)
        elif isinstance(op, arith.ConstantOp):
            op.value = signless_value(op.value)


def retype(value: SSAValue) -> None:
    new = signless(value.type)
    if new != value.type:
        value._type = new  # pyright: ignore[reportPrivateUsage]  # no public setter in xDSL


def signless_value(value: Attribute) -> Attribute:
    """A constant's value with a signless type: the same bytes, or the same bits."""
    match value:
        case DenseIntOrFPElementsAttr() if signless(value.type) != value.type:
            return DenseIntOrFPElementsAttr(signless(value.type), value.data)  # pyright: ignore[reportArgumentType]
        case DenseResourceAttr() if signless(value.type) != value.type:
            return DenseResourceAttr(value.resource_handle, signless(value.type))  # pyright: ignore[reportArgumentType]
        case IntegerAttr() if signless(value.type) != value.type:
            width = value.type.width.data  # pyright: ignore[reportAttributeAccessIssue, reportUnknownMemberType]
            bits = value.value.data % 2**width
            return IntegerAttr(bits - 2**width if bits >= 2 ** (width - 1) else bits, width)
        case _:
            return value
