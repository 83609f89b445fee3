"""autotune-tiles: candidates, the per-machine record, the pass, and measured compiles."""

import json

import numpy as np
import pytest
from xdsl.dialects import test as test_dialect
from xdsl.dialects.builtin import DenseArrayBase, i64
from xdsl.dialects.linalg.ops import GenericOp

import mlc
from mlc import pipeline, tuning
from mlc.compiler.options import CompileOptions
from mlc.ir import parse_module
from mlc.lowering.cpu import autotune_tiles
from mlc.lowering.cpu.linalg_tile import TILES_ATTR, marked_tiles
from mlc.lowering.support.op_walk import walk_ops
from mlc.registry import pass_factories
from mlc.tiling_model import Host, MatmulTiles, matmul_tiles, tile_candidates

AVX512 = Host(vector_bits=512, vector_registers=32)
AVX2 = Host(vector_bits=256, vector_registers=16)


def _matmul(m: int, k: int, n: int, dtype: str = "f32") -> str:
    x, w, y = (f"tensor<{a}x{b}x{dtype}>" for a, b in ((m, k), (k, n), (m, n)))
    return f"""
func.func @main(%x: {x}, %w: {w}) -> {y} {{
  %y = ml.matmul %x, %w : ({x}, {w}) -> {y}
  func.return %y : {y}
}}"""


def _marks(text: str, cache: str, measure: bool = True) -> list[list[int]]:
    module = parse_module(text)
    options = f'autotune-tiles{{cache="{cache}" measure={str(measure).lower()}}}'
    pipeline.run_pipeline(module, f"convert-ml-to-linalg,bufferize,{options}", False)
    return [
        [int(v) for v in mark.get_values()]
        for op in walk_ops(module)
        if isinstance(op, GenericOp)
        and isinstance(mark := op.attributes.get(TILES_ATTR), DenseArrayBase)
    ]


@pytest.mark.parametrize("machine", [AVX512, AVX2], ids=["avx512", "avx2"])
@pytest.mark.parametrize("k", [None, 12, 300, 4096])
def test_candidates_start_with_the_model_and_fit_the_registers(machine: Host, k: int | None):
    model = matmul_tiles(4, machine)
    found = tile_candidates(model, k, machine)
    assert found[0] == model
    assert len(found) == len(set(found)) > 1
    for tiles in found:
        accumulators = tiles.mr * tiles.nr // tiles.vector
        assert accumulators + 3 <= machine.vector_registers
        assert tiles.nr == model.nr and tiles.vector == model.vector
        assert tiles.kc >= 16 and tiles.mc % tiles.mr == 0
        if k is not None:
            assert tiles.kc <= max(k, model.kc)


def test_a_mark_that_is_no_blocking_reads_as_none():
    op = test_dialect.TestOp()
    assert marked_tiles(op) is None
    op.attributes[TILES_ATTR] = DenseArrayBase.from_list(i64, [2, 8, 4, 4, 4])
    assert marked_tiles(op) == MatmulTiles(2, 8, 4, 4, 4)
    for bad in ([2, 8, 4, 4], [2, 6, 4, 4, 4], [0, 8, 4, 4, 4]):
        op.attributes[TILES_ATTR] = DenseArrayBase.from_list(i64, bad)
        assert marked_tiles(op) is None


def test_the_record_survives_damage_and_merges(tmp_path):
    file = tmp_path / "tuning.json"
    assert tuning.recorded(file) == {}
    file.write_text("{not json")
    assert tuning.recorded(file) == {}
    file.write_text(json.dumps({"a": [1, 2], "b": "x", "c": [0, 1], "d": [True]}))
    assert tuning.recorded(file) == {"a": [1, 2]}
    tuning.record({"e": [3]}, file)
    assert tuning.recorded(file) == {"a": [1, 2], "e": [3]}
    tuning.forget(file)
    assert not file.exists()


def test_a_recorded_choice_is_applied_without_measuring(tmp_path, monkeypatch):
    cache = str(tmp_path / "tuning.json")
    text = _matmul(24, 36, 40)
    first = _marks(text, cache)
    assert len(first) == 1 and len(first[0]) == 5

    def no_measuring(*_):
        raise AssertionError("measured a layer the record covers")

    monkeypatch.setattr(autotune_tiles, "measure", no_measuring)
    assert _marks(text, cache) == first
    assert _marks(text, str(tmp_path / "none.json"), measure=False) == []


def _layer(text: str) -> tuple[object, autotune_tiles.Layer]:
    """The bufferized module of `text` and its one tunable layer."""
    module = mlc.compile(text, emit="linalg")
    pipeline.run_pipeline(module, "bufferize", False)
    layers = [
        layer
        for op in walk_ops(module)
        if isinstance(op, GenericOp) and (layer := autotune_tiles.tunable(op)) is not None
    ]
    assert len(layers) == 1
    return module, layers[0]


def test_the_record_holds_the_measured_winner(tmp_path, monkeypatch):
    """The choice recorded and marked is the candidate `measure` picks."""
    cache = tmp_path / "tuning.json"
    text = _matmul(24, 36, 40)
    _, layer = _layer(text)
    candidates = tile_candidates(layer.tiles, layer.depth)
    monkeypatch.setattr(autotune_tiles, "measure", lambda standalone, found, ctx: len(found) - 1)
    winner = candidates[-1]
    expected = [winner.mr, winner.nr, winner.kc, winner.mc, winner.vector]
    assert _marks(text, str(cache)) == [expected]
    assert list(tuning.recorded(cache).values()) == [expected]


def test_layers_equal_but_for_their_weights_share_a_record():
    """Two programs whose layer differs only in its weight's values key one choice."""
    rng = np.random.default_rng()
    keys = []
    for _ in range(2):
        module, layer = _layer(_matmul_with_weight(rng.standard_normal((36, 40))))
        standalone = autotune_tiles.Standalone(layer, module)  # pyright: ignore[reportArgumentType]
        assert standalone.globals, "the weight is copied into the standalone program"
        keys.append(standalone.key(2))
    assert keys[0] == keys[1]
    assert keys[0] != standalone.key(1)


def _matmul_with_weight(w: np.ndarray) -> str:
    rows = ", ".join("[" + ", ".join(f"{v:.6e}" for v in row) + "]" for row in w)
    return f"""
func.func @main(%x: tensor<24x36xf32>) -> tensor<24x40xf32> {{
  %w = arith.constant dense<[{rows}]> : tensor<36x40xf32>
  %y = ml.matmul %x, %w : (tensor<24x36xf32>, tensor<36x40xf32>) -> tensor<24x40xf32>
  func.return %y : tensor<24x40xf32>
}}"""


@pytest.mark.parametrize(("m", "k", "n"), [(37, 53, 45), (8, 200, 96)])
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_autotuned_matmuls_match_numpy(tmp_path, monkeypatch, m, k, n, dtype):
    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path))
    exe = mlc.compile(_matmul(m, k, n, dtype), autotune=True)
    rng = np.random.default_rng()
    x = rng.standard_normal((m, k)).astype(dtype.replace("f", "float"))
    w = rng.standard_normal((k, n)).astype(x.dtype)
    np.testing.assert_allclose(exe(x, w), x @ w, rtol=1e-4, atol=1e-4)
    assert len(tuning.recorded(tuning.record_path())) == 1


def test_an_autotuned_convolution_matches_numpy(tmp_path, monkeypatch):
    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path))
    text = """
func.func @main(%x: tensor<2x5x11x9xf32>, %w: tensor<12x5x3x3xf32>) -> tensor<2x12x9x7xf32> {
  %y = ml.conv2d %x, %w : (tensor<2x5x11x9xf32>, tensor<12x5x3x3xf32>) -> tensor<2x12x9x7xf32>
  func.return %y : tensor<2x12x9x7xf32>
}"""
    exe = mlc.compile(text, autotune=True)
    rng = np.random.default_rng()
    x = rng.standard_normal((2, 5, 11, 9)).astype(np.float32)
    w = rng.standard_normal((12, 5, 3, 3)).astype(np.float32)
    want = np.zeros((2, 12, 9, 7), np.float32)
    for i in range(3):
        for j in range(3):
            want += np.einsum("nchw,oc->nohw", x[:, :, i : i + 9, j : j + 7], w[:, :, i, j])
    np.testing.assert_allclose(exe(x, w), want, rtol=1e-4, atol=1e-4)
    assert len(tuning.recorded(tuning.record_path())) == 1, "the convolution was tuned"


def test_the_option_puts_the_pass_before_linalg_tile(monkeypatch):
    monkeypatch.delenv("MLC_AUTOTUNE", raising=False)
    assert "autotune-tiles" not in CompileOptions.of().stage_text("loops")
    tuned = CompileOptions.of(autotune=True).stage_text("loops")
    assert tuned.index("bufferize,autotune-tiles,") < tuned.index("linalg-tile")
    monkeypatch.setenv("MLC_AUTOTUNE", "1")
    assert CompileOptions.of().autotune and not CompileOptions.of(autotune=False).autotune
    assert CompileOptions.of().pipeline_text() != CompileOptions.of(autotune=False).pipeline_text()


def test_candidates_are_lowered_as_the_pipeline_lowers_the_program():
    rest = (
        pipeline.STAGES["loops"].partition("autotune-tiles,")[2]
        or (pipeline.STAGES["loops"].partition("bufferize,")[2])
    )
    names = [*rest.split(","), pipeline.STAGES["llvm"]]
    assert [lowering.name for lowering in tuning.LOWERING] == names
    factories = pass_factories()  # the classes the pipeline runs under those names
    assert list(tuning.LOWERING) == [factories[name]() for name in names]
