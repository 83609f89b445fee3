"""
ONNX Attention (opset 23) imported onto `ml.attention`, against onnx's reference
implementation (onnxruntime may not have opset 23): 4-D and 3-D inputs, grouped K/V
heads, bool and float masks, `is_causal`, `scale`, a past K/V cache with its present
outputs; and the errors for what is not supported.
"""

import numpy as np
import pytest
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator

import mlc
from mlc.frontends.onnx.model import OnnxImportError

F32 = TensorProto.FLOAT


def attention_model(inputs, outputs, **attrs):
    """One Attention node; `inputs` and `outputs` are (name, elem type, shape), "" skips."""
    names = [name for name, _, _ in inputs]
    node = helper.make_node("Attention", names, [name for name, _, _ in outputs], **attrs)
    graph = helper.make_graph(
        [node],
        "attention",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs if n],
        [helper.make_tensor_value_info(n, t, s) for n, t, s in outputs],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])


def run_both(model, feeds):
    want = ReferenceEvaluator(model).run(None, feeds)
    got = mlc.compile(model)(*feeds.values())
    got = got if isinstance(got, tuple | list) else (got,)
    assert len(got) == len(want)
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


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


@pytest.mark.parametrize(
    ("attrs", "message"),
    [({"softcap": 2.0}, "softcap is not supported yet")],
)
def test_unsupported_attention_is_a_located_error(attrs, message):
    model = attention_model(
        [("q", F32, (1, 2, 3, 4)), ("k", F32, (1, 2, 3, 4)), ("v", F32, (1, 2, 3, 4))],
        [("y", F32, (1, 2, 3, 4))],
        **attrs,
    )
    model.graph.node[0].name = "attn0"
    with pytest.raises(OnnxImportError) as info:
        mlc.import_onnx(model)
    assert message in str(info.value) and "attn0" in str(info.value)
    assert "mlc/" not in str(info.value)


def test_causal_with_other_key_length_is_an_error():
    model = attention_model(
        [("q", F32, (1, 2, 3, 4)), ("k", F32, (1, 2, 5, 4)), ("v", F32, (1, 2, 5, 4))],
        [("y", F32, (1, 2, 3, 4))],
        is_causal=1,
    )
    with pytest.raises(OnnxImportError, match="is_causal needs as many new keys as queries"):
        mlc.import_onnx(model)
