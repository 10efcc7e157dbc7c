# Hadoop 3.4.1's own ResourceManager tests against CapacityScheduler, FairScheduler and yarn-drf
# (java_shim/HADOOP_TESTS.md). `make hadoop-rm-tests` (CI, .ci/run) runs the CI set on yarn-drf
# alone and fails if a test that passed on both of YARN's schedulers in the run HADOOP_TESTS.md
# records does not pass on yarn-drf; `make hadoop-rm-tests-all` runs the wider set on all three
# and records its table in HADOOP_TESTS.md. Each prints the table of every test per scheduler.
HADOOP_TESTS := java_shim/hadoop-tests
HADOOP_TESTS_MVN := java_shim/mvn-offline-first.sh $(HADOOP_TESTS) '-Dsurefire.opens=$(JAVA17_OPENS)' \
	'-Dyarndrf.serve-command=$(abspath $(VENV))/bin/yarn-drf serve'

.PHONY: hadoop-rm-tests hadoop-rm-tests-all

hadoop-rm-tests: venv shim
	$(HADOOP_TESTS_MVN) -Dyarndrf.schedulers=YARN_DRF -Dskip.yarn.schedulers=true clean test
	$(PY) $(HADOOP_TESTS)/table.py $(HADOOP_TESTS)/target/reports java_shim/HADOOP_TESTS.md

hadoop-rm-tests-all: venv shim
	$(HADOOP_TESTS_MVN) -Pall clean test
	$(PY) $(HADOOP_TESTS)/table.py $(HADOOP_TESTS)/target/reports java_shim/HADOOP_TESTS.md --write
