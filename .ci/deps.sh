#!/usr/bin/env bash
# Installs the Debian packages a part of the project needs, when their commands are missing:
#   python   python3-venv (the venv and ensurepip modules): the .venv every Python target uses;
#            gcc and python3-dev (a C compiler and Python.h): mypyc compiles the decision path
#   java     openjdk-17-jdk-headless (java, javac) and maven (mvn): the shim and SLS jars
#   docker   docker.io (dockerd and Debian's /usr/bin/docker), mmdebstrap (the offline base image) and
#            docker-compose (the README's commands for the cluster; Debian's docker.io has no plugin)
#   browser  chromium and chromium-driver (/usr/bin/chromium, /usr/bin/chromedriver): the dashboard's
#            tests drive the real browser headless
# As root the missing packages are installed with apt-get, whose output is shown only if it fails;
# otherwise the exact command is printed and the exit status is 1. Nothing is installed, and
# nothing printed, when everything is present.
#   usage: .ci/deps.sh PART...            (`make deps` checks all four)
set -euo pipefail
PYTHON="${PYTHON:-python3}"

missing=()
need() { [[ " ${missing[*]} " == *" $1 "* ]] || missing+=("$1"); }

for part in "$@"; do
  case "$part" in
    python) "$PYTHON" -c 'import venv, ensurepip' 2>/dev/null || need python3-venv
            command -v cc >/dev/null || need gcc
            "$PYTHON" -c 'import os, sysconfig; assert os.path.exists(sysconfig.get_path("include") + "/Python.h")' \
              2>/dev/null || need python3-dev ;;
    java) for cmd in java javac; do command -v "$cmd" >/dev/null || need openjdk-17-jdk-headless; done
          command -v mvn >/dev/null || need maven ;;
    docker) command -v dockerd >/dev/null && [ -x /usr/bin/docker ] || need docker.io
            command -v mmdebstrap >/dev/null || need mmdebstrap
            command -v docker-compose >/dev/null || need docker-compose ;;
    browser) [ -x /usr/bin/chromium ] || need chromium
             [ -x /usr/bin/chromedriver ] || need chromium-driver ;;
    *) echo "deps: unknown part '$part' (python, java, docker or browser)" >&2; exit 2 ;;
  esac
done
[ "${#missing[@]}" -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "deps: missing Debian packages: ${missing[*]}" >&2
  echo "deps: install them as root with:  apt-get update && apt-get install -y --no-install-recommends ${missing[*]}" >&2
  exit 1
fi
echo "deps: installing ${missing[*]} from Debian (a minute or two)"
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get update -q && apt-get install -y -q --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "deps: apt-get failed; its output is above" >&2
  exit 1
fi
