"""
The elementwise ONNX ops added with `ml.sin`... `ml.shift_right` (trigonometric,
rounding, IsNaN/IsInf, Sign, Mod, bitwise, BitShift, the activations) against
onnxruntime, on inputs with inf, NaN and -0, a dynamic batch dim and odd sizes.

One model holds every op of a group, so each (dtype, opset) costs one compile; the
reference runs each node alone in onnxruntime, or in numpy where onnxruntime has no
kernel for the dtype.
"""

from functools import cache

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from tests.gpu.targets import compile_for

ort = pytest.importorskip("onnxruntime")

NEWEST = onnx.defs.onnx_opset_version()

FLOAT_OPS = [
    ("Sin", {}),
    ("Cos", {}),
    ("Tan", {}),
    ("Asin", {}),
    ("Acos", {}),
    ("Atan", {}),
    ("Sinh", {}),
    ("Cosh", {}),
    ("Asinh", {}),
    ("Acosh", {}),
    ("Atanh", {}),
    ("Floor", {}),
    ("Ceil", {}),
    ("Round", {}),
    ("IsNaN", {}),
    ("IsInf", {}),
    ("IsInf", {"detect_negative": 0}),
    ("IsInf", {"detect_positive": 0}),
    ("Sign", {}),
    ("Softplus", {}),
    ("Softsign", {}),
    ("Celu", {"alpha": 0.7}),
    ("ThresholdedRelu", {"alpha": 0.3}),
    ("Shrink", {"lambd": 0.6, "bias": 0.2}),
    ("Mish", {}),
    ("HardSigmoid", {"alpha": 0.3, "beta": 0.4}),
    ("HardSwish", {}),
    ("Elu", {"alpha": 0.8}),
    ("Reciprocal", {}),
]
SINCE = {
    "Celu": 12,
    "Mish": 18,
    "HardSwish": 14,
    "BitwiseAnd": 18,
    "BitwiseOr": 18,
    "BitwiseXor": 18,
}
SINCE["BitwiseNot"] = 18

PREFER_NUMPY = {"Sign"}
NUMPY = {
    "Sin": np.sin,
    "Cos": np.cos,
    "Tan": np.tan,
    "Sinh": np.sinh,
    "Cosh": np.cosh,
    "Floor": np.floor,
    "Ceil": np.ceil,
    "Sign": np.sign,
    "Asin": np.arcsin,
    "Acos": np.arccos,
    "Atan": np.arctan,
    "Asinh": np.arcsinh,
    "Acosh": np.arccosh,
    "Atanh": np.arctanh,
    "Round": np.round,
    "IsNaN": np.isnan,
    "Reciprocal": np.reciprocal,
    "Softsign": lambda x: x / (1 + np.abs(x)),
    "Softplus": lambda x: np.logaddexp(x, 0),
}

# The ops of the f16 and f64 runs (False), and of the opset 11 run (True).
SAMPLE = {
    False: {"Sin", "Tan", "Acos", "Sinh", "Asinh", "Acosh", "Atanh", "Round", "IsInf", "Sign"},
    True: {"Cos", "Atan", "Round", "Floor", "IsNaN", "Softplus"},
}

ELEMENT = {
    np.float32: TensorProto.FLOAT,
    np.float64: TensorProto.DOUBLE,
    np.float16: TensorProto.FLOAT16,
    np.int8: TensorProto.INT8,
    np.int32: TensorProto.INT32,
    np.int64: TensorProto.INT64,
    np.uint8: TensorProto.UINT8,
    np.uint32: TensorProto.UINT32,
}


@cache
def ort_opset() -> int:
    """The newest opset both onnx and onnxruntime know."""
    for opset in range(NEWEST, 17, -1):
        try:
            run_ort(single("Relu", {}, np.float32, opset, 1), [np.zeros((1, 1), np.float32)])
            return opset
        except Exception:
            continue
    return 18


def single(op, attrs, dtype, opset, inputs, outputs=1, out_dtype=None):
    """A model of nodes; `op` is one op type, or a list of (op, attrs) nodes."""
    nodes = [(op, attrs)] if isinstance(op, str) else op
    names = [f"x{i}" for i in range(inputs)]
    graph_inputs = [helper.make_tensor_value_info(n, ELEMENT[dtype], ["N", 5]) for n in names]
    made, outs = [], []
    for i, (op_type, node_attrs) in enumerate(nodes):
        arity = 2 if op_type in BINARY else 1
        made.append(helper.make_node(op_type, names[:arity], [f"y{i}"], **node_attrs))
        element = TensorProto.BOOL if op_type in ("IsNaN", "IsInf") else ELEMENT[dtype]
        outs.append(helper.make_tensor_value_info(f"y{i}", element, ["N", 5]))
    graph = helper.make_graph(made, "g", graph_inputs, outs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=8)


BINARY = {"Mod", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitShift", "PRelu"}


def run_ort(model, inputs):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, {f"x{i}": x for i, x in enumerate(inputs)})


def reference(op, attrs, dtype, opset, inputs):
    """
    onnxruntime's result for one node and the dtype whose tolerance applies: numpy's (in
    f64, rounded once) where onnxruntime has no kernel for `dtype`, else onnxruntime's in
    f32. Sign follows numpy (NaN for NaN), which onnxruntime's f16 kernel does not (0).
    """
    if op not in PREFER_NUMPY:
        try:
            return run_ort(single(op, attrs, dtype, opset, len(inputs)), inputs)[0], dtype
        except Exception:  # no kernel for the dtype
            pass
    if op in NUMPY:
        with np.errstate(all="ignore"):
            want = NUMPY[op](inputs[0].astype(np.float64))
        return want.astype(np.bool_ if want.dtype == np.bool_ else dtype), dtype
    wide = [x.astype(np.float32) for x in inputs]
    got = run_ort(single(op, attrs, np.float32, opset, len(inputs)), wide)[0]
    return (got if got.dtype == np.bool_ else got.astype(dtype)), np.float32


def float_input(dtype, rows):
    rng = np.random.default_rng()
    x = (rng.standard_normal((rows, 5)) * 2.5).astype(dtype)
    x.flat[:12] = [np.inf, -np.inf, np.nan, -0.0, 0.0, 0.5, 1.5, -2.5, 1.0, -1.0, 0.3, -0.6]
    return x


def compare(got, want, dtype, op):
    if want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want, err_msg=op)
        return
    tol = RTOL[dtype]
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol, equal_nan=True, err_msg=op)


RTOL = {np.float16: 2e-3, np.float32: 2e-6, np.float64: 1e-12}


@pytest.mark.parametrize(
    ("dtype", "opset"),
    [(np.float32, 11), (np.float32, "newest"), (np.float64, "newest"), (np.float16, "newest")],
    ids=["f32-opset11", "f32-newest", "f64-newest", "f16-newest"],
)
def test_float_ops_match_onnxruntime(dtype, opset, target):
    """Every op in f32 at the newest opset; a few per dtype and at opset 11 (compile time)."""
    everything = dtype == np.float32 and opset == "newest"
    opset = ort_opset() if opset == "newest" else opset
    nodes = [(op, attrs) for op, attrs in FLOAT_OPS if SINCE.get(op, 1) <= opset]
    nodes = nodes if everything else [n for n in nodes if n[0] in SAMPLE[opset == 11]]
    nodes.append(("PRelu", {}))
    exe = compile_for(single(nodes, {}, dtype, opset, 2), target)
    for rows in (7, 1):
        x = float_input(dtype, rows)
        slope = np.broadcast_to(np.linspace(-0.5, 0.5, 5, dtype=dtype), (rows, 5)).copy()
        outs = exe(x, slope)
        for (op, attrs), got in zip(nodes, outs, strict=True):
            want, tolerance = reference(op, attrs, dtype, opset, [x, slope][: 1 + (op in BINARY)])
            compare(got, want, max(tolerance, dtype, key=lambda t: RTOL[t]), op)


INT_OPS = [
    ("Sign", {}),
    ("Mod", {}),
    ("Mod", {"fmod": 1}),
    ("Shrink", {"lambd": 2.0, "bias": 1.0}),
    ("BitwiseAnd", {}),
    ("BitwiseOr", {}),
    ("BitwiseXor", {}),
    ("BitwiseNot", {}),
]

INT_NUMPY = {
    "Sign": lambda a, b, attrs: np.sign(a),
    "Mod": lambda a, b, attrs: np.fmod(a, b) if attrs.get("fmod") else np.mod(a, b),
    "BitwiseAnd": lambda a, b, attrs: a & b,
    "BitwiseOr": lambda a, b, attrs: a | b,
    "BitwiseXor": lambda a, b, attrs: a ^ b,
    "BitwiseNot": lambda a, b, attrs: ~a,
    "BitShift": lambda a, b, attrs: (a << b) if attrs["direction"] == "LEFT" else (a >> b),
}


@pytest.mark.parametrize(
    ("dtype", "opset"),
    [
        (np.int32, 18),
        (np.int32, "newest"),
        (np.int64, "newest"),
        (np.int8, "newest"),
        (np.uint8, "newest"),
    ],
)
def test_integer_ops_match_onnxruntime_and_numpy(dtype, opset, target):
    opset = ort_opset() if opset == "newest" else opset
    nodes = [(op, attrs) for op, attrs in INT_OPS if not (op == "Shrink" and dtype == np.uint8)]
    if opset == 18:
        nodes = nodes[1:3]  # the opset 18 run checks registration: Mod alone
    exe = compile_for(single(nodes, {}, dtype, opset, 2), target)
    rng = np.random.default_rng()
    info = np.iinfo(dtype)
    for rows in (6, 1):
        a = rng.integers(
            max(info.min, -1000), min(info.max, 1000), (rows, 5), dtype=dtype, endpoint=True
        )
        b = rng.integers(max(info.min, -9), min(info.max, 9), (rows, 5), dtype=dtype, endpoint=True)
        b[b == 0] = 3
        outs = exe(a, b)
        for (op, attrs), got in zip(nodes, outs, strict=True):
            try:
                want = run_ort(
                    single(op, attrs, dtype, opset, 2 if op in BINARY else 1),
                    [a, b][: 1 + (op in BINARY)],
                )[0]
            except Exception:
                want = INT_NUMPY[op](a, b, attrs)
            np.testing.assert_array_equal(got, want, err_msg=f"{op} {attrs}")


@pytest.mark.parametrize("dtype", [np.uint8, np.uint32])
def test_bit_shift_matches_onnxruntime(dtype, target):
    opset = ort_opset()
    nodes = [("BitShift", {"direction": "LEFT"}), ("BitShift", {"direction": "RIGHT"})]
    exe = compile_for(single(nodes, {}, dtype, opset, 2), target)
    rng = np.random.default_rng()
    bits = np.iinfo(dtype).bits
    a = rng.integers(0, np.iinfo(dtype).max, (3, 5), dtype=dtype, endpoint=True)
    b = rng.integers(0, bits - 1, (3, 5), dtype=dtype, endpoint=True)
    for (op, attrs), got in zip(nodes, exe(a, b), strict=True):
        np.testing.assert_array_equal(got, run_ort(single(op, attrs, dtype, opset, 2), [a, b])[0])


def test_float_mod_is_fmod_and_numpy_mod(target):
    nodes = [("Mod", {"fmod": 1}), ("Mod", {})]
    exe = compile_for(single(nodes, {}, np.float32, ort_opset(), 2), target)
    rng = np.random.default_rng()
    a = (rng.standard_normal((4, 5)) * 50).astype(np.float32)
    b = (rng.standard_normal((4, 5)) * 3).astype(np.float32)
    a[0] = [np.inf, 3.0, -0.0, 6.0, -6.0]
    b[0] = [2.0, np.inf, 2.0, 3.0, 3.0]
    fmod, mod = exe(a, b)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(
            fmod, run_ort(single("Mod", {"fmod": 1}, np.float32, ort_opset(), 2), [a, b])[0]
        )
        np.testing.assert_array_equal(fmod, np.fmod(a, b))
        np.testing.assert_array_equal(mod, np.mod(a, b))
        finite = ~np.isnan(mod)
        np.testing.assert_array_equal(np.signbit(mod[finite]), np.signbit(np.mod(a, b)[finite]))
