"""The check that the suite leaves nothing behind (tests/leftovers.py), on a session of its own: a
fresh git repository as the project, a fresh home directory."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

TESTS = '''
from pathlib import Path


def test_stages_an_app_into_the_home_directory():
    staged = Path.home() / "late" / "application_1_0001"
    staged.mkdir(parents=True)
    (staged / "AppMaster.jar").write_text("jar")


def test_writes_a_log_into_the_repository():
    Path("stray.log").write_text("log")


def test_writes_into_a_build_folder_and_its_tmp_path(tmp_path):
    Path("build").mkdir()
    (Path("build") / "out.txt").write_text("built")
    (tmp_path / "scratch.txt").write_text("scratch")
'''


def test_a_session_fails_naming_each_path_its_tests_left_in_home_or_the_repository_and_no_other(tmp_path):
    repo, home = tmp_path / "repo", tmp_path / "home"
    home.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "test_writes.py").write_text(TESTS)
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.leftovers",
                           "test_writes.py"], cwd=repo, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)})
    assert "3 passed" in done.stdout, done.stdout
    assert done.returncode == 1, done.stdout
    # Only what is in this test's folders: on a shared machine, other processes write into the real home.
    named = [line.strip() for line in done.stdout.split("left behind", 1)[-1].splitlines()
             if line.startswith(f"  {tmp_path.resolve()}")]
    assert named == [str(home.resolve() / "late"), str(repo.resolve() / "stray.log")], done.stdout
