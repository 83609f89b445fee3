"""
Scalar code end to end: MLIR text -> convert-scf-to-cf -> convert-to-llvm -> LLVM IR ->
O3 -> MCJIT, called through ctypes and compared with the same computation in Python.
"""

import ctypes
import random

import pytest
from xdsl.dialects.builtin import ModuleOp

from mlc.backend.jit import JITModule, scalar_function
from mlc.diagnostics import verify_module
from mlc.ir import parse_module
from mlc.registry import make_context, parse_pipeline

SCALAR = """
func.func @f(%a: f64, %b: f64) -> f64 {
  %c = arith.constant 2.5 : f64
  %0 = arith.mulf %a, %b : f64
  %1 = arith.addf %0, %c : f64
  %2 = arith.divf %1, %b : f64
  %3 = arith.maxnumf %2, %a : f64
  %4 = arith.cmpf olt, %a, %b : f64
  %5 = arith.subf %3, %b : f64
  %6 = arith.select %4, %5, %3 : f64
  func.return %6 : f64
}
"""

LOOP = """
func.func @sum(%n: i64) -> i64 {
  %lo = arith.constant 0 : index
  %one = arith.constant 1 : index
  %hi = arith.index_cast %n : i64 to index
  %zero = arith.constant 0 : i64
  %r = scf.for %i = %lo to %hi step %one iter_args(%acc = %zero) -> (i64) {
    %ii = arith.index_cast %i : index to i64
    %s = arith.addi %acc, %ii : i64
    scf.yield %s : i64
  }
  func.return %r : i64
}

func.func @collatz_steps(%n: i64) -> i32 {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %zero64 = arith.constant 0 : i64
  %one = arith.constant 1 : i64
  %two = arith.constant 2 : i64
  %three = arith.constant 3 : i64
  %lo = arith.constant 0 : index
  %hi = arith.constant 1000 : index
  %step = arith.constant 1 : index
  %r:2 = scf.for %i = %lo to %hi step %step iter_args(%x = %n, %k = %c0) -> (i64, i32) {
    %done = arith.cmpi sle, %x, %one : i64
    %odd = arith.remsi %x, %two : i64
    %is_odd = arith.cmpi ne, %odd, %zero64 : i64
    %half = arith.divsi %x, %two : i64
    %t = arith.muli %x, %three : i64
    %t1 = arith.addi %t, %one : i64
    %next = arith.select %is_odd, %t1, %half : i64
    %k1 = arith.addi %k, %c1 : i32
    %x2, %k2 = scf.if %done -> (i64, i32) {
      scf.yield %x, %k : i64, i32
    } else {
      scf.yield %next, %k1 : i64, i32
    }
    scf.yield %x2, %k2 : i64, i32
  }
  func.return %r#1 : i32
}
"""


def lower(text: str) -> ModuleOp:
    """Parse and lower scalar MLIR to the llvm dialect, verifying after each pass."""
    ctx = make_context()
    module = parse_module(text, ctx=ctx)
    for module_pass in parse_pipeline("convert-scf-to-cf,convert-to-llvm"):
        module_pass.apply(ctx, module)
        assert verify_module(module) == []
    return module


def reference_f(a: float, b: float) -> float:
    value = max((a * b + 2.5) / b, a)
    return value - b if a < b else value


def collatz(n: int) -> int:
    steps = 0
    while n > 1 and steps < 1000:
        n = 3 * n + 1 if n % 2 else n // 2
        steps += 1
    return steps


def test_scalar_float_function():
    f = scalar_function(lower(SCALAR), "f", [ctypes.c_double] * 2, ctypes.c_double)
    rng = random.Random(0)
    for _ in range(100):
        a, b = rng.uniform(-10, 10), rng.uniform(0.5, 10) * rng.choice([-1, 1])
        assert f(a, b) == pytest.approx(reference_f(a, b), rel=1e-12)


def test_integer_loops():
    jit = JITModule(lower(LOOP))
    total = jit.scalar_function("sum", [ctypes.c_int64], ctypes.c_int64)
    steps = jit.scalar_function("collatz_steps", [ctypes.c_int64], ctypes.c_int32)
    rng = random.Random(1)
    for n in [0, 1, -5, *(rng.randrange(0, 100_000) for _ in range(20))]:
        assert total(n) == sum(range(n))
    for n in [1, 2, 3, 27, *(rng.randrange(1, 10**6) for _ in range(20))]:
        assert steps(n) == collatz(n)


def test_o3_turns_the_sum_loop_into_closed_form():
    # Loops are left to LLVM (XDSL-NOTES): at O3 it finds n*(n-1)/2, which has a multiply.
    def sum_body(jit: JITModule) -> str:
        return jit.optimized_ir.split("define i64 @sum")[1].split("\n}\n")[0]

    assert " mul " in sum_body(JITModule(lower(LOOP)))
    assert " mul " not in sum_body(JITModule(lower(LOOP), opt_level=0))
