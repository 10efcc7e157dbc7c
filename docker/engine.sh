#!/usr/bin/env bash
# A private Docker engine for the mini-cluster, its tests and the demo: host networking only (no
# bridge, no iptables), overlay2 storage, everything under .docker-engine/ in the repository
# (git-ignored), its socket at .docker-engine/docker.sock.
#
#   docker/engine.sh start   start it (root only) unless it already answers; print where it listens
#   docker/engine.sh stop    remove leftover test containers, stop the daemon, unmount its mounts
#   docker/engine.sh env     print `export DOCKER_HOST=...` for eval: the private engine if it is
#                            running, else an engine already reachable (DOCKER_HOST or the default)
#   docker/engine.sh status  exit 0 if the engine `env` would select answers
#
# Why a private engine: a new machine has no running engine and no registry; Debian's dockerd
# works when started this way (see the operator notes in docker/DOCKER.md).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="${YARN_DRF_ENGINE_DIR:-$ROOT/.docker-engine}"
SOCK="$DIR/docker.sock"
PIDFILE="$DIR/dockerd.pid"
# Debian's client: the daemon's BuildKit works through it without a buildx plugin.
DOCKER="${DOCKER:-$( [ -x /usr/bin/docker ] && echo /usr/bin/docker || command -v docker || echo docker)}"

log() { echo "engine: $*" >&2; }

private_running() {
  [ -S "$SOCK" ] && DOCKER_HOST="unix://$SOCK" "$DOCKER" version --format '{{.Server.Version}}' >/dev/null 2>&1
}

external_reachable() {
  # An engine the user already has (DOCKER_HOST or the default socket), if it answers.
  [ -z "${YARN_DRF_PRIVATE_ENGINE:-}" ] && "$DOCKER" version --format '{{.Server.Version}}' >/dev/null 2>&1
}

start() {
  if private_running; then
    log "private engine already running at unix://$SOCK"
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    log "no private engine is running and starting one needs root (dockerd); run as root or set DOCKER_HOST"
    return 1
  fi
  command -v dockerd >/dev/null || { log "dockerd not found: install Debian's docker.io (apt-get install docker.io)"; return 1; }
  mkdir -p "$DIR/data" "$DIR/exec"
  log "starting a private Docker engine (root, host networking only) at unix://$SOCK; log in $DIR/dockerd.log"
  # setsid: the daemon outlives the make/pytest process that started it; `stop` ends it by its pid.
  # It must not inherit the caller's other descriptors: a lock held by whoever ran `start` (for
  # example `flock LOCK make images`) would otherwise stay held for as long as the daemon runs.
  (
    for fd in $(ls "/proc/$BASHPID/fd"); do
      [ "$fd" -gt 2 ] && eval "exec $fd>&-"
    done
    exec setsid dockerd --data-root "$DIR/data" --exec-root "$DIR/exec" --pidfile "$PIDFILE" \
      -H "unix://$SOCK" --iptables=false --ip6tables=false --ip-forward=false --ip-masq=false \
      --bridge=none --storage-driver=overlay2 >"$DIR/dockerd.log" 2>&1 < /dev/null
  ) &
  for _ in $(seq 1 100); do
    private_running && { log "ready"; return 0; }
    sleep 0.2
  done
  log "the engine did not answer within 20 s; last lines of $DIR/dockerd.log:"
  tail -n 20 "$DIR/dockerd.log" >&2 || true
  return 1
}

stop() {
  if private_running; then
    # Everything in the private engine is ours: remove every container and the cluster volumes.
    local ids
    ids="$(DOCKER_HOST="unix://$SOCK" "$DOCKER" ps -aq 2>/dev/null || true)"
    # shellcheck disable=SC2086
    [ -n "$ids" ] && DOCKER_HOST="unix://$SOCK" "$DOCKER" rm -f -v $ids >/dev/null 2>&1 || true
    DOCKER_HOST="unix://$SOCK" "$DOCKER" volume prune -f >/dev/null 2>&1 || true
  fi
  if [ -f "$PIDFILE" ]; then
    local pid
    pid="$(cat "$PIDFILE")"
    if kill -0 "$pid" 2>/dev/null; then
      log "stopping the private engine (pid $pid)"
      kill "$pid"
      for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
      kill -0 "$pid" 2>/dev/null && { log "dockerd $pid did not stop in 20 s; killing it"; kill -9 "$pid" || true; }
    fi
    rm -f "$PIDFILE"
  fi
  # Mounts the daemon leaves behind (network namespace, overlay layers), deepest first.
  if [ -d "$DIR" ]; then
    awk -v d="$DIR/" 'index($2, d) == 1 {print $2}' /proc/mounts | sort -r | while read -r m; do
      umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || log "could not unmount $m"
    done
  fi
}

env_cmd() {
  if private_running; then
    echo "export DOCKER_HOST=unix://$SOCK"
  elif external_reachable; then
    echo "export DOCKER_HOST=${DOCKER_HOST:-unix:///var/run/docker.sock}"
  else
    log "no Docker engine answers: run 'docker/engine.sh start' as root, or set DOCKER_HOST"
    return 1
  fi
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  env) env_cmd ;;
  status) private_running || external_reachable ;;
  *) echo "usage: $0 start|stop|env|status" >&2; exit 2 ;;
esac
