"""
Every cast to and from f16, compiled by `mlc.compile`, against numpy bit for bit.

On the CPU the cases run in child processes, one after another in the same child until
one of them crashes: a conversion that LLVM lowers to a missing library call jumps to
address 0, and that must fail its own test, not kill pytest (the cases after it go on in
a fresh child). On `cuda` a missing function fails when the PTX is made, so it runs here.
Inputs are fresh random values plus the edge cases: every f16 bit pattern, the exact halfway points
between neighbouring f16 values and their neighbours (round-to-nearest-even),
subnormals, values that overflow to inf, NaN and inf where the source can hold them.
"""

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from mlc.dialects import ml
from tests.e2e.programs import program, tensor
from tests.gpu.targets import TARGETS, compile_for

ROOT = Path(__file__).resolve().parents[2]
SEED = np.random.SeedSequence().entropy
ALL_HALVES = np.arange(2**16, dtype=np.uint32).astype(np.uint16).view(np.float16)


def _halfway_cases(dtype: str) -> np.ndarray:
    """Every finite f16, the midpoints between neighbours, and the values just beside them."""
    finite = ALL_HALVES[np.isfinite(ALL_HALVES)]
    low = finite.astype(dtype)
    with np.errstate(over="ignore"):  # 65504 -> inf: the midpoint above it overflows
        high = np.nextafter(finite, np.float16(np.inf)).astype(dtype)
    middle = low / 2 + high / 2  # exact in f32 and f64
    middle = middle[np.isfinite(middle)]
    return np.concatenate(
        [
            low,
            middle,
            np.nextafter(middle, np.inf, dtype=dtype),
            np.nextafter(middle, -np.inf, dtype=dtype),
        ]
    )


def _float_source(rng: np.random.Generator, dtype: str) -> np.ndarray:
    info = np.finfo(dtype)
    scale = 10.0 ** rng.integers(-12, 8, 5000)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, info.max, -info.max, info.tiny, info.eps]
    special += [65504, 65519.99, 65520, -65520, 2.0**-24, 2.0**-25, 2.0**-26, 3 * 2.0**-26]
    values = [_halfway_cases(dtype), rng.standard_normal(5000) * scale, special]
    return np.concatenate([np.asarray(v, dtype=dtype) for v in values])


def _int_source(rng: np.random.Generator, dtype: str) -> np.ndarray:
    info = np.iinfo(dtype)
    edges = [info.min, info.max, 0, 1, -1, 2049, 2051, -2049, 4097, 65504, 65519, 65520, 99999]
    edges = [e for e in edges if info.min <= e <= info.max]
    values = rng.integers(info.min, info.max, 5000, endpoint=True, dtype=dtype)
    small = rng.integers(max(info.min, -70000), min(info.max, 70000), 5000, dtype=dtype)
    return np.concatenate([np.asarray(edges, dtype=dtype), values, small])


def _half_source(target: str) -> np.ndarray:
    """Every f16 the conversion is defined for (float -> int outside the range is not)."""
    if target in ("float32", "float64", "bool"):
        return ALL_HALVES.copy()
    finite = ALL_HALVES[np.isfinite(ALL_HALVES)]
    info = np.iinfo(target)
    wide = finite.astype(np.float64)
    return finite[(wide > info.min - 1) & (wide < info.max + 1)]


def _source(rng: np.random.Generator, source: str, target: str) -> np.ndarray:
    if source == "float16":
        return _half_source(target)
    if source == "bool":
        return rng.random(100) < 0.5
    if source.startswith("float"):
        return _float_source(rng, source)
    return _int_source(rng, source)


CHILD = """
import sys, numpy as np, mlc
from mlc.dialects import ml
from tests.e2e.programs import program, tensor
folder = sys.argv[1]
for case, target in zip(sys.argv[2::2], sys.argv[3::2]):
    x = np.load(f"{folder}/x{case}.npy")
    t = lambda dtype: tensor((x.size,), dtype, dynamic=True)
    m = program([t(x.dtype.name)], lambda v: ml.CastOp(v, t(target)))
    np.save(f"{folder}/y{case}.npy", mlc.compile(m)(x))
"""


def casts_in_children(cases: dict[int, tuple[np.ndarray, str]], folder: Path) -> dict[int, Any]:
    """
    `ml.cast` of each case's `x` to its target type, compiled and run in child processes:
    the cases in order in one child; when a child fails, the case it was at gets its error
    (a string) and the cases after it run in a new child. One child costs an interpreter
    and an import of mlc, more than a cast's compile.
    """
    results: dict[int, Any] = {}
    for case, (x, _) in cases.items():
        np.save(folder / f"x{case}.npy", x)
    pending = sorted(cases)
    while pending:
        arguments = [str(a) for case in pending for a in (case, cases[case][1])]
        done = subprocess.run(
            [sys.executable, "-c", CHILD, str(folder), *arguments],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        for case in pending:
            if (folder / f"y{case}.npy").exists():
                results[case] = np.load(folder / f"y{case}.npy")
        failed = [case for case in pending if case not in results]
        if failed:  # the first case without a result is the one the child was at
            message = f"child exited with {done.returncode}: {done.stderr[-2000:]}"
            results[failed[0]] = message if done.returncode else "child gave no result"
        pending = failed[1:]
    return results


@pytest.fixture(scope="module")
def cpu_casts(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Any]:
    """Every case of CASTS cast on the CPU, by index: the input and the result (or error)."""
    cases = {i: (case_input(i), target) for i, (_, target) in enumerate(CASTS)}
    results = casts_in_children(cases, tmp_path_factory.mktemp("half-casts"))
    return {i: (cases[i][0], results[i]) for i in cases}


def case_input(index: int) -> np.ndarray:
    source, target = CASTS[index]
    return _source(np.random.default_rng([SEED, index]), source, target)


def assert_same_bits(got: np.ndarray, want: np.ndarray, x: np.ndarray) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    if np.issubdtype(want.dtype, np.floating):
        same = got.view(f"u{want.itemsize}") == want.view(f"u{want.itemsize}")
        same |= np.isnan(got) & np.isnan(want)  # NaN payloads may differ
    else:
        same = got == want
    wrong = np.flatnonzero(~same)
    assert not wrong.size, (
        f"{wrong.size} of {x.size} differ (seed {SEED}), e.g. {x[wrong[:5]]!r}: "
        f"got {got[wrong[:5]]!r}, want {want[wrong[:5]]!r}"
    )


CASTS = [
    *[(s, "float16") for s in ["float64", "float32", "int8", "int32", "int64", "bool"]],
    *[("float16", t) for t in ["float64", "float32", "int8", "int32", "int64", "bool"]],
]


@pytest.mark.parametrize(("source", "target"), CASTS, ids=[f"{s}-{t}" for s, t in CASTS])
@pytest.mark.parametrize("device", TARGETS)
def test_half_cast_bit_exact(
    source: str, target: str, device: str, request: pytest.FixtureRequest
) -> None:
    index = CASTS.index((source, target))
    if device == "cpu":
        x, got = request.getfixturevalue("cpu_casts")[index]
        assert not isinstance(got, str), got
    else:
        x = case_input(index)
        vector = tensor((x.size,), source, dynamic=True)
        cast = program([vector], lambda v: ml.CastOp(v, tensor((x.size,), target, dynamic=True)))
        got = compile_for(cast, device)(x)
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(target)
    assert_same_bits(got, want, x)


def test_f64_to_f16_in_process():
    # The original crash, now safe to run here: a 2-D dynamic program, once compiled.
    import mlc
    from mlc.dialects import ml

    x = np.array([[1e-8, 2.0**-25, 65519.99], [65520.0, np.nan, -np.inf]])
    m = program(
        [tensor((2, 3), "float64", dynamic=True)],
        lambda v: ml.CastOp(v, tensor((2, 3), "float16", dynamic=True)),
    )
    with np.errstate(over="ignore"):
        assert_same_bits(mlc.compile(m)(x), x.astype(np.float16), x)
