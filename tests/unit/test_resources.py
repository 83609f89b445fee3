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
