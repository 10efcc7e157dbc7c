# The Dockerised mini-cluster: a private Docker engine when none is reachable, the images (each
# built only when missing or changed), the end-to-end tests' prerequisites and the cluster demo.
# `make images` starts the private engine (root) when no engine answers, and says so.

ENGINE := docker/engine.sh

.PHONY: engine engine-stop images cluster-demo demo-ha demo-federation bench-failover bench-locality cluster-secure

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

# ResourceManager HA (docker/demo_ha.py): ZooKeeper and two RMs running yarn-drf, a mixed workload,
# kill -9 of the active RM, the standby taking over, verdict; DEMO_ARGS=--keep leaves it running.
demo-ha: images
	@eval "$$($(ENGINE) env)" && $(PY) docker/demo_ha.py $(DEMO_ARGS)

# YARN Federation (docker/demo_federation.py): ZooKeeper, two yarn-drf sub-clusters, the AMRMProxy on
# every NodeManager, a Router; a distributed-shell app through the Router, where its containers ran
# and each sub-cluster's yarn-drf view; DEMO_ARGS=--keep leaves it running.
demo-federation: images
	@eval "$$($(ENGINE) env)" && $(PY) docker/demo_federation.py $(DEMO_ARGS)

# Failover figures, yarn-drf against CapacityScheduler on the same HA cluster (not part of
# `make test`; about 6 minutes a run): BENCH_ARGS="--runs 3 --json out.json".
bench-failover: images
	@eval "$$($(ENGINE) env)" && $(PY) benchmarks/failover/run.py $(BENCH_ARGS)

# Data locality of MapReduce over HDFS, yarn-drf against CapacityScheduler and FairScheduler on one
# cluster and one data set (not part of `make test`; 20 minutes to an hour):
# BENCH_ARGS="--runs 3 --json out.json".
bench-locality: images
	@eval "$$($(ENGINE) env)" && $(PY) benchmarks/locality/run.py $(BENCH_ARGS)

# The Kerberos-secured cluster by hand (docker/DOCKER.md): KDC, RM and one NodeManager on free
# loopback ports; Ctrl-C tears it down, SECURE_ARGS=--keep leaves it running.
cluster-secure: images
	@eval "$$($(ENGINE) env)" && $(PY) docker/secure.py $(SECURE_ARGS)

TEST_PREREQS += images
