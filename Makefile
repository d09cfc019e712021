# Baton's two-command quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: venv dev demo test test-atif test-pythons test-lowest acp-types docs test-fleet lint typecheck pytest bench qualify test-v2-sdks dist dist-check test-browser clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# Baton's distribution was called `baton` before it took its own name, `baton-acp` (the PyPI
# `baton` is an unrelated project): an older .venv still holds that editable install, which
# claims the same import package, and so does its metadata left in src/. Each install below
# removes both first.
FORMER_DIST := baton
DROP_FORMER = rm -rf src/$(FORMER_DIST).egg-info; \
	if $(BIN)/python -m pip show -q $(FORMER_DIST) >/dev/null 2>&1; then \
	$(BIN)/python -m pip uninstall -q -y $(FORMER_DIST); fi

# Runtime install only (what `make demo` needs).
$(VENV)/.runtime: $(BIN)/python pyproject.toml
	$(DROP_FORMER)
	$(BIN)/python -m pip install -q -e .
	touch $@

# Runtime plus the dev tools (ruff, mypy, pytest, hypothesis, jsonschema, pexpect).
$(VENV)/.dev: $(BIN)/python pyproject.toml
	$(DROP_FORMER)
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

# The suite on PYTEST_WORKERS pytest-xdist workers (two: measured on the 2-core machine, see
# docs/decisions.md, "Tests in parallel"), then, in a second pass and alone, the few tests
# marked `serial` (a test that must not share the machine says why in its marker's reason).
PYTEST_WORKERS ?= 2
PYTEST_PARALLEL := -n $(PYTEST_WORKERS) --dist worksteal -m "not serial"
PYTEST_SERIAL := -m serial

# (pytest exits 5 when it selects nothing: no test is marked serial, which is fine.)
pytest: $(VENV)/.dev
	$(BIN)/pytest -q $(PYTEST_PARALLEL)
	$(BIN)/pytest -q $(PYTEST_SERIAL) || [ $$? -eq 5 ]

test: lint typecheck pytest

# Every newer Python the machine has (scripts/pythons.sh: 3.12 on, PATH or pyenv), each in a
# venv of its own (.venv-pyX.Y) with the dev extra, runs the same suite as `make pytest`.
# CI runs it (.ci/run); a machine with only the baseline Python says so and passes.
test-pythons: $(BIN)/python
	@found="$$(bash scripts/pythons.sh)"; \
	if [ -z "$$found" ]; then echo "test-pythons: no Python newer than $$($(PYTHON) -V) here"; exit 0; fi; \
	for py in $$found; do \
		venv=".venv-py$$($$py -c 'import sys; print("%d.%d" % sys.version_info[:2])')"; \
		echo "test-pythons: $$($$py -V) in $$venv"; \
		[ -x "$$venv/bin/python" ] || $$py -m venv "$$venv" || exit 1; \
		$$venv/bin/python -m pip install -q --upgrade pip && \
		$$venv/bin/python -m pip install -q -e '.[dev]' && \
		$$venv/bin/pytest -q -p no:cacheprovider $(PYTEST_PARALLEL) && \
		{ $$venv/bin/pytest -q -p no:cacheprovider $(PYTEST_SERIAL) || [ $$? -eq 5 ]; } || exit 1; \
	done

# The lowest direct versions pyproject.toml allows (uv's lowest-direct resolution: each direct
# dependency at its lower bound, theirs at the newest that fits), in .venv-lowest on the
# baseline Python, run the same suite: a lower bound the code outgrew fails here.
# Made afresh whenever pyproject.toml changes (test-fleet's lowest-versions pass uses it too).
LOWEST_VENV := .venv-lowest

$(LOWEST_VENV)/.lowest: $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install -q 'uv>=0.5'
	rm -rf $(LOWEST_VENV)
	$(BIN)/uv venv -q --python $(PYTHON) $(LOWEST_VENV)
	$(BIN)/uv pip install -q --python $(LOWEST_VENV)/bin/python --resolution lowest-direct -e '.[dev]'
	$(BIN)/uv pip list --python $(LOWEST_VENV)/bin/python
	touch $@

test-lowest: $(LOWEST_VENV)/.lowest
	$(LOWEST_VENV)/bin/pytest -q -p no:cacheprovider $(PYTEST_PARALLEL)
	$(LOWEST_VENV)/bin/pytest -q -p no:cacheprovider $(PYTEST_SERIAL) || [ $$? -eq 5 ]

# Browser tests of the inspector (tests/browser; docs/inspector.md). Chromium and ChromeDriver
# come from Debian's packages, installed here when missing (CI runs as root with only the
# package registries reachable; elsewhere through sudo); Playwright from PyPI drives that
# executable and never downloads a browser of its own.
CHROMIUM ?= /usr/bin/chromium
AS_ROOT := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

$(VENV)/.browser: $(VENV)/.dev
	$(BIN)/python -m pip install -q -e '.[dev,browser]'
	touch $@

# The inspector in headless Chromium; its page tests save each page's screenshot under
# docs/inspector/ (shown in the README and docs/inspector.md).
test-browser: $(VENV)/.browser
	@if [ ! -x "$(CHROMIUM)" ]; then \
		$(AS_ROOT) apt-get update -q && \
		DEBIAN_FRONTEND=noninteractive $(AS_ROOT) apt-get install -y -q chromium chromium-driver; fi
	BATON_CHROMIUM="$(CHROMIUM)" BATON_INSPECTOR_SCREENSHOTS="$(CURDIR)/docs/inspector" \
		$(BIN)/pytest -q -p no:cacheprovider tests/browser
# Trajectories validated by the format's published models (docs/trajectories.md,
# docs/decisions.md "ATIF validation"): Harbor's pydantic models of ATIF import only pydantic,
# so .venv-atif holds pydantic and the `harbor` wheel without its dependencies (it declares
# Python 3.12+; its trajectory models run on 3.11, which tests/atif shows); the tests export
# runs with the main venv and validate them in that interpreter.
ATIF_VENV := .venv-atif
HARBOR_VERSION ?= 0.26.0
$(ATIF_VENV)/.harbor-$(HARBOR_VERSION):
	$(PYTHON) -m venv $(ATIF_VENV)
	$(ATIF_VENV)/bin/python -m pip install -q 'pydantic>=2.14'
	$(ATIF_VENV)/bin/python -m pip install -q --no-deps --ignore-requires-python 'harbor==$(HARBOR_VERSION)'
	touch $@
test-atif: $(VENV)/.dev $(ATIF_VENV)/.harbor-$(HARBOR_VERSION)
	BATON_ATIF_PYTHON="$(CURDIR)/$(ATIF_VENV)/bin/python" $(BIN)/pytest -q -p no:cacheprovider tests/atif

# Many hosts (issue 22, docs/fleet.md): the fleet suite and the run store's tests on
# PostgreSQL. Installs Debian's postgresql when missing (as root; CI), starts a throwaway
# cluster in a temporary directory (as the `postgres` user when run as root), runs the tests,
# then, on the same cluster, the fleet suite again in .venv-lowest (the lowest procrastinate
# and psycopg pyproject.toml allows, with everything else at its lowest direct version), then
# stops and removes the cluster (scripts/pg_cluster.sh, scripts/test_fleet.sh).
test-fleet: $(VENV)/.dev $(LOWEST_VENV)/.lowest
	bash scripts/test_fleet.sh "$(BIN)" "$(LOWEST_VENV)/bin"

$(VENV)/.bench: $(VENV)/.dev
	$(BIN)/python -m pip install -q -e '.[dev,bench]'
	touch $@

# Issue 34's table: every row against its baseline, one summary table at the end. Compare with
# an older tree: make bench BENCH_ARGS="--before /path/to/old/src". The single-purpose benches
# (flood.py, run_flood.py, journal.py, serve_concurrency.py, fleet.py) still run on their own.
BENCH_ARGS ?=

bench: $(VENV)/.bench
	$(BIN)/python bench/suite.py $(BENCH_ARGS)

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

# Interop with the official SDKs' experimental ACP v2 agents (tests/v2_sdks; docs/protocol.md,
# Versions). Installs the Python SDK (agent-client-protocol 1.0.0rc3, its own venv) and the
# TypeScript SDK (@agentclientprotocol/sdk 2.4.0, npm, run with Node) into BATON_V2_SDKS_CACHE,
# reused by reruns, then runs the tests. Not part of `make test`, which needs no network.
BATON_V2_SDKS_CACHE ?= $(HOME)/.cache/baton-v2-sdks

test-v2-sdks: $(VENV)/.dev
	@command -v node >/dev/null && command -v npm >/dev/null || \
		{ echo "test-v2-sdks: node and npm are needed for the TypeScript SDK" >&2; exit 1; }
	BATON_V2_SDKS_CACHE="$(BATON_V2_SDKS_CACHE)" $(BIN)/python tests/v2_sdks/sdk_installs.py
	BATON_V2_SDKS=1 BATON_V2_SDKS_CACHE="$(BATON_V2_SDKS_CACHE)" \
		$(BIN)/pytest tests/v2_sdks -q -p no:cacheprovider

# Packaging (docs/decisions.md, "Packaging"). `make dist` builds the sdist and the wheel into
# dist/ with the standard build frontend (from the sdist, so the wheel holds only what the sdist
# carries), checks their metadata (twine check --strict renders the README; scripts/dist_check.py
# checks name, version, Requires-Python, license file, classifiers, project URLs and the console
# script) and lists the wheel. `make dist-check` (CI, after `make test`) then compares the wheel
# with the files git tracks under src/baton and installs it outside the checkout with pip, pipx
# and uv tool, running `baton --version`, `baton doctor --json` and a real scripted turn with
# each (scripts/wheel_smoke.py).
$(VENV)/.dist: $(BIN)/python pyproject.toml
	$(DROP_FORMER)
	$(BIN)/python -m pip install -q -e '.[dist]'
	touch $@ $(VENV)/.runtime

dist: $(VENV)/.dist
	rm -rf dist build
	$(BIN)/python -m build --quiet --outdir dist .
	$(BIN)/twine check --strict dist/*
	$(BIN)/python scripts/dist_check.py metadata dist
	$(BIN)/python scripts/dist_check.py list dist

dist-check: dist
	$(BIN)/python scripts/dist_check.py contents dist
	$(BIN)/python scripts/wheel_smoke.py dist

# ACP's message types (src/baton/wire/acp_types.py) from the pinned schema: run when the pin
# changes, commit the result (tests/wire/test_acp_types.py fails on a stale module).
acp-types: $(VENV)/.dev
	$(BIN)/python scripts/acp_types.py
	$(BIN)/ruff format -q src/baton/wire/acp_types.py

# The documentation site (mkdocs.yml): the guides in docs/ and the API reference from the
# docstrings (scripts/api_reference.py writes docs/reference.md from baton.__all__), built
# with --strict into build/site: a broken link between pages or a cross-reference that does
# not resolve fails it. CI runs it (.ci/run); it installs the `docs` extra itself.
$(VENV)/.docs: $(VENV)/.dev
	$(BIN)/python -m pip install -q -e '.[dev,docs]'
	touch $@

docs: $(VENV)/.docs
	$(BIN)/python scripts/api_reference.py
	$(BIN)/mkdocs build --strict --quiet

clean:
	rm -rf $(VENV) .venv-py3.* $(LOWEST_VENV) $(ATIF_VENV) .mypy_cache .pytest_cache .ruff_cache build dist src/*.egg-info
