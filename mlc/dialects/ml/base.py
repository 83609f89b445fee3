"""
What every `ml` op shares: element-type rules, result-type inference, the verifier.

Every `ml` op is pure and produces one ranked tensor. Its result type follows from
its operand types and properties through one shape function of `mlc.shapes`;
`infer_result_type` applies it, the builders use it when no result type is given, and
the verifier checks that a written result type does not contradict it (a result may
be more static than inferred, as a refinement, or more dynamic; it may not differ in
a static dimension, in rank or in element type).
"""

from abc import ABC, abstractmethod
from collections.abc import Sequence
from enum import Enum
from importlib import import_module
from typing import ClassVar

from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerType,
    Signedness,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation, OpTraits, ParsePropInAttrDict, lazy_traits_def
from xdsl.traits import ConditionallySpeculatable, NoMemoryEffect, OpTrait
from xdsl.utils.exceptions import VerifyException

from mlc import shapes

# The function-argument attribute naming each dim of a tensor argument (ONNX's symbolic
# dims, "batch", "seq"): equal names are equal sizes, which shape inference and the
# broadcast checks of the linalg lowering rely on.
DIM_NAMES = "ml.dim_names"

# The function-argument attribute donating the argument's buffer to a result:
# `{ml.result_alias = 0 : i64}` says the caller gives the buffer away, `bufferize` writes
# result 0 into it (in place where that is safe) and the function no longer returns it.
RESULT_ALIAS = "ml.result_alias"

FLOAT_TYPES = (Float16Type, BFloat16Type, Float32Type, Float64Type)
INTEGER_WIDTHS = (1, 8, 16, 32, 64)

# The pretty form of every op: operands, properties in the attribute dictionary, and
# the operand and result types, e.g. `ml.add %a, %b : (t0, t1) -> t2`.
FUNCTIONAL_TYPE = "attr-dict `:` functional-type(operands, results)"


class ElementKind(Enum):
    """Which element types an op's data operands may have."""

    ANY = "an ml element type (f16, bf16, f32, f64, or signless or unsigned i1 to i64)"
    NUMERIC = "a numeric element type (not i1)"
    FLOAT = "a floating-point element type"
    INTEGER = "an integer element type (i1 included)"
    NUMERIC_INTEGER = "an integer element type (not i1)"


def is_float(t: Attribute) -> bool:
    return isinstance(t, FLOAT_TYPES)


def is_integer(t: Attribute) -> bool:
    return (
        isinstance(t, IntegerType)
        and t.width.data in INTEGER_WIDTHS
        and t.signedness.data != Signedness.SIGNED
    )


def is_element_type(t: Attribute) -> bool:
    """f16, bf16, f32, f64, or a signless or unsigned integer of 1, 8, 16, 32, 64 bits."""
    return is_float(t) or is_integer(t)


def is_bool(t: Attribute) -> bool:
    return isinstance(t, IntegerType) and t.width.data == 1


def admits(kind: ElementKind, t: Attribute) -> bool:
    match kind:
        case ElementKind.ANY:
            return is_element_type(t)
        case ElementKind.NUMERIC:
            return is_element_type(t) and not is_bool(t)
        case ElementKind.FLOAT:
            return is_float(t)
        case ElementKind.INTEGER:
            return is_integer(t)
        case ElementKind.NUMERIC_INTEGER:
            return is_integer(t) and not is_bool(t)


def tensor_type(value: SSAValue) -> TensorType[Attribute]:
    """The ranked tensor type of an operand the verifier has already checked."""
    assert isinstance(value.type, TensorType)
    return value.type  # pyright: ignore[reportUnknownVariableType]


def shape_of(value: SSAValue) -> shapes.Shape:
    return tensor_type(value).get_shape()


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    return DenseArrayBase.from_list(i64, values)


def check_operand_type(index: int, value: SSAValue, kind: ElementKind) -> Attribute:
    """Check one operand is a ranked tensor of an admitted element type."""
    if not isinstance(value.type, TensorType):
        raise VerifyException(f"operand #{index} must be a ranked tensor, got {value.type}")
    element = value.type.element_type  # pyright: ignore[reportUnknownMemberType]
    if not admits(kind, element):
        raise VerifyException(f"operand #{index} has element type {element}, expected {kind.value}")
    return element


class SpeculatableUnlessUndefined(ConditionallySpeculatable):
    """
    An `ml` op may run where its result is not needed unless it can hit undefined
    behaviour (integer division by zero, an out-of-range gather index); `licm` must
    not hoist those out of a branch that guards them. Ops say so in `speculatable`.
    """

    @classmethod
    def is_speculatable(cls, op: Operation) -> bool:
        return not isinstance(op, MLOp) or op.speculatable()


def canonicalized_by(family: str, *traits: OpTrait, module: str = "ml") -> OpTraits:
    """
    `traits` plus the canonicalization trait `family` of `mlc.lowering.graph.patterns.<module>`.

    That module imports the ops to match on them, so the trait is looked up only
    when xDSL first asks for the op's traits, as arith does with its patterns.
    """

    def gen_traits() -> tuple[OpTrait, ...]:
        patterns = import_module(f"mlc.lowering.graph.patterns.{module}")
        return (*traits, getattr(patterns, family)())

    return lazy_traits_def(gen_traits)


class MLOp(IRDLOperation, ABC):
    """
    Base of all `ml` ops: pure, one tensor result, result type inferred from operands.

    Subclasses declare operands and properties, say which operands hold data (all
    of them unless `data_operands` is overridden) and of which element kind, add
    op-specific checks in `verify_attributes`, and implement `infer_result_type`.
    """

    traits = canonicalized_by(
        "ConstantFolding", NoMemoryEffect(), SpeculatableUnlessUndefined(), module="fold"
    )
    irdl_options = (ParsePropInAttrDict(),)

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.ANY

    def __init__(
        self,
        operands: Sequence[SSAValue | Sequence[SSAValue]],
        result_type: Attribute | None = None,
        properties: dict[str, Attribute] | None = None,
    ):
        # A property equal to its default is left out, as the parser leaves it out
        # of the custom form: a built op and its re-parsed text are the same IR.
        defaults = type(self).get_irdl_definition().properties
        properties = {
            name: value
            for name, value in (properties or {}).items()
            if getattr(defaults.get(name), "default_value", None) != value
        }
        super().__init__(
            operands=operands,
            properties=properties,
            result_types=[result_type or _PENDING],
        )
        if result_type is None:
            # The result type is a function of the operands and properties, which
            # only exist once the op is built: infer it now, before any use.
            self.results[0]._type = self.infer_result_type()  # pyright: ignore[reportPrivateUsage]

    @abstractmethod
    def infer_result_type(self) -> TensorType[Attribute]:
        """The result type implied by the operand types and properties."""

    def speculatable(self) -> bool:
        """Whether running the op on any operand values is defined behaviour."""
        return True

    def data_operands(self) -> Sequence[SSAValue]:
        """The operands that carry the op's element type."""
        return self.operands

    def verify_attributes(self) -> None:
        """Op-specific checks beyond shapes and element types."""

    def verify_(self) -> None:
        self.verify_element_types()
        self.verify_attributes()
        try:
            inferred = self.infer_result_type()
        except shapes.ShapeError as error:
            raise VerifyException(str(error)) from None
        self.verify_result(inferred)

    def verify_element_types(self) -> None:
        data = self.data_operands()
        elements = [
            check_operand_type(i, value, self.ELEMENT_KIND)
            for i, value in enumerate(self.operands)
            if any(value is d for d in data)
        ]
        if any(e != elements[0] for e in elements):
            listed = ", ".join(str(e) for e in elements)
            raise VerifyException(f"expects operands of one element type, got ({listed})")

    def verify_result(self, inferred: TensorType[Attribute]) -> None:
        result = self.results[0].type
        if not isinstance(result, TensorType):
            raise VerifyException(f"result must be a ranked tensor, got {result}")
        declared = result.get_shape()
        expected_element = inferred.element_type  # pyright: ignore[reportUnknownMemberType]
        if result.element_type != expected_element:  # pyright: ignore[reportUnknownMemberType]
            raise VerifyException(
                f"result element type {result.element_type} does not match "  # pyright: ignore[reportUnknownMemberType]
                f"the expected {expected_element}"
            )
        if not shapes.compatible(declared, inferred.get_shape()):
            raise VerifyException(f"result type {result} contradicts the inferred type {inferred}")


# A placeholder result type for builders, replaced by the inferred type before use.
_PENDING = TensorType(Float32Type(), [])
