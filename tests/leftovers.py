"""The suite leaves nothing behind: a pytest plugin (loaded by tests/conftest.py) that lists the
user's home directory and the repository's untracked and ignored files when the session starts and
again when it ends, and fails the session naming every path that appeared outside the build folders
below and the system temp directory (where pytest's tmp_path lives).

A test that needs a place to write takes it from tmp_path; a daemon it starts gets its paths from
there too (a Hadoop client that stages under the home directory, a browser's caches). A JVM ignores
$HOME (its user.home comes from the password database), so both homes are watched.
"""
from __future__ import annotations

import os
import pwd
import subprocess
import tempfile
from fnmatch import fnmatch
from pathlib import Path

import pytest

# What a build or a test run may write inside the repository: the venv, build outputs (Maven's,
# mypyc's), the private Docker engine's state, pytest's and Hypothesis's caches.
BUILD_FOLDERS = (
    ".venv/", "build/", "dist/", ".docker-engine/", ".pytest_cache/", ".hypothesis/",
    "java_shim/target/", "java_shim/hadoop-tests/target/", "benchmarks/sls/java/target/",
    "docker/spark/target/",
)
BUILD_ANYWHERE = ("__pycache__", "*.egg-info")
# Deep enough for ~/NAME/application_ID/FILE (distributed-shell staging on the local file system)
# and ~/.config/TOOL/DIR/FILE (Chromium's crash reports), shallow enough to list beside a Maven
# cache in well under a second.
HOME_DEPTH = 4


def homes() -> list[Path]:
    """$HOME, and the home a JVM uses when that differs."""
    return sorted({Path.home().resolve(), Path(pwd.getpwuid(os.getuid()).pw_dir).resolve()})


def home_paths(home: Path, skip: set[Path], depth: int = HOME_DEPTH) -> set[Path]:
    """The paths `depth` levels down, but not into `skip` (a checkout or a temp directory kept
    in the home directory has rules of its own)."""
    found: set[Path] = set()
    if depth == 0:
        return found
    try:
        with os.scandir(home) as entries:
            for entry in entries:
                path = Path(entry.path)
                if path in skip:
                    continue
                found.add(path)
                if entry.is_dir(follow_symlinks=False):
                    found |= home_paths(path, skip, depth - 1)
    except OSError:  # gone, or not ours to read
        pass
    return found


def repo_paths(repo: Path) -> set[Path]:
    """The untracked and ignored paths git shows (an ignored folder as one), outside the build
    folders; nothing outside a git checkout."""
    done = subprocess.run(["git", "-C", str(repo), "status", "--porcelain", "-z", "--ignored=matching",
                           "--untracked-files=all"], capture_output=True, text=True)
    if done.returncode != 0:
        return set()
    names = [entry[3:] for entry in done.stdout.split("\0") if entry[:2] in ("??", "!!")]
    return {repo / name for name in names if not is_build_output(name)}


def is_build_output(name: str) -> bool:
    return name.startswith(BUILD_FOLDERS) or any(fnmatch(part, pattern) for part in name.rstrip("/").split("/")
                                                 for pattern in BUILD_ANYWHERE)


def snapshot(repo: Path) -> set[Path]:
    paths = repo_paths(repo)
    skip = {repo.resolve(), Path(tempfile.gettempdir()).resolve()}
    for home in homes():
        paths |= home_paths(home, skip)
    return paths


def new_paths(before: set[Path], after: set[Path]) -> list[Path]:
    """What appeared, each named once: a new folder stands for what is in it."""
    added = after - before
    return sorted(p for p in added if not any(parent in added for parent in p.parents))


class Leftovers:
    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.before = snapshot(repo)
        self.found: list[Path] = []

    def check(self) -> list[Path]:
        self.found = new_paths(self.before, snapshot(self.repo))
        return self.found


_KEY = pytest.StashKey[Leftovers]()


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_KEY] = Leftovers(session.config.rootpath)


# tryfirst: after every fixture (a session's clusters too) is torn down, before the summary.
@pytest.hookimpl(tryfirst=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    leftovers = session.config.stash.get(_KEY, None)
    if leftovers is not None and leftovers.check() and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter, config: pytest.Config) -> None:
    leftovers = config.stash.get(_KEY, None)
    if leftovers is None or not leftovers.found:
        return
    terminalreporter.section("left behind", sep="=", red=True, bold=True)
    for path in leftovers.found:
        terminalreporter.line(f"  {path}")
    terminalreporter.line("Tests write under tmp_path or a build folder (tests/leftovers.py names them); "
                          "another process on this machine may have written one of these too.")
