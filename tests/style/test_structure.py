"""The packages' structure: no import cycle (a lazy or function-level import counts; an import for
type hints alone does not) and no block of code written twice, as pylint's cyclic-import and
duplicate-code checks find them. A failure prints pylint's report: the cycle's modules, or the
duplicated lines and where they stand."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("scheduler", "yarn_bridge")


def structure_report(cwd: Path, *packages: str) -> str:
    """pylint's cyclic-import and duplicate-code messages for `packages` (empty: none)."""
    done = subprocess.run([sys.executable, "-m", "pylint", "--disable=all", "--enable=cyclic-import,duplicate-code",
                           "--score=n", "--persistent=n", *packages],
                          cwd=cwd, capture_output=True, text=True, timeout=300)
    assert done.returncode in (0, 8), f"pylint did not run:\n{done.stdout}{done.stderr}"  # (8: refactor messages)
    return done.stdout.strip()


def test_the_packages_have_no_import_cycle_and_no_duplicated_code():
    report = structure_report(ROOT, *PACKAGES)
    assert report == "", f"import cycles or duplicated code:\n{report}"


def test_a_cycle_through_a_lazy_import_and_a_duplicated_block_are_reported(tmp_path):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.b import helper\n\n\ndef main():\n    return helper()\n")
    body = "".join(f"    total = total * {i} + len(items)\n" for i in range(6))
    (package / "b.py").write_text("def helper():\n    from pkg.a import main  # lazy: a cycle all the same\n"
                                  "    return main\n\n\ndef first(items):\n    total = 0\n" + body + "    return total\n")
    (package / "c.py").write_text("def second(items):\n    total = 0\n" + body + "    return total\n")
    report = structure_report(tmp_path, "pkg")
    assert "Cyclic import (pkg.a -> pkg.b)" in report
    assert "Similar lines in 2 files" in report and "pkg.b" in report and "pkg.c" in report
