"""
f16 (and bf16) contractions on the tensor cores (`convert-contractions-to-gpu`'s 16-bit
kernel: `mma.sync.m16n8k16`, `ldmatrix`, f32 accumulators) against float64 references
of the same 16-bit inputs, fresh random ones each run: odd sizes (each element through
registers), aligned ones (the `cp.async` pipeline), batches, fused epilogues, dynamic
dims. bf16 skips while convert-to-llvm has no type for it. Without a GPU each
program's PTX is assembled with ptxas for sm_80 and sm_90a (where ptxas is installed)
and the numerics skip with the reason.

Tolerance (`_close`): the products, sums and fused epilogue are f32, so what remains is
the one rounding of the result to the output type, well within 2 units in the last
place of the largest output, 2^-10 relative for f16 and 2^-7 for bf16, and as much
relative to each element.
"""

import numpy as np
import pytest

from tests.gpu.targets import assemble, gpu_unavailable_reason

pytestmark = pytest.mark.gpu

RELATIVE = {"f16": 2.0**-10, "bf16": 2.0**-7}

MATMUL = """
func.func @main(%a: tensor<?x?xT>, %b: tensor<?x?xT>) -> tensor<?x?xT> {
  %c = ml.matmul %a, %b : (tensor<?x?xT>, tensor<?x?xT>) -> tensor<?x?xT>
  func.return %c : tensor<?x?xT>
}
"""

BATCHED = """
func.func @main(%a: tensor<?x?x?xT>, %b: tensor<?x?x?xT>) -> tensor<?x?x?xT> {
  %c = ml.matmul %a, %b : (tensor<?x?x?xT>, tensor<?x?x?xT>) -> tensor<?x?x?xT>
  func.return %c : tensor<?x?x?xT>
}
"""

# Epilogue fusion needs a static K (it tests for the last K iteration).
BIAS_RELU_RESIDUAL = """
func.func @main(%a: tensor<?x72xT>, %b: tensor<72x?xT>, %bias: tensor<?xT>,
                %r: tensor<?x?xT>) -> tensor<?x?xT> {
  %c = ml.matmul %a, %b : (tensor<?x72xT>, tensor<72x?xT>) -> tensor<?x?xT>
  %s = ml.add %c, %bias : (tensor<?x?xT>, tensor<?xT>) -> tensor<?x?xT>
  %t = ml.relu %s : (tensor<?x?xT>) -> tensor<?x?xT>
  %u = ml.add %t, %r : (tensor<?x?xT>, tensor<?x?xT>) -> tensor<?x?xT>
  func.return %u : tensor<?x?xT>
}
"""

_COMPILED: dict[str, object] = {}


def _dtype(element: str):
    if element == "f16":
        return np.float16
    return pytest.importorskip("ml_dtypes").bfloat16


def compiled(program: str, element: str):
    """`program` in `element` for cuda, once; without a GPU: PTX assembled, then a skip."""
    import mlc
    from mlc.diagnostics import CompileError

    source = program.replace("xT>", f"x{element}>")
    if source not in _COMPILED:
        reason = gpu_unavailable_reason()
        try:
            if reason is None:
                _COMPILED[source] = mlc.compile(source, target="cuda")
            else:
                from mlc.backend.ptx import to_ptx

                module = mlc.compile(source, target="cuda", emit="nvvm", sm="sm_80")
                ptx = to_ptx(module, "sm_80")
                assert "mma.sync.aligned.m16n8k16" in ptx and "ldmatrix" in ptx
                for sm in ("sm_80", "sm_90a"):
                    assemble(ptx, sm)
                pytest.skip(f"{reason} (16-bit tensor-core PTX assembled with ptxas)")
        except pytest.skip.Exception as skipped:
            _COMPILED[source] = skipped
        except CompileError as error:  # bf16 through convert-to-llvm comes with its own change
            if "no LLVM type for element type bf16" not in str(error):
                raise
            _COMPILED[source] = pytest.skip.Exception(f"bf16 does not lower to LLVM yet: {error}")
    found = _COMPILED[source]
    if isinstance(found, BaseException):
        raise found
    return found


def _random(rng, element, *shape):
    return rng.standard_normal(shape).astype(_dtype(element))


def _close(got, want, element):
    """Within 2 units in the last place of the output type (module docstring)."""
    ulp = RELATIVE[element]
    got = np.asarray(got).astype(np.float64)
    scale = max(1.0, np.abs(want).max(initial=0.0))
    np.testing.assert_allclose(got, want, rtol=2 * ulp, atol=2 * ulp * scale)


def _f64(x):
    return np.asarray(x).astype(np.float64)


ELEMENTS = ["f16", "bf16"]


# Odd sizes go element by element through registers; K and N multiples of 8 (16-byte
# rows) take the cp.async pipeline, with M prime, K shorter than one slice or not a
# multiple of its depth; one output; empty dims; big grids (9 x 32 tiles of 128x128,
# launched 8 tile rows at a time: the last group has one row) both ways.
@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize(
    "m, k, n",
    [(1, 1, 1), (3, 5, 7), (129, 9, 127), (200, 33, 300), (257, 100, 65), (997, 328, 256),
     (131, 8, 72), (509, 40, 136), (1, 8, 8), (64, 1000, 64), (5, 0, 6), (0, 8, 8),
     (1100, 40, 4000), (1037, 9, 4001)],
)  # fmt: skip
def test_matmul(element, m, k, n):
    exe = compiled(MATMUL, element)
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, k), _random(rng, element, k, n)
    _close(exe(a, b), _f64(a) @ _f64(b), element)


@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize(
    "batch, m, k, n", [(1, 130, 17, 129), (3, 65, 40, 200), (5, 1, 3, 1), (2, 128, 64, 128)]
)
def test_batched_matmul(element, batch, m, k, n):
    exe = compiled(BATCHED, element)
    rng = np.random.default_rng()
    a, b = _random(rng, element, batch, m, k), _random(rng, element, batch, k, n)
    _close(exe(a, b), _f64(a) @ _f64(b), element)


@pytest.mark.parametrize("element", ELEMENTS)
@pytest.mark.parametrize("m, n", [(131, 129), (7, 300), (256, 256)])
def test_bias_relu_residual_epilogue(element, m, n):
    exe = compiled(BIAS_RELU_RESIDUAL, element)
    rng = np.random.default_rng()
    a, b = _random(rng, element, m, 72), _random(rng, element, 72, n)
    bias, r = _random(rng, element, n), _random(rng, element, m, n)
    want = np.maximum(_f64(a) @ _f64(b) + _f64(bias), 0.0) + _f64(r)
    _close(exe(a, b, bias, r), want, element)
