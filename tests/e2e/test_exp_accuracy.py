"""
`ml.exp` on f32 against float64 numpy over its whole range: within 3 ulp where the
result is normal, within a few of the smallest subnormal below that, inf past the
overflow, 0 past the underflow, NaN for NaN: the inline polynomial both targets use
(`convert_to_llvm.math.exp_f32`), on the CPU and in GPU kernels.
"""

import numpy as np

from tests.gpu.targets import compile_for

PROGRAM = """
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = ml.exp %x : (tensor<?xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
"""

SPECIAL = [0.0, -0.0, 1.0, -1.0, 1e-30, -1e-30, 88.72, 88.73, 89.5, -87.3, -103.2, -104.5]
SMALLEST_NORMAL = float(np.finfo(np.float32).tiny)
SMALLEST_SUBNORMAL = 2.0**-149


def test_exp_matches_float64_over_its_range(target):
    exe = compile_for(PROGRAM, target)
    rng = np.random.default_rng()
    x = np.concatenate(
        [
            np.linspace(-104.0, 89.0, 200_001, dtype=np.float32),
            rng.uniform(-20, 20, 50_000).astype(np.float32),
            np.array(SPECIAL, dtype=np.float32),
        ]
    )
    got = exe(x).astype(np.float64)
    want = np.exp(x.astype(np.float64))
    overflow = want > np.finfo(np.float32).max
    assert np.isposinf(got[overflow]).all()
    normal = (want >= SMALLEST_NORMAL) & ~overflow
    ulps = np.abs(got[normal] - want[normal]) / np.spacing(want[normal].astype(np.float32))
    assert ulps.max() <= 3, f"{ulps.max():.1f} ulp at x = {x[normal][ulps.argmax()]}"
    tiny = want < SMALLEST_NORMAL
    assert np.abs(got[tiny] - want[tiny]).max() <= 4 * SMALLEST_SUBNORMAL


def test_exp_of_specials(target):
    exe = compile_for(PROGRAM, target)
    x = np.array([np.inf, -np.inf, np.nan, 0.0, 1000.0, -1000.0], dtype=np.float32)
    got = exe(x)
    assert got[0] == np.inf and got[1] == 0.0 and np.isnan(got[2])
    assert got[3] == 1.0 and got[4] == np.inf and got[5] == 0.0


def test_exp_below_the_underflow_is_positive_zero(target):
    """What masked scores are (-inf, float32's lowest, -1e9 added to a score): exactly
    +0, in every lane of a vector and in the scalar tail (odd length)."""
    exe = compile_for(PROGRAM, target)
    lowest = np.finfo(np.float32).min
    x = np.array([lowest, -1e9, -104.01, -3e4, -np.inf] * 7 + [-1.0], dtype=np.float32)
    got = exe(x)
    assert (got[:-1] == 0.0).all() and not np.signbit(got[:-1]).any()
    np.testing.assert_allclose(got[-1], np.exp(-1.0), rtol=3 * 2.0**-23)
