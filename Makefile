# yarn-drf — build, test and demo entry points.
# Parts of the project add their own targets in the *.mk fragments included below; each appends the
# targets `make test` needs to TEST_PREREQS and its pytest paths to TEST_PATHS.

SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(VENV)/bin/pip

TEST_PREREQS :=
PYTEST_ARGS ?=

.PHONY: contract deps deps-python deps-java deps-docker deps-browser venv compiled test test-pure demo replay bench bench-bridge bench-scale clean

# The Debian packages each part needs (.ci/deps.sh): installed with apt when run as root,
# otherwise the exact apt command is printed and make stops. Silent when everything is present.
deps:
	@PYTHON=$(PYTHON) .ci/deps.sh python java docker browser
deps-python deps-java deps-docker deps-browser:
	@PYTHON=$(PYTHON) .ci/deps.sh $(@:deps-%=%)

venv: $(VENV)/.installed compiled

# PYTHONWARNINGS: setuptools prints a warning banner for every editable install, even a successful
# one (pip's own errors still show).
$(VENV)/.installed: pyproject.toml | deps-python
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	PYTHONWARNINGS=ignore $(PIP) install --quiet -e '.[test,compile]'
	touch $@

# The decision path compiled with mypyc (scheduler/compiled.py), rebuilt when its sources change;
# the package uses it only while it matches them. YARN_DRF_PURE=1 runs the pure-Python modules.
HOT_SOURCES := $(shell $(PYTHON) scheduler/compiled.py)
compiled: build/mypyc/sources.sha256

build/mypyc/sources.sha256: $(HOT_SOURCES) $(VENV)/.installed
	$(PY) -c 'from scheduler.compiled import build; build()'

-include java_shim/shim.mk
-include java_shim/hadoop-tests/hadoop-tests.mk
-include docker/docker.mk
-include scheduler/sim.mk
-include benchmarks/sls/sls.mk

test: deps venv $(TEST_PREREQS)
	$(PY) -m pytest -q $(PYTEST_ARGS)

# The core's and the simulator's tests on the pure-Python modules (`make test` runs them compiled).
test-pure: venv
	YARN_DRF_PURE=1 $(PY) -m pytest -q tests/core tests/sim $(PYTEST_ARGS)

# The main job: the Docker mini-cluster running real YARN apps under yarn-drf (docker/docker.mk).
demo: cluster-demo

# The bridge's tables from its one spec, yarn_bridge/contract.yaml: the Python field tables and reply encoders, the Java
# constants, request and reply value classes (and the tests' request readers and reply writers) and docs/bridge.md's
# field tables and version history (tests/bridge/test_contract_spec.py and the JUnit ContractSpecTest fail while they
# are stale).
contract: venv
	$(PY) -m yarn_bridge.contract_gen

# The core alone on a simulated clock: no Docker, no Java, a second.
replay: venv
	$(VENV)/bin/yarn-drf replay

bench: venv
	$(VENV)/bin/yarn-drf bench core

# The heartbeat round trip through the real shim, py4j and core vs a raw socket (a few minutes).
bench-bridge: venv shim
	$(PY) benchmarks/bridge/run.py

# 10,000 NodeManagers and 200 apps through the real shim and core, no SLS (about a minute).
bench-scale: venv shim
	$(PY) benchmarks/scale/driver.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
