# Two commands on a fresh machine: `make demo` and `make test`. Each sets up what it needs.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMPS := .stamps
export SPARK_LOCAL_IP ?= 127.0.0.1
export PYSPARK_PYTHON ?= $(abspath $(PY))

.PHONY: setup system-deps java spark-archive extension demo test test-fast sql-conformance bench bench-report chaos dist lint clean screenshots notebooks

setup: $(STAMPS)/venv

# The development install: editable, with every extra. The side panel is built and linked by
# `make extension` (scripts/build-extension.sh), so the package build skips its npm step here. The link
# goes first: pip would write the package's shared data through it into kernel_magics/labextension,
# and a wheel built from there would carry install.json twice (a copy left by an earlier install goes too).
$(STAMPS)/venv: pyproject.toml package.json
	@mkdir -p $(STAMPS)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	@if [ -L $(VENV)/share/jupyter/labextensions/flinkbench-jupyterlab ]; then rm $(VENV)/share/jupyter/labextensions/flinkbench-jupyterlab; fi
	@rm -f kernel_magics/labextension/install.json
	SKIP_JUPYTER_BUILDER=1 $(PY) -m pip install -q -e '.[test]'
	@touch $@

system-deps: $(STAMPS)/system-deps

$(STAMPS)/system-deps: scripts/install-system-deps.sh
	@mkdir -p $(STAMPS)
	bash scripts/install-system-deps.sh
	@touch $@

# PySpark needs Java 17+: install it when root with apt-get, else say in one line what to install.
# Runs with the system Python before the venv exists, so a machine without Java stops in seconds.
java:
	@bash scripts/install-system-deps.sh java
	@PYTHONPATH=$(CURDIR) $(PYTHON) -m runtime.java

# Spark JVMs start faster and on less CPU from a class-data archive (runtime/taskmanager/class_archive.py;
# runtime/taskmanager/write_class_archive.py writes it):
# written once per machine and Java/PySpark installation, under ~/.cache/flinkbench; seconds when it exists.
spark-archive: java setup
	@$(PY) -m runtime.taskmanager.write_class_archive 2>$(STAMPS)/spark-archive.log || \
	  { tail -5 $(STAMPS)/spark-archive.log; echo "no Spark class archive: Spark JVMs start without one"; }

demo: java setup spark-archive
	$(PY) -m runtime.demo

# Two parts: everything but the `serial` tests on TEST_WORKERS pytest-xdist workers (a module stays on one
# worker, so its shared fixtures start once), then the fault-injection and timing tests one at a time on an
# otherwise idle machine. JUNIT=path/prefix writes prefix-parallel.xml and prefix-serial.xml.
TEST_WORKERS ?= 2
# The suite's clusters live seconds to minutes: every JVM it starts (Spark, Flink, ZooKeeper) skips the
# optimising compiler, halving the CPU of each start-up (README: the class archive, under "Resource providers").
test: export JAVA_TOOL_OPTIONS ?= -XX:TieredStopAtLevel=1

test: system-deps java setup extension spark-archive
	@$(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m "not serial and not conformance" --durations=40 \
	  $(if $(JUNIT),--junitxml=$(JUNIT)-parallel.xml) $(PYTEST_ARGS); parallel=$$?; \
	$(PY) -m pytest -m serial --durations=40 $(if $(JUNIT),--junitxml=$(JUNIT)-serial.xml) $(PYTEST_ARGS); serial=$$?; \
	for part in $$parallel $$serial; do case $$part in 0|5) ;; *) exit $$part ;; esac; done  # 5: no test in that part

# The SQL conformance suite (tests/conformance): the queries of Flink's SQL reference pages, each answered by
# Apache Flink 2.3 (PyFlink, installed once into its own venv) and by Flinkbench on one local cluster, the final
# tables compared exactly, types included; the report per page goes to test-output/sql-conformance.txt.
sql-conformance: export JAVA_TOOL_OPTIONS ?= -XX:TieredStopAtLevel=1
sql-conformance: java setup spark-archive
	$(PY) -m pytest tests/conformance -m conformance -p no:cacheprovider -q -rA $(PYTEST_ARGS)

test-fast: setup
	$(PY) -m pytest tests/unit $(PYTEST_ARGS)

# Flinkbench against Structured Streaming, each at its best (tests/benchmarks/run_all.py): about an hour on two
# idle cores. BENCH_ARGS="--sizes 2000000,20000000 --warmup 5 --measure 10 --rounds 1 --latency-measure 20
# --first-result-runs 1" makes a short run of every part.
bench: java setup spark-archive
	$(PY) tests/benchmarks/run_all.py $(if $(BENCH_OUT),--out $(BENCH_OUT),) $(BENCH_ARGS)

# make bench, its figures into $(BENCH_DIR)/bench.json, then report.md with its plots beside them.
BENCH_DIR ?= bench-report
bench-report: java setup spark-archive
	$(PY) tests/benchmarks/run_all.py --out $(BENCH_DIR)/bench.json $(BENCH_ARGS)
	$(PY) -m tests.benchmarks.report $(BENCH_DIR)/bench.json

# The long fault run (tests/chaos): file HA, then ZooKeeper HA; prints figures, exits 1 if a check fails.
# CHAOS_ARGS="--ha file --duration 120 --seed 7" narrows it.
chaos: java setup spark-archive
	@bash scripts/install-system-deps.sh zookeeper
	$(PY) -m tests.chaos $(CHAOS_ARGS)

# ruff and mypy (configured in pyproject.toml), module/function sizes, import layers and circles, tsc and ESLint
# on the extension.
lint: setup
	$(PY) -m ruff check runtime kernel_magics tests scripts
	$(PY) -m mypy
	$(PY) scripts/check_sizes.py
	$(PY) scripts/check_imports.py
	$(PY) scripts/gen_event_types.py --check
	$(PY) scripts/gen_function_docs.py --check
	bash scripts/build-extension.sh --lint

# The README's screenshots (extension/screenshots/): the README's first %%flink cell run in a real JupyterLab
# against a local cluster, in headless Chromium (scripts/readme-screenshots.py).
screenshots: java setup
	@bash scripts/install-system-deps.sh chromium
	$(PY) scripts/readme-screenshots.py

# The teaching notebooks run top to bottom and written back with their outputs, as they are committed
# (scripts/run_notebooks.py); NOTEBOOKS=notebooks/04-checkpoints-and-failures.ipynb runs one.
notebooks: java setup spark-archive
	@bash scripts/install-system-deps.sh postgresql
	$(PY) scripts/run_notebooks.py $(NOTEBOOKS)

# sdist and wheel into dist/ (needs node and npm): the sdist carries the built side panel and the wheel
# is built from the sdist, as pip would build it. Only the `build` frontend is needed in the venv.
dist:
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q "build>=1.2"
	rm -rf dist
	$(PY) -m build --outdir dist .
	@ls -l dist

clean:
	rm -rf $(STAMPS) build dist *.egg-info test-output

# Built by scripts/build-extension.sh into kernel_magics/labextension and linked into the venv.
extension: setup
	@if [ -x scripts/build-extension.sh ]; then bash scripts/build-extension.sh; fi
