"""The decision path compiled with mypyc, used when a build of exactly these sources exists.

mypyc compiles the hot modules (HOT), unchanged, to C extension modules: the same decisions at a
fraction of the interpreter's cost per container (`yarn-drf bench core` prints both). `make venv`
builds them into build/mypyc (build()) and records a digest of the
sources they came from; the package puts them ahead of the sources only while that digest still
matches, so an edited module is never shadowed by a stale build. YARN_DRF_PURE=1 keeps the
pure-Python modules (`make test-pure` runs the core's tests that way).
"""
from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

# The heartbeat path: the core's parts (core.py and the classes it is built on) and what they
# call per container. The Makefile asks this file for the list (`python scheduler/compiled.py`).
HOT = ("heap", "model", "resources", "locality", "queue_limits", "core_state", "hdrf", "reservations", "queue_tree",
       "asks", "containers", "admission", "decision", "core")
PACKAGE = Path(__file__).resolve().parent
BUILD = PACKAGE.parent / "build" / "mypyc"
STAMP = BUILD / "sources.sha256"
PURE_ENV = "YARN_DRF_PURE"


def sources() -> list[str]:
    """The hot modules' files, relative to the repository."""
    return [f"scheduler/{name}.py" for name in HOT]


def digest(package: Path = PACKAGE) -> str:
    """What a build is valid for: the hot sources and the interpreter (its ABI)."""
    h = hashlib.sha256(sys.implementation.cache_tag.encode())
    for name in HOT:
        h.update((package / f"{name}.py").read_bytes())
    return h.hexdigest()


def mode() -> str:
    """"compiled" when a fresh build is there to use, else why not: "pure (...)"."""
    if os.environ.get(PURE_ENV):
        return f"pure ({PURE_ENV} set)"
    if not STAMP.exists():
        return "pure (no build: make venv)"
    if STAMP.read_text().strip() != digest():
        return "pure (build/mypyc is stale: make venv)"
    return "compiled"


def select(package_path: list[str]) -> str:
    """Puts the compiled modules ahead of the sources in the package's path when they are fresh."""
    chosen = mode()
    if chosen == "compiled":
        package_path.insert(0, str(BUILD / "scheduler"))
        sys.path.append(str(BUILD / "lib"))  # mypyc's runtime library shared by the compiled modules
    return chosen


def build() -> None:
    """Compiles a copy of the package's hot modules and installs the result in build/mypyc."""
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        shutil.copytree(PACKAGE, work / "scheduler", ignore=shutil.ignore_patterns("__pycache__", "*.so"))
        done = subprocess.run([sys.executable, "-m", "mypyc", "--follow-imports=silent", *sources()],
                              cwd=work, capture_output=True, text=True)
        if done.returncode:
            sys.exit(f"mypyc failed:\n{done.stdout}{done.stderr}")
        shutil.rmtree(BUILD, ignore_errors=True)
        (BUILD / "scheduler").mkdir(parents=True)
        (BUILD / "lib").mkdir()
        for lib in work.glob("*.so"):
            shutil.copy2(lib, BUILD / "lib")
        for lib in (work / "scheduler").glob("*.so"):
            shutil.copy2(lib, BUILD / "scheduler")
        STAMP.write_text(digest(work / "scheduler") + "\n")
    print(f"compiled {', '.join(sources())} with mypyc into {BUILD.relative_to(PACKAGE.parent)}")


if __name__ == "__main__":  # (run as a file, it imports nothing of the package: the Makefile's HOT_SOURCES)
    print(" ".join(sources()))
