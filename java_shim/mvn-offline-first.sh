#!/usr/bin/env bash
# Maven, offline first: after one build the whole dependency tree is in ~/.m2, so builds need no
# network and check nothing remotely. On a fresh machine the offline attempt fails for want of
# artifacts; that failure is expected, so its output is kept out of sight and the build runs
# online after a one-line note. Any other failure (a compile error, a failing unit test) is shown
# as Maven printed it, and so is anything the online build prints.
#   usage: java_shim/mvn-offline-first.sh DIR MAVEN-ARGS...     (runs `mvn -q -B MAVEN-ARGS` in DIR)
set -uo pipefail
dir="$1"
shift
cd "$dir" || exit 1
log="$(mktemp)"
trap 'rm -f "$log"' EXIT

if mvn -q -B -o "$@" >"$log" 2>&1; then
  cat "$log"
  exit 0
fi
# Maven's words for an artifact or plugin missing from ~/.m2 in offline mode.
if ! grep -q "in offline mode" "$log"; then
  cat "$log" >&2
  exit 1
fi
echo "maven: downloading the dependencies of $dir into ~/.m2 (first build; a few minutes)"
exec mvn -q -B "$@"
