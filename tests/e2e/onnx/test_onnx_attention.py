"""
ONNX Attention (opsets 23 to 25) imported onto `ml.attention`, against onnx's reference
implementation (onnxruntime may not have opset 23): 4-D and 3-D inputs, grouped K/V
heads, bool and float masks, `is_causal`, `scale`, a past K/V cache with its present
outputs; written out in `ml` ops where `ml.attention` does not compute it (softcap, the
qk_matmul_output modes, a causal band offset by a cache or nonpad_kv_seqlen, sliding
windows, softmax_precision, a short mask), in f32 and f16, with lengths known at run time;
and the errors for what is not supported.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import mlc
from mlc.frontends.onnx.model import OnnxImportError

F32 = TensorProto.FLOAT


def attention_model(inputs, outputs, opset=23, **attrs):
    """One Attention node; `inputs` and `outputs` are (name, elem type, shape), "" skips."""
    names = [name for name, _, _ in inputs]
    node = helper.make_node("Attention", names, [name for name, _, _ in outputs], **attrs)
    graph = helper.make_graph(
        [node],
        "attention",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs if n],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs if n],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def run_both(model, feeds, tolerance=1e-5, exe=None):
    want = ReferenceEvaluator(model).run(None, feeds)
    got = (exe or mlc.compile(model))(*feeds.values())
    got = got if isinstance(got, tuple | list) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=10 * tolerance, atol=tolerance)


def test_4d_gqa_bool_mask_causal():
    rng = np.random.default_rng()
    model = attention_model(
        [
            ("q", F32, (2, 4, 6, 8)),
            ("k", F32, (2, 2, 6, 8)),
            ("v", F32, (2, 2, 6, 5)),
            ("m", TensorProto.BOOL, (6, 6)),
        ],
        [("y", F32, (2, 4, 6, 5))],
        is_causal=1,
    )
    mask = rng.random((6, 6)) < 0.7
    mask[3] = False  # a row the mask hides entirely: 0, by ONNX's convention
    feeds = {
        "q": rng.standard_normal((2, 4, 6, 8), np.float32),
        "k": rng.standard_normal((2, 2, 6, 8), np.float32),
        "v": rng.standard_normal((2, 2, 6, 5), np.float32),
        "m": mask,
    }
    run_both(model, feeds)


def test_3d_heads_float_mask_scale():
    rng = np.random.default_rng()
    model = attention_model(
        [
            ("q", F32, (2, 5, 12)),
            ("k", F32, (2, 7, 6)),
            ("v", F32, (2, 7, 6)),
            ("m", F32, (2, 1, 5, 7)),
        ],
        [("y", F32, (2, 5, 12))],
        q_num_heads=4,
        kv_num_heads=2,
        scale=0.3,
    )
    feeds = {
        "q": rng.standard_normal((2, 5, 12), np.float32),
        "k": rng.standard_normal((2, 7, 6), np.float32),
        "v": rng.standard_normal((2, 7, 6), np.float32),
        "m": rng.standard_normal((2, 1, 5, 7)).astype(np.float32),
    }
    run_both(model, feeds)


def test_past_cache_causal_and_present_outputs():
    rng = np.random.default_rng()
    shapes = {"q": (1, 2, 3, 4), "k": (1, 2, 3, 4), "v": (1, 2, 3, 4)}
    shapes |= {"pk": (1, 2, 5, 4), "pv": (1, 2, 5, 4)}
    model = attention_model(
        [
            *((n, F32, s) for n, s in list(shapes.items())[:3]),
            ("", F32, None),
            *((n, F32, s) for n, s in list(shapes.items())[3:]),
        ],
        [("y", F32, (1, 2, 3, 4)), ("pk_out", F32, (1, 2, 8, 4)), ("pv_out", F32, (1, 2, 8, 4))],
        is_causal=1,
    )
    feeds = {n: rng.standard_normal(s, np.float32) for n, s in shapes.items()}
    run_both(model, feeds)


def written_out_case(case: str, dtype):
    """Inputs, outputs, opset and attributes of an Attention that `ml.attention` does
    not compute and the importer writes out (`attention_explicit`)."""
    e = TensorProto.FLOAT16 if dtype == np.float16 else F32
    q, k, v = ("q", e, (2, 4, 3, 8)), ("k", e, (2, 2, 5, 8)), ("v", e, (2, 2, 5, 6))
    y, qk = ("y", e, (2, 4, 3, 6)), ("qk", e, (2, 4, 3, 5))
    skip = ("", e, None)
    match case:
        case "softcap_float_mask_qk_mode_0":
            return [q, k, v, ("m", e, (3, 5))], [y, skip, skip, qk], 23, {"softcap": 2.5}
        case "softcap_qk_mode_2":
            attrs = {"softcap": 1.5, "qk_matmul_output_mode": 2}
            return [q, k, v, ("m", TensorProto.BOOL, (2, 1, 3, 5))], [y, skip, skip, qk], 23, attrs
        case "qk_mode_3_after_softmax":
            return [q, k, v], [y, skip, skip, qk], 23, {"qk_matmul_output_mode": 3}
        case "causal_top_left_more_keys":
            return [q, k, v], [y], 23, {"is_causal": 1}
        case "causal_past_fewer_new_keys":
            past = [("pk", e, (2, 2, 4, 8)), ("pv", e, (2, 2, 4, 6))]
            outs = [y, ("pk2", e, (2, 2, 9, 8)), ("pv2", e, (2, 2, 9, 6))]
            return [q, k, v, skip, *past], outs, 23, {"is_causal": 1}
        case "nonpad_causal_bool_mask":
            inputs = [q, k, v, ("m", TensorProto.BOOL, (3, 5)), skip, skip, ("n", I64, (2,))]
            return inputs, [y], 24, {"is_causal": 1}
        case "window_with_past":
            past = [("pk", e, (2, 2, 4, 8)), ("pv", e, (2, 2, 4, 6))]
            attrs = {"left_window_size": 2, "right_window_size": 1}
            return [q, k, v, skip, *past], [y], 25, attrs
        case "softmax_precision_short_mask":
            attrs = {"softmax_precision": TensorProto.FLOAT}
            return [q, k, v, ("m", e, (1, 4, 3, 3))], [y], 23, attrs
    raise AssertionError(case)


I64 = TensorProto.INT64
CASES = [
    "softcap_float_mask_qk_mode_0",
    "softcap_qk_mode_2",
    "qk_mode_3_after_softmax",
    "causal_top_left_more_keys",
    "causal_past_fewer_new_keys",
    "nonpad_causal_bool_mask",
    "window_with_past",
    "softmax_precision_short_mask",
]


@pytest.mark.parametrize(
    ("case", "dtype"),
    [(case, np.float32) for case in CASES]
    + [(case, np.float16) for case in CASES[1::3]],  # a few in f16: each compiles anew
)
def test_attention_written_out(case, dtype):
    rng = np.random.default_rng()
    inputs, outputs, opset, attrs = written_out_case(case, dtype)
    model = attention_model(inputs, outputs, opset=opset, **attrs)
    assert "ml.attention" not in str(mlc.import_onnx(model))
    feeds = {}
    for name, elem, shape in inputs:
        if elem == TensorProto.BOOL:
            feeds[name] = rng.random(shape) < 0.7
        elif elem == I64:
            feeds[name] = rng.integers(0, 6, shape).astype(np.int64)  # a row may see no key
        elif name:
            feeds[name] = rng.standard_normal(shape).astype(dtype)
    tolerance = 1e-5 if dtype == np.float32 else 3e-3
    run_both(model, feeds, tolerance)


def test_attention_written_out_with_dynamic_lengths():
    """The band and the padding read the lengths at run time."""
    rng = np.random.default_rng()
    model = attention_model(
        [
            ("q", F32, (1, 2, "s", 4)),
            ("k", F32, (1, 2, "t", 4)),
            ("v", F32, (1, 2, "t", 4)),
            ("", F32, None),
            ("pk", F32, (1, 2, "p", 4)),
            ("pv", F32, (1, 2, "p", 4)),
        ],
        [("y", F32, (1, 2, "s", 4))],
        is_causal=1,
        softcap=3.0,
    )
    exe = mlc.compile(model)
    for s, t, p in [(3, 2, 4), (1, 1, 0), (5, 7, 2)]:
        shapes = {"q": (1, 2, s, 4), "k": (1, 2, t, 4), "v": (1, 2, t, 4)}
        shapes |= {"pk": (1, 2, p, 4), "pv": (1, 2, p, 4)}
        feeds = {n: rng.standard_normal(sh).astype(np.float32) for n, sh in shapes.items()}
        run_both(model, feeds, exe=exe)


def test_3d_attention_with_a_dynamic_hidden_size():
    """The head size `?` (split by the head counts), so the default scale is computed
    at run time: written out."""
    rng = np.random.default_rng()
    model = attention_model(
        [("q", F32, (2, "s", "h")), ("k", F32, (2, "t", "g")), ("v", F32, (2, "t", "g"))],
        [("y", F32, (2, "s", "h"))],
        q_num_heads=4,
        kv_num_heads=2,
    )
    exe = mlc.compile(model)
    for s, t, size in [(3, 5, 8), (1, 2, 3)]:
        shapes = {"q": (2, s, 4 * size), "k": (2, t, 2 * size), "v": (2, t, 2 * size)}
        feeds = {n: rng.standard_normal(sh).astype(np.float32) for n, sh in shapes.items()}
        run_both(model, feeds, exe=exe)


@pytest.mark.parametrize("attrs", [{"scale": 0.3}, {"softcap": 3.0}], ids=["fused", "written"])
def test_head_counts_known_at_run_time(attrs):
    """Two `?` head counts may differ at run time: K/V heads grouped then (GQA), through
    `ml.attention` (decompose-attention gathers them) and written out alike."""
    rng = np.random.default_rng()
    model = attention_model(
        [("q", F32, (2, "h", "s", 5)), ("k", F32, (2, "g", "t", 5)), ("v", F32, (2, "g", "t", 3))],
        [("y", F32, (2, "h", "s", 3))],
        **attrs,
    )
    exe = mlc.compile(model)
    for heads, kv_heads, s, t in [(6, 2, 3, 7), (3, 3, 4, 2), (4, 1, 1, 5)]:
        shapes = {"q": (2, heads, s, 5), "k": (2, kv_heads, t, 5), "v": (2, kv_heads, t, 3)}
        feeds = {n: rng.standard_normal(sh).astype(np.float32) for n, sh in shapes.items()}
        run_both(model, feeds, exe=exe)


@pytest.mark.parametrize(
    ("mask_type", "attrs"),
    [(TensorProto.BOOL, {}), (F32, {"softcap": 2.0})],
    ids=["bool-fused", "float-written"],
)
def test_mask_shorter_than_the_keys_at_run_time(mask_type, attrs):
    """A mask whose length is `?` is padded with masked positions up to the keys at run
    time (by none where it is as long), as onnx's reference pads it."""
    rng = np.random.default_rng()
    model = attention_model(
        [
            ("q", F32, (1, 2, "s", 4)),
            ("k", F32, (1, 2, "t", 4)),
            ("v", F32, (1, 2, "t", 4)),
            ("m", mask_type, ("s", "n")),
        ],
        [("y", F32, (1, 2, "s", 4))],
        **attrs,
    )
    exe = mlc.compile(model)
    for s, t, n in [(3, 6, 4), (2, 5, 5), (4, 3, 1)]:
        shapes = {"q": (1, 2, s, 4), "k": (1, 2, t, 4), "v": (1, 2, t, 4)}
        feeds = {k: rng.standard_normal(sh).astype(np.float32) for k, sh in shapes.items()}
        if mask_type == F32:
            feeds["m"] = rng.standard_normal((s, n)).astype(np.float32)
        else:
            feeds["m"] = rng.random((s, n)) < 0.7
        run_both(model, feeds, exe=exe)


def test_query_heads_not_a_multiple_of_key_heads_is_a_located_error():
    model = attention_model(
        [("q", F32, (1, 3, 3, 4)), ("k", F32, (1, 2, 3, 4)), ("v", F32, (1, 2, 3, 4))],
        [("y", F32, (1, 3, 3, 4))],
        softcap=2.0,
    )
    model.graph.node[0].name = "attn0"
    with pytest.raises(OnnxImportError) as info:
        mlc.import_onnx(model)
    assert "query heads (3) must be a multiple" in str(info.value)
    assert "attn0" in str(info.value) and "mlc/" not in str(info.value)
