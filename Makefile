# Baton's two-command quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: venv dev demo test lint typecheck pytest bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Runtime install only (what `make demo` needs).
$(VENV)/.runtime: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e .
	touch $@

# Runtime plus the dev tools (ruff, mypy, pytest, hypothesis, jsonschema, pexpect).
$(VENV)/.dev: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q -e '.[dev]'
	touch $@ $(VENV)/.runtime

venv: $(VENV)/.runtime
dev: $(VENV)/.dev

demo: $(VENV)/.runtime
	@bash scripts/demo.sh "$(BIN)"

lint: $(VENV)/.dev
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(VENV)/.dev
	$(BIN)/mypy --strict src

pytest: $(VENV)/.dev
	$(BIN)/pytest -q

test: lint typecheck pytest

$(VENV)/.bench: $(VENV)/.dev
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	touch $@

bench: $(VENV)/.bench
	$(BIN)/python bench/flood.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
