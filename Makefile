# Two entry points that work on a fresh machine with only Python and make.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Byte-compiling the sources once (compileall) spares every later process compiling
# them again on import when the environment sets PYTHONDONTWRITEBYTECODE.
$(VENV)/.installed: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e .
	$(BIN)/python -m compileall -q src >/dev/null
	touch $@

$(VENV)/.installed-test: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[test]"
	$(BIN)/python -m compileall -q src >/dev/null
	touch $@

demo: $(VENV)/.installed
	$(BIN)/python examples/demo.py

# One worker per core (at most 4), each taking whole files, so that a module's shared
# compiled functions (module-scoped fixtures) are compiled by one worker only.
test: $(VENV)/.installed-test
	$(BIN)/python -m pytest -q --nbmake -n auto --maxprocesses 4 --dist loadfile

# Benchmarks (issue 6): JAX, autograd and matplotlib join the venv; writes docs/benchmarks.md
# and docs/benchmarks.png and prints the table (about 10 minutes on 2 cores).
# BENCH_ARGS passes options through, e.g. make bench BENCH_ARGS="--load 1" (the same
# run with one busy process beside it, written to docs/benchmarks_load1.md).
$(VENV)/.installed-bench: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet -e ".[bench]" matplotlib
	touch $@

bench: $(VENV)/.installed-bench
	$(BIN)/python -m compileall -q src benchmarks >/dev/null
	$(BIN)/python benchmarks/run.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) build src/*.egg-info
