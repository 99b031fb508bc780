# The two commands of the README. Each works on a fresh machine with only Python and make:
# it creates .venv, installs the project (pinned by constraints.txt) and then does its job.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 5006

.PHONY: serve test lab install install-test chromium lint bench docs

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

# After installing, the numba kernels are compiled once into their on-disk cache (engine.warm): a fresh checkout's
# first served page would otherwise wait about 20 s for its advisor.
install: $(BIN)/python
	$(BIN)/pip install -q -c constraints.txt -e .
	$(BIN)/python -m engine.warm

install-test: $(BIN)/python
	$(BIN)/pip install -q -c constraints.txt -e '.[test]'
	$(BIN)/python -m engine.warm

# Debian's Chromium for the browser tests (Playwright's own browser download does not work here).
chromium:
	@command -v chromium >/dev/null 2>&1 || { \
	  echo "installing Debian's chromium for the browser tests"; \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

serve: install
	$(BIN)/dojo serve --port $(PORT)

lab: install
	$(BIN)/dojo lab

lint: install-test
	$(BIN)/ruff check .

test: install-test chromium
	$(BIN)/ruff check .
	$(BIN)/python -m mypy engine
	$(BIN)/python -m pytest -q --tb=short tests engine README.md
	$(BIN)/python -m pytest -q --nbmake notebooks

# The teaching notebooks as a static site (build/docs/index.html): executed, one self-contained page each, offline.
docs: install-test
	$(BIN)/python notebooks/build_site.py --out build/docs

# The soak drives Debian's chromium with Playwright (a test extra): 20 tabs for 3 minutes, then closed.
bench: install-test chromium
	$(BIN)/python -m engine.bench
	$(BIN)/python -m engine.bench_distributed
	$(BIN)/python -m apps._bench
	$(BIN)/python -m apps._soak --minutes 3
	$(BIN)/python -m apps._soak --tables 10 --minutes 3
	$(BIN)/python -m apps._tables_bench
