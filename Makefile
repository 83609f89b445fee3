# Two commands from a fresh clone: `make run` and `make test`.
# Both create .venv on first use and reinstall when pyproject.toml changes.

PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
# pytest runs on every core (pytest-xdist): `logical` counts each hardware thread, where
# `auto` counts physical cores when psutil is installed (one worker on a 2-thread core);
# worksteal rebalances the long tests. `make test PYTEST_JOBS=0` runs it in one process.
PYTEST_JOBS ?= logical
PYTEST := $(BIN)/python -m pytest -q -n $(PYTEST_JOBS) --dist worksteal
# lit: a progress bar, the output of failed tests only, and the counts at the end.
LIT    := $(BIN)/lit -sv
# Each runner's output is kept, so that `make test` can end with both runners' counts.
SHELL       := /bin/bash
.SHELLFLAGS := -o pipefail -c

.PHONY: run test test-full lint lit pytest conformance zoo bench clean

run: $(VENV)/.installed
	$(BIN)/python examples/run.py
	$(BIN)/python examples/train_digits.py
	$(BIN)/python examples/train_cnn.py
	$(BIN)/python examples/lstm_lm.py
	$(BIN)/python examples/sparse_moe.py

test: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(PYTEST) | tee $(VENV)/pytest.log
	$(LIT) tests/filecheck | tee $(VENV)/lit.log
	@echo "pytest: $$(tail -n 1 $(VENV)/pytest.log)"
	@echo "lit: $$(grep -E '^  [A-Z][a-zA-Z ]+: [0-9]+' $(VENV)/lit.log | xargs)"

# `make test`, with every cuda twin lowered and its PTX assembled by ptxas where no GPU is
# (tests/conftest.py), and the whole zoo: tens of minutes on two cores.
test-full: $(VENV)/.installed-dev
	MLC_TEST_PTX=1 MLC_TEST_SLOW=1 MLC_ZOO=all $(PYTEST)
	$(LIT) tests/filecheck

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

pytest: $(VENV)/.installed-dev
	$(PYTEST)

lit: $(VENV)/.installed-dev
	$(LIT) tests/filecheck

# onnx's node tests of the supported ops, static and dynamic, with the inputs that decide
# shapes bound at import and given at run time; writes docs/onnx-support.md
conformance: $(VENV)/.installed-dev
	$(BIN)/python -m mlc.tools.onnx_conformance --both --inputs both

# Every model of the zoo (tests/zoo/) against onnxruntime; `make test` runs one of five kinds (QUICK).
zoo: $(VENV)/.installed-dev
	MLC_ZOO=all $(PYTEST) tests/e2e/onnx/test_zoo.py

# The CPU benchmarks against numpy, onnxruntime and IREE (minutes): bench/results.md.
bench: $(VENV)/.installed-bench
	$(BIN)/python bench/cpu.py

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@ $(VENV)/.installed

$(VENV)/.installed-bench: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	touch $@ $(VENV)/.installed-dev $(VENV)/.installed

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
