#!/usr/bin/env bash
# Builds the base image NAME offline from Debian packages (mmdebstrap | docker import), for machines
# that reach no container registry. Java 17 JRE, Python 3, the shell tools the NodeManager's
# container launch scripts use. Uses the machine's configured Debian mirror.
#   usage: docker/base/build-base.sh NAME
set -euo pipefail
set -o pipefail   # a failed mmdebstrap must not import an empty image
NAME="${1:?usage: build-base.sh IMAGE_NAME}"
DOCKER="${DOCKER:-docker}"
command -v mmdebstrap >/dev/null || { echo "build-base: mmdebstrap not found (apt-get install mmdebstrap)" >&2; exit 1; }
SUITE="${DEBIAN_SUITE:-bookworm}"
PACKAGES="openjdk-17-jre-headless,python3,python3-venv,python3-yaml,procps,ca-certificates,tini"
echo "build-base: building $NAME from Debian $SUITE packages with mmdebstrap (one or two minutes)" >&2
# mmdebstrap's progress (thirty lines of apt and dpkg) is shown only if the build fails.
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# The JDK's install script needs usr/share/man/man1 even when man pages are excluded.
if ! mmdebstrap --variant=apt --include="$PACKAGES" \
  --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
  --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --setup-hook='mkdir -p "$1/usr/share/man/man1"' \
  --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*.bin' \
  "$SUITE" - 2>"$log" | "$DOCKER" import -c 'ENV LANG=C.UTF-8' -c 'CMD ["/bin/bash"]' - "$NAME" >/dev/null; then
  cat "$log" >&2
  echo "build-base: building $NAME failed; mmdebstrap's output is above" >&2
  exit 1
fi
