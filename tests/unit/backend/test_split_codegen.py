"""
Code generation in parts (`mlc.backend.split_codegen`): a module splits into an entry
module and one module per group of kernels, each kernel defined once; the parts compile
to the same bytes in this process and in workers; loaded together they compute what
numpy does; and a program compiled in parts goes through the disk cache whole.
"""

import os
import re
from functools import cache as memoized

import numpy as np
import pytest
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ModuleOp

import mlc
from mlc.backend import cache, split_codegen
from mlc.backend.compiled import CompiledObject
from mlc.backend.jit import JITError
from mlc.timing import Timer


def _program(rows: int, sizes: tuple[int, int, int], dtype: str) -> str:
    a, b, c = sizes
    x, w1, h, w2, y = (
        f"tensor<{rows}x{a}x{dtype}>",
        f"tensor<{a}x{b}x{dtype}>",
        f"tensor<{rows}x{b}x{dtype}>",
        f"tensor<{b}x{c}x{dtype}>",
        f"tensor<{rows}x{c}x{dtype}>",
    )
    bias = f"tensor<{c}x{dtype}>"
    return "\n".join(
        [
            f"func.func @main(%x: {x}, %w1: {w1}, %w2: {w2}, %b: {bias}) -> {y} {{",
            f"  %m = ml.matmul %x, %w1 : ({x}, {w1}) -> {h}",
            f"  %r = ml.relu %m : ({h}) -> {h}",
            f"  %n = ml.matmul %r, %w2 : ({h}, {w2}) -> {y}",
            f"  %s = ml.add %n, %b : ({y}, {bias}) -> {y}",
            f"  func.return %s : {y}",
            "}",
        ]
    )


@pytest.fixture
def split_everything(monkeypatch: pytest.MonkeyPatch) -> None:
    """Split even small programs (the thresholds are for the size of real models)."""
    monkeypatch.setattr(split_codegen, "MIN_OPS", 0)
    monkeypatch.setattr(split_codegen, "MIN_GROUP_OPS", 0)
    monkeypatch.setattr(split_codegen, "MIN_MODULES", 2)


@memoized  # split and translation read the module, never change it
def _lowered() -> ModuleOp:
    module = mlc.compile(_program(7, (13, 21, 5), "f32"), emit="llvm")
    assert isinstance(module, ModuleOp)
    return module


def _defined(text: str) -> list[str]:
    return re.findall(r'^define (?:internal )?[^@]*@"?([\w.]+)"?\(', text, re.MULTILINE)


@pytest.mark.usefixtures("split_everything")
def test_each_function_is_defined_in_one_part_and_declared_where_called():
    module = _lowered()
    parts = split_codegen.split(module)
    texts = split_codegen.ir_texts(module, parts)
    assert len(parts) >= 3
    defined = [name for text in texts for name in _defined(text)]
    whole = [
        op.sym_name.data for op in module.ops if isinstance(op, llvm.FuncOp) and op.body.blocks
    ]
    assert sorted(defined) == sorted(whole)  # each once, none lost
    assert "main" in _defined(texts[0])  # the entry module comes first
    exported = 0
    for i, text in enumerate(texts):
        for name in _defined(text):
            # called from another part (the entry calls kernels; an outlined kernel its
            # loops' bodies): exported where defined, declared where called
            callers = [t for j, t in enumerate(texts) if j != i and f'@"{name}"(' in t]
            if callers:
                exported += 1
                assert re.search(rf'^define (?!internal)[^@]*@"{name}"', text, re.MULTILINE)
                assert all(
                    re.search(rf'^declare [^@]*@"{name}"\(', t, re.MULTILINE) for t in callers
                )
    assert exported  # the parts call each other


@pytest.mark.usefixtures("split_everything")
def test_a_shared_micro_kernel_is_a_part_of_its_own_not_the_join_of_its_callers():
    module = _lowered()
    texts = split_codegen.ir_texts(module, split_codegen.split(module))
    defined = [_defined(text) for text in texts]
    kernels = [names for names in defined if any(n.startswith("mlc_micro_kernel") for n in names)]
    assert kernels and all(len(names) == 1 for names in kernels)
    # both matmuls call the kernels; their loops still compile in parts of their own
    loops = [names for names in defined if any(n.startswith("main_parallel") for n in names)]
    assert len(loops) == 2


def test_a_small_program_is_not_split():
    module = _lowered()
    assert len(split_codegen.split(module)) == 1


@pytest.mark.usefixtures("split_everything")
def test_workers_compile_the_same_bytes_as_this_process():
    module = _lowered()
    texts = split_codegen.ir_texts(module, split_codegen.split(module))
    here = split_codegen.compile_texts(texts, processes=1)
    spread = split_codegen.compile_texts(texts, processes=2)
    assert here == spread


@pytest.mark.usefixtures("split_everything")
@pytest.mark.parametrize("dtype", ["f32", "f64"])
def test_parts_loaded_together_compute_what_numpy_does(
    dtype: str, monkeypatch: pytest.MonkeyPatch, tmp_path
):
    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path))
    made: list[CompiledObject | None] = []
    original = split_codegen.compile_module

    def spy(*args, **kwargs):
        made.append(original(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(split_codegen, "compile_module", spy)
    rows, sizes = 9, (11, 6, 3)
    source = _program(rows, sizes, dtype)
    rng = np.random.default_rng()
    np_type = np.float32 if dtype == "f32" else np.float64
    a, b, c = sizes
    x, w1 = rng.standard_normal((rows, a)), rng.standard_normal((a, b))
    w2, bias = rng.standard_normal((b, c)), rng.standard_normal(c)
    args = [array.astype(np_type) for array in (x, w1, w2, bias)]
    expected = np.maximum(args[0] @ args[1], 0) @ args[2] + args[3]
    tolerance = 1e-4 if dtype == "f32" else 1e-10
    for _ in range(2):  # compiled, then loaded from the disk cache
        result = mlc.compile(source)(*args)
        np.testing.assert_allclose(result, expected, rtol=tolerance, atol=tolerance)
    assert len(made) == 1 and made[0] is not None and made[0].parts


def test_the_cache_keeps_every_part():
    parts = (CompiledObject(b"k1" * 50, b"b1"), CompiledObject(b"k2", b""))
    entry = cache.Entry(CompiledObject(b"entry", b"bitcode", parts), b'{"f": 1}')
    decoded = cache.decode(cache.encode(entry))
    assert decoded is not None and decoded.compiled == entry.compiled
    assert decoded.compiled.objects == (b"entry", b"k1" * 50, b"k2")


def test_ir_that_llvm_rejects_names_a_dump():
    good = 'define i32 @"f"() {\n  ret i32 1\n}\n'
    with pytest.raises(JITError, match=r"invalid LLVM IR \(written to .*\.ll\)"):
        split_codegen.compile_texts([good, "define i32 @g( {"], processes=2)


@pytest.mark.usefixtures("split_everything")
def test_kernels_come_from_the_disk_cache_the_second_time(
    monkeypatch: pytest.MonkeyPatch, tmp_path
):
    monkeypatch.setenv("MLC_CACHE_DIR", str(tmp_path))
    compiled_texts: list[int] = []
    original = split_codegen.compile_texts

    def counted(texts, *args, **kwargs):
        compiled_texts.append(len(texts))
        return original(texts, *args, **kwargs)

    monkeypatch.setattr(split_codegen, "compile_texts", counted)
    module = _lowered()
    first = split_codegen.compile_module(module, Timer())
    second = split_codegen.compile_module(module, Timer())
    assert first is not None and second == first
    assert compiled_texts == [len(first.parts) + 1, 1]  # then only the entry module
    assert len(list(tmp_path.glob(f"*{cache.SUFFIX}"))) == len(first.parts)
    for path in tmp_path.glob(f"*{cache.SUFFIX}"):  # damaged: a miss, compiled again
        path.write_bytes(path.read_bytes()[:-1])
    assert split_codegen.compile_module(module, Timer()) == first
    assert compiled_texts[-1] == len(first.parts) + 1


def test_kernel_key_depends_on_the_ir_and_level():
    text = 'define i32 @"f"() {\n  ret i32 1\n}\n'
    assert split_codegen.kernel_key(text, 2) == split_codegen.kernel_key(text, 2)
    assert split_codegen.kernel_key(text, 2) != split_codegen.kernel_key(text, 3)
    assert split_codegen.kernel_key(text, 2) != split_codegen.kernel_key(text + "\n", 2)


@pytest.mark.usefixtures("split_everything")
def test_without_workers_this_process_compiles_everything(monkeypatch: pytest.MonkeyPatch):
    module = _lowered()
    texts = split_codegen.ir_texts(module, split_codegen.split(module))[:2]
    monkeypatch.setattr(split_codegen.sys, "executable", "/nonexistent/python")
    assert split_codegen.compile_texts(texts, processes=2) == split_codegen.compile_texts(
        texts, processes=1
    )


def test_as_many_processes_as_usable_cpus():
    assert 1 <= split_codegen.workers() <= (os.cpu_count() or 1)
