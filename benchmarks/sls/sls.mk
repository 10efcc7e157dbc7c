# The SLS benchmark (benchmarks/sls): Hadoop's Scheduler Load Simulator with FairScheduler (drf),
# CapacityScheduler (DominantResourceCalculator) and yarn-drf on the same nodes and trace.
# `make bench-sls` runs the full comparison (not part of CI); `make test` runs a tiny yarn-drf
# SLS run (tests/sls), which needs the companion jar built here.
SLS_JAR := benchmarks/sls/java/target/yarn-drf-sls-0.1.0.jar
SLS_SOURCES := $(shell find benchmarks/sls/java/src -name '*.java' 2>/dev/null) benchmarks/sls/java/pom.xml
SLS_ARGS ?=

.PHONY: sls-jar bench-sls bench-sls-preemption

sls-jar: $(SLS_JAR)

# Compiled against the shim jar; offline first (~/.m2 warm), online on a fresh machine.
$(SLS_JAR): $(SLS_SOURCES) $(SHIM_JAR)
	java_shim/mvn-offline-first.sh benchmarks/sls/java package

bench-sls: venv shim sls-jar
	$(PY) benchmarks/sls/run.py $(SLS_ARGS)

# The late-queue scenario with preemption on for all three (benchmarks/sls/preemption.py).
bench-sls-preemption: venv shim sls-jar
	$(PY) benchmarks/sls/preemption.py $(SLS_ARGS)

TEST_PREREQS += sls-jar
