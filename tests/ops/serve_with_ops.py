"""`yarn-drf serve` with the ops parts attached on its --status-port, for the real-cluster test.

It is the wiring proposed for serve.py (attach_ops in place of the plain status server), with the
file watcher off so that `yarn rmadmin -refreshQueues` is the only trigger the test sees. Once
serve.py calls attach_ops itself this launcher can go.
"""
from __future__ import annotations

import sys

from yarn_bridge import cli, serve
from yarn_bridge.ops_wiring import attach_ops

serve._status_server = lambda service, port: attach_ops(service, port=port, watch_interval=None)

if __name__ == "__main__":
    sys.exit(cli.main(sys.argv[1:]))
