"""
`mlc.compile(..., specialize=...)`: the guard of a function with dynamic input dims
(exact shapes and dtypes), its static builds (LRU-bounded, compiled after
`specialize_after` calls), their reuse from disk in a new process, and the one-line
errors for bad option values.
"""

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import mlc
from mlc.compiler import specialization
from mlc.compiler.errors import CompileError
from mlc.compiler.options import CompileOptions
from mlc.compiler.specialization import SpecializationWarning, SpecializingFunction
from mlc.diagnostics import Diagnostic

# `scale` is dynamic in its rows, `mix` in a dim other than the first and in two args.
PROGRAM = """
func.func @scale(%x: tensor<?x3xf32>, %k: tensor<3xf32>) -> tensor<?x3xf32> {
  %0 = ml.mul %x, %k : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  func.return %0 : tensor<?x3xf32>
}
func.func @mix(%a: tensor<2x?xf32>, %b: tensor<2x?xf32>) -> tensor<2x?xf32> {
  %0 = ml.add %a, %b : (tensor<2x?xf32>, tensor<2x?xf32>) -> tensor<2x?xf32>
  %1 = ml.relu %0 : (tensor<2x?xf32>) -> tensor<2x?xf32>
  func.return %1 : tensor<2x?xf32>
}
func.func @fixed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = ml.relu %x : (tensor<4xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
"""

K = np.array([1.0, -2.0, 0.5], np.float32)


def rows(n: int) -> np.ndarray:
    return np.random.default_rng(n).standard_normal((n, 3)).astype(np.float32)


def static_shapes(function: SpecializingFunction) -> list[tuple[int, ...]]:
    """The first argument's shape of each static build kept, least recently used first."""
    return [guard[0][1] for guard, f in function._static.items() if f is not function.dynamic]


def test_functions_with_dynamic_inputs_specialise_and_static_ones_stay():
    exe = mlc.compile(PROGRAM, specialize=True)
    assert isinstance(exe["scale"], SpecializingFunction)
    assert isinstance(exe["mix"], SpecializingFunction)
    assert not isinstance(exe["fixed"], SpecializingFunction)
    plain = mlc.compile(PROGRAM)
    assert not isinstance(plain["scale"], SpecializingFunction)  # the cached one, unwrapped


def test_a_module_given_as_ir_specialises_too():
    scale = mlc.compile(mlc.parse_module(PROGRAM), specialize=True)["scale"]
    x = rows(4)
    np.testing.assert_allclose(scale(x, K), x * K, rtol=1e-6)
    assert static_shapes(scale) == [(4, 3)]


def test_same_shapes_hit_the_static_build():
    scale = mlc.compile(PROGRAM, specialize=True)["scale"]
    x = rows(5)
    for _ in range(3):
        np.testing.assert_allclose(scale(x, K), x * K, rtol=1e-6)
    assert scale.cache_info() == (3, 0, 1)
    assert static_shapes(scale) == [(5, 3)]


def test_new_shapes_specialise_and_the_least_recently_used_goes():
    scale = mlc.compile(PROGRAM, specialize=2)["scale"]
    for n in (2, 5, 2, 7):
        x = rows(n)
        np.testing.assert_allclose(scale(x, K), x * K, rtol=1e-6)
    assert static_shapes(scale) == [(2, 3), (7, 3)]  # 5 was used least recently
    assert scale.cache_info().variants == 2


def test_a_dynamic_dim_other_than_the_first():
    mix = mlc.compile(PROGRAM, specialize=True)["mix"]
    rng = np.random.default_rng(0)
    for n in (3, 6):
        a, b = rng.standard_normal((2, 2, n), dtype=np.float32)
        np.testing.assert_allclose(mix(a, b), np.maximum(a + b, 0), rtol=1e-6)
    assert sorted(static_shapes(mix)) == [(2, 3), (2, 6)]


def test_shapes_run_the_dynamic_build_until_seen_often_enough():
    scale = mlc.compile(PROGRAM, specialize=4, specialize_after=3)["scale"]
    # Shapes no other test compiles: a static build on disk would be found at once.
    for n in range(30, 40):  # a stream of distinct shapes compiles nothing
        scale(rows(n), K)
    assert scale.cache_info() == (0, 10, 0)
    x = rows(41)
    for _ in range(3):
        np.testing.assert_allclose(scale(x, K), x * K, rtol=1e-6)
    assert scale.cache_info() == (1, 12, 1)  # the third call compiled and ran it


def test_a_dtype_the_program_does_not_take_fails_as_without_specialising():
    scale = mlc.compile(PROGRAM, specialize=True)["scale"]
    with pytest.raises(TypeError, match="dtype") as specialising:
        scale(rows(3).astype(np.float64), K)
    with pytest.raises(TypeError) as dynamic:
        scale.dynamic(rows(3).astype(np.float64), K)
    assert str(specialising.value) == str(dynamic.value)
    assert scale.cache_info().variants == 0


def test_the_guard_tells_dtypes_apart():
    scale = mlc.compile(PROGRAM, specialize=True)["scale"]
    x = rows(3)
    assert scale.guard([x, K]) != scale.guard([x.astype(np.float64), K])
    assert scale.guard([x.tolist(), K]) is None  # read by the dynamic build's check
    assert scale.guard([x]) is None


def test_wrong_arguments_are_the_dynamic_builds_errors():
    scale = mlc.compile(PROGRAM, specialize=True)["scale"]
    with pytest.raises(TypeError, match="takes 2 argument"):
        scale(rows(3))
    with pytest.raises(ValueError, match="argument 1"):
        scale(rows(3), np.ones(4, np.float32))
    with pytest.raises(TypeError, match="expected a numpy array"):
        scale(rows(3).tolist(), K)
    assert scale.cache_info().variants == 0


def test_a_static_build_that_fails_warns_once_and_runs_dynamic(monkeypatch):
    def broken(*_):
        raise CompileError([Diagnostic("error", "no static build today")])

    monkeypatch.setattr(specialization, "static_source", broken)
    scale = mlc.compile(PROGRAM, specialize=True)["scale"]
    x = rows(9)
    warning = r"no static build of @scale for <f4\[9x3\], <f4\[3\] \(.*no static build today"
    with pytest.warns(SpecializationWarning, match=warning):
        np.testing.assert_allclose(scale(x, K), x * K, rtol=1e-6)
    np.testing.assert_allclose(scale(x, K), x * K, rtol=1e-6)  # no second warning
    assert scale.cache_info() == (0, 2, 0)


BAD = [
    (dict(specialize=-1), "specialize must be True, False or a number"),
    (dict(specialize="yes"), "specialize must be True, False or a number"),
    (dict(specialize=1.5), "specialize must be True, False or a number"),
    (dict(specialize=True, specialize_after=0), "specialize_after must be a number of calls"),
    (dict(specialize=True, specialize_after=True), "specialize_after must be a number"),
    (dict(specialize=True, emit="linalg"), "specialize applies to executables"),
]


@pytest.mark.parametrize("kwargs, message", BAD)
def test_bad_values_are_one_line_value_errors(kwargs, message):
    with pytest.raises(ValueError, match=message) as info:
        mlc.compile(PROGRAM, **kwargs)
    assert "\n" not in str(info.value)


def test_the_environment_sets_the_default(monkeypatch):
    monkeypatch.setenv("MLC_SPECIALIZE", "3")
    monkeypatch.setenv("MLC_SPECIALIZE_AFTER", "2")
    options = CompileOptions.of("cpu")
    assert (options.specialize, options.specialize_after) == (3, 2)
    assert CompileOptions.of("cpu", specialize=False).specialize == 0
    monkeypatch.setenv("MLC_SPECIALIZE", "on")
    assert CompileOptions.of("cpu").specialize == 4
    monkeypatch.setenv("MLC_SPECIALIZE", "lots")
    with pytest.raises(ValueError, match="MLC_SPECIALIZE must be"):
        CompileOptions.of("cpu")
    monkeypatch.setenv("MLC_SPECIALIZE", "0")
    monkeypatch.setenv("MLC_SPECIALIZE_AFTER", "0")
    with pytest.raises(ValueError, match="MLC_SPECIALIZE_AFTER must be"):
        CompileOptions.of("cpu")


def test_specialising_is_not_in_the_cache_key():
    plain, specialising = CompileOptions.of("cpu"), CompileOptions.of("cpu", specialize=True)
    assert plain.pipeline_text() == specialising.pipeline_text()


NEW_PROCESS = """
import numpy as np, mlc
scale = mlc.compile(open({path!r}).read(), specialize=True, specialize_after=5)["scale"]
x = np.ones((13, 3), np.float32)
np.testing.assert_allclose(scale(x, np.float32([1, 2, 3])), x * [1, 2, 3])
print(tuple(scale.cache_info()))
"""


def test_a_new_process_reuses_the_static_build_from_disk(tmp_path: Path):
    path = tmp_path / "program.mlir"
    path.write_text(PROGRAM)
    scale = mlc.compile(PROGRAM, specialize=True)["scale"]
    scale(np.ones((13, 3), np.float32), K)  # compiled here, kept on disk
    script = textwrap.dedent(NEW_PROCESS.format(path=str(path)))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    # Its first call with those shapes ran the static build, though it waits for five.
    assert done.stdout.strip() == "(1, 0, 1)"
