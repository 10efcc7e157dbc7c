# Hadoop 3.4.1's own ResourceManager tests against CapacityScheduler, FairScheduler and yarn-drf
# (java_shim/HADOOP_TESTS.md). `make hadoop-rm-tests` runs the classes CI runs (.ci/run) and fails if
# a test that passes on both of YARN's schedulers does not pass on yarn-drf; `make
# hadoop-rm-tests-all` runs the wider set. Each prints the table of every test per scheduler.
HADOOP_TESTS := java_shim/hadoop-tests
HADOOP_TESTS_MVN := java_shim/mvn-offline-first.sh $(HADOOP_TESTS) '-Dsurefire.opens=$(JAVA17_OPENS)' \
	'-Dyarndrf.serve-command=$(abspath $(VENV))/bin/yarn-drf serve'

.PHONY: hadoop-rm-tests hadoop-rm-tests-all

hadoop-rm-tests: venv shim
	$(HADOOP_TESTS_MVN) clean test
	$(PY) $(HADOOP_TESTS)/table.py $(HADOOP_TESTS)/target/reports java_shim/HADOOP_TESTS.md

hadoop-rm-tests-all: venv shim
	$(HADOOP_TESTS_MVN) -Pall clean test
	$(PY) $(HADOOP_TESTS)/table.py $(HADOOP_TESTS)/target/reports java_shim/HADOOP_TESTS.md
