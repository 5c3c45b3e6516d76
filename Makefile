# Quire's two commands: `make run` (Quire on this machine) and `make test` (the whole suite).
# Each installs what it needs first. Nothing here needs Redis or PostgreSQL to be running.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test install lint typecheck unit integration bench lock clean

run: install
	$(BIN)/quire dev

test: install lint typecheck
	$(BIN)/pytest

install: $(STAMP)

$(STAMP): pyproject.toml requirements.lock
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Quire needs Python 3.11 or newer")'
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c requirements.lock -e '.[dev]'
	touch $(STAMP)

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

unit: install
	$(BIN)/pytest backend/tests/unit

integration: install
	$(BIN)/pytest backend/tests/integration

bench: install
	$(BIN)/python bench/throughput.py

lock: install
	{ echo "# Pinned versions of every Python dependency, used as constraints by the Makefile."; \
	  echo "# Regenerate with: make lock"; \
	  $(BIN)/pip freeze --exclude-editable | grep -v '^-e'; } > requirements.lock

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
