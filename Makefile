# zerocode — two commands matter: `make run` and `make test` (see README).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint typecheck unit integration e2e infra bench synth clean

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "zerocode needs Python 3.11+")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

run: $(STAMP)
	$(BIN)/zerocode serve

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

test: lint typecheck
	$(BIN)/pytest

unit: $(STAMP)
	$(BIN)/pytest tests/unit

integration: $(STAMP)
	$(BIN)/pytest tests/integration

e2e: $(STAMP)
	$(BIN)/pytest tests/e2e

infra: $(STAMP)
	$(BIN)/pytest tests/infra

bench: $(STAMP)
	$(BIN)/python bench/memory.py
	$(BIN)/python bench/turn.py
	$(BIN)/python bench/build.py

# The CloudFormation template and assets in cdk.out/, as `cdk synth` makes them, without the
# CDK CLI: infra/app.py run directly (cdk.json's context is read by it), with the real
# pip bundling of the core layer (local, no Docker). Deploying needs the CLI: npx aws-cdk@2.
synth: $(STAMP)
	CDK_OUTDIR=cdk.out $(BIN)/python infra/app.py

clean:
	rm -rf $(VENV) .mypy_cache .pytest_cache .ruff_cache .hypothesis
