# chipwise: two commands on a fresh machine with Python 3.11, pip and make.
#   make demo  - create .venv, install chipwise, run the main job on the built-in catalog
#   make test  - create .venv with the dev extras, run ruff, mypy and the whole test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP_RUN := $(VENV)/.installed-run
STAMP_DEV := $(VENV)/.installed-dev

.PHONY: demo test lint typecheck pytest accuracy bench speed clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(STAMP_RUN): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(STAMP_DEV): pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $@ $(STAMP_RUN)

demo: $(STAMP_RUN)
	$(BIN)/chipwise plan train --model llama-3.1-70b --tokens 15e12 --chips 4096 --hardware all --top 30

# make test: ruff, mypy (src and tests, strict) and the whole suite
test: lint typecheck pytest

lint: $(STAMP_DEV)
	$(BIN)/ruff check src tests benchmarks scripts

typecheck: $(STAMP_DEV)
	$(BIN)/mypy

# pytest's loadscope: a module's tests share one worker, so a module fixture (a published table validated, 1-2
# minutes) is computed once; spread over both workers, each had computed it
pytest: $(STAMP_DEV)
	$(BIN)/python -m pytest -n 2 --dist loadscope

accuracy: $(STAMP_RUN)
	$(BIN)/python scripts/write_accuracy.py

bench: $(STAMP_RUN)
	$(BIN)/python benchmarks/plan_speed.py
	$(BIN)/python benchmarks/serve_speed.py
	$(BIN)/python benchmarks/fleet_speed.py
	$(BIN)/python benchmarks/cli_startup.py
	$(BIN)/python benchmarks/trace_read.py
	$(BIN)/python benchmarks/sweep_speed.py

# every benchmark once, written to docs/speed.json, docs/speed.md and the README's "Fast" bullet
speed: $(STAMP_RUN)
	$(BIN)/python scripts/write_speed.py

clean:
	rm -rf $(VENV) build dist src/*.egg-info .pytest_cache .mypy_cache .ruff_cache
