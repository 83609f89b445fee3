"""
The on-disk cache of compiled modules: hits across processes, survives corrupted and
truncated entries, concurrent writers, an unwritable folder, `MLC_CACHE=0`, pruning.
"""

import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import mlc
from mlc import compiler
from mlc.backend import cache, jit
from mlc.backend.compiled import CompiledObject
from mlc.compiler import executable_cache
from mlc.compiler.options import CompileOptions, source_cache_key
from mlc.compiler.source import Source

PROGRAM = """
func.func @main(%x: tensor<?x3xf32>, %y: tensor<3xf32>) -> tensor<?x3xf32> {
  %s = ml.add %x, %y : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
  %r = ml.relu %s : (tensor<?x3xf32>) -> tensor<?x3xf32>
  func.return %r : tensor<?x3xf32>
}
"""


@pytest.fixture
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh cache folder and an empty in-memory cache, so `compile` goes to disk."""
    jit._initialize()  # the runtime's own entries go to the default folder, not this one
    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("MLC_CACHE", raising=False)
    executable_cache.clear()
    yield tmp_path
    executable_cache.clear()


def entries(folder: Path) -> list[Path]:
    return sorted(folder.glob(f"*{cache.SUFFIX}"))


def check_runs(exe: mlc.Executable) -> None:
    rng = np.random.default_rng()
    x = rng.standard_normal((5, 3)).astype(np.float32)
    y = rng.standard_normal(3).astype(np.float32)
    np.testing.assert_allclose(exe(x, y), np.maximum(x + y, 0), rtol=1e-6)


def source_key(src: object) -> str:
    """The cache key of `src` compiled for the CPU with the default options."""
    data = Source.of(src).data()
    assert data is not None
    return source_cache_key(data, CompileOptions())


def compile_fresh() -> mlc.Executable:
    """Compile `PROGRAM` as a new process would: nothing in memory."""
    executable_cache.clear()
    return mlc.compile(PROGRAM)


def test_second_compile_loads_from_disk(cache_dir: Path):
    first = compile_fresh()
    assert not first.from_cache and len(entries(cache_dir)) == 1
    second = compile_fresh()
    assert second.from_cache and second is not first
    check_runs(second)
    assert "define" in second.llvm_ir  # the optimised IR comes back from the bitcode
    assert "stage llvm" in first.compile_times and "stage llvm" not in second.compile_times


def test_hit_in_a_new_process(cache_dir: Path):
    compile_fresh()
    key = source_key(PROGRAM)
    script = (
        "import json, sys, mlc\n"
        "from mlc.compiler.options import CompileOptions, source_cache_key\n"
        "from mlc.compiler.source import Source\n"
        "source = sys.stdin.read()\n"
        "key = source_cache_key(Source.of(source).data(), CompileOptions())\n"
        "exe = mlc.compile(source)\n"
        "print(json.dumps({'hit': exe.from_cache, 'key': key}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], input=PROGRAM, capture_output=True, text=True, check=True
    )
    result = json.loads(done.stdout)
    # a miss says which: another key (the options differ), or an entry not found
    assert result["key"] == key, "the new process keys the source otherwise"
    assert result["hit"], f"no usable entry for the key; the folder holds {entries(cache_dir)}"


def test_hit_on_a_module_in_a_new_process_brings_its_derived_constants(
    two_new_processes: list[dict],
):
    # A module (no source text: the entry is keyed by its IR) whose weight the matmul
    # kernel packs at compile time into a new constant: a later process that imports
    # the same model makes the weight but never the packed panels, so the entry must
    # bring them.
    runs = [run["module"] for run in two_new_processes]
    assert runs == [{"hit": False, "ok": True}, {"hit": True, "ok": True}]


@pytest.mark.parametrize("damage", ["truncate", "flip", "empty", "garbage"])
def test_damaged_entry_is_recompiled(cache_dir: Path, damage: str):
    compile_fresh()
    (path,) = entries(cache_dir)
    data = bytearray(path.read_bytes())
    if damage == "truncate":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data[len(data) // 3] ^= 0x40
    elif damage == "empty":
        data = bytearray()
    else:
        data = bytearray(b"\x7fELF" + os.urandom(300))
    path.write_bytes(data)
    exe = compile_fresh()
    assert not exe.from_cache
    check_runs(exe)
    assert compile_fresh().from_cache  # rewritten whole


def test_disabled_by_environment(cache_dir: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MLC_CACHE", "0")
    check_runs(compile_fresh())
    assert not compile_fresh().from_cache
    assert not entries(cache_dir)


def test_unwritable_folder_still_compiles(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("MLC_CACHE_DIR", str(blocker / "mlc"))
    check_runs(compile_fresh())
    executable_cache.clear()


def test_thread_count_is_part_of_the_key(cache_dir: Path, monkeypatch: pytest.MonkeyPatch):
    """`linalg-tile` splits loops statically for the thread count: one entry per count."""
    monkeypatch.setenv("MLC_NUM_THREADS", "1")
    one = compile_fresh()
    monkeypatch.setenv("MLC_NUM_THREADS", "2")
    two = compile_fresh()
    assert not one.from_cache and not two.from_cache and len(entries(cache_dir)) == 2
    check_runs(two)
    monkeypatch.setenv("MLC_NUM_THREADS", "1")
    assert mlc.compile(PROGRAM) is not two  # nor does the in-memory cache mix them up
    assert compile_fresh().from_cache


def test_key_depends_on_program_target_and_options():
    base = cache.key("ir", "cpu", "a,b")
    assert base == cache.key("ir", "cpu", "a,b")
    assert len({base, cache.key("ir2", "cpu", "a,b"), cache.key("ir", "gpu", "a,b")}) == 3
    assert cache.key("ir", "cpu", "a,b,c") != base


def test_decode_rejects_every_truncation_and_corruption():
    weights = {"w_1": np.arange(12, dtype=np.float32).reshape(3, 4), "b_2": np.ones(5, np.int64)}
    entry = cache.Entry(CompiledObject(os.urandom(200), os.urandom(100)), b'{"f": 1}', weights)
    data = cache.encode(entry)
    decoded = cache.decode(data)
    assert decoded is not None
    assert (decoded.compiled, decoded.program) == (entry.compiled, entry.program)
    assert decoded.resources.keys() == weights.keys()
    for handle, array in weights.items():
        assert decoded.resources[handle].dtype == array.dtype
        np.testing.assert_array_equal(decoded.resources[handle], array)
    assert all(cache.decode(data[:n]) is None for n in range(0, len(data), 3))
    for i in range(0, len(data), 7):
        flipped = bytearray(data)
        flipped[i] ^= 1
        assert cache.decode(bytes(flipped)) is None


def test_concurrent_writers_never_expose_half_an_entry(cache_dir: Path):
    objects = [CompiledObject(os.urandom(50_000), bytes([i]) * 1000) for i in range(4)]
    seen: list[CompiledObject | None] = []

    def write(compiled: CompiledObject) -> None:
        for _ in range(20):
            cache.store("k", cache.Entry(compiled))

    def read() -> None:
        for _ in range(200):
            entry = cache.load("k")
            seen.append(entry.compiled if entry else None)

    threads = [threading.Thread(target=write, args=(o,)) for o in objects]
    threads.append(threading.Thread(target=read))
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert all(compiled is None or compiled in objects for compiled in seen)
    last = cache.load("k")
    assert last is not None and last.compiled in objects
    assert not list(cache_dir.glob(".*.tmp"))


def test_prune_drops_least_recently_used(tmp_path: Path):
    for i, name in enumerate(["old", "mid", "new"]):
        path = tmp_path / f"{name}{cache.SUFFIX}"
        path.write_bytes(b"x" * 100)
        os.utime(path, (1000 + i, 1000 + i))
    cache.prune(tmp_path, 250)
    assert [p.stem for p in entries(tmp_path)] == ["mid", "new"]
    cache.prune(tmp_path, 0)
    assert not entries(tmp_path)


# --- hits keyed by the source: no frontend runs ---------------------------------------


def _affine_model(seed: int = 0):
    """y = relu(x @ w + b) with a random 30x10 weight (a resource, over 256 elements)."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(seed)
    w = numpy_helper.from_array(rng.standard_normal((30, 10)).astype(np.float32), "w")
    b = numpy_helper.from_array(rng.standard_normal(10).astype(np.float32), "b")
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["a"]),
        helper.make_node("Relu", ["a"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes,
        "affine",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 30])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 10])],
        [w, b],
    )
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    proto.ir_version = 8
    weights = (numpy_helper.to_array(w), numpy_helper.to_array(b))
    return proto, weights


def test_text_hit_skips_the_frontend(cache_dir: Path):
    first = compile_fresh()
    assert "parse and verify" in first.compile_times
    second = compile_fresh()
    assert second.from_cache
    assert "parse and verify" not in second.compile_times
    assert second.entry.signature == first.entry.signature  # dynamic dims and names too
    check_runs(second)
    with pytest.raises(ValueError, match="expected size 3 in dim 1"):
        second(np.ones((2, 4), np.float32), np.ones(3, np.float32))


def test_same_text_hits_in_memory_without_hashing_twice(cache_dir: Path):
    first = compile_fresh()
    assert mlc.compile(PROGRAM) is first


def test_edited_file_misses(cache_dir: Path, tmp_path: Path):
    path = tmp_path / "prog.mlir"
    path.write_text(PROGRAM)
    executable_cache.clear()
    assert not mlc.compile(path).from_cache
    executable_cache.clear()
    assert mlc.compile(path).from_cache
    path.write_text(PROGRAM.replace("ml.relu", "ml.exp"))
    executable_cache.clear()
    exe = mlc.compile(str(path))
    assert not exe.from_cache
    x, y = np.ones((2, 3), np.float32), np.zeros(3, np.float32)
    np.testing.assert_allclose(exe(x, y), np.exp(x), rtol=1e-6)


# The ONNX model first, so that the weights it reports are its own; then a module whose
# weight the matmul kernel packs at compile time into a new constant.
_CHILD = """
import json, sys, numpy as np, mlc
from onnx import TensorProto, helper, numpy_helper
from mlc import resources
from mlc.frontends.onnx import import_onnx
exe = mlc.compile(sys.argv[1])
x = np.random.default_rng(1).standard_normal((4, 30)).astype(np.float32)
onnx_run = {"hit": exe.from_cache, "stages": list(exe.compile_times),
            "weights": len(resources.stored()), "y": exe(x).tolist()}
w = np.arange(48 * 64, dtype=np.float32).reshape(48, 64) / 1000
graph = helper.make_graph(
    [helper.make_node('Gemm', ['x', 'w'], ['y'], transB=1)], 'g',
    [helper.make_tensor_value_info('x', TensorProto.FLOAT, [5, 64])],
    [helper.make_tensor_value_info('y', TensorProto.FLOAT, [5, 48])],
    [numpy_helper.from_array(w, 'w')])
exe = mlc.compile(import_onnx(helper.make_model(graph)))
x = np.ones((5, 64), np.float32)
module_run = {"hit": exe.from_cache, "ok": bool(np.allclose(exe(x), x @ w.T))}
print(json.dumps({"onnx": onnx_run, "module": module_run}))
"""


@pytest.fixture(scope="module")
def two_new_processes(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    """
    `_CHILD` run by two new processes in turn on one fresh cache folder: the first
    compiles `_affine_model()` from its file and a module, the second must hit both.
    One pair of processes for both tests that need them (each costs an mlc import).
    """
    import onnx

    folder = tmp_path_factory.mktemp("two-processes")
    onnx.save(_affine_model()[0], folder / "affine.onnx")
    env = {**os.environ, "MLC_CACHE_DIR": str(folder / "cache")}
    env.pop("MLC_CACHE", None)
    return [
        json.loads(
            subprocess.run(
                [sys.executable, "-c", _CHILD, str(folder / "affine.onnx")],
                capture_output=True,
                text=True,
                check=True,
                env=env,
            ).stdout
        )
        for _ in range(2)
    ]


def test_onnx_hit_in_a_new_process_restores_the_weights(two_new_processes: list[dict]):
    runs = [run["onnx"] for run in two_new_processes]
    _, (w, b) = _affine_model()
    x = np.random.default_rng(1).standard_normal((4, 30)).astype(np.float32)
    want = np.maximum(x @ w + b, 0)
    assert [run["hit"] for run in runs] == [False, True]
    assert "parse and verify" not in runs[1]["stages"]
    assert runs[1]["weights"] >= 1  # the 300-element weight came from the entry
    for run in runs:
        np.testing.assert_allclose(np.array(run["y"], np.float32), want, rtol=1e-5)


def test_model_proto_hits(cache_dir: Path):
    proto, (w, b) = _affine_model(seed=5)
    assert not mlc.compile(proto).from_cache
    executable_cache.clear()
    exe = mlc.compile(proto)
    assert exe.from_cache and "parse and verify" not in exe.compile_times
    x = np.ones((3, 30), np.float32)
    np.testing.assert_allclose(exe(x), np.maximum(x @ w + b, 0), rtol=1e-5)


def test_model_with_external_data_is_keyed_after_import(cache_dir: Path, tmp_path: Path):
    import onnx

    proto, (w, b) = _affine_model(seed=7)
    path = tmp_path / "external.onnx"
    onnx.save(proto, path, save_as_external_data=True, size_threshold=0)
    assert Source.of(path).data() is None
    executable_cache.clear()
    mlc.compile(path)
    executable_cache.clear()
    exe = mlc.compile(path)
    assert exe.from_cache and "parse and verify" in exe.compile_times  # keyed by its IR
    x = np.ones((2, 30), np.float32)
    np.testing.assert_allclose(exe(x), np.maximum(x @ w + b, 0), rtol=1e-5)


def test_entry_with_a_bad_description_is_recompiled(cache_dir: Path):
    key = source_key(PROGRAM)
    compile_fresh()
    entry = cache.load(key)
    assert entry is not None
    cache.store(key, cache.Entry(entry.compiled, b'[{"name": "main"}]'))
    exe = compile_fresh()
    assert not exe.from_cache
    check_runs(exe)


def test_module_op_is_keyed_by_its_ir(cache_dir: Path):
    module = compiler.load(PROGRAM)
    assert Source.of(module).data() is None
    executable_cache.clear()
    mlc.compile(module)
    executable_cache.clear()
    assert mlc.compile(module).from_cache


# --- one key, one lookup a compile ------------------------------------------------------


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[str]]:
    """The keys each compile looked up (`executable_cache.lookup`), read from disk
    (`cache.load`) and stored on disk (`cache.store`), in order."""
    calls: dict[str, list[str]] = {"lookup": [], "load": [], "store": []}
    lookup, load, store = executable_cache.lookup, cache.load, cache.store

    def counted_lookup(key, *args):
        calls["lookup"].append(key)
        return lookup(key, *args)

    def counted_load(key):
        calls["load"].append(key)
        return load(key)

    def counted_store(key, entry):
        calls["store"].append(key)
        return store(key, entry)

    monkeypatch.setattr(executable_cache, "lookup", counted_lookup)
    monkeypatch.setattr(cache, "load", counted_load)
    monkeypatch.setattr(cache, "store", counted_store)
    return calls


def test_one_lookup_under_one_key_per_compile(cache_dir: Path, counted: dict[str, list[str]]):
    key = source_key(PROGRAM)
    cold = compile_fresh()  # memory, then disk: both miss; built and stored
    assert counted == {"lookup": [key], "load": [key], "store": [key]}
    assert mlc.compile(PROGRAM) is cold  # memory hit: the disk is not read
    assert counted == {"lookup": [key, key], "load": [key], "store": [key]}
    warm = compile_fresh()  # disk hit: nothing stored
    assert warm.from_cache and warm is not cold
    assert counted == {"lookup": [key] * 3, "load": [key] * 2, "store": [key]}
    check_runs(warm)


def test_one_lookup_for_a_module_keyed_by_its_ir(cache_dir: Path, counted: dict[str, list]):
    module = compiler.load(PROGRAM)
    first = mlc.compile(module)
    assert len(counted["lookup"]) == 1 and counted["load"] == counted["lookup"]
    assert counted["store"] == counted["lookup"]
    (key,) = counted["lookup"]
    assert key != source_key(PROGRAM)  # the IR's key, not the text's
    executable_cache.clear()
    again = mlc.compile(module)
    assert again.from_cache and again is not first
    assert counted == {"lookup": [key] * 2, "load": [key] * 2, "store": [key]}
    assert first.entry.signature == again.entry.signature
