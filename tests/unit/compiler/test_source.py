"""
`mlc.compile`'s loading of a program: programs that parse but that mlc cannot compile
are one located `mlc.CompileError`, never an internal error.
"""

import importlib
from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import ModuleOp

import mlc
from mlc.ir import parse_module

SUPPORTED = "(f16, bf16, f32, f64, i1 to i64 and index)"


def compile_error(src) -> str:
    with pytest.raises(mlc.CompileError) as info:
        mlc.compile(src)
    text = str(info.value)
    assert "\n" not in text
    return text


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "func.func @main(%x: f80) -> f80 {\n  func.return %x : f80\n}",
            f"<string>:1:1: error: 'func.func' op argument #0 has element type f80, which mlc "
            f"does not compile {SUPPORTED}",
        ),
        (
            "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %y = arith.extf %x : tensor<2xf32> to tensor<2xf128>\n"
            "  %z = arith.truncf %y : tensor<2xf128> to tensor<2xf32>\n"
            "  func.return %z : tensor<2xf32>\n}",
            f"<string>:2:3: error: 'arith.extf' op result #0 has element type f128, which mlc "
            f"does not compile {SUPPORTED}",
        ),
        (
            "func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %y = arith.truncf %x : tensor<2xf32> to tensor<2xf8E4M3FN>\n"
            "  %z = arith.extf %y : tensor<2xf8E4M3FN> to tensor<2xf32>\n"
            "  func.return %z : tensor<2xf32>\n}",
            f"<string>:2:3: error: 'arith.truncf' op result #0 has element type f8E4M3FN, which "
            f"mlc does not compile {SUPPORTED}",
        ),
        (
            "func.func @main(%x: tensor<4xi128>) -> tensor<4xi128> {\n"
            "  func.return %x : tensor<4xi128>\n}",
            f"<string>:1:1: error: 'func.func' op argument #0 has element type i128, which mlc "
            f"does not compile {SUPPORTED}",
        ),
        (
            "func.func @main(%x: complex<f32>) -> complex<f32> {\n"
            "  func.return %x : complex<f32>\n}",
            f"<string>:1:1: error: 'func.func' op argument #0 has element type complex, which "
            f"mlc does not compile {SUPPORTED}",
        ),
        (
            "func.func @main(%x: vector<4xf32>) -> vector<4xf32> {\n"
            "  func.return %x : vector<4xf32>\n}",
            "<string>:1:1: error: 'func.func' op argument #0 of a public function is a vector "
            "(vector<4xf32>), which a caller cannot pass",
        ),
        (
            "func.func @main(%x: tensor<4xi4>) -> tensor<4xi4> {\n"
            "  func.return %x : tensor<4xi4>\n}",
            "<string>:1:1: error: 'func.func' op argument #0 of a public function has no numpy "
            "dtype for element type i4",
        ),
        (
            "func.func @main() -> f80 {\n  %c = arith.constant 1.5 : f80\n"
            "  func.return %c : f80\n}",
            "<string>:2:3: error: 'arith.constant' op has an f80 constant, which mlc does not "
            "support",
        ),
        (
            "func.func @main() -> tensor<2xf80> {\n"
            "  %c = arith.constant dense<1.5> : tensor<2xf80>\n"
            "  func.return %c : tensor<2xf80>\n}",
            "<string>:2:28: error: dense f80 elements are not supported",
        ),
        (
            "func.func @main(%x: f32) -> f32 {\n  func.return %x : f32\n}\n"
            "func.func @main(%x: f32) -> f32 {\n  func.return %x : f32\n}",
            "<string>:4:1: error: 'func.func' op redefinition of symbol \"main\" "
            "(first at <string>:1:1)",
        ),
    ],
    ids=[
        "f80-arg",
        "f128-value",
        "f8",
        "i128",
        "complex",
        "vector-arg",
        "i4-arg",
        "f80-constant",
        "f80-dense",
        "duplicate-symbol",
    ],
)
def test_unsupported_programs_are_located_errors(body, expected):
    assert compile_error(body) == expected


def test_a_module_op_is_checked_too():
    module = parse_module("func.func @main(%x: f80) -> f80 {\n  func.return %x : f80\n}")
    assert isinstance(module, ModuleOp)
    assert "'func.func' op argument #0 has element type f80" in compile_error(module)


def test_private_functions_may_take_what_numpy_cannot():
    exe = mlc.compile(
        "func.func private @helper(%v: vector<4xf32>) -> vector<4xf32> {\n"
        "  func.return %v : vector<4xf32>\n}\n"
        "func.func @main(%x: f32) -> f32 {\n  func.return %x : f32\n}"
    )
    assert exe(np.float32(2.5)) == np.float32(2.5)


def test_nested_generic_compiles_and_is_right():
    # r[i] = x[0] + x[i]: the inner generic computes x + x[i]; the outer reads element 0.
    program = """
#map = affine_map<(d0) -> (d0)>
func.func @main(%x: tensor<5xf32>, %o: tensor<5xf32>) -> tensor<5xf32> {
  %r = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
      ins(%x : tensor<5xf32>) outs(%o : tensor<5xf32>) {
  ^bb0(%a: f32, %b: f32):
    %e = tensor.empty() : tensor<5xf32>
    %in = linalg.generic {indexing_maps = [#map, #map], iterator_types = ["parallel"]}
        ins(%x : tensor<5xf32>) outs(%e : tensor<5xf32>) {
    ^bb1(%c: f32, %d: f32):
      %s = arith.addf %c, %a : f32
      linalg.yield %s : f32
    } -> tensor<5xf32>
    %i0 = arith.constant 0 : index
    %v = tensor.extract %in[%i0] : tensor<5xf32>
    linalg.yield %v : f32
  } -> tensor<5xf32>
  func.return %r : tensor<5xf32>
}
"""
    x = np.random.default_rng().standard_normal(5).astype(np.float32)
    got = mlc.compile(program)(x, np.zeros(5, np.float32))
    np.testing.assert_allclose(got, x[0] + x, rtol=1e-6)


def test_tools_report_unsupported_types_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
):
    path = tmp_path / "f80.mlir"
    path.write_text("func.func @main(%x: f80) -> f80 {\n  func.return %x : f80\n}\n")
    expected = (
        f"{path}:1:1: error: 'func.func' op argument #0 has element type f80, which mlc "
        f"does not compile {SUPPORTED}"
    )
    for tool, *flags in (["mlc_run", "--random"], ["mlc_translate", "--mlir-to-llvmir"]):
        main = importlib.import_module(f"mlc.tools.{tool}").main  # in-process: no interpreter
        try:
            code = main([*flags, str(path)])
        except SystemExit as done:
            code = done.code
        err = capsys.readouterr().err
        assert code == 1, err
        assert err.splitlines()[0] == expected and "Traceback" not in err
