#!/usr/bin/env bash
# Container start: write the Hadoop configuration from the environment, prepare the shared volume,
# then run the role: `resourcemanager`, `nodemanager`, or any command (a client).
set -euo pipefail
python3 /opt/hadoop/bin/render_conf.py
# The shared volume holds the job staging area and the user's home (LocalFileSystem's home
# directory, where distributed shell uploads its jar), at the same path in every container.
mkdir -p /shared/staging "$(getent passwd "$(id -un)" | cut -d: -f6)" || {
  echo "entrypoint: /shared is not writable by $(id -un) (uid $(id -u)); mount a volume owned by it" >&2; exit 1; }
case "${1:-}" in
  resourcemanager|nodemanager) exec yarn "$1" ;;
  "") exec bash ;;
  *) exec "$@" ;;
esac
