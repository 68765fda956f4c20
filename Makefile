# `make demo` and `make test` each set everything up on a fresh machine, then run.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: system-deps install test lint typecheck unit demo bench clean

install: $(STAMP)

# Debian packages (OCR engine, headless browser) listed in system-packages.txt.
system-deps:
	scripts/install-system-packages.sh

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

unit: $(STAMP)
	$(VENV)/bin/pytest -q

test: lint typecheck unit

demo: $(STAMP)
	RAGWRIGHT_INDEX=.demo-index $(VENV)/bin/ragwright ingest docs
	RAGWRIGHT_INDEX=.demo-index $(VENV)/bin/ragwright search "how do I filter results by source"
	RAGWRIGHT_INDEX=.demo-index $(VENV)/bin/ragwright search "content-addressed chunk ids" --mode bm25 --top-k 3
	RAGWRIGHT_INDEX=.demo-index $(VENV)/bin/ragwright ask "What happens when a file fails to parse during ingest?"

bench: $(STAMP)
	$(PY) benchmarks/scifact.py
	$(PY) benchmarks/latency.py
	$(PY) benchmarks/ingest_throughput.py
	$(PY) benchmarks/parse_throughput.py

clean:
	rm -rf $(VENV) .demo-index .pytest_cache .mypy_cache .ruff_cache
