"""
A missing optional dependency is a one-line error naming the pip extra that installs it:
pycuda for the cuda target, onnxruntime for `make conformance`, torch for bench/gpu.py.
Absence is simulated by hiding the package (`sys.modules[name] = None`).
"""

import importlib
import importlib.util
import sys
import tomllib
from pathlib import Path

import pytest

from mlc.backend import cuda, cuda_device
from mlc.extras import EXTRAS, MissingDependencyError, require

ROOT = Path(__file__).parents[2]


def hide(monkeypatch: pytest.MonkeyPatch, *packages: str) -> None:
    for name in list(sys.modules):
        if name.split(".")[0] in packages:
            monkeypatch.delitem(sys.modules, name)
    for package in packages:
        monkeypatch.setitem(sys.modules, package, None)


def test_each_extra_installs_its_packages():
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    for package, extra in EXTRAS.items():
        assert any(req.split(">")[0].split("=")[0].strip() == package for req in extras[extra]), (
            f"{package} is not in the '{extra}' extra"
        )


def test_require_imports_what_is_there():
    assert require("json.decoder", "a test") is importlib.import_module("json.decoder")


@pytest.mark.parametrize("module", ["pycuda", "pycuda.driver"])
def test_require_names_the_extra_of_a_missing_package(monkeypatch, module):
    hide(monkeypatch, "pycuda")
    with pytest.raises(MissingDependencyError) as error:
        require(module, "target 'cuda'")
    message = str(error.value)
    assert message == (
        "target 'cuda' needs pycuda, which is not installed: "
        "pip install 'mlc[gpu]' (from a checkout: pip install -e '.[gpu]')"
    )
    assert "\n" not in message


def test_a_missing_dependency_of_the_package_itself_is_not_renamed(monkeypatch):
    def broken(name: str):
        raise ModuleNotFoundError("No module named 'six'", name="six")

    monkeypatch.setattr(importlib, "import_module", broken)
    with pytest.raises(ModuleNotFoundError) as error:
        require("torch", "a test")
    assert not isinstance(error.value, MissingDependencyError)


def test_cuda_target_without_pycuda(monkeypatch):
    hide(monkeypatch, "pycuda")
    with pytest.raises(cuda.CudaUnavailableError, match=r"^target 'cuda' needs pycuda, .*\[gpu\]"):
        cuda_device._first_device.__wrapped__()  # uncached, also where a GPU was found before


def test_conformance_without_onnxruntime(monkeypatch, capsys):
    from mlc.tools import onnx_conformance

    hide(monkeypatch, "onnxruntime")
    assert onnx_conformance.main(["--no-doc", "--ops", "Relu"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("onnx_conformance: error: ") and err.count("\n") == 1
    assert "needs onnxruntime" in err and "'mlc[dev]'" in err


def test_gpu_bench_without_torch(monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT / "bench"))
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    # loaded by path: `gpu` is also the name tests/gpu is imported under
    spec = importlib.util.spec_from_file_location("bench_gpu", ROOT / "bench" / "gpu.py")
    assert spec is not None and spec.loader is not None
    gpu_bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gpu_bench)
    hide(monkeypatch, "torch")
    monkeypatch.setattr(sys, "argv", ["bench/gpu.py", "--only", "chain"])
    assert gpu_bench.main() == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "bench/gpu.py: error: the GPU benchmark needs torch, which is not installed: "
        "pip install 'mlc[gpu]' (from a checkout: pip install -e '.[gpu]')\n"
    )
