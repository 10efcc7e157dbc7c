"""The manual (docs/ and the README) builds as a site with MkDocs in strict mode, so a broken link or
anchor fails the suite with MkDocs' own message: between pages, and to the repository files the
pages link to (docs/hooks/repo_files.py brings those into the site)."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def build(config: Path, site: Path) -> subprocess.CompletedProcess:
    # not --quiet: it silences the warnings that --strict counts, and every build would pass
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
                           "-d", str(site)], capture_output=True, text=True, timeout=120)


def test_the_manual_and_the_readme_build_with_every_link_and_anchor_found(tmp_path):
    result = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert result.returncode == 0, f"mkdocs build --strict failed:\n{result.stdout}{result.stderr}"
    assert (tmp_path / "site" / "repo" / "index.html").is_file(), "the README is not part of the site"


@pytest.fixture
def small_repo(tmp_path) -> Path:
    """A repository with the project's MkDocs settings and hook, one page, and one file outside docs/."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    config["nav"] = ["index.md", "other.md"]
    (tmp_path / "docs").mkdir()
    shutil.copytree(ROOT / "docs" / "hooks", tmp_path / "docs" / "hooks")
    (tmp_path / "mkdocs.yml").write_text(yaml.safe_dump(config))
    (tmp_path / "README.md").write_text("# Small\n\nThe [manual](docs/index.md).\n")
    (tmp_path / "docs" / "other.md").write_text("# Other\n\n## A section\n")
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "RESULTS.md").write_text("# Results\n\n## Startup\n")
    return tmp_path


def build_with_links(repo: Path, links: list[str]) -> subprocess.CompletedProcess:
    (repo / "docs" / "index.md").write_text("# Home\n\n" + "".join(f"See [this]({link}).\n" for link in links))
    return build(repo / "mkdocs.yml", repo / "site")


def test_links_to_pages_and_to_repository_files_that_exist_build(small_repo):
    result = build_with_links(small_repo, ["other.md#a-section", "../bench/RESULTS.md#startup", "../README.md"])
    assert result.returncode == 0, result.stderr


# One build for all (each costs about a second): MkDocs reports every broken link before it aborts.
BROKEN = {
    "missing.md": "'missing.md', but the target is not found among documentation files",
    "other.md#no-such-section": "does not contain an anchor '#no-such-section'",
    "../bench/MISSING.md": "'../bench/MISSING.md', but the target is not found among documentation files",
    "../bench/RESULTS.md#no-such-figure": "does not contain an anchor '#no-such-figure'",
}


def test_each_broken_link_or_anchor_fails_the_build_with_mkdocs_message(small_repo):
    result = build_with_links(small_repo, list(BROKEN))
    assert result.returncode != 0
    for link, message in BROKEN.items():
        assert message in result.stderr, f"{link}: no {message!r} in\n{result.stderr}"
