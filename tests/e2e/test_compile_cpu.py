"""
`mlc.compile` end to end on the CPU: programs with loops and branches, dynamic shapes
compiled once and run at many sizes, argument checks, memory that stays flat, and
the sources `compile` accepts. tests/gpu/test_cuda_runtime.py runs these programs on
`cuda`.
"""

import numpy as np
import pytest

import mlc

SCALE_LOOP = """
func.func @main(%x: tensor<?x?xf32>, %n: index) -> tensor<?x?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %half = arith.constant dense<0.5> : tensor<f32>
  %r = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %x) -> (tensor<?x?xf32>) {
    %t = ml.transpose %acc {perm = array<i64: 1, 0>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
    %s = ml.add %acc, %t : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
    %h = ml.mul %s, %half : (tensor<?x?xf32>, tensor<f32>) -> tensor<?x?xf32>
    scf.yield %h : tensor<?x?xf32>
  }
  func.return %r : tensor<?x?xf32>
}
"""


def scale_loop_reference(x, n):
    for _ in range(n):
        x = (x + x.T) * np.float32(0.5)
    return x


@pytest.mark.parametrize("size, n", [(1, 3), (5, 0), (7, 4), (16, 1)])
def test_for_loop_dynamic_sizes_one_compile(size, n):
    exe = mlc.compile(SCALE_LOOP)
    x = np.random.default_rng().standard_normal((size, size)).astype(np.float32)
    np.testing.assert_allclose(exe(x, n), scale_loop_reference(x, n), rtol=1e-5, atol=1e-6)
    assert mlc.compile(SCALE_LOOP) is exe  # cached by IR and target


WHILE_LOOP = """
func.func @main(%x: tensor<8xf32>, %limit: f32) -> (tensor<8xf32>, i64) {
  %zero = arith.constant 0 : i64
  %r:2 = scf.while (%v = %x, %k = %zero) : (tensor<8xf32>, i64) -> (tensor<8xf32>, i64) {
    %s = ml.reduce_sum %v {axes = array<i64: 0>, keepdims = false} : (tensor<8xf32>) -> tensor<f32>
    %total = tensor.extract %s[] : tensor<f32>
    %go = arith.cmpf olt, %total, %limit : f32
    scf.condition(%go) %v, %k : tensor<8xf32>, i64
  } do {
  ^bb0(%w: tensor<8xf32>, %j: i64):
    %d = ml.add %w, %w : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %one = arith.constant 1 : i64
    %j1 = arith.addi %j, %one : i64
    scf.yield %d, %j1 : tensor<8xf32>, i64
  }
  func.return %r#0, %r#1 : tensor<8xf32>, i64
}
"""


def test_while_loop_with_tensor_and_scalar_results():
    exe = mlc.compile(WHILE_LOOP)
    x = np.random.default_rng().uniform(0.1, 1.0, 8).astype(np.float32)
    v, k = exe(x, 1000.0)
    want_v, want_k = x.copy(), 0
    while want_v.sum() < 1000.0:
        want_v, want_k = want_v + want_v, want_k + 1
    assert k == want_k
    np.testing.assert_allclose(v, want_v, rtol=1e-6)


IF_PROGRAM = """
func.func @main(%x: tensor<?xf32>, %flag: i1) -> tensor<?xf32> {
  %r = scf.if %flag -> (tensor<?xf32>) {
    %e = ml.exp %x : (tensor<?xf32>) -> tensor<?xf32>
    scf.yield %e : tensor<?xf32>
  } else {
    scf.yield %x : tensor<?xf32>
  }
  func.return %r : tensor<?xf32>
}
"""


def test_if_returns_a_fresh_array_either_way():
    exe = mlc.compile(IF_PROGRAM)
    x = np.linspace(-1, 1, 11, dtype=np.float32)
    np.testing.assert_allclose(exe(x, True), np.exp(x), rtol=1e-6)
    same = exe(x, False)
    np.testing.assert_array_equal(same, x)
    same[0] = 42.0  # the result is a copy the caller owns, not the argument
    assert x[0] == -1.0


MLP = "examples/mlp.mlir"


def test_argument_checks_name_the_argument():
    exe = mlc.compile(MLP)
    rng = np.random.default_rng()
    args = [
        rng.standard_normal(s).astype(np.float32)
        for s in [(3, 784), (784, 128), (128,), (128, 10), (10,)]
    ]
    assert exe(*args).shape == (3, 10)
    with pytest.raises(TypeError, match=r"@mlp takes 5 argument\(s\), got 4"):
        exe(*args[:4])
    with pytest.raises(
        TypeError, match=r"argument 0 \(%x\): expected dtype float32 .* got float64"
    ):
        exe(args[0].astype(np.float64), *args[1:])
    with pytest.raises(ValueError, match=r"argument 1 \(%w1\): expected rank 2"):
        exe(args[0], args[1][0], *args[2:])
    with pytest.raises(ValueError, match=r"argument 0 \(%x\): expected size 784 in dim 1"):
        exe(args[0][:, :700], *args[1:])
    with pytest.raises(TypeError, match=r"expected a numpy array"):
        exe(args[0].tolist(), *args[1:])


def test_non_contiguous_arguments_are_accepted():
    exe = mlc.compile(SCALE_LOOP)
    x = np.random.default_rng().standard_normal((6, 6)).astype(np.float32)
    view = x.T  # Fortran order
    np.testing.assert_allclose(exe(view, 2), scale_loop_reference(view.copy(), 2), rtol=1e-5)


def _resident_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096


def test_ten_thousand_calls_keep_memory_flat():
    exe = mlc.compile(SCALE_LOOP)
    x = np.ones((32, 32), np.float32)  # 4 KiB per result, 3 temporaries per iteration
    for _ in range(200):
        exe(x, 3)
    before = _resident_bytes()
    for _ in range(10_000):
        exe(x, 3)
    grown = _resident_bytes() - before
    assert grown < 8 * 2**20, f"resident memory grew by {grown / 2**20:.1f} MiB"


def test_sources(tmp_path):
    text = (
        "func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n"
        "  %b = ml.neg %a : (tensor<3xf32>) -> tensor<3xf32>\n  func.return %b : tensor<3xf32>\n}\n"
    )
    path = tmp_path / "f.mlir"
    path.write_text(text)
    a = np.arange(3, dtype=np.float32)
    module = mlc.parse_module(text)
    for src in (text, str(path), path, module):
        np.testing.assert_array_equal(mlc.compile(src)(a), -a)
    assert "func.func @f" in mlc.print_module(module)  # compile does not consume the module


def test_compile_errors_are_located():
    with pytest.raises(mlc.CompileError, match=r"<string>:2:"):
        mlc.compile("func.func @f(%a: tensor<3xf32>) -> tensor<3xf32> {\n  %b = ml.nope %a\n}")
    with pytest.raises(mlc.CompileError, match=r"cannot read .*missing.mlir"):
        mlc.compile("missing.mlir")


def test_emit_stops_after_a_stage():
    module = mlc.compile(MLP, emit="linalg")
    text = mlc.print_module(module)
    assert "linalg.generic" in text and "ml." not in text.replace("ml.dim", "")
    with pytest.raises(ValueError, match="unknown stage 'asm'"):
        mlc.compile(MLP, emit="asm")


TIED_DIMS = """
func.func @main(%a: tensor<?x?xf32>, %b: tensor<?xf32>, %c: tensor<?x4xf32>) -> tensor<?x?xf32> {
  %t = ml.transpose %a {perm = array<i64: 1, 0>} : (tensor<?x?xf32>) -> tensor<?x?xf32>
  %s = ml.add %a, %t : (tensor<?x?xf32>, tensor<?x?xf32>) -> tensor<?x?xf32>
  %u = ml.add %s, %b : (tensor<?x?xf32>, tensor<?xf32>) -> tensor<?x?xf32>
  %m = ml.matmul %u, %c : (tensor<?x?xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
  %r = ml.matmul %m, %m : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x?xf32>
  func.return %r : tensor<?x?xf32>
}
"""


def test_dynamic_dims_follow_numpy_and_mismatches_raise():
    exe = mlc.compile(TIED_DIMS)
    rng = np.random.default_rng()
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in [(4, 4), (4,), (4, 4)])

    def want(a, b, c):
        u = a + a.T + b
        return (u @ c) @ (u @ c)

    np.testing.assert_allclose(exe(a, b, c), want(a, b, c), rtol=1e-4, atol=1e-4)
    # Dynamic dims of size 1 broadcast, as in numpy.
    for args in [(a, b[:1], c), (a[:1], b, c), (a[:1], b[:1], c)]:
        np.testing.assert_allclose(exe(*args), want(*args), rtol=1e-4, atol=1e-4)
    # The last matmul ties the rows of `u` to the static 4; 3 is neither 4 nor 1.
    with pytest.raises(mlc.RuntimeCheckError, match=r":4:3: error: 'ml.add' op .* must be 1 or 4"):
        exe(a[:3, :3], b[:3], c[:3])
    with pytest.raises(mlc.RuntimeCheckError, match=r":6:3: error: 'ml.matmul' op .* inner dims"):
        exe(a, b, c[:3])
