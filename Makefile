# `make demo` and `make test` each set everything up on a fresh machine, then run. The Debian
# packages (OCR engine, headless browser) are installed when this runs as root (or with
# passwordless sudo) on a system with apt; otherwise the last lines say what was skipped and
# how to install it.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

SYSTEM_PACKAGES := scripts/install-system-packages.sh

.PHONY: system-deps system-deps-if-possible install test lint typecheck unit demo bench clean

install: $(STAMP)

# Debian packages (OCR engine, headless browser) listed in system-packages.txt: installed, or
# an error (.ci/run). The -if-possible variant installs them when it can and goes on otherwise.
system-deps:
	$(SYSTEM_PACKAGES)

system-deps-if-possible:
	@$(SYSTEM_PACKAGES) --if-possible

# Pinned: constraints.txt fixes every transitive version, so a fresh machine installs the same set.
$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $(STAMP)

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests benchmarks
	$(VENV)/bin/ruff format --check src tests benchmarks

typecheck: $(STAMP)
	$(VENV)/bin/mypy

# pytest's summary, then what was skipped for want of system packages (if anything).
unit: $(STAMP) system-deps-if-possible
	@status=0; $(VENV)/bin/pytest -q || status=$$?; $(SYSTEM_PACKAGES) --report; exit $$status

test: lint typecheck unit

demo: $(STAMP) system-deps-if-possible
	RAGWRIGHT_INDEX=.demo-index $(VENV)/bin/ragwright ingest docs
	RAGWRIGHT_INDEX=.demo-index $(VENV)/bin/ragwright search "how do I filter results by source"
	RAGWRIGHT_INDEX=.demo-index $(VENV)/bin/ragwright search "content-addressed chunk ids" --mode bm25 --top-k 3
	RAGWRIGHT_INDEX=.demo-index $(VENV)/bin/ragwright ask "What happens when a file fails to parse during ingest?"
	@$(SYSTEM_PACKAGES) --report

bench: $(STAMP)
	$(PY) benchmarks/scifact.py
	$(PY) benchmarks/latency.py
	$(PY) benchmarks/ingest_throughput.py
	$(PY) benchmarks/parse_throughput.py

clean:
	rm -rf $(VENV) .demo-index .pytest_cache .mypy_cache .ruff_cache
