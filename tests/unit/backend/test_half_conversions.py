"""compiler-rt's f16 conversions as the JIT provides them, against numpy's (exhaustive
for f16 -> f32; for the narrowing ones, every f16 rounding boundary and random values)."""

import ctypes

import numpy as np
import pytest

from mlc.backend.jit import JITModule


def _loop(name: str, function: str, source: str, target: str) -> str:
    """`void name(ptr in, ptr out, i64 n)`: out[i] = function(in[i]), through bits."""
    bits = {"half": "i16", "float": "i32", "double": "i64"}
    return f"""
declare {target} @{function}({source})
define void @{name}(ptr %in, ptr %out, i64 %n) {{
entry:
  br label %loop
loop:
  %i = phi i64 [0, %entry], [%next, %loop]
  %p = getelementptr {bits[source]}, ptr %in, i64 %i
  %raw = load {bits[source]}, ptr %p
  %x = bitcast {bits[source]} %raw to {source}
  %y = call {target} @{function}({source} %x)
  %q = getelementptr {bits[target]}, ptr %out, i64 %i
  store {target} %y, ptr %q
  %next = add i64 %i, 1
  %done = icmp eq i64 %next, %n
  br i1 %done, label %exit, label %loop
exit:
  ret void
}}
"""


CONVERSIONS = {
    "widen": ("__extendhfsf2", "half", "float"),
    "narrow": ("__truncsfhf2", "float", "half"),
    "narrow_double": ("__truncdfhf2", "double", "half"),
}
DTYPES = {"half": np.float16, "float": np.float32, "double": np.float64}


@pytest.fixture(scope="module")
def convert():
    jit = JITModule("\n".join(_loop(name, *c) for name, c in CONVERSIONS.items()))
    pointer = ctypes.c_void_p
    functions = {
        name: jit.scalar_function(name, [pointer, pointer, ctypes.c_int64], None)
        for name in CONVERSIONS
    }

    def run(name: str, values: np.ndarray) -> np.ndarray:
        _, _, target = CONVERSIONS[name]
        values = np.ascontiguousarray(values)
        out = np.empty(values.shape, DTYPES[target])
        functions[name](values.ctypes.data, out.ctypes.data, values.size)
        return out

    return run


def _same(got: np.ndarray, want: np.ndarray) -> None:
    """Equal bit for bit, except that any NaN matches any NaN."""
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan)
    bits = np.uint16 if want.itemsize == 2 else np.uint32
    assert np.array_equal(got[~nan].view(bits), want[~nan].view(bits))


def test_every_half_widens_exactly(convert):
    halves = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(np.float16)
    _same(convert("widen", halves), halves.astype(np.float32))


def _boundaries(dtype: type) -> np.ndarray:
    """Each finite f16, the midpoints between neighbours and the values just either
    side of them, in `dtype`, both signs; with inf, NaN and values past f16's range."""
    halves = np.arange(0x7C00, dtype=np.uint16).view(np.float16).astype(np.float64)
    middles = (halves[:-1] + halves[1:]) / 2
    points = np.concatenate([halves, middles, [65520.0, 70000.0, 1e30, np.inf, np.nan]])
    points = points.astype(dtype)
    near = np.concatenate([np.nextafter(points, np.inf), np.nextafter(points, -np.inf)])
    values = np.concatenate([points, near])
    return np.concatenate([values, -values])


@pytest.mark.parametrize("name", ["narrow", "narrow_double"])
def test_narrowing_rounds_to_nearest_even(convert, name: str):
    dtype = DTYPES[CONVERSIONS[name][1]]
    rng = np.random.default_rng()
    random = (rng.standard_normal(100_000) * 2.0 ** rng.integers(-30, 20, 100_000)).astype(dtype)
    values = np.concatenate([_boundaries(dtype), random])
    with np.errstate(over="ignore"):  # past f16's range: inf, as wanted
        want = values.astype(np.float16)
    _same(convert(name, values), want)


def test_code_lowered_to_a_compiler_rt_call_loads_and_runs():
    # LLVM lowers this to a call to __truncdfhf2 on x86 (mlc's own lowering does not).
    ir = """
define i16 @g(double %x) {
  %y = fptrunc double %x to half
  %bits = bitcast half %y to i16
  ret i16 %bits
}
"""
    jit = JITModule(ir)
    g = jit.scalar_function("g", [ctypes.c_double], ctypes.c_uint16)
    assert np.uint16(g(1.0 + 2.0**-11)).view(np.float16) == np.float16(1.0)  # a tie: to even
    assert np.uint16(g(1.0 + 2.0**-11 + 2.0**-40)).view(np.float16) == np.float16(1.0 + 2**-10)
