"""The check that the suite leaves nothing behind (tests/leftovers.py), on sessions of their own: a
fresh git repository as the project, a fresh home directory."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

LEAVES_FILES = '''
from pathlib import Path


def test_stages_an_app_into_the_home_directory():
    staged = Path.home() / "late" / "application_1_0001"
    staged.mkdir(parents=True)
    (staged / "AppMaster.jar").write_text("jar")


def test_writes_a_log_into_the_repository():
    Path("stray.log").write_text("log")
'''

WRITES_WHERE_IT_MAY = '''
from pathlib import Path


def test_writes_into_a_build_folder_and_its_tmp_path(tmp_path):
    Path("build").mkdir()
    (Path("build") / "out.txt").write_text("built")
    (tmp_path / "scratch.txt").write_text("scratch")
'''


def session(tmp_path: Path, tests: str) -> tuple[subprocess.CompletedProcess, Path, Path]:
    repo, home = tmp_path / "repo", tmp_path / "home"
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "test_writes.py").write_text(tests)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.leftovers",
                           "test_writes.py"], cwd=repo, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)})
    return done, repo.resolve(), home.resolve()


def left_behind(output: str) -> list[str]:
    section = output.split("left behind", 1)[1] if "left behind" in output else ""
    return [line.strip() for line in section.splitlines() if line.startswith("  /")]


def test_a_session_whose_tests_write_into_home_or_the_repository_fails_naming_each_path(tmp_path):
    done, repo, home = session(tmp_path, LEAVES_FILES)
    assert "2 passed" in done.stdout, done.stdout
    assert done.returncode == 1, done.stdout
    assert left_behind(done.stdout) == [str(home / "late"), str(repo / "stray.log")], done.stdout


def test_a_session_writing_only_into_build_folders_and_tmp_path_passes(tmp_path):
    done, _, _ = session(tmp_path, WRITES_WHERE_IT_MAY)
    assert done.returncode == 0, done.stdout
    assert left_behind(done.stdout) == []
