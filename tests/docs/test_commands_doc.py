"""docs/commands.md keeps an example of every `yarn-drf` command (and of each kind of `workload`), and
each example is a command line the CLI accepts as written."""
from __future__ import annotations

import argparse
import re
import shlex
from pathlib import Path

from yarn_bridge.cli import build_parser

PAGE = Path(__file__).resolve().parents[2] / "docs" / "commands.md"


def examples() -> list[list[str]]:
    """The argv of each `.venv/bin/yarn-drf ...` line of the page's sh blocks (continuations joined)."""
    blocks = re.findall(r"```sh\n(.*?)```", PAGE.read_text(), re.S)
    lines = "\n".join(blocks).replace("\\\n", " ").splitlines()
    return [argv(line) for line in lines if line.startswith(".venv/bin/yarn-drf ")]


def argv(line: str) -> list[str]:
    """The command's arguments, up to a shell operator (`&`, `|`, `>`...) or a comment."""
    lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = list(lexer)
    operator = next((i for i, w in enumerate(words) if set(w) <= set("();<>|&")), len(words))
    return words[1:operator]


def commands(parser: argparse.ArgumentParser, prefix: tuple[str, ...] = ()) -> set[tuple[str, ...]]:
    """Every runnable command path: ("check-config",), ("workload", "swim"), ..."""
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        return {prefix}
    return {path for name, sub in subs[0].choices.items() for path in commands(sub, prefix + (name,))}


def test_every_command_has_an_example_on_the_page():
    shown = {tuple(argv[:n]) for argv in examples() for n in (1, 2)}
    missing = sorted(commands(build_parser()) - shown)
    assert not missing, f"docs/commands.md has no example of: {missing}"


def test_every_example_parses_as_written():
    assert examples()
    for argv in examples():
        build_parser(argv[0]).parse_args(argv)
