# Quire's two commands: `make run` (Quire on this machine) and `make test` (the whole suite).
# Each installs what it needs first. Neither needs Redis or PostgreSQL to be running.

PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
ASSETS := static/.built
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

.PHONY: run test install ocr browser loadgen lint typecheck unit integration e2e stress bench lock clean

run: install
	$(BIN)/quire dev

# Two passes: most tests shared among three processes (the work is mostly waiting on servers and
# workers), then the tests marked `serial` alone (they measure time, or load the whole machine).
# Both always run; the command fails if either does.
test: install browser lint typecheck
	$(BIN)/pytest -n 3 --dist loadgroup -m "not serial"; parallel=$$?; \
	$(BIN)/pytest -m serial --output=test-results/playwright-serial; serial=$$?; \
	exit $$(( parallel || serial ))

install: $(STAMP) $(ASSETS) ocr

# Scans and photos are read by Debian's Tesseract 5 with these languages' packs (the languages the invoice reader
# knows, and orientation); nothing is downloaded at run time. Any pack missing installs them all.
OCR_LANGS := eng deu fra nld spa ita por pol ces dan swe nor fin osd
OCR_PACKAGES := tesseract-ocr $(addprefix tesseract-ocr-,$(OCR_LANGS))
ocr:
	@have="$$(command -v tesseract >/dev/null && tesseract --list-langs 2>/dev/null)"; missing=0; \
	for lang in $(OCR_LANGS); do echo "$$have" | grep -qx $$lang || missing=1; done; \
	[ $$missing = 0 ] || { \
	  echo "installing Debian's Tesseract OCR and its language packs"; \
	  $(SUDO) apt-get update && $(SUDO) apt-get install -y --no-install-recommends $(OCR_PACKAGES); }

$(STAMP): pyproject.toml requirements.lock
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Quire needs Python 3.11 or newer")'
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c requirements.lock -e '.[dev]'
	touch $(STAMP)

# The served assets: htmx from npm and our own sources, built into static/.
$(ASSETS): frontend/package.json frontend/package-lock.json frontend/build.mjs $(wildcard frontend/src/*)
	@command -v npm >/dev/null || { echo "installing Node.js and npm"; $(SUDO) apt-get update && $(SUDO) apt-get install -y nodejs npm; }
	cd frontend && npm ci --no-audit --no-fund --loglevel=error
	cd frontend && npm run build
	touch $(ASSETS)

# The browser tests drive Debian's Chromium; Playwright never downloads a browser.
browser:
	@command -v chromium >/dev/null || { echo "installing Debian's chromium for the browser tests"; \
	  $(SUDO) apt-get update && $(SUDO) apt-get install -y chromium; }

# The HTTP benchmarks load the server with Debian's compiled wrk, whose own CPU share stays small.
loadgen:
	@command -v wrk >/dev/null || { echo "installing Debian's wrk for the HTTP benchmarks"; \
	  $(SUDO) apt-get update && $(SUDO) apt-get install -y wrk; }

lint: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: install
	$(BIN)/mypy

unit: install
	$(BIN)/pytest backend/tests/unit

integration: install
	$(BIN)/pytest backend/tests/integration

e2e: install browser
	$(BIN)/pytest e2e

# The runbook at the issue's full sizes (500 killed-worker jobs, 1,000 submissions, ...).
stress: install
	QUIRE_STRESS=full $(BIN)/pytest backend/tests/stress

bench: install loadgen
	$(BIN)/python bench/suite.py
	$(BIN)/python bench/workflows.py
	test -d var/invoice2data || $(BIN)/python bench/fetch_invoice2data.py || echo "invoice2data's invoices not fetched: that set is left out"
	$(BIN)/python bench/invoices.py
	$(BIN)/python bench/ocr.py
	$(BIN)/python bench/admin_paging.py
	$(BIN)/python bench/upload_memory.py
	$(BIN)/python bench/streams.py
	$(BIN)/python bench/batches.py
	test -d var/summary-unseen || bash bench/fetch_summary_corpus.sh
	$(BIN)/python bench/summaries.py

lock: install
	{ echo "# Pinned versions of every Python dependency, used as constraints by the Makefile."; \
	  echo "# Regenerate with: make lock"; \
	  $(BIN)/pip freeze --exclude-editable | grep -v '^-e'; } > requirements.lock

clean:
	rm -rf $(VENV) static frontend/node_modules .pytest_cache .mypy_cache .ruff_cache test-results
