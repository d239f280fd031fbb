# zerocode — two commands matter: `make run` and `make test` (see README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Two installs: `make run` only what the server needs (.[local]: the runtime dependencies and
# Playwright's package for covers and the runtime check); `make test` and the rest also the
# test and CDK tooling (.[dev]). The dev stamp implies the run one, so `make test` then
# `make run` installs nothing, and `make run` then `make test` adds the tooling.
RUN_STAMP := $(VENV)/.installed-run
DEV_STAMP := $(VENV)/.installed-dev
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check
# uv (from PyPI, into the venv by pip, ~1 s) installs the same versions as pip in a fraction of
# its time: the dev install took pip 55 s of a fresh clone's `make test`, uv 3-4 s (19 s
# with every module compiled). Where uv cannot be had, pip does it. INSTALL's argument: the
# extras, then uv's own flags.
UV := $(BIN)/uv
INSTALL = ($(PIP) uv && $(UV) pip install --quiet --python $(BIN)/python $(2) -e '.[$(1)]') \
	  || $(PIP) -e '.[$(1)]'
# mypy's cache lives outside the clone: a fresh clone (CI's) type-checks only what changed
# instead of openai, aws_cdk and moto again (~140 s cold). Keyed by content, never stale.
MYPY_CACHE ?= $(HOME)/.cache/zerocode/mypy
# The suite waits far more than it computes (servers, browsers, builds, leases running out):
# about 1,000 CPU-seconds in all (tests/module_cpu.py), which 3 workers on 2 cores spread
# over 16-28 minutes with the cores half idle, and 6 over 16 minutes at a load where 3 took
# 28 (docs/benchmarks.md). So three workers per core; a module's tests stay on one worker
# (tests/conftest.py).
PYTEST_WORKERS ?= $(shell $(PYTHON) -c 'import os; print(max(2, (os.cpu_count() or 1) * 3))')
# Property-based tests: a tenth of the examples locally (dev), every one in CI (.ci/run sets
# ci); tests/properties.py.
export HYPOTHESIS_PROFILE ?= dev
# Bytecode: where PYTHONDONTWRITEBYTECODE is set (this machine, many CI images) every process
# compiled the package from source, and every worker redid pytest's assertion rewriting of
# every test module: a collection cost each of the six workers ~12 CPU-s, 4.7 with the
# caches, and each server a test starts ~0.15 s more. The suite writes bytecode (__pycache__,
# ignored by git and left out of the layer's bundle), and one collection before the workers
# start (WARM) fills the caches they then read (docs/benchmarks.md, "The test suite").
PYTEST_ENV := env -u PYTHONDONTWRITEBYTECODE
WARM := $(PYTEST_ENV) PYTEST_ADDOPTS= $(BIN)/pytest --collect-only -q -p no:cacheprovider >/dev/null
PYTEST := $(PYTEST_ENV) $(BIN)/pytest -n $(PYTEST_WORKERS) --dist loadgroup
# A module marked `alone` (tests/e2e/test_lighthouse.py) runs after the others, by itself:
# Lighthouse's simulation scales the CPU time it observes, so beside other tests it measured
# the host's contention, not the page (docs/builds.md, "Lighthouse"). Coverage is the others'.
ALONE := $(PYTEST_ENV) $(BIN)/pytest -n 0 --no-cov -m alone

.PHONY: run test lint typecheck unit integration e2e infra bench synth clean venv

# The console's code editor (CodeMirror 6, docs/console.md): one ESM bundle made from
# web/editor's pinned packages (the npm registry, a few seconds the first time), rebuilt when
# its lockfile or entry.js change; never committed, never from a CDN. Without npm or the
# registry it is not made, `make run` and `make test` go on, and the console's Code tab uses
# a plain text area instead.
EDITOR := web/vendor/editor.js
NPM_CI := npm ci --ignore-scripts --no-audit --no-fund --loglevel=error --fetch-timeout=30000 --fetch-retries=1

$(EDITOR): web/editor/package-lock.json web/editor/entry.js
	@if command -v npm >/dev/null && (cd web/editor && $(NPM_CI) >/dev/null 2>&1 && \
	    ./node_modules/.bin/esbuild entry.js --bundle --format=esm --minify --log-level=warning \
	      --outfile=../vendor/editor.js.tmp) && mv web/vendor/editor.js.tmp $(EDITOR); then \
	  echo "zerocode: built the code editor ($(EDITOR), $$(du -k $(EDITOR) | cut -f1) KB)"; \
	else \
	  rm -f web/vendor/editor.js.tmp; \
	  echo "zerocode: the code editor (CodeMirror) could not be installed from the npm registry (cd web/editor && npm ci says why); the console's Code tab falls back to a plain text area"; \
	fi

venv:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "zerocode needs Python 3.11+")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml | venv
	@echo "zerocode: installing the server's dependencies into .venv (first run: about a minute)…"
	$(call INSTALL,local,--compile-bytecode)
	touch $(RUN_STAMP)
	@echo "zerocode: installed; starting the server"

$(DEV_STAMP): pyproject.toml | venv
	@echo "zerocode: installing the server, test and CDK tooling into .venv (first run: a few minutes)…"
	$(call INSTALL,dev,)
	touch $(DEV_STAMP) $(RUN_STAMP)

run: $(RUN_STAMP) $(EDITOR)
	$(BIN)/zerocode serve

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

typecheck: $(DEV_STAMP)
	$(BIN)/mypy --cache-dir $(MYPY_CACHE)

# The warm-up collection runs beside ruff and mypy (one core each); a collection error is
# reported by the run itself.
test: $(DEV_STAMP) $(EDITOR)
	@($(WARM) || true) & warm=$$!; $(MAKE) --no-print-directory lint typecheck; rc=$$?; \
	  wait $$warm; exit $$rc
	$(PYTEST) -m 'not alone'
	$(ALONE) tests/e2e

unit: $(DEV_STAMP)
	$(PYTEST) tests/unit

integration: $(DEV_STAMP)
	$(PYTEST) tests/integration

e2e: $(DEV_STAMP) $(EDITOR)
	$(PYTEST) -m 'not alone' tests/e2e
	$(ALONE) tests/e2e

infra: $(DEV_STAMP)
	$(PYTEST) tests/infra

bench: $(DEV_STAMP)
	$(BIN)/python bench/memory.py
	$(BIN)/python bench/turn.py
	$(BIN)/python bench/build.py
	$(BIN)/python bench/aws_build.py
	$(BIN)/python bench/checks.py
	$(BIN)/python bench/edits.py
	$(BIN)/python bench/images.py
	$(BIN)/python bench/routing.py
	$(BIN)/python bench/preview.py
	$(BIN)/python bench/data.py
	$(BIN)/python bench/usage.py
	$(BIN)/python bench/compression.py

# The CloudFormation template and assets in cdk.out/, as `cdk synth` makes them, without the
# CDK CLI: infra/app.py run directly (cdk.json's context is read by it), with the real
# pip bundling of the core layer (local, no Docker). Deploying needs the CLI: npx aws-cdk@2.
# Then checkov (its own venv: its pinned dependencies are not the platform's) over both
# profiles' templates: every check passes or is skipped next to its resource with the reason
# (infra/zerocode_infra/nag.py, skip_checkov); anything else fails the synth.
CHECKOV_VENV := .venv-checkov
CHECKOV_STAMP := $(CHECKOV_VENV)/.installed

$(CHECKOV_STAMP): infra/checkov-requirements.txt | $(DEV_STAMP)
	$(PYTHON) -m venv $(CHECKOV_VENV)
	($(UV) pip install --quiet --compile-bytecode --python $(CHECKOV_VENV)/bin/python \
	  -r infra/checkov-requirements.txt) || $(CHECKOV_VENV)/bin/python -m pip install --quiet \
	  --disable-pip-version-check -r infra/checkov-requirements.txt
	touch $@

synth: $(DEV_STAMP) $(CHECKOV_STAMP)
	CDK_OUTDIR=cdk.out $(BIN)/python infra/app.py
	CDK_OUTDIR=cdk.out/cheap $(BIN)/python infra/app.py -c profile=cheap
	$(BIN)/python infra/checkov_gate.py $(CHECKOV_VENV)/bin/checkov \
	  cdk.out/ZerocodeStack.template.json cdk.out/cheap/ZerocodeStack.template.json

clean:
	rm -rf $(VENV) $(CHECKOV_VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis .import_linter_cache .coverage .coverage.*
