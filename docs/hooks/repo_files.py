"""MkDocs hook: the repository files the manual links to become part of the site, so that the strict
build checks those links (and their anchors) as it checks the links between pages.

The pages are written to be read on GitHub too, so a page links a file outside docs/ by its real
relative path (`../benchmarks/RESULTS.md`, from the README `docs/deploy.md`). MkDocs knows only
the files under docs/: this hook adds every repository file reachable by such links from the pages
and from the README (each under `repo/` plus its path), and rewrites each link to where its target
is in the site. A link to a file that does not exist is left as written, and the strict build then
fails on it as on any broken link.
"""
from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.structure.files import File, Files, InclusionLevel

# The repository's files as the site has them: README.md is repo/README.md, and so on.
SITE_PREFIX = "repo/"
# Seeds besides the pages: the README is where a newcomer starts, so its links are checked too.
SEEDS = ("README.md",)
# [text](target) and ![alt](target); a target with a scheme or a lone #anchor is left alone.
LINK = re.compile(r"(!?\[[^\]]*\]\()([^)\s]+)(\))")
FENCE = re.compile(r"^\s*(```|~~~)")


def _repo_root(config) -> Path:
    return Path(config.docs_dir).resolve().parent


def _local_target(target: str) -> tuple[str, str] | None:
    """(path, #anchor or "") of a link to a local file, or None for URLs and in-page anchors."""
    if target.startswith("#") or re.match(r"^[a-z][a-z0-9+.-]*:", target):
        return None
    path, hash_, anchor = target.partition("#")
    return path, hash_ + anchor


def _links(markdown: str):
    """Each link target outside fenced code blocks, with the line it is on."""
    fenced = False
    for number, line in enumerate(markdown.splitlines(keepends=True)):
        if FENCE.match(line):
            fenced = not fenced
        if not fenced:
            yield number, line


def _outside_targets(markdown: str, source: Path, docs: Path, root: Path) -> set[Path]:
    found = set()
    for _, line in _links(markdown):
        for m in LINK.finditer(line):
            local = _local_target(m.group(2))
            if local is None or not local[0]:
                continue
            path = (source.parent / local[0]).resolve()
            if path.is_file() and root in path.parents and docs not in path.parents:
                found.add(path)
    return found


def on_files(files: Files, config) -> Files:
    docs = Path(config.docs_dir).resolve()
    root = _repo_root(config)
    todo = [root / s for s in SEEDS] + [Path(f.abs_src_path) for f in files if f.src_uri.endswith(".md")]
    seen: set[Path] = set()
    while todo:
        source = todo.pop()
        if source in seen:
            continue
        seen.add(source)
        if docs not in source.parents:
            files.append(File.generated(config, SITE_PREFIX + source.relative_to(root).as_posix(),
                                        abs_src_path=str(source), inclusion=InclusionLevel.NOT_IN_NAV))
        if source.suffix == ".md":
            todo.extend(_outside_targets(source.read_text(), source, docs, root))
    return files


def _site_uri(path: Path, docs: Path, root: Path) -> str:
    if docs in path.parents:
        return path.relative_to(docs).as_posix()
    return SITE_PREFIX + path.relative_to(root).as_posix()


def on_page_markdown(markdown: str, page, config, files) -> str:
    docs = Path(config.docs_dir).resolve()
    root = _repo_root(config)
    source = Path(page.file.abs_src_path).resolve()
    here = posixpath.dirname(page.file.src_uri) or "."

    def rewrite(m: re.Match) -> str:
        local = _local_target(m.group(2))
        if local is None or not local[0]:
            return m.group(0)
        path = (source.parent / local[0]).resolve()
        if not path.exists() or root not in path.parents:
            return m.group(0)
        uri = posixpath.relpath(_site_uri(path, docs, root), here)
        return m.group(1) + uri + local[1] + m.group(3)

    lines = markdown.splitlines(keepends=True)
    for number, line in _links(markdown):
        lines[number] = LINK.sub(rewrite, line)
    return "".join(lines)
