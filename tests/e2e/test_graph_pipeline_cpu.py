"""
The graph passes change how a program computes, not what: every example and every
program of `graph_programs` gives the same results compiled with the `mlc` stage and
compiled with `graph_passes=False`, on fresh random inputs. Reassociated products and
folded constants round differently, hence the tolerance. The small programs also run on
`cuda`; the examples' GPU numerics and PTX are tests/gpu/test_cuda_runtime.py's.
"""

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType

from mlc.backend.runtime import dtype_of
from mlc.ir import parse_module
from tests.e2e.graph_programs import EXAMPLES, PROGRAMS
from tests.gpu.targets import compile_all, compile_for

SEED = np.random.SeedSequence().entropy
SOURCES = {path.name: path.read_text() for path in EXAMPLES} | PROGRAMS
DYNAMIC_SIZE = 3  # the size given to every dynamic argument dim


def random_inputs(source: str, rng: np.random.Generator) -> list[np.ndarray]:
    module = parse_module(source)
    entry = next(op for op in module.walk() if isinstance(op, func.FuncOp))
    inputs: list[np.ndarray] = []
    for t in entry.function_type.inputs.data:
        assert isinstance(t, TensorType)
        shape = [d if d >= 0 else DYNAMIC_SIZE for d in t.get_shape()]
        dtype = dtype_of(t.element_type)  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType]
        if np.issubdtype(dtype, np.integer):
            inputs.append(rng.integers(-5, 6, size=shape).astype(dtype))
        else:
            inputs.append(rng.uniform(-1, 1, size=shape).astype(dtype))
    return inputs


def as_tuple(result: object) -> tuple[np.ndarray, ...]:
    return result if isinstance(result, tuple) else (result,)  # pyright: ignore[reportUnknownVariableType]


@pytest.mark.parametrize(
    ("name", "target"),
    [(name, "cpu") for name in sorted(SOURCES)]
    + [pytest.param(name, "cuda", marks=pytest.mark.gpu) for name in sorted(PROGRAMS)],
)
def test_graph_passes_keep_the_numerics(name: str, target: str):
    source = SOURCES[name]
    rng = np.random.default_rng([SEED, sum(map(ord, name))])
    inputs = random_inputs(source, rng)
    optimized, plain = compile_all(
        lambda: compile_for(source, target), lambda: compile_for(source, target, graph_passes=False)
    )
    optimized, plain = as_tuple(optimized(*inputs)), as_tuple(plain(*inputs))
    assert len(optimized) == len(plain)
    for got, want in zip(optimized, plain, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        message = f"{name} (seed {SEED})"
        if np.issubdtype(want.dtype, np.floating):
            # Reassociated sums differ by rounding relative to the terms summed, not to
            # each result: on the transformer block (outputs up to ~200) by up to 1.1e-5
            # of the largest output element by element (40 seeds), 2.2e-6 in norm.
            scale = float(np.abs(want).max()) if want.size else 1.0
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=3e-5 * scale, err_msg=message)
            finite = np.isfinite(want)  # a NaN or inf matches itself (assert_allclose)
            got64, want64 = (np.asarray(v[finite], np.float64) for v in (got, want))
            assert np.linalg.norm(got64 - want64) <= 1e-5 * (np.linalg.norm(want64) or 1.0), message
        else:
            np.testing.assert_array_equal(got, want, err_msg=message)
