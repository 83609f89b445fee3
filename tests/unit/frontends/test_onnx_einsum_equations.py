"""The Einsum equation parser of `mlc.frontends.onnx.ops.einsum`, and its import errors."""

import onnx
import pytest
from onnx import helper

import mlc
from mlc.frontends.onnx.model import OnnxImportError
from mlc.frontends.onnx.node import NodeError
from mlc.frontends.onnx.ops.einsum import ELLIPSIS_BASE, parse

E0, E1 = chr(ELLIPSIS_BASE), chr(ELLIPSIS_BASE + 1)


@pytest.mark.parametrize(
    ("equation", "ranks", "operands", "output"),
    [
        ("bhid,bhjd->bhij", [4, 4], ["bhid", "bhjd"], "bhij"),
        ("ij,jk", [2, 2], ["ij", "jk"], "ik"),  # implicit: labels seen once, sorted
        ("ba", [2], ["ba"], "ab"),
        ("ii", [2], ["ii"], ""),
        (" i , j -> i j ", [1, 1], ["i", "j"], "ij"),
        ("...ij,jk->...ik", [4, 2], [E0 + E1 + "ij", "jk"], E0 + E1 + "ik"),
        ("...ij,...jk", [4, 3], [E0 + E1 + "ij", E1 + "jk"], E0 + E1 + "ik"),  # right-aligned
    ],
)
def test_parse(equation, ranks, operands, output):
    assert parse(equation, ranks) == ([list(o) for o in operands], list(output))


@pytest.mark.parametrize(
    ("equation", "ranks", "message"),
    [
        ("ij,jk->ik", [2], "names 2 operands, got 1"),
        ("ij->ik", [2], "the output label 'k' of 'ij->ik' is on no operand"),
        ("ijk->i", [2], "the term 'ijk' of 'ijk->i' has 3 labels, rank 2"),
        ("i1->i", [2], "cannot parse the einsum term 'i1'"),
        ("...ijk->i", [2], "has more labels than rank 2"),
    ],
)
def test_parse_errors(equation, ranks, message):
    with pytest.raises(NodeError, match=message):
        parse(equation, ranks)


def test_a_bad_equation_is_a_located_one_line_error():
    node = helper.make_node("Einsum", ["a"], ["y"], equation="ii->i", name="attn_scores")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("a", onnx.TensorProto.FLOAT, [2, 3])],
        [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    with pytest.raises(OnnxImportError) as info:
        mlc.import_onnx(model)
    text = str(info.value)
    assert "'attn_scores' (Einsum, opset 12): error: a repeated einsum label needs equal" in text
    assert "\n" not in text.strip() and "Traceback" not in text and "einsum.py" not in text


def test_contractions_become_one_batched_matmul():
    node = helper.make_node("Einsum", ["q", "k"], ["y"], equation="bhid,bhjd->bhij")
    inputs = [
        helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, ["b", 4, s, 8])
        for n, s in (("q", 5), ("k", 6))
    ]
    output = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["b", 4, 5, 6])
    graph = helper.make_graph([node], "g", inputs, [output])
    module = mlc.import_onnx(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)]))
    names = [op.name for op in module.walk() if op.name.startswith("ml.")]
    assert names.count("ml.matmul") == 1
    assert "ml.reduce_sum" not in names
