"""
Run an ONNX model op by op with numpy: the "numpy" system of the model rows.

This is what a user without a compiler would write: one numpy call per node, in
graph order, with numpy's own temporaries. It covers the ops of the benchmark models
(MLP, ResNet-style CNN, transformer block); any other op raises `NotImplementedError`
naming it, which the table reports instead of a number.
"""

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

Op = Callable[[list[Any], dict[str, Any]], list[Any]]


def _attributes(node: Any) -> dict[str, Any]:
    from onnx import helper

    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _softmax(x: np.ndarray, axis: int) -> np.ndarray:
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _layer_norm(inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, scale, *bias = inputs
    axes = tuple(range(attrs.get("axis", -1) % x.ndim, x.ndim))
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    y = (x - mean) / np.sqrt(var + attrs.get("epsilon", 1e-5)) * scale
    return [y + bias[0] if bias and bias[0] is not None else y]


def _pads(attrs: dict[str, Any]) -> tuple[int, int, int, int]:
    top, left, bottom, right = attrs.get("pads", [0, 0, 0, 0])
    return top, left, bottom, right


def _windows(x: np.ndarray, kernel: Sequence[int], attrs: dict[str, Any], fill: float) -> Any:
    """(N, C, OH, OW, KH, KW) windows of the padded input."""
    top, left, bottom, right = _pads(attrs)
    x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)), constant_values=fill)
    sh, sw = attrs.get("strides", [1, 1])
    dh, dw = attrs.get("dilations", [1, 1])
    kh, kw = kernel
    span = ((kh - 1) * dh + 1, (kw - 1) * dw + 1)
    view = sliding_window_view(x, span, axis=(2, 3))[:, :, ::sh, ::sw, ::dh, ::dw]
    return view


def _conv(inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, w, *bias = inputs
    groups = attrs.get("group", 1)
    windows = _windows(x, w.shape[2:], attrs, 0.0)
    n, c, oh, ow, kh, kw = windows.shape
    o = w.shape[0]
    grouped = windows.reshape(n, groups, c // groups, oh, ow, kh, kw)
    weights = w.reshape(groups, o // groups, c // groups, kh, kw)
    y = np.einsum("ngchwij,gocij->ngohw", grouped, weights, optimize=True)
    y = y.reshape(n, o, oh, ow)
    return [y + bias[0].reshape(1, -1, 1, 1) if bias else y]


def _pool(reduce: Callable[..., np.ndarray], fill: float) -> Op:
    def pool(inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
        windows = _windows(inputs[0], attrs["kernel_shape"], attrs, fill)
        if fill == 0.0 and any(_pads(attrs)):  # average without the padding (count_include_pad=0)
            ones = np.ones((1, 1, *inputs[0].shape[2:]), inputs[0].dtype)
            counts = _windows(ones, attrs["kernel_shape"], attrs, 0.0).sum(axis=(4, 5))
            return [windows.sum(axis=(4, 5)) / counts]
        return [reduce(windows, axis=(4, 5))]

    return pool


def _batch_norm(inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, scale, bias, mean, var = inputs
    shape = (1, -1) + (1,) * (x.ndim - 2)
    inv = scale / np.sqrt(var + attrs.get("epsilon", 1e-5))
    return [(x - mean.reshape(shape)) * inv.reshape(shape) + bias.reshape(shape)]


def _gemm(inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    a, b, *c = inputs
    a = a.T if attrs.get("transA") else a
    b = b.T if attrs.get("transB") else b
    y = attrs.get("alpha", 1.0) * (a @ b)
    return [y + attrs.get("beta", 1.0) * c[0] if c else y]


def _reshape(inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, shape = inputs
    shape = [
        x.shape[i] if s == 0 and not attrs.get("allowzero") else s for i, s in enumerate(shape)
    ]
    return [x.reshape(shape)]


def _axes(inputs: list[Any], attrs: dict[str, Any]) -> tuple[int, ...] | None:
    axes = inputs[1] if len(inputs) > 1 and inputs[1] is not None else attrs.get("axes")
    return None if axes is None else tuple(int(a) for a in axes)


def _reduce(fn: Callable[..., np.ndarray]) -> Op:
    def reduce(inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
        keep = bool(attrs.get("keepdims", 1))
        return [fn(inputs[0], axis=_axes(inputs, attrs), keepdims=keep)]

    return reduce


def _gelu(inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x = inputs[0]
    if attrs.get("approximate", b"none") in (b"tanh", "tanh"):
        return [0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))]
    from math import erf

    return [0.5 * x * (1 + np.vectorize(erf, otypes=[x.dtype])(x / np.sqrt(2)))]


def _erf(inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    from math import erf

    return [np.vectorize(erf, otypes=[inputs[0].dtype])(inputs[0])]


def _split(inputs: list[Any], attrs: dict[str, Any]) -> list[Any]:
    x, *sizes = inputs
    axis = attrs.get("axis", 0)
    sizes = list(sizes[0]) if sizes and sizes[0] is not None else attrs.get("split")
    if sizes is None:
        return list(np.split(x, attrs["num_outputs"], axis=axis))
    return list(np.split(x, np.cumsum(sizes)[:-1], axis=axis))


def _unary(fn: Callable[[np.ndarray], np.ndarray]) -> Op:
    return lambda inputs, attrs: [fn(inputs[0])]


def _binary(fn: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Op:
    return lambda inputs, attrs: [fn(inputs[0], inputs[1])]


OPS: dict[str, Op] = {
    "Add": _binary(np.add),
    "Sub": _binary(np.subtract),
    "Mul": _binary(np.multiply),
    "Div": _binary(np.divide),
    "Pow": _binary(lambda a, b: np.power(a, b).astype(a.dtype)),
    "MatMul": _binary(np.matmul),
    "Max": _binary(np.maximum),
    "Min": _binary(np.minimum),
    "Relu": _unary(lambda x: np.maximum(x, 0)),
    "Sigmoid": _unary(lambda x: 1 / (1 + np.exp(-x))),
    "Tanh": _unary(np.tanh),
    "Exp": _unary(np.exp),
    "Log": _unary(np.log),
    "Sqrt": _unary(np.sqrt),
    "Neg": _unary(np.negative),
    "Abs": _unary(np.abs),
    "Reciprocal": _unary(np.reciprocal),
    "Identity": _unary(lambda x: x),
    "Erf": _erf,
    "Gelu": _gelu,
    "Softmax": lambda inputs, attrs: [_softmax(inputs[0], attrs.get("axis", -1))],
    "LayerNormalization": _layer_norm,
    "BatchNormalization": _batch_norm,
    "Gemm": _gemm,
    "Conv": _conv,
    "MaxPool": _pool(np.max, -np.inf),
    "AveragePool": _pool(np.mean, 0.0),
    "GlobalAveragePool": _unary(lambda x: x.mean(axis=(2, 3), keepdims=True)),
    "Flatten": lambda inputs, attrs: [
        inputs[0].reshape(int(np.prod(inputs[0].shape[: attrs.get("axis", 1)])), -1)
    ],
    "Reshape": _reshape,
    "Transpose": lambda inputs, attrs: [np.transpose(inputs[0], attrs.get("perm"))],
    "Concat": lambda inputs, attrs: [np.concatenate(inputs, axis=attrs["axis"])],
    "Split": _split,
    "Unsqueeze": lambda inputs, attrs: [np.expand_dims(inputs[0], _axes(inputs, attrs))],
    "Squeeze": lambda inputs, attrs: [np.squeeze(inputs[0], _axes(inputs, attrs))],
    "ReduceMean": _reduce(np.mean),
    "ReduceSum": _reduce(np.sum),
    "ReduceMax": _reduce(np.max),
    "Shape": lambda inputs, attrs: [np.array(inputs[0].shape, np.int64)],
    "Gather": lambda inputs, attrs: [np.take(inputs[0], inputs[1], axis=attrs.get("axis", 0))],
    "Cast": lambda inputs, attrs: [inputs[0].astype(_np_dtype(attrs["to"]))],
}


def _np_dtype(onnx_type: int) -> Any:
    from onnx import helper

    return helper.tensor_dtype_to_np_dtype(onnx_type)


def run_model(model: Any, args: Sequence[np.ndarray]) -> Any:
    """The model's outputs for `args` (its non-initializer inputs, in order)."""
    from onnx import numpy_helper

    graph = model.graph
    values: dict[str, Any] = {i.name: numpy_helper.to_array(i) for i in graph.initializer}
    inputs = [i.name for i in graph.input if i.name not in values]
    values.update(zip(inputs, args, strict=True))
    values[""] = None  # an omitted optional input
    for node in graph.node:
        attrs = _attributes(node)
        if node.op_type == "Constant":
            values[node.output[0]] = numpy_helper.to_array(attrs["value"])
            continue
        op = OPS.get(node.op_type)
        if op is None:
            raise NotImplementedError(f"the numpy reference has no ONNX {node.op_type}")
        results = op([values[name] for name in node.input], attrs)
        values.update(zip(node.output, results, strict=False))
    outputs = [np.asarray(values[o.name]) for o in graph.output]
    return outputs[0] if len(outputs) == 1 else tuple(outputs)
