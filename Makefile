# Two entry points that work on a fresh machine with only Python and make.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $@

demo: $(VENV)/.installed
	$(BIN)/python examples/demo.py

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q --nbmake

# Benchmarks (issue 6): JAX, autograd and matplotlib join the venv; writes docs/benchmarks.md
# and docs/benchmarks.png and prints the table (about 10 minutes on 2 cores).
$(VENV)/.installed-bench: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[bench]" matplotlib
	touch $@

bench: $(VENV)/.installed-bench
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) build src/*.egg-info
