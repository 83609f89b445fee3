"""
A fast sample of onnx's node tests through the conformance tool, static and with every
input dim dynamic; `make conformance` runs all of them.
"""

import pytest

pytest.importorskip("onnxruntime")

from mlc.tools.onnx_conformance import (
    EXPANDED,
    cases_of,
    check,
    make_dynamic,
)

SAMPLE = [
    ("relu", "test_relu"),
    ("gemm", "test_gemm_default_no_bias"),
    ("softmax", "test_softmax_axis_1"),
    ("reshape", "test_reshape_negative_dim"),
    ("slice", "test_slice_neg_steps"),
    ("conv", "test_conv_with_strides_padding"),
    ("reducesum", "test_reduce_sum_keepdims_random"),
    ("split", "test_split_1d_uneven_split_opset18"),
    ("averagepool", "test_averagepool_2d_precomputed_same_upper"),
    ("maxpool", "test_maxpool_3d_dilations"),
    ("convtranspose", "test_convtranspose_autopad_same"),
    ("if_", "test_if"),
    ("loop", "test_loop11"),
    ("scan", "test_scan9_sum"),
    ("rangeop", "test_range_float_type_positive_delta_expanded"),  # a Loop
    ("instance_normalization", "test_instancenorm_epsilon"),  # in no quick zoo model
]

_cache: dict[str, dict] = {}


def case(module: str, name: str):
    if module not in _cache:
        _cache[module] = {c.name: (model, c) for model, c in cases_of(module)}
    return _cache[module][name]


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize(("module", "name"), [s for s in SAMPLE if s[1]], ids=lambda v: str(v))
def test_node_test_passes(module, name, dynamic):
    model, c = case(module, name)
    outcome = check(model, c, module, dynamic)
    assert outcome.ort == "pass"
    assert outcome.mlc == "pass", outcome.mlc


def test_bound_inputs_are_reported():
    model, c = case("slice", "test_slice_neg_steps")
    outcome = check(model, c, "Slice", False)
    assert sorted(outcome.bound) == ["axes", "ends", "starts", "steps"]


def test_dynamic_models_have_no_static_dims():
    model, _ = case("relu", "test_relu")
    dims = make_dynamic(model).graph.input[0].type.tensor_type.shape.dim
    assert all(d.dim_param and not d.HasField("dim_value") for d in dims)


def test_expanded_names():
    assert EXPANDED.search("test_softmax_axis_0_expanded_ver18")
    assert not EXPANDED.search("test_softmax_axis_0")


@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
def test_shape_inputs_given_at_run_time(dynamic):
    model, c = case("slice", "test_slice_neg_steps")
    outcome = check(model, c, "Slice", dynamic, runtime=True)
    assert outcome.mlc == "pass", outcome.mlc
    assert sorted(outcome.bound) == ["axes", "ends", "starts", "steps"]
