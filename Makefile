# crystalbench: `make demo` and `make test` work from a fresh clone.
# Each target creates or updates .venv and installs what it needs; constraints.txt pins
# torch to the CPU build that lies on disk (never a multi-GB CUDA download).

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip
PIP_INSTALL := $(PIP) install --disable-pip-version-check -q -c constraints.txt
SOURCES := src tests benchmarks scripts tools

.PHONY: demo test test-fast smoke lint format typecheck pytest browser docs bench-env bench clean help

help:
	@echo "make demo   - install and score the bundled sample offline (prints a leaderboard)"
	@echo "make test   - install test extras, run lint (ruff, mypy) and the whole test suite"
	@echo "make test-fast - the quick loop: the suite without tests marked slow (no lint)"
	@echo "make docs   - build the documentation site strictly (any warning fails) into site/"
	@echo "make smoke  - build the sdist and wheel, install the wheel in a fresh venv and run the"
	@echo "              README's commands from another folder; run the sdist's tests (CI runs it)"
	@echo "make bench  - build benchmarks/.venv-bench (with crystal-metrics) and run the scoring"
	@echo "              benchmark against crystal-metrics (see benchmarks/RESULTS.md)"

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --disable-pip-version-check -q --upgrade pip

$(VENV)/.installed-demo: $(BIN)/python pyproject.toml constraints.txt
	$(PIP_INSTALL) -e ".[embed,onnx]"
	@touch $@

$(VENV)/.installed-test: $(BIN)/python pyproject.toml constraints.txt
	$(PIP_INSTALL) -e ".[all,test]"
	@touch $@

$(VENV)/.installed-docs: $(BIN)/python pyproject.toml constraints.txt
	$(PIP_INSTALL) -e ".[docs]"
	@touch $@

demo: $(VENV)/.installed-demo
	$(BIN)/crystal demo

lint: $(VENV)/.installed-test
	$(BIN)/ruff check $(SOURCES)
	$(BIN)/ruff format --check $(SOURCES)
	$(BIN)/mypy

format: $(VENV)/.installed-test
	$(BIN)/ruff format $(SOURCES)
	$(BIN)/ruff check --fix $(SOURCES)

# Browser tests drive Debian's chromium through Playwright; install it when missing.
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing Debian chromium for the browser tests"; \
	    DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; \
	  else echo "chromium is missing: install Debian's chromium package for the browser tests"; fi; }

pytest: $(VENV)/.installed-test browser
	HF_HUB_OFFLINE=1 $(BIN)/pytest

test: lint pytest

# The quick loop while working: everything but the tests marked slow (real models, browser).
test-fast: $(VENV)/.installed-test
	HF_HUB_OFFLINE=1 $(BIN)/pytest -q -m "not slow"

# The documentation site (mkdocs.yml): strict, so a broken link, a missing page or an
# unresolved reference fails the build. Its code examples are tested by `make test`
# (tests/docs/). NO_MKDOCS_2_WARNING silences Material's banner about MkDocs 2.
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict --site-dir site

# The package as users get it (tools/smoke_wheel.py): about 5 minutes, most of it installing.
smoke: $(VENV)/.installed-test
	$(BIN)/python tools/smoke_wheel.py --sdist-tests

# The benchmarks have their own environment: crystal-metrics never enters .venv.
BENCH_PY := benchmarks/.venv-bench/bin/python
BENCH_ARGS ?= leaderboard --items 300 --sets 5 --wait-quiet 0.2

bench-env:
	PYTHON=$(PYTHON) benchmarks/setup_env.sh

bench: bench-env
	$(BENCH_PY) benchmarks/bench_scoring.py $(BENCH_ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache crystal-demo site
