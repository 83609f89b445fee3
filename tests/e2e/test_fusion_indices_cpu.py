"""
Fusion of generics whose bodies read their loop indices (`linalg.index`): what
`convert-ml-to-linalg` emits where an operand broadcasts at run time (a dynamic dim that
may be 1), fused as a producer, as a consumer, and as an epilogue applied under an
`scf.if` inside a reduction (where the index must still be read in the generic's block).

Each program is compiled with the graph passes and without, for the CPU and for `cuda`,
and both run on fresh random inputs against numpy.
"""

# ruff: noqa: E501  (IR lines as they are written in .mlir files)

import numpy as np
import pytest

from tests.gpu.targets import compile_all, compile_for

SEED = np.random.SeedSequence().entropy


@pytest.fixture
def rng(request: pytest.FixtureRequest) -> np.random.Generator:
    return np.random.default_rng([SEED, abs(hash(request.node.name))])


def both(text: str, target: str):
    """`text` compiled with the default pipeline and with `graph_passes=False`."""
    return compile_all(
        lambda: compile_for(text, target),
        lambda: compile_for(text, target, graph_passes=False),
    )


def check(exes, args, want, rtol=1e-5):
    for exe in exes:
        np.testing.assert_allclose(exe(*args), want, rtol=rtol, atol=1e-6, err_msg=f"seed {SEED}")


# The program: `reduce_sum` of a static tensor times a `tensor<?xf32>` argument.
REDUCE_TIMES_DYNAMIC = """
func.func @main(%a: tensor<3x4x{t}>, %x: tensor<?x{t}>) -> tensor<?x{t}> {{
  %s = ml.reduce_sum %a {{axes = array<i64: 0>, keepdims = false}} : (tensor<3x4x{t}>) -> tensor<4x{t}>
  %y = ml.mul %s, %x : (tensor<4x{t}>, tensor<?x{t}>) -> tensor<?x{t}>
  func.return %y : tensor<?x{t}>
}}
"""


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_reduction_times_dynamic_argument(rng, target, dtype):
    t = {"float32": "f32", "float64": "f64"}[dtype]
    exes = both(REDUCE_TIMES_DYNAMIC.format(t=t), target)
    for n in (4, 1):  # the dynamic dim equal, or broadcast
        a = rng.standard_normal((3, 4)).astype(dtype)
        x = rng.standard_normal((n,)).astype(dtype)
        check(exes, (a, x), a.sum(axis=0) * x)


# Index reads in a producer (x broadcast at run time), in its consumer (z), and in the
# epilogue they become of a reduction whose parallel dims are dynamic.
CHAIN = """
func.func @main(%a: tensor<5x?x7xf32>, %x: tensor<?xf32>, %c: tensor<7xf32>,
                %z: tensor<?x1xf32>) -> tensor<?x7xf32> {
  %s = ml.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<5x?x7xf32>) -> tensor<?x7xf32>
  %p = ml.add %x, %c : (tensor<?xf32>, tensor<7xf32>) -> tensor<7xf32>
  %m = ml.mul %s, %p : (tensor<?x7xf32>, tensor<7xf32>) -> tensor<?x7xf32>
  %w = ml.sub %m, %z : (tensor<?x7xf32>, tensor<?x1xf32>) -> tensor<?x7xf32>
  func.return %w : tensor<?x7xf32>
}
"""


def test_index_reads_in_producer_consumer_and_epilogue(rng, target):
    exes = both(CHAIN, target)
    for rows, xn, zn in ((6, 7, 6), (1, 1, 1), (13, 1, 13), (2, 7, 1)):
        a = rng.standard_normal((5, rows, 7)).astype("float32")
        x = rng.standard_normal((xn,)).astype("float32")
        c = rng.standard_normal((7,)).astype("float32")
        z = rng.standard_normal((zn, 1)).astype("float32")
        want = a.sum(axis=0) * (x + c) - z
        check(exes, (a, x, c, z), want, rtol=1e-4)


# The same with static rows: the producer, the product and the consumer all fuse into
# the reduction as one epilogue reading two loop indices.
STATIC_CHAIN = """
func.func @main(%a: tensor<5x6x7xf32>, %x: tensor<?x7xf32>, %c: tensor<6x7xf32>, %z: tensor<?x1xf32>) -> tensor<6x7xf32> {
  %s = ml.reduce_sum %a {axes = array<i64: 0>, keepdims = false} : (tensor<5x6x7xf32>) -> tensor<6x7xf32>
  %p = ml.add %x, %c : (tensor<?x7xf32>, tensor<6x7xf32>) -> tensor<6x7xf32>
  %m = ml.mul %s, %p : (tensor<6x7xf32>, tensor<6x7xf32>) -> tensor<6x7xf32>
  %w = ml.sub %m, %z : (tensor<6x7xf32>, tensor<?x1xf32>) -> tensor<6x7xf32>
  func.return %w : tensor<6x7xf32>
}
"""


def test_producer_and_consumer_indices_in_one_epilogue(rng, target):
    exes = both(STATIC_CHAIN, target)
    for xn, zn in ((6, 6), (1, 1), (1, 6), (6, 1)):
        a = rng.standard_normal((5, 6, 7)).astype("float32")
        x = rng.standard_normal((xn, 7)).astype("float32")
        c = rng.standard_normal((6, 7)).astype("float32")
        z = rng.standard_normal((zn, 1)).astype("float32")
        check(exes, (a, x, c, z), a.sum(axis=0) * (x + c) - z, rtol=1e-4)


INTEGER = """
func.func @main(%a: tensor<4x9xi32>, %x: tensor<?xi32>) -> tensor<9xi32> {
  %s = ml.reduce_max %a {axes = array<i64: 0>, keepdims = false} : (tensor<4x9xi32>) -> tensor<9xi32>
  %y = ml.add %s, %x : (tensor<9xi32>, tensor<?xi32>) -> tensor<9xi32>
  func.return %y : tensor<9xi32>
}
"""


def test_integer_epilogue_with_index(rng, target):
    exes = both(INTEGER, target)
    for n in (9, 1):
        a = rng.integers(-50, 50, (4, 9), dtype="int32")
        x = rng.integers(-50, 50, (n,), dtype="int32")
        for exe in exes:
            np.testing.assert_array_equal(exe(a, x), a.max(axis=0) + x)
