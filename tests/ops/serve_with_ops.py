"""`yarn-drf serve` with its queue-file watcher off, for the real-cluster test: `yarn rmadmin
-refreshQueues` is then the only reload trigger the test sees."""
from __future__ import annotations

import sys

from yarn_bridge import cli, serve
from yarn_bridge.ops_wiring import attach_ops


def _without_watcher(service, *args, **kwargs):
    return attach_ops(service, *args, **{**kwargs, "watch_interval": None})


serve.attach_ops = _without_watcher

if __name__ == "__main__":
    sys.exit(cli.main(sys.argv[1:]))
