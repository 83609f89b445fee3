"""
Evaluate the shape arithmetic of ONNX graphs in numpy, without onnx's reference runtime.

Exported models compute reshape targets from `Shape` with `Gather`, `Unsqueeze` and
`Concat` on known inputs. The importer evaluates nodes whose inputs are all known;
onnx's `ReferenceEvaluator` does that for any op, but importing its op table and
building an evaluator per node cost ~0.15 s of a transformer block's ~0.4 s import.
These three ops have one obvious numpy meaning; `fold` gives None for anything else
(or an input it is unsure of), and the caller falls back to the reference evaluator.
"""

from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import helper


def _attribute(proto: onnx.NodeProto, name: str, default: object) -> object:
    for attribute in proto.attribute:
        if attribute.name == name:
            return helper.get_attribute_value(attribute)
    return default


def _gather(proto: onnx.NodeProto, inputs: Sequence[np.ndarray]) -> np.ndarray | None:
    if len(inputs) != 2:
        return None
    data, indices = inputs
    axis = int(_attribute(proto, "axis", 0))  # pyright: ignore[reportArgumentType]
    if not -data.ndim <= axis < data.ndim or indices.dtype.kind not in "iu":
        return None
    extent = data.shape[axis]
    if indices.size and not (-extent <= indices.min() and indices.max() < extent):
        return None  # out of range: an error the reference evaluator reports
    return np.take(data, indices, axis=axis)


def _unsqueeze(proto: onnx.NodeProto, inputs: Sequence[np.ndarray]) -> np.ndarray | None:
    if len(inputs) == 2:  # opset 13 on: the axes are an input
        axes = [int(a) for a in inputs[1].reshape(-1)]
    else:
        axes = [int(a) for a in _attribute(proto, "axes", [])]  # pyright: ignore[reportGeneralTypeIssues]
    rank = inputs[0].ndim + len(axes)
    normalized = [a + rank if a < 0 else a for a in axes]
    if not axes or len(set(normalized)) != len(axes) or not all(0 <= a < rank for a in normalized):
        return None
    return np.expand_dims(inputs[0], tuple(normalized))


def _concat(proto: onnx.NodeProto, inputs: Sequence[np.ndarray]) -> np.ndarray | None:
    axis = int(_attribute(proto, "axis", 0))  # pyright: ignore[reportArgumentType]
    first = inputs[0]
    if not -first.ndim <= axis < first.ndim or any(
        x.ndim != first.ndim or x.dtype != first.dtype for x in inputs
    ):
        return None
    try:
        return np.concatenate(inputs, axis=axis)
    except ValueError:
        return None  # mismatched sizes: an error the reference evaluator reports


FOLDS: dict[str, Callable[[onnx.NodeProto, Sequence[np.ndarray]], np.ndarray | None]] = {
    "Gather": _gather,
    "Unsqueeze": _unsqueeze,
    "Concat": _concat,
}


def fold(proto: onnx.NodeProto, inputs: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """The outputs of `proto` on known `inputs` (one per input name), or None."""
    if (evaluate := FOLDS.get(proto.op_type)) is None or not inputs:
        return None
    result = evaluate(proto, inputs)
    return None if result is None else [np.asarray(result)]
