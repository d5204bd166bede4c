"""The documentation as the tests read it: README.md (the front page), then the site's pages.

The pages come from mkdocs.yml's nav, in its order, so a page added to the site is read by
every test that reads all of the docs (the Python blocks run in this order).
"""

from __future__ import annotations

import functools
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
DOCS = ROOT / "docs"


@functools.cache
def pages() -> tuple[Path, ...]:
    """README.md, then every page of the site's nav in order."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    paths = [README]
    for entry in config["nav"]:
        (target,) = entry.values()
        paths.append(DOCS / target)
    return tuple(paths)


def doc(name: str) -> str:
    """The text of one page: ``"README.md"`` or a file name under docs/ (``"cli.md"``)."""
    path = README if name == "README.md" else DOCS / name
    return path.read_text()


def all_docs() -> str:
    """README.md and every page, in nav order, as one text."""
    return "\n".join(path.read_text() for path in pages())


def section(text: str, heading: str) -> str:
    """The body under the Markdown heading ``heading`` (e.g. ``"## Metrics"``), up to the next
    heading of the same or a higher level (headings inside code fences do not count)."""
    level = len(heading) - len(heading.lstrip("#"))
    lines = text.splitlines()
    start = lines.index(heading) + 1
    body: list[str] = []
    fenced = False
    for line in lines[start:]:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            hashes = len(line) - len(line.lstrip("#"))
            if hashes <= level and line[hashes:hashes + 1] == " ":
                break
        body.append(line)
    return "\n".join(body)
