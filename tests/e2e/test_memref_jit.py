"""Level-4 MLIR (loops on memrefs) through convert-to-llvm, the JIT and the runtime, vs numpy."""

import gc
import math
import os

import numpy as np
import pytest
from xdsl.dialects import func

from mlc.backend.jit import JITModule
from mlc.backend.runtime import CompiledFunction, RuntimeTypeError, compiled_function
from mlc.ir import parse_module
from mlc.lowering.convert_to_llvm import ConvertToLLVMPass
from mlc.registry import make_context

RNG = np.random.default_rng(0)


def compile_functions(source: str) -> tuple[JITModule, dict[str, CompiledFunction]]:
    """JIT every public function of `source` and wrap it for numpy."""
    module = parse_module(source)
    types = {
        op.sym_name.data: op.function_type
        for op in module.ops
        if isinstance(op, func.FuncOp) and op.body.blocks and op.sym_visibility is None
    }
    ConvertToLLVMPass().apply(make_context(), module)
    jit = JITModule(module)
    return jit, {name: compiled_function(jit, name, t) for name, t in types.items()}


def compile_one(source: str) -> CompiledFunction:
    _, functions = compile_functions(source)
    (function,) = functions.values()
    return function


def elementwise(op_lines: str, element: str, result: str | None = None) -> str:
    """A 2-d loop nest computing `%r` from `%x` and `%y` (dynamic sizes), into a fresh buffer."""
    result = result or element
    return f"""
func.func @f(%a: memref<?x?x{element}>, %b: memref<?x?x{element}>) -> memref<?x?x{result}> {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %a, %c0 : memref<?x?x{element}>
  %m = memref.dim %a, %c1 : memref<?x?x{element}>
  %out = memref.alloc(%n, %m) : memref<?x?x{result}>
  scf.for %i = %c0 to %n step %c1 {{
    scf.for %j = %c0 to %m step %c1 {{
      %x = memref.load %a[%i, %j] : memref<?x?x{element}>
      %y = memref.load %b[%i, %j] : memref<?x?x{element}>
      {op_lines}
      memref.store %r, %out[%i, %j] : memref<?x?x{result}>
    }}
  }}
  func.return %out : memref<?x?x{result}>
}}
"""


UNARY = {
    "math.exp": np.exp,
    "math.log": lambda x: np.log(np.abs(x) + 0.5),
    "math.tanh": np.tanh,
    "math.sqrt": lambda x: np.sqrt(np.abs(x)),
    "math.rsqrt": lambda x: 1 / np.sqrt(np.abs(x) + 0.5),
    "math.erf": np.vectorize(math.erf),
    "math.absf": np.abs,
    "math.floor": np.floor,
    "math.ceil": np.ceil,
    "math.exp2": np.exp2,
    "math.log1p": lambda x: np.log1p(np.abs(x)),
    "math.sin": np.sin,
    "math.cos": np.cos,
}


def _unary_source(name: str, element: str) -> str:
    """`name` applied to x, |x| or |x| + 0.5: each function's domain, as UNARY's references."""
    operand = {"math.log": "%sx", "math.rsqrt": "%sx", "math.sqrt": "%ax", "math.log1p": "%ax"}
    lines = f"""
      %ax = math.absf %x : {element}
      %h = arith.constant 0.5 : {element}
      %sx = arith.addf %ax, %h : {element}
      %r = {name} {operand.get(name, "%x")} : {element}"""
    return elementwise(lines, element)


@pytest.mark.parametrize("element,dtype", [("f32", np.float32), ("f64", np.float64)])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_math_ops_match_numpy(name: str, element: str, dtype: type[np.floating]) -> None:
    function = compile_one(_unary_source(name, element))
    a = (RNG.standard_normal((7, 13)) * 2).astype(dtype)
    result = function(a, a)
    expected = UNARY[name](a.astype(np.float64))
    rtol = 1e-5 if name in ("math.absf", "math.floor", "math.ceil") or element == "f64" else 1e-4
    np.testing.assert_allclose(result, expected, rtol=rtol, atol=1e-6)


def test_erf_f32_is_accurate_near_zero_and_in_the_tails() -> None:
    function = compile_one(elementwise("%r = math.erf %x : f32", "f32"))
    a = np.concatenate([np.linspace(-6, 6, 1001), np.geomspace(1e-8, 0.6, 100)]).astype(np.float32)
    a = a.reshape(1, -1)
    expected = np.vectorize(math.erf)(a.astype(np.float64))
    np.testing.assert_allclose(function(a, a), expected, rtol=1e-5, atol=3e-7)


@pytest.mark.parametrize("element,dtype", [("f32", np.float32), ("f64", np.float64)])
def test_binary_arith_matches_numpy(element: str, dtype: type[np.floating]) -> None:
    lines = f"""
      %s = arith.mulf %x, %y : {element}
      %t = arith.subf %s, %x : {element}
      %u = arith.divf %t, %y : {element}
      %w = math.powf %y, %x : {element}
      %q = arith.maximumf %u, %w : {element}
      %z = math.fma %q, %x, %y : {element}
      %r = arith.negf %z : {element}"""
    function = compile_one(elementwise(lines, element))
    a = RNG.standard_normal((5, 9)).astype(dtype)
    b = (RNG.random((5, 9)) + 0.5).astype(dtype)
    s = a * b
    expected = -(np.maximum((s - a) / b, b**a) * a + b)
    np.testing.assert_allclose(function(a, b), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("element,dtype", [("i32", np.int32), ("i64", np.int64)])
def test_integer_data(element: str, dtype: type[np.integer]) -> None:
    lines = f"""
      %s = arith.muli %x, %y : {element}
      %d = arith.divsi %s, %y : {element}
      %mx = arith.maxsi %d, %x : {element}
      %r = arith.addi %mx, %y : {element}"""
    function = compile_one(elementwise(lines, element))
    a = RNG.integers(-1000, 1000, (4, 6)).astype(dtype)
    b = RNG.integers(1, 50, (4, 6)).astype(dtype)
    expected = np.maximum(np.trunc(a * b / b).astype(dtype), a) + b
    np.testing.assert_array_equal(function(a, b), expected)


def test_i1_data_and_unsigned_casts() -> None:
    lines = """
      %lt = arith.cmpf olt, %x, %y : f32
      %uno = arith.cmpf uno, %x, %y : f32
      %r = arith.ori %lt, %uno : i1"""
    compare = compile_one(elementwise(lines, "f32", "i1"))
    a = RNG.standard_normal((3, 8)).astype(np.float32)
    b = RNG.standard_normal((3, 8)).astype(np.float32)
    a[0, 0] = np.nan
    result = compare(a, b)
    assert result.dtype == np.bool_
    np.testing.assert_array_equal(result, (a < b) | np.isnan(a) | np.isnan(b))
    to_float = compile_one(elementwise("%r = arith.uitofp %x : i1 to f32", "i1", "f32"))
    np.testing.assert_array_equal(to_float(result, result), result.astype(np.float32))
    u64 = compile_one(elementwise("%r = arith.uitofp %x : i64 to f64", "i64", "f64"))
    big = np.array([[-1, 5, -(2**62)]], np.int64)  # as unsigned: 2**64 - 1, 5, 3 * 2**62
    np.testing.assert_array_equal(u64(big, big), big.view(np.uint64).astype(np.float64))


def test_copy_and_subview_write() -> None:
    source = """
func.func @f(%a: memref<?x?xf64>) -> memref<?x?xf64> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %n = memref.dim %a, %c0 : memref<?x?xf64>
  %m = memref.dim %a, %c1 : memref<?x?xf64>
  %out = memref.alloc(%n, %m) : memref<?x?xf64>
  "memref.copy"(%a, %out) : (memref<?x?xf64>, memref<?x?xf64>) -> ()
  %rows = arith.subi %n, %c1 : index
  %cols = arith.subi %m, %c2 : index
  %view = memref.subview %out[1, 1] [%rows, %cols] [1, 1]
      : memref<?x?xf64> to memref<?x?xf64, strided<[?, 1], offset: ?>>
  %neg = arith.constant -1.0 : f64
  scf.for %i = %c0 to %rows step %c1 {
    scf.for %j = %c0 to %cols step %c1 {
      memref.store %neg, %view[%i, %j] : memref<?x?xf64, strided<[?, 1], offset: ?>>
    }
  }
  func.return %out : memref<?x?xf64>
}
"""
    function = compile_one(source)
    a = RNG.standard_normal((5, 7))
    expected = a.copy()
    expected[1:, 1:-1] = -1.0
    np.testing.assert_array_equal(function(a), expected)
    # A non-contiguous argument is copied to a contiguous one first.
    wide = RNG.standard_normal((5, 14))
    expected = wide[:, ::2].copy()
    expected[1:, 1:-1] = -1.0
    np.testing.assert_array_equal(function(wide[:, ::2]), expected)


def test_strided_copy_collapse_and_expand() -> None:
    source = """
func.func @f(%a: memref<4x6xf32>) -> (memref<24xf32>, memref<2x2x3xf32>) {
  %flat = memref.collapse_shape %a [[0, 1]] : memref<4x6xf32> into memref<24xf32>
  %out = memref.alloc() : memref<24xf32>
  "memref.copy"(%flat, %out) : (memref<24xf32>, memref<24xf32>) -> ()
  %part = memref.subview %a[1, 0] [2, 6] [2, 1]
      : memref<4x6xf32> to memref<2x6xf32, strided<[12, 1], offset: 6>>
  %dense = memref.alloc() : memref<2x6xf32>
  "memref.copy"(%part, %dense)
      : (memref<2x6xf32, strided<[12, 1], offset: 6>>, memref<2x6xf32>) -> ()
  %shaped = memref.expand_shape %dense [[0], [1, 2]] output_shape [2, 2, 3]
      : memref<2x6xf32> into memref<2x2x3xf32>
  func.return %out, %shaped : memref<24xf32>, memref<2x2x3xf32>
}
"""
    function = compile_one(source)
    a = RNG.standard_normal((4, 6)).astype(np.float32)
    flat, shaped = function(a)
    np.testing.assert_array_equal(flat, a.reshape(-1))
    np.testing.assert_array_equal(shaped, a[1::2].reshape(2, 2, 3))


def test_two_fresh_results_calls_and_scalars() -> None:
    source = """
func.func private @scale(%m: memref<?xf32>, %k: f32) -> memref<?xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = memref.dim %m, %c0 : memref<?xf32>
  %out = memref.alloc(%n) : memref<?xf32>
  scf.for %i = %c0 to %n step %c1 {
    %x = memref.load %m[%i] : memref<?xf32>
    %y = arith.mulf %x, %k : f32
    memref.store %y, %out[%i] : memref<?xf32>
  }
  func.return %out : memref<?xf32>
}
func.func @two(%m: memref<?xf32>, %k: f32, %n: i64) -> (memref<?xf32>, memref<?xf32>, i64) {
  %two = arith.constant 2.0 : f32
  %a = func.call @scale(%m, %k) : (memref<?xf32>, f32) -> memref<?xf32>
  %b = func.call @scale(%a, %two) : (memref<?xf32>, f32) -> memref<?xf32>
  %c1 = arith.constant 1 : i64
  %n1 = arith.addi %n, %c1 : i64
  func.return %a, %b, %n1 : memref<?xf32>, memref<?xf32>, i64
}
"""
    function = compile_one(source)
    m = RNG.standard_normal(10).astype(np.float32)
    a, b, n = function(m, 3.0, 41)
    np.testing.assert_allclose(a, m * 3, rtol=1e-6)
    np.testing.assert_allclose(b, m * 6, rtol=1e-6)
    assert n == 42
    empty_a, empty_b, _ = function(np.zeros(0, np.float32), 1.0, 0)  # zero-size results
    assert empty_a.shape == (0,) and empty_b.shape == (0,)


def test_global_constant_read() -> None:
    source = """
"memref.global"() <{sym_name = "table", sym_visibility = "private", type = memref<2x3xf32>,
    initial_value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>,
    constant}> : () -> ()
func.func @f(%a: memref<2x3xf32>) -> memref<2x3xf32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  %g = memref.get_global @table : memref<2x3xf32>
  %out = memref.alloc() : memref<2x3xf32>
  scf.for %i = %c0 to %c2 step %c1 {
    scf.for %j = %c0 to %c3 step %c1 {
      %x = memref.load %a[%i, %j] : memref<2x3xf32>
      %t = memref.load %g[%i, %j] : memref<2x3xf32>
      %y = arith.mulf %x, %t : f32
      memref.store %y, %out[%i, %j] : memref<2x3xf32>
    }
  }
  func.return %out : memref<2x3xf32>
}
"""
    function = compile_one(source)
    a = RNG.standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(function(a), a * np.arange(1, 7, dtype=np.float32).reshape(2, 3))


def test_read_only_strided_and_changing_shape_arguments() -> None:
    # The call reuses one block of descriptors per thread: each call must still see its
    # own arrays' addresses, sizes and strides (read-only arrays have no writable buffer).
    function = compile_one(elementwise("%r = arith.subf %x, %y : f32", "f32"))
    a = RNG.standard_normal((7, 5)).astype(np.float32)
    b = RNG.standard_normal((5, 7)).astype(np.float32)
    a.flags.writeable = False
    np.testing.assert_array_equal(function(a, b.T), a - b.T)  # b.T: copied contiguous
    np.testing.assert_array_equal(function(a[:3], a[4:]), a[:3] - a[4:])
    c = RNG.standard_normal((2, 9)).astype(np.float32)
    np.testing.assert_array_equal(function(c, c), np.zeros((2, 9), np.float32))
    np.testing.assert_array_equal(function(a, a), np.zeros((7, 5), np.float32))


def test_calls_from_several_threads() -> None:
    from concurrent.futures import ThreadPoolExecutor

    function = compile_one(elementwise("%r = arith.mulf %x, %y : f32", "f32"))
    arrays = [RNG.standard_normal((n, 33)).astype(np.float32) for n in range(1, 41)]
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda x: function(x, x), arrays))
    for x, got in zip(arrays, results, strict=True):
        np.testing.assert_array_equal(got, x * x)


def test_dtype_mismatch_raises() -> None:
    function = compile_one(elementwise("%r = arith.addf %x, %y : f32", "f32"))
    a = np.zeros((2, 2), np.float64)
    with pytest.raises(RuntimeTypeError, match="expected dtype float32, got float64"):
        function(a, a)


def _rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_result_buffers_are_freed_when_arrays_die() -> None:
    function = compile_one(elementwise("%r = arith.addf %x, %y : f32", "f32"))
    a = np.ones((64, 64), np.float32)  # 16 KiB per result: 10,000 leaked would be 160 MB
    for _ in range(200):
        function(a, a)
    gc.collect()
    before = _rss_bytes()
    for _ in range(10_000):
        result = function(a, a)
    del result
    gc.collect()
    assert _rss_bytes() - before < 8 * 2**20


def test_loops_vectorise() -> None:
    jit, _ = compile_functions(
        elementwise("%s = arith.mulf %x, %y : f32\n%r = arith.addf %s, %x : f32", "f32")
    )
    assert "x float>" in jit.optimized_ir


def test_integer_and_bool_globals() -> None:
    # i32 data goes to LLVM as raw bytes, i1 data element by element (xDSL packs i1 as 0xff).
    source = """
"memref.global"() <{sym_name = "ints", sym_visibility = "private", type = memref<3xi32>,
    initial_value = dense<[7, -8, 9]> : tensor<3xi32>, constant}> : () -> ()
"memref.global"() <{sym_name = "mask", sym_visibility = "private", type = memref<3xi1>,
    initial_value = dense<[true, false, true]> : tensor<3xi1>, constant}> : () -> ()
func.func @f(%a: memref<3xi32>) -> memref<3xi32> {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %ints = memref.get_global @ints : memref<3xi32>
  %mask = memref.get_global @mask : memref<3xi1>
  %out = memref.alloc() : memref<3xi32>
  scf.for %i = %c0 to %c3 step %c1 {
    %x = memref.load %a[%i] : memref<3xi32>
    %t = memref.load %ints[%i] : memref<3xi32>
    %m = memref.load %mask[%i] : memref<3xi1>
    %y = arith.select %m, %t, %x : i32
    memref.store %y, %out[%i] : memref<3xi32>
  }
  func.return %out : memref<3xi32>
}
"""
    function = compile_one(source)
    np.testing.assert_array_equal(function(np.array([1, 2, 3], np.int32)), [7, 2, 9])
