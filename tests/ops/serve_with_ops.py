"""`yarn-drf serve` with the ops parts attached on its --status-port, for the real-cluster test.

It applies the wiring proposed for serve.py (attach_ops in place of the plain status server) with
the queue-file watcher off, so that `yarn rmadmin -refreshQueues` is the only reload trigger the
test sees. If serve.py already calls attach_ops, the watcher is turned off the same way.
"""
from __future__ import annotations

import sys

from yarn_bridge import cli, serve
from yarn_bridge.ops_wiring import attach_ops
from yarn_bridge.status import DEFAULT_STATUS_PORT, LOOPBACK


def _without_watcher(service, port=DEFAULT_STATUS_PORT, host=LOOPBACK, watch_interval=None, token=None):
    return attach_ops(service, port, host, watch_interval=None, token=token)


serve._status_server = lambda service, port: _without_watcher(service, port)
if hasattr(serve, "attach_ops"):
    serve.attach_ops = _without_watcher

if __name__ == "__main__":
    sys.exit(cli.main(sys.argv[1:]))
