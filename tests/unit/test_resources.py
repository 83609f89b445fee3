"""Large constants kept by `mlc.resources` for the JIT to bind."""

import numpy as np
import pytest

from mlc import resources


@pytest.mark.parametrize("dtype", ["float32", "float64", "int8", "float16"])
@pytest.mark.parametrize("shape", [(257,), (3, 129), (1000, 7)])
def test_stored_data_is_aligned_read_only_and_equal(dtype, shape):
    # Compiled code declares the global 64-byte aligned and may load it with aligned
    # vector moves: numpy's own 16-byte alignment is not enough.
    rng = np.random.default_rng()
    for offset in range(0, 64, 4):  # source buffers at every 4-byte misalignment
        backing = np.zeros(np.prod(shape) * np.dtype(dtype).itemsize + 64, np.uint8)
        source = backing[offset : offset + backing.size - 64].view(dtype).reshape(shape)
        source[...] = rng.standard_normal(shape).astype(dtype)
        stored = resources.lookup(resources.register(source, "w"))
        assert stored is not None
        assert stored.ctypes.data % resources.ALIGNMENT == 0
        assert not stored.flags.writeable
        np.testing.assert_array_equal(stored, source)


def blob_program(weight: np.ndarray, handle: str = "wgt", element: str = "f32") -> str:
    """MLIR text computing x @ weight, the weight's bytes in a `dialect_resources` blob."""
    k, n = weight.shape
    w, x, y = f"tensor<{k}x{n}x{element}>", f"tensor<3x{k}x{element}>", f"tensor<3x{n}x{element}>"
    blob = "0x04000000" + weight.tobytes().hex().upper()
    return f"""
func.func @main(%x: {x}) -> {y} {{
  %w = arith.constant dense_resource<{handle}> : {w}
  %y = ml.matmul %x, %w : ({x}, {w}) -> {y}
  func.return %y : {y}
}}
{{-#
  dialect_resources: {{
    builtin: {{
      {handle}: "{blob}"
    }}
  }}
#-}}
"""


@pytest.mark.parametrize("dtype,element", [("float32", "f32"), ("float64", "f64")])
def test_blobs_in_the_text_are_the_constants(dtype, element):
    # Two texts with one handle and different bytes: each compiled program reads its
    # own (the handle is renamed to one ending in the data's digest when parsed), and
    # parsing a text twice in one process (xDSL renames a handle it has seen) is fine.
    import mlc

    rng = np.random.default_rng()
    x = rng.standard_normal((3, 37)).astype(dtype)
    for _ in range(2):
        weight = rng.standard_normal((37, 29)).astype(dtype)
        text = blob_program(weight, element=element)
        for graph_passes in (True, False):
            got = mlc.compile(text, graph_passes=graph_passes)(x)
            np.testing.assert_allclose(got, x @ weight, rtol=1e-5, atol=1e-5)
        printed = str(mlc.compile(text, emit="mlc"))
        assert "dense_resource<wgt_" in printed


def test_blob_of_the_wrong_size_is_a_located_error():
    import mlc

    text = blob_program(np.zeros((37, 28), np.float32)).replace("37x28", "37x29")
    with pytest.raises(
        mlc.CompileError,
        match=r"<string>:\d+:\d+: error: dense_resource<wgt>: "
        r"holds 4144 bytes, its type tensor<37x29xf32> needs 4292",
    ):
        mlc.compile(text)


def test_resource_without_data_is_a_located_error():
    import mlc

    text = blob_program(np.zeros((37, 29), np.float32), handle="nowhere").split("{-#")[0]
    with pytest.raises(
        mlc.CompileError,
        match=r"<string>:3:3: error: 'arith.constant' op "
        r"dense_resource<nowhere> has no data",
    ):
        mlc.compile(text)
    assert mlc.compile(text, emit="linalg") is not None  # lowering needs no data


def test_mlc_opt_prints_the_blobs_back(capsys, tmp_path):
    # A file that carries its own weights keeps them through `mlc-opt`, and printing
    # the output again changes nothing (the digest-form handle is kept, not extended).
    from mlc.tools.mlc_opt import main

    import mlc

    weight = np.random.default_rng().standard_normal((37, 29)).astype(np.float32)
    source = tmp_path / "in.mlir"
    source.write_text(blob_program(weight))
    outputs = []
    for _ in range(2):
        assert main([str(source), "-p", "canonicalize"]) == 0
        outputs.append(capsys.readouterr().out)
        source.write_text(outputs[-1])
    assert outputs[0] == outputs[1]
    assert "dialect_resources" in outputs[0] and "dense_resource<wgt_" in outputs[0]
    x = np.random.default_rng().standard_normal((3, 37)).astype(np.float32)
    np.testing.assert_allclose(mlc.compile(outputs[1])(x), x @ weight, rtol=1e-5, atol=1e-5)


def test_printed_blob_holds_alignment_then_data():
    array = np.arange(6, dtype=np.float64).reshape(2, 3)
    blob = resources.encode_blob(array)
    assert blob.startswith("0x08000000")
    assert bytes.fromhex(blob[10:]) == array.tobytes()


def test_an_imported_model_printed_by_mlc_opt_runs_from_its_text(capsys, tmp_path, monkeypatch):
    # `mlc-opt model.onnx > model.mlir` keeps the weights, so the text compiles alone.
    from mlc.tools.mlc_opt import main
    from onnx import TensorProto, helper, numpy_helper, save

    import mlc

    rng = np.random.default_rng()
    weight = rng.standard_normal((30, 20)).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Gemm", ["x", "w"], ["y"], transB=1)],
        "fc",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 20])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 30])],
        [numpy_helper.from_array(weight, "w")],
    )
    model = tmp_path / "fc.onnx"
    save(helper.make_model(graph), str(model))
    assert main([str(model)]) == 0
    text = capsys.readouterr().out
    assert "dense_resource<w_" in text and "dialect_resources" in text
    monkeypatch.setattr(resources, "_store", {})  # as a new process: only the text has them
    x = rng.standard_normal((4, 20)).astype(np.float32)
    np.testing.assert_allclose(mlc.compile(text)(x), x @ weight.T, rtol=1e-5, atol=1e-5)
