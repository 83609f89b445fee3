"""
The mark of a joint forward/backward function, which `autodiff-partition` splits.

A joint function computes a program's values and their vector-Jacobian product in one
body: its last `cotangents` arguments are the cotangents of the values, its first
`values` results the forward's values, its other results the gradients. The `autodiff`
pass (with `vjp=true`) and `mlc.vjp` mark the functions they build so:

    func.func @f_vjp(%x: tensor<4xf32>, %ct: tensor<f32>) -> (tensor<f32>, tensor<4xf32>)
        attributes {ml.joint = {cotangents = 1 : i64, values = 1 : i64}}

The ops that depend on a cotangent are the backward's; the others are the forward's,
which the backward reads (saved or recomputed, as the split decides).
"""

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import DictionaryAttr, IntegerAttr, i64

from mlc.diagnostics import op_error

JOINT_ATTR = "ml.joint"


@dataclass(frozen=True)
class JointLayout:
    """How a joint function's arguments and results divide (see the module docstring)."""

    cotangents: int
    values: int


def mark_joint(f: func.FuncOp, layout: JointLayout) -> None:
    f.attributes[JOINT_ATTR] = DictionaryAttr(
        {
            "cotangents": IntegerAttr(layout.cotangents, i64),
            "values": IntegerAttr(layout.values, i64),
        }
    )


def is_joint(f: func.FuncOp) -> bool:
    return JOINT_ATTR in f.attributes


def joint_layout(f: func.FuncOp) -> JointLayout:
    """The layout `f`'s mark gives, checked against its signature (an error at `f`)."""
    mark = f.attributes.get(JOINT_ATTR)
    if mark is None:
        op_error(
            f,
            f"is not a joint forward/backward function (no {JOINT_ATTR} attribute): "
            "build one with autodiff{vjp=true}",
        )
    counts: dict[str, int] = {}
    for key in ("cotangents", "values"):
        entry = mark.data.get(key) if isinstance(mark, DictionaryAttr) else None
        if not isinstance(entry, IntegerAttr) or entry.value.data < 0:
            op_error(f, f"has a malformed {JOINT_ATTR} attribute: expected a count '{key}' >= 0")
        counts[key] = entry.value.data
    args, results = len(f.function_type.inputs), len(f.function_type.outputs)
    if counts["cotangents"] > args:
        op_error(
            f, f"{JOINT_ATTR} names {counts['cotangents']} cotangents, but it has {args} arguments"
        )
    if counts["values"] > results:
        op_error(f, f"{JOINT_ATTR} names {counts['values']} values, but it has {results} results")
    return JointLayout(counts["cotangents"], counts["values"])
