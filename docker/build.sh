#!/usr/bin/env bash
# Builds the mini-cluster's images, each only when missing or when its inputs changed (a hash of
# its input files is stored as the image label yarn-drf.inputs):
#   yarn-drf/base:bookworm   offline Debian base (mmdebstrap), skipped when BASE_IMAGE is given
#   yarn-drf/spark:3.5.5     /opt/spark only: Spark's jars from Maven Central and the project's
#                            Spark job (docker/spark/pom.xml); the Hadoop image copies it
#   yarn-drf/hadoop:3.4.1    Hadoop runtime (jars from Maven Central via docker/hadoop/pom.xml)
#   yarn-drf/rm:latest       the ResourceManager image: the runtime plus the yarn-drf shim jar and
#                            the Python scheduler when java_shim/target has the jar (else stock)
#   yarn-drf/kdc:bookworm    the secure cluster's Kerberos KDC (MIT krb5-kdc from Debian)
#   usage: docker/build.sh [base|spark|hadoop|rm|kdc|all]      (needs DOCKER_HOST; see docker/engine.sh)
# Environment: BASE_IMAGE (a Debian/Ubuntu image from your registry instead of the offline base),
#   DOCKER (the docker client; Debian's /usr/bin/docker is preferred for BuildKit).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
DOCKER="${DOCKER:-$( [ -x /usr/bin/docker ] && echo /usr/bin/docker || command -v docker)}"
export DOCKER DOCKER_BUILDKIT=1
BUILD="$ROOT/build/docker"
HADOOP_VERSION=3.4.1
BASE_DEFAULT=yarn-drf/base:bookworm
HADOOP_IMAGE="yarn-drf/hadoop:$HADOOP_VERSION"
SPARK_VERSION=3.5.5
SPARK_IMAGE="yarn-drf/spark:$SPARK_VERSION"
RM_IMAGE=yarn-drf/rm:latest
KDC_IMAGE=yarn-drf/kdc:bookworm

log() { echo "build: $*" >&2; }

inputs_hash() { # files... -> one hash of their names and contents
  for f in "$@"; do [ -e "$f" ] && { echo "$f"; cat "$f"; }; done | sha256sum | cut -c1-16
}

current_label() {
  "$DOCKER" image inspect --format '{{ index .Config.Labels "yarn-drf.inputs" }}' "$1" 2>/dev/null || true
}

build_base() {
  if [ -n "${BASE_IMAGE:-}" ]; then log "base: using BASE_IMAGE=$BASE_IMAGE"; return; fi
  if "$DOCKER" image inspect "$BASE_DEFAULT" >/dev/null 2>&1; then log "base: $BASE_DEFAULT exists"; return; fi
  docker/base/build-base.sh "$BASE_DEFAULT"
}

# Spark in an image of its own: its ~220 MB of jars are assembled and sent to the engine only when
# docker/spark changes, not with every rebuild of the Hadoop image that copies them.
build_spark() {
  local ctx="$BUILD/spark" hash
  hash="$(inputs_hash $(git ls-files -co --exclude-standard docker/spark | grep -v '^docker/spark/target/' | sort))"
  if [ "$(current_label "$SPARK_IMAGE")" = "$hash" ]; then log "spark: $SPARK_IMAGE is up to date"; return; fi
  log "spark: assembling Spark $SPARK_VERSION from Maven Central and building the project's Spark job (first run downloads ~220 MB)"
  rm -rf "$ctx"; mkdir -p "$ctx"
  mvn -B -q -f docker/spark/pom.xml package dependency:copy-dependencies -DoutputDirectory="$ctx/jars"
  cp docker/spark/target/yarn-drf-spark-job-*.jar "$ctx/yarn-drf-spark-job.jar"
  cp -r docker/spark/Dockerfile docker/spark/bin docker/spark/conf "$ctx/"
  log "spark: building $SPARK_IMAGE"
  "$DOCKER" build -q --network host --label yarn-drf.inputs="$hash" -t "$SPARK_IMAGE" "$ctx" >/dev/null
  "$DOCKER" image prune -f >/dev/null  # the replaced image, now untagged
}

build_hadoop() {
  local base="${BASE_IMAGE:-$BASE_DEFAULT}" ctx="$BUILD/hadoop" hash
  hash="$(inputs_hash docker/hadoop/pom.xml docker/hadoop/Dockerfile docker/hadoop/bin/yarn docker/hadoop/bin/hdfs \
    docker/hadoop/render_conf.py docker/hadoop/secure_conf.py docker/hadoop/federation_conf.py docker/hadoop/entrypoint.sh \
    docker/hadoop/log4j.properties conf/hadoop/java17-opens <(echo "$base" "$("$DOCKER" image inspect --format '{{.Id}}' "$base" 2>/dev/null)" \
      "$("$DOCKER" image inspect --format '{{.Id}}' "$SPARK_IMAGE")"))"
  if [ "$(current_label "$HADOOP_IMAGE")" = "$hash" ]; then log "hadoop: $HADOOP_IMAGE is up to date"; return; fi
  log "hadoop: assembling the Hadoop $HADOOP_VERSION jars from Maven Central (first run downloads ~90 MB)"
  rm -rf "$ctx"; mkdir -p "$ctx"
  mvn -B -q -f docker/hadoop/pom.xml dependency:copy-dependencies -DoutputDirectory="$ctx/lib"
  cp -r docker/hadoop/Dockerfile docker/hadoop/bin docker/hadoop/render_conf.py docker/hadoop/secure_conf.py \
    docker/hadoop/federation_conf.py docker/hadoop/entrypoint.sh docker/hadoop/log4j.properties conf/hadoop/java17-opens "$ctx/"
  log "hadoop: building $HADOOP_IMAGE from $base"
  "$DOCKER" build -q --network host --build-arg BASE_IMAGE="$base" --build-arg SPARK_IMAGE="$SPARK_IMAGE" \
    --label yarn-drf.inputs="$hash" -t "$HADOOP_IMAGE" "$ctx" >/dev/null
  "$DOCKER" image prune -f >/dev/null  # the replaced image, now untagged
}

build_rm() {
  local ctx="$BUILD/rm" jar hash
  jar="$(ls java_shim/target/yarn-drf-shim-*.jar 2>/dev/null | grep -v original | head -n1 || true)"
  [ -n "$jar" ] || { log "rm: no shim jar in java_shim/target: run 'make shim' first"; return 1; }
  # The Python package: its sources and pyproject decide whether the image is current.
  hash="$(inputs_hash docker/rm/Dockerfile "$jar" pyproject.toml $(git ls-files -co --exclude-standard \
    scheduler yarn_bridge | grep -v -e __pycache__ -e '\.pyc$' | sort) \
    <(echo "$("$DOCKER" image inspect --format '{{.Id}}' "$HADOOP_IMAGE")"))"
  if [ "$(current_label "$RM_IMAGE")" = "$hash" ]; then log "rm: $RM_IMAGE is up to date"; return; fi
  rm -rf "$ctx"; mkdir -p "$ctx/wheels"
  cp docker/rm/Dockerfile "$ctx/"; cp "$jar" "$ctx/yarn-drf-shim.jar"
  log "rm: building wheels of yarn-drf and its pinned dependencies"
  local py="$ROOT/.venv/bin/python"; [ -x "$py" ] || py=python3
  # The dependencies' wheels are kept between builds (build/docker/wheelhouse): only the
  # project's own wheel is rebuilt when its sources change.
  mkdir -p "$BUILD/wheelhouse"; rm -f "$BUILD"/wheelhouse/yarn_drf-*.whl
  "$py" -m pip wheel --quiet --find-links "$BUILD/wheelhouse" --wheel-dir "$BUILD/wheelhouse" "$ROOT" >/dev/null
  cp -l "$BUILD"/wheelhouse/*.whl "$ctx/wheels/"
  log "rm: building $RM_IMAGE"
  "$DOCKER" build -q --network host --build-arg HADOOP_IMAGE="$HADOOP_IMAGE" --label yarn-drf.inputs="$hash" \
    -t "$RM_IMAGE" "$ctx" >/dev/null
  "$DOCKER" image prune -f >/dev/null  # the replaced image, now untagged
}

# The secure cluster's KDC (Debian's MIT krb5-kdc on the base image); only the secure variant uses it.
build_kdc() {
  local base="${BASE_IMAGE:-$BASE_DEFAULT}" ctx="$BUILD/kdc" hash
  hash="$(inputs_hash docker/kdc/Dockerfile docker/kdc/kdc-start.sh \
    <(echo "$base" "$("$DOCKER" image inspect --format '{{.Id}}' "$base" 2>/dev/null)"))"
  if [ "$(current_label "$KDC_IMAGE")" = "$hash" ]; then log "kdc: $KDC_IMAGE is up to date"; return; fi
  rm -rf "$ctx"; mkdir -p "$ctx"
  cp docker/kdc/Dockerfile docker/kdc/kdc-start.sh "$ctx/"
  log "kdc: building $KDC_IMAGE from $base (Debian's krb5-kdc)"
  "$DOCKER" build -q --network host --build-arg BASE_IMAGE="$base" --label yarn-drf.inputs="$hash" \
    -t "$KDC_IMAGE" "$ctx" >/dev/null
  "$DOCKER" image prune -f >/dev/null  # the replaced image, now untagged
}

case "${1:-all}" in
  base) build_base ;;
  spark) build_spark ;;
  hadoop) build_base; build_spark; build_hadoop ;;
  rm) build_base; build_spark; build_hadoop; build_rm ;;
  kdc) build_base; build_kdc ;;
  all) build_base; build_spark; build_hadoop; build_rm; build_kdc ;;
  *) echo "usage: $0 [base|spark|hadoop|rm|kdc|all]" >&2; exit 2 ;;
esac
