# Two commands on a fresh machine: `make demo` and `make test`. Each sets up what it needs.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMPS := .stamps
export SPARK_LOCAL_IP ?= 127.0.0.1
export PYSPARK_PYTHON ?= $(abspath $(PY))

.PHONY: setup system-deps extension demo test test-fast bench lint clean

setup: $(STAMPS)/venv

$(STAMPS)/venv: pyproject.toml
	@mkdir -p $(STAMPS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	@touch $@

system-deps: $(STAMPS)/system-deps

$(STAMPS)/system-deps: scripts/install-system-deps.sh
	@mkdir -p $(STAMPS)
	bash scripts/install-system-deps.sh
	@touch $@

demo: setup
	$(PY) -m runtime.demo

test: setup system-deps extension
	$(PY) -m pytest $(PYTEST_ARGS)

test-fast: setup
	$(PY) -m pytest tests/unit $(PYTEST_ARGS)

bench: setup
	$(PY) tests/benchmarks/run_all.py $(if $(BENCH_OUT),--out $(BENCH_OUT),)

# ruff and mypy (configured in pyproject.toml), module/function sizes, tsc and ESLint on the extension.
lint: setup
	$(PY) -m ruff check runtime kernel_magics tests scripts
	$(PY) -m mypy
	$(PY) scripts/check_sizes.py
	bash scripts/build-extension.sh --lint

clean:
	rm -rf $(STAMPS) build dist *.egg-info test-output

# Built by scripts/build-extension.sh into kernel_magics/labextension (see extension/README.md).
extension: setup
	@if [ -x scripts/build-extension.sh ]; then bash scripts/build-extension.sh; fi
