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

.PHONY: run test lint typecheck unit integration e2e infra bench synth clean venv

venv:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "zerocode needs Python 3.11+")'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)

$(RUN_STAMP): pyproject.toml | venv
	$(PIP) -e '.[local]'
	touch $(RUN_STAMP)

$(DEV_STAMP): pyproject.toml | venv
	$(PIP) -e '.[dev]'
	touch $(DEV_STAMP) $(RUN_STAMP)

run: $(RUN_STAMP)
	$(BIN)/zerocode serve

lint: $(DEV_STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(DEV_STAMP)
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest

unit: $(DEV_STAMP)
	$(BIN)/pytest tests/unit

integration: $(DEV_STAMP)
	$(BIN)/pytest tests/integration

e2e: $(DEV_STAMP)
	$(BIN)/pytest tests/e2e

infra: $(DEV_STAMP)
	$(BIN)/pytest tests/infra

bench: $(DEV_STAMP)
	$(BIN)/python bench/memory.py
	$(BIN)/python bench/turn.py
	$(BIN)/python bench/build.py

# The CloudFormation template and assets in cdk.out/, as `cdk synth` makes them, without the
# CDK CLI: infra/app.py run directly (cdk.json's context is read by it), with the real
# pip bundling of the core layer (local, no Docker). Deploying needs the CLI: npx aws-cdk@2.
synth: $(DEV_STAMP)
	CDK_OUTDIR=cdk.out $(BIN)/python infra/app.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
