"""The Python examples (`examples/*.py` other than run.py) run and check themselves."""

import importlib.util
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parents[2] / "examples"


@pytest.mark.parametrize("name", ["mlp_jit", "solver", "train_digits", "train_cnn", "lstm_lm"])
def test_example_runs(name, capsys):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main()
    assert "cache" in capsys.readouterr().out
