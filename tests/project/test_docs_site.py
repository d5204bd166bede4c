"""The docs site builds with ``mkdocs build --strict`` (a broken link or anchor fails it),
every page under docs/ is in its nav, and README.md's links reach real pages and headings."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.docs_text import DOCS, README, ROOT, pages

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of ``config`` into ``site`` (not ``--quiet``: it hides the
    warnings that --strict counts, and the build passes)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's banner about its successor
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict",
                           "--config-file", str(config), "--site-dir", str(site)],
                          capture_output=True, text=True, timeout=120, check=False, env=env)


def test_the_site_builds_strictly(tmp_path: Path) -> None:
    done = build(ROOT / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stderr
    for page in pages()[1:]:
        built = tmp_path / "site" / page.stem / "index.html"
        if page.name == "index.md":
            built = tmp_path / "site" / "index.html"
        assert built.is_file(), page.name


def test_a_broken_anchor_fails_the_strict_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(DOCS, docs)
    with (docs / "cli.md").open("a") as cli:
        cli.write("\nSee [nowhere](usage.md#no-such-heading).\n")
    config = (ROOT / "mkdocs.yml").read_text().replace("docs_dir: docs", f"docs_dir: {docs}")
    (tmp_path / "mkdocs.yml").write_text(config)
    done = build(tmp_path / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0 and "no-such-heading" in done.stderr, done.stderr


def test_every_page_is_in_the_nav() -> None:
    assert set(DOCS.glob("*.md")) == set(pages()[1:])


def slugs(text: str) -> set[str]:
    """The anchors of a page's headings, as the site (Python-Markdown's toc) makes them."""
    found = set()
    fenced = False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and re.match(r"#+ ", line):
            title = re.sub(r"[^\w\s-]", "", line.lstrip("#").replace("`", "")).strip().lower()
            found.add(re.sub(r"[-\s]+", "-", title))
    return found


def test_readme_links_reach_pages_and_headings() -> None:
    targets = [t for t in LINK.findall(README.read_text()) if "://" not in t]
    assert any(t.startswith("docs/") for t in targets)
    for target in targets:
        path, _, anchor = target.partition("#")
        file = ROOT / path if path else README
        assert file.exists(), target
        if anchor:
            assert anchor in slugs(file.read_text()), target
