"""The `yarn-drf` command line: one sub-command per module that owns the feature.

Each module named in COMMANDS exposes `register(subparsers)`, which adds the sub-commands listed
with it and sets `func` on each parser to a callable taking the parsed args and returning an exit
code. A command imports only its own module: `yarn-drf serve`, which a ResourceManager waits for,
does not load the other commands' libraries (HTTP client, terminal tables, the simulator).
"""
from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys

COMMANDS = {
    "scheduler.commands": ("check-config", "bench", "replay"),
    "yarn_bridge.serve": ("serve",),
    "scheduler.sim.cli": ("simulate", "workload"),
    "yarn_bridge.ops_cli": ("status", "why", "reload"),
    "yarn_bridge.federation_cli": ("federation-policy",),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command, or only of `command` when a module registers it."""
    parser = argparse.ArgumentParser(
        prog="yarn-drf",
        description="Weighted Dominant Resource Fairness scheduling for Hadoop YARN.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    modules = [module for module, names in COMMANDS.items() if command in names] or list(COMMANDS)
    for module_name in modules:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = build_parser(argv[0] if argv else None).parse_args(argv)
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
