# Baton's two-command quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: venv dev demo test lint typecheck pytest bench qualify clean

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
	$(BIN)/python bench/run_flood.py
	$(BIN)/python bench/journal.py

# Qualification against real ACP adapters (tests/qualification; report: docs/qualification.md).
# Installs the pinned adapters into BATON_QUALIFY_CACHE (npm --prefix dirs and a Python 3.12+
# venv, keyed by version, reused by reruns), then runs the tests, which rewrite the report. A
# registry that cannot be reached or a missing Python 3.12+ fails here with the reason.
BATON_QUALIFY_CACHE ?= $(HOME)/.cache/baton-qualify

qualify: $(VENV)/.dev
	@command -v node >/dev/null && command -v npm >/dev/null || \
		{ echo "qualify: node and npm are needed to install claude-agent-acp and codex-acp" >&2; exit 1; }
	BATON_QUALIFY_CACHE="$(BATON_QUALIFY_CACHE)" $(BIN)/python tests/qualification/qualify_installs.py
	BATON_QUALIFY=1 BATON_QUALIFY_CACHE="$(BATON_QUALIFY_CACHE)" BATON_QUALIFY_REPORT=docs/qualification.md \
		$(BIN)/pytest tests/qualification -q -p no:cacheprovider

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache
