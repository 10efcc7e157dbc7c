"""The `yarn-drf` command line: one sub-command per module that owns the feature.

Each module named in COMMANDS exposes `register(subparsers)`, which adds its sub-command(s)
and sets `func` on the parser to a callable taking the parsed args and returning an exit code.
"""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

COMMANDS = [
    "scheduler.commands",
    "yarn_bridge.serve",
    "scheduler.sim.cli",
    "yarn_bridge.ops_cli",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="yarn-drf",
        description="Weighted Dominant Resource Fairness scheduling for Hadoop YARN.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for module_name in COMMANDS:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()  # output still buffered meets a closed pipe here, not at interpreter exit
    except BrokenPipeError:
        return stdout_closed()
    return code


def stdout_closed() -> int:
    """The reader of stdout went away (`yarn-drf ... | head`): stop quietly, as a tool killed by SIGPIPE.

    Python's recommended pattern: point stdout at /dev/null so that the flush at exit cannot raise
    again, and exit with the status a shell shows for SIGPIPE (128 + 13)."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 128 + signal.SIGPIPE


if __name__ == "__main__":
    sys.exit(main())
