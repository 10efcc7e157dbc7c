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

.PHONY: deps venv test demo replay bench bench-bridge clean

# The system packages the project needs, from Debian: each `command:package` pair installs the
# package when the command is missing. As root the missing ones are installed with apt; otherwise
# the exact command is printed and make stops. Nothing is installed when everything is present.
DEPS := dockerd:docker.io /usr/bin/docker:docker.io mmdebstrap:mmdebstrap java:openjdk-17-jdk-headless \
	javac:openjdk-17-jdk-headless mvn:maven
deps:
	@missing=""; \
	for pair in $(DEPS); do \
	  cmd="$${pair%%:*}"; pkg="$${pair#*:}"; \
	  command -v "$$cmd" >/dev/null 2>&1 || case " $$missing " in *" $$pkg "*) ;; *) missing="$$missing $$pkg";; esac; \
	done; \
	$(PYTHON) -c 'import venv, ensurepip' 2>/dev/null || missing="$$missing python3-venv"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
	  echo "deps: missing system packages:$$missing" >&2; \
	  echo "deps: install them as root with:  apt-get update && apt-get install -y --no-install-recommends$$missing" >&2; \
	  exit 1; \
	fi; \
	echo "deps: installing$$missing (Debian packages, a minute or two)"; \
	export DEBIAN_FRONTEND=noninteractive; \
	apt-get update -qq && apt-get install -y -qq --no-install-recommends$$missing >/dev/null

venv: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml | deps
	$(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -e '.[test]'
	touch $@

-include java_shim/shim.mk
-include docker/docker.mk
-include scheduler/sim.mk
-include benchmarks/sls/sls.mk

test: deps venv $(TEST_PREREQS)
	$(PY) -m pytest -q $(PYTEST_ARGS)

# The main job: the Docker mini-cluster running real YARN apps under yarn-drf (docker/docker.mk).
demo: cluster-demo

# The core alone on a simulated clock: no Docker, no Java, a second.
replay: venv
	$(VENV)/bin/yarn-drf replay

bench: venv
	$(VENV)/bin/yarn-drf bench core

# The heartbeat round trip through the real shim, py4j and core vs a raw socket (a few minutes).
bench-bridge: venv shim
	$(PY) benchmarks/bridge/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache .hypothesis
