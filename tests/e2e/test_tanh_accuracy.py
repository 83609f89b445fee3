"""
`ml.tanh` on f32 against float64 numpy over its whole range: within 5 ulp, -0 kept,
+-1 past saturation, NaN for NaN. On the CPU the inline rational form
(`convert_to_llvm.math.tanh_f32`, onnxruntime's and Eigen's, 4.6 ulp at worst measured);
in GPU kernels libdevice's tanhf (2 ulp). f16 goes through f32, f64 keeps libm's /
libdevice's tanh.
"""

import numpy as np

from tests.gpu.targets import compile_for

PROGRAM = """
func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
  %y = ml.tanh %x : (tensor<?xf32>) -> tensor<?xf32>
  func.return %y : tensor<?xf32>
}
"""

SPECIAL = [1e-30, -1e-30, 1e-40, 4e-4, -4e-4, 0.625, 5.1002297, 7.9988, 8.0, 9.1, 44.0, 90.0]


def test_tanh_matches_float64_over_its_range(target):
    exe = compile_for(PROGRAM, target)
    rng = np.random.default_rng()
    x = np.concatenate(
        [
            np.linspace(-12.0, 12.0, 100_001, dtype=np.float32),
            rng.standard_normal(20_000).astype(np.float32) * 10.0 ** rng.uniform(-6, 1, 20_000),
            np.array(SPECIAL, dtype=np.float32),
        ]
    ).astype(np.float32)
    got = exe(x).astype(np.float64)
    want = np.tanh(x.astype(np.float64))
    ulps = np.abs(got - want) / np.spacing(np.abs(want).astype(np.float32))
    nonzero = want != 0
    assert ulps[nonzero].max() <= 5, f"{ulps.max():.1f} ulp at x = {x[ulps.argmax()]}"
    assert (np.sign(got) == np.sign(want)).all()


def test_tanh_of_specials(target):
    exe = compile_for(PROGRAM, target)
    x = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1000.0, -1000.0], dtype=np.float32)
    got = exe(x)
    assert got[0] == 1.0 and got[1] == -1.0 and np.isnan(got[2])
    assert got[3] == 0.0 and not np.signbit(got[3]) and got[4] == 0.0 and np.signbit(got[4])
    assert got[5] == 1.0 and got[6] == -1.0
