"""
The ONNX frontend's errors: one line in one style, `model: node 'name' (OpType, opset
N): error: message` where a node is at fault and `model: error: message` otherwise, an
`mlc.CompileError` whose `node` names the node; the tools print that line and exit 1.
"""

import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import mlc
from mlc.frontends.onnx.model import OnnxImportError, check_supported
from mlc.ir import print_module

ROOT = Path(__file__).resolve().parents[4]


def model(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(initializers))
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    proto.ir_version = 8
    return proto


def tensor(name, shape, elem=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, elem, shape)


def add_w(initializers=()):
    """y = x + w, the node named 'x' (as a value may be)."""
    node = helper.make_node("Add", ["x", "w"], ["y"], name="x")
    return model([node], [tensor("x", [2])], [tensor("y", [2])], initializers)


def import_error(src) -> mlc.CompileError:
    with pytest.raises(mlc.CompileError) as info:
        mlc.import_onnx(src)
    assert isinstance(info.value, OnnxImportError)
    assert "\n" not in str(info.value)
    return info.value


def test_a_removed_initializer_is_mlcs_message_not_the_checkers():
    error = import_error(add_w())
    assert str(error) == (
        "g: node 'x' (Add, opset 17): error: input 'w' is not produced by any node, "
        "initializer or graph input"
    )
    assert error.node == "x"


def test_compile_raises_the_same_error():
    with pytest.raises(mlc.CompileError) as info:
        mlc.compile(add_w())
    assert str(info.value).startswith("g: node 'x' (Add, opset 17): error: input 'w'")
    assert info.value.node == "x"


def test_nodes_out_of_order():
    nodes = [
        helper.make_node("Relu", ["a"], ["y"], name="second"),
        helper.make_node("Neg", ["x"], ["a"], name="first"),
    ]
    error = import_error(model(nodes, [tensor("x", [2])], [tensor("y", [2])]))
    assert str(error) == (
        "g: node 'second' (Relu, opset 17): error: input 'a' is computed by a later node, "
        "'first' (the nodes are not in order)"
    )


def test_a_value_defined_twice():
    nodes = [
        helper.make_node("Relu", ["x"], ["y"], name="r1"),
        helper.make_node("Neg", ["x"], ["y"]),
    ]
    error = import_error(model(nodes, [tensor("x", [2])], [tensor("y", [2])]))
    assert str(error) == (
        "g: node 'Neg_1' (Neg, opset 17): error: output 'y' is already the output of node 'r1'"
    )
    assert error.node == "Neg_1"


def test_an_element_type_onnx_does_not_have():
    proto = model([helper.make_node("Relu", ["x"], ["y"])], [tensor("x", [2], 999)],
                  [tensor("y", [2])])  # fmt: skip
    error = import_error(proto)
    assert str(error) == "g: error: graph input 'x': element type 999 is not an ONNX element type"
    assert error.node is None


def test_an_element_type_mlc_does_not_take():
    proto = model(
        [helper.make_node("Identity", ["x"], ["y"])],
        [tensor("x", [2], TensorProto.FLOAT8E4M3FN)],
        [tensor("y", [2], TensorProto.FLOAT8E4M3FN)],
    )
    assert str(import_error(proto)) == (
        "g: error: graph input 'x': element type FLOAT8E4M3FN is not supported"
    )


def test_an_unknown_op_is_named_with_its_node():
    node = helper.make_node("Frobnicate", ["x"], ["y"], name="f", domain="com.example")
    proto = model([node], [tensor("x", [2])], [tensor("y", [2])])
    proto.opset_import.append(helper.make_opsetid("com.example", 1))
    error = import_error(proto)
    assert str(error) == (
        f"g: node 'f' (com.example.Frobnicate, opset 17): error: no operator "
        f"com.example.Frobnicate in onnx {onnx.__version__}"
    )
    assert error.node == "f"


def test_an_op_mlc_does_not_convert():
    proto = add_w([numpy_helper.from_array(np.ones(2, np.float32), "w")])
    with pytest.raises(OnnxImportError) as info:
        check_supported(proto.graph, "m.onnx", 17, lambda node, opset: False)
    assert str(info.value) == (
        "m.onnx: node 'x' (Add, opset 17): error: mlc does not convert Add at opset 17"
    )


def test_a_bad_attribute_is_the_checkers_message_on_its_node():
    node = helper.make_node("Softmax", ["x"], ["y"], name="s", axis=1.5)
    error = import_error(model([node], [tensor("x", [2, 3])], [tensor("y", [2, 3])]))
    assert str(error) == (
        "g: node 's' (Softmax, opset 17): error: mismatched attribute type in 's : axis'. "
        "Expected: 'INT', actual: 'FLOAT'"
    )


def test_a_missing_attribute():
    node = helper.make_node("Cast", ["x"], ["y"], name="c")
    error = import_error(model([node], [tensor("x", [2])], [tensor("y", [2])]))
    assert str(error) == "g: node 'c' (Cast, opset 17): error: required attribute 'to' is missing."


def test_shape_inference_failures_name_an_unnamed_node():
    node = helper.make_node("Softmax", ["x"], ["y"], axis=5)
    error = import_error(model([node], [tensor("x", [2])], [tensor("y", [2])]))
    assert str(error) == (
        "g: node 'Softmax_0' (Softmax, opset 17): error: shape inference failed: 'axis' must "
        "be in [-1 , 0]. Its actual value is: 5"
    )
    assert error.node == "Softmax_0"


def test_a_converter_error_names_the_node():
    node = helper.make_node("Gelu", ["x"], ["y"], name="act", approximate="cubic")
    error = import_error(model([node], [tensor("x", [2])], [tensor("y", [2])], opset=20))
    assert str(error) == (
        "g: node 'act' (Gelu, opset 20): error: approximate must be 'none' or 'tanh', got 'cubic'"
    )


def test_ops_that_do_not_verify_are_the_nodes_error():
    node = helper.make_node("Add", ["a", "b"], ["y"], name="mixed")
    proto = model([node], [tensor("a", [2]), tensor("b", [2], TensorProto.INT64)],
                  [tensor("y", [2])])  # fmt: skip
    assert str(import_error(proto)) == (
        "g: node 'mixed' (Add, opset 17): error: 'ml.add' op expects operands of one element "
        "type, got (f32, i64)"
    )


def test_a_truncated_file(tmp_path: Path):
    path = tmp_path / "cut.onnx"
    path.write_bytes(add_w().SerializeToString()[:40])
    assert str(import_error(path)) == (
        f"{path}: error: not an ONNX model (truncated, or not a protobuf)"
    )


def test_a_model_from_a_file_is_named_by_its_path(tmp_path: Path):
    path = tmp_path / "m.onnx"
    onnx.save(add_w(), path)
    assert str(import_error(path)).startswith(f"{path}: node 'x' (Add, opset 17): error: ")


def bad_utf8(proto: onnx.ModelProto, text: str, raw: bytes) -> bytes:
    """The model's bytes with the ASCII `text` (in a name) replaced by invalid UTF-8."""
    assert len(text) == len(raw)
    return proto.SerializeToString().replace(text.encode(), raw)


def test_names_that_are_not_utf8_are_escaped(tmp_path: Path):
    node = helper.make_node("Relu", ["xx"], ["yy"], name="rAAA")
    proto = model([node], [tensor("xx", [3])], [tensor("yy", [3])])
    path = tmp_path / "names.onnx"
    raw = bad_utf8(proto, "rAAA", b"r\xff\xfeA")
    path.write_bytes(raw.replace(b"xx", b"\xc3x"))
    module = mlc.import_onnx(path)
    text = print_module(module, debuginfo=True)
    assert 'loc("r\\\\xff\\\\xfeA"' in text  # the escape, as the printer escapes "\"
    x = np.random.default_rng().standard_normal(3).astype(np.float32)
    np.testing.assert_array_equal(mlc.compile(path)(x), np.maximum(x, 0))


def test_a_non_utf8_name_in_an_error():
    proto = add_w()
    proto.graph.node[0].name = "nAAA"
    loaded = onnx.ModelProto.FromString(bad_utf8(proto, "nAAA", b"n\xffAA"))
    error = import_error(loaded)
    assert str(error).startswith("g: node 'n\\xffAA' (Add, opset 17): error: input 'w' is not")
    assert error.node == "n\\xffAA"
    assert isinstance(loaded.graph.node[0].name, bytes)  # the caller's model is untouched


@pytest.mark.parametrize("tool", ["mlc_opt", "mlc_run", "mlc_translate"])
def test_tools_print_the_line_and_exit_1(tmp_path: Path, tool: str):
    path = tmp_path / "m.onnx"
    onnx.save(add_w(), path)
    flags = {"mlc_run": ["--random"], "mlc_translate": ["--mlir-to-llvmir"]}.get(tool, [])
    run = subprocess.run(
        [sys.executable, "-m", f"tools.{tool}", *flags, str(path)],
        cwd=ROOT,  # this tree's tools
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 1
    assert run.stderr.splitlines() == [
        f"{path}: node 'x' (Add, opset 17): error: input 'w' is not produced by any node, "
        "initializer or graph input"
    ]
