"""Fused attention: `softmax(q @ k^T * scale + mask) @ v`, causal or not, with grouped K/V heads."""

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import BoolAttr, FloatAttr, IntegerAttr, TensorType, f64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
)
from xdsl.utils.exceptions import VerifyException

from mlc import shapes
from mlc.dialects.ml.base import (
    FUNCTIONAL_TYPE,
    ElementKind,
    MLOp,
    is_bool,
    is_float,
    shape_of,
    tensor_type,
)


@irdl_op_definition
class AttentionOp(MLOp):
    """
    Scaled dot-product attention over the last two dims, per head.

    `softmax(q @ k^T * scale + mask) @ v` with q `(batch..., H, Sq, D)`, k
    `(batch..., Hkv, Sk, D)` and v `(batch..., Hkv, Sk, Dv)`; the result is
    `(batch..., H, Sq, Dv)`. `H % Hkv == 0`: query head `h` reads K/V head
    `h // (H / Hkv)` (grouped-query attention). The optional mask broadcasts to
    `(batch..., H, Sq, Sk)`: an `i1` mask keeps the scores where it is true (the others
    are -inf), a float mask of q's type is added. `causal` keeps key `j` for query `i`
    only where `j <= i + Sk - Sq` (aligned to the bottom-right, as ONNX Attention's
    `is_causal`; torch's `is_causal` is aligned to the top-left, which is the same when
    Sq == Sk). A row whose every score is masked is NaN, as the unfused softmax is.

    ```mlir
    %o = ml.attention %q, %k, %v {scale = 0.125 : f64, causal = true} : (tensor<2x8x16x64xf32>, tensor<2x2x16x64xf32>, tensor<2x2x16x64xf32>) -> tensor<2x8x16x64xf32>
    ```
    """

    name = "ml.attention"

    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    scale = prop_def(FloatAttr)
    causal = opt_prop_def(BoolAttr, default_value=IntegerAttr.from_bool(False))
    result = result_def(TensorType)

    ELEMENT_KIND: ClassVar[ElementKind] = ElementKind.FLOAT
    assembly_format = f"$q `,` $k `,` $v (`,` $mask^)? {FUNCTIONAL_TYPE}"

    def __init__(
        self,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        mask: SSAValue | None = None,
        *,
        scale: float,
        causal: bool = False,
        result_type: Attribute | None = None,
    ):
        props: dict[str, Attribute] = {
            "scale": FloatAttr(scale, f64),
            "causal": IntegerAttr.from_bool(causal),
        }
        super().__init__([q, k, v, [mask] if mask is not None else []], result_type, props)

    @property
    def is_causal(self) -> bool:
        return bool(self.causal.value.data)

    def data_operands(self) -> Sequence[SSAValue]:
        return (self.q, self.k, self.v)

    def verify_attributes(self) -> None:
        if self.scale.type != f64:
            raise VerifyException(f"expects an f64 scale, got {self.scale.type}")
        if self.mask is None:
            return
        mask_type = self.mask.type
        if not isinstance(mask_type, TensorType):
            raise VerifyException(f"operand #3 must be a ranked tensor, got {mask_type}")
        element = mask_type.element_type  # pyright: ignore[reportUnknownMemberType]
        q_element = tensor_type(self.q).element_type
        if not (is_bool(element) or (is_float(element) and element == q_element)):
            raise VerifyException(
                f"expects an i1 mask or an additive mask of element type {q_element}, got {element}"
            )

    def infer_result_type(self) -> TensorType[Attribute]:
        mask = shape_of(self.mask) if self.mask is not None else None
        shape = shapes.attention(shape_of(self.q), shape_of(self.k), shape_of(self.v), mask)
        return TensorType(tensor_type(self.q).element_type, shape)
