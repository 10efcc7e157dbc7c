# The Dockerised mini-cluster: a private Docker engine when none is reachable, the images (each
# built only when missing or changed), the end-to-end tests' prerequisites and the cluster demo.
# `make images` starts the private engine (root) when no engine answers, and says so.

ENGINE := docker/engine.sh

.PHONY: engine engine-stop images cluster-demo cluster-secure

engine: deps-docker
	@$(ENGINE) status 2>/dev/null || $(ENGINE) start

engine-stop:
	$(ENGINE) stop

images: engine shim venv
	@eval "$$($(ENGINE) env)" && docker/build.sh all

# The live demo on the Docker cluster: mixed workload from three queues, live table, PNG plot,
# verdict; DEMO_ARGS=--keep leaves the cluster running.
cluster-demo: images
	@eval "$$($(ENGINE) env)" && $(PY) docker/demo.py $(DEMO_ARGS)

# The Kerberos-secured cluster by hand (docker/DOCKER.md): KDC, RM and one NodeManager on free
# loopback ports; Ctrl-C tears it down, SECURE_ARGS=--keep leaves it running.
cluster-secure: images
	@eval "$$($(ENGINE) env)" && $(PY) docker/secure.py $(SECURE_ARGS)

TEST_PREREQS += images
