"""
`mlc.compile(..., precision=...)` and `mlc.jit(..., precision=...)` against float64.

The example programs (an MLP, a conv net, a pre-norm transformer block) run on fresh
random inputs with fan-in scaled weights, as trained networks have, and are compared
with the same program compiled in f64, by relative RMS error ||out - ref|| / ||ref||.
The tolerances are the documented ones (docs/precision.md); the interface stays f32.
"""

from functools import cache
from pathlib import Path

import numpy as np
import pytest

import mlc
from mlc import ops
from mlc.ir import parse_module
from tests.gpu.targets import compile_for, jit_for

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SEED = np.random.SeedSequence().entropy

# Relative RMS error each precision meets (docs/precision.md). tf32 computes f32 in
# full on the CPU; on the GPU it rounds contraction operands to 10 bits, as f16 does.
TOLERANCE = {"f32": 1e-5, "tf32": 5e-3, "f16": 5e-3, "bf16": 2e-2}


def tolerance(precision: str, target: str) -> float:
    return TOLERANCE["f32"] if precision == "tf32" and target == "cpu" else TOLERANCE[precision]


@cache
def example(name: str) -> str:
    return (EXAMPLES / f"{name}.mlir").read_text()


@cache
def reference(name: str):
    return mlc.compile(example(name).replace("f32", "f64"))


def inputs(name: str, rng: np.random.Generator, batch: int) -> list[np.ndarray]:
    """The first argument standard normal, weights scaled by their fan-in, and vectors
    (biases, norm scales, variances) in [0.5, 1.5)."""
    function = next(iter(parse_module(example(name)).ops))
    args = []
    for i, type_ in enumerate(function.function_type.inputs):  # pyright: ignore[reportAttributeAccessIssue]
        shape = [d if d >= 0 else batch for d in type_.get_shape()]
        if i == 0:
            args.append(rng.standard_normal(shape))
        elif len(shape) >= 2:
            fan_in = shape[0] if len(shape) == 2 else int(np.prod(shape[1:]))
            args.append(rng.standard_normal(shape) / np.sqrt(fan_in))
        else:
            args.append(rng.uniform(0.5, 1.5, shape))
    return args


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.linalg.norm(got - want) / np.linalg.norm(want))


CASES = [
    ("mlp", "f32"),
    ("mlp", "tf32"),
    ("mlp", "bf16"),
    ("mlp", "f16"),
    ("convnet", "bf16"),  # the larger models in the coarsest mode only (compile time)
    ("transformer_block", "bf16"),
]


@pytest.mark.parametrize(("name", "precision"), CASES, ids=[f"{n}-{p}" for n, p in CASES])
def test_example_meets_tolerance(target: str, name: str, precision: str) -> None:
    rng = np.random.default_rng([SEED, len(name), len(precision)])
    args = inputs(name, rng, batch=3)
    want = reference(name)(*args)
    exe = compile_for(example(name), target, precision=precision)
    got = exe(*[a.astype(np.float32) for a in args])
    assert got.dtype == np.float32, "the interface stays f32"
    error = relative_error(got, want)
    assert error <= tolerance(precision, target), f"{name} {precision}: {error} (seed {SEED})"
    if precision in ("bf16", "f16"):
        assert error > 0, "the 16-bit precision was not used"


def test_lower_precision_weights_are_folded() -> None:
    # A constant weight is converted at compile time: the program holds 16-bit weights.
    text = """
    func.func @main(%x: tensor<3x300xf32>) -> tensor<3x4xf32> {
      %w = arith.constant dense<0.25> : tensor<300x4xf32>
      %y = "ml.matmul"(%x, %w) : (tensor<3x300xf32>, tensor<300x4xf32>) -> tensor<3x4xf32>
      func.return %y : tensor<3x4xf32>
    }
    """
    module = mlc.compile(text, precision="bf16", emit="mlc")
    printed = mlc.print_module(module)
    assert "tensor<300x4xbf16>" in printed and "tensor<300x4xf32>" not in printed


def test_jit_precision(target: str) -> None:
    rng = np.random.default_rng([SEED, 7])
    x = rng.standard_normal((5, 33)).astype(np.float32)
    w = (rng.standard_normal((33, 17)) / np.sqrt(33)).astype(np.float32)

    @jit_for(target, precision="bf16")
    def layer(x, w):
        return ops.softmax(ops.relu(x @ w))

    got = layer(x, w)
    h = np.maximum(x.astype(np.float64) @ w.astype(np.float64), 0)
    want = np.exp(h - h.max(1, keepdims=True))
    want /= want.sum(1, keepdims=True)
    assert got.dtype == np.float32
    assert 0 < relative_error(got, want) <= TOLERANCE["bf16"], f"seed {SEED}"


def test_bad_precision_is_a_value_error() -> None:
    with pytest.raises(ValueError, match='precision must be one of "f32", "tf32", "bf16", "f16"'):
        mlc.compile(example("mlp"), precision="fp8")
    with pytest.raises(ValueError, match="precision must be one of"):
        mlc.jit(lambda x: x, precision="f64")
