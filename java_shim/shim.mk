# The Java shim: one jar for the ResourceManager (py4j bundled) and the Maven classpath the
# integration tests launch real ResourceManager / NodeManager JVMs from.
SHIM_JAR := java_shim/target/yarn-drf-shim-0.1.0.jar
SHIM_SOURCES := $(shell find java_shim/src -name '*.java' 2>/dev/null) java_shim/pom.xml \
	$(wildcard tests/bridge/contract/*.json) yarn_bridge/contract.yaml
# Hadoop daemons on Java 17 need these JDK internals opened (one flag a line).
JAVA17_OPENS := $(shell cat conf/hadoop/java17-opens 2>/dev/null | tr '\n' ' ')

.PHONY: shim shim-test

shim: $(SHIM_JAR)

# Offline first (the dependency tree is in ~/.m2 after one build); a fresh machine downloads it once.
# The venv first: some JUnit tests run the real core (`yarn-drf serve`) as the RM's child.
# A test that fails is run once more at once and counts as a pass only then, printed as a flake in
# the summary ("Flakes: N"): the MockRM tests race the RM's event thread, and one flake must not
# fail a build on a loaded machine (`make demo` builds the jar too). A test that fails twice fails it.
$(SHIM_JAR): $(SHIM_SOURCES) | deps-java venv
	java_shim/mvn-offline-first.sh java_shim '-Dsurefire.opens=$(JAVA17_OPENS)' -Dsurefire.rerunFailingTestsCount=1 package

TEST_PREREQS += shim
