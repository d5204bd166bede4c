"""The docs as a reader would use them: their Python blocks run, their `memcore` lines parse.

The docs are README.md and the site's pages (``tests/support/docs_text.py``). Python blocks run in
that order (README first, then the pages in mkdocs.yml's nav order), each in a fresh
interpreter, against a real Redis and real Celery workers (``tests/support/celery_stack.py``) and a
real HTTP API server on them. The docs address Redis as ``redis://localhost:6379/0`` and the
API as ``http://127.0.0.1:8080`` with the key in ``$KEY``; the test replaces exactly those
two literals with the test servers' URLs, sets ``MEMCORE_REDIS_URL`` and ``KEY`` (a write
key for ``alice``), and fails if a block names a server any other way, so the
substitution can never silently miss.

Every `memcore ...` command line (fenced and indented code, inline code, with the
options a table row or sentence cites on their own, `--all`) is checked
against the real Typer app: the command path must exist (``--help`` on it succeeds)
and so must each option it names.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from memcore.cli.app import app
from memcore.local.stack import LocalStack
from tests.support.api_helpers import serve
from tests.support.docs_text import all_docs, pages

ROOT = Path(__file__).resolve().parents[2]
DOCS = all_docs()
# Every page, design.md and architecture.md included.
DOCS_WITH_COMMANDS = pages()
README_REDIS_URL = "redis://localhost:6379/0"
README_API_URL = "http://127.0.0.1:8080"
FENCE = re.compile(r"^```(\w*)\s*$")


def python_blocks(text: str) -> list[str]:
    """The bodies of the ```python blocks, in order."""
    blocks: list[str] = []
    language: str | None = None  # None: outside a fence
    body: list[str] = []
    for line in text.splitlines():
        fence = FENCE.match(line)
        if fence and language is None:
            language, body = fence.group(1), []
        elif fence:
            if language == "python":
                blocks.append("\n".join(body) + "\n")
            language = None
        elif language is not None:
            body.append(line)
    return blocks


def command_lines(text: str) -> list[str]:
    """Every `memcore ...` command: in shell code (fenced or indented) and in inline code."""
    found: list[str] = []
    language: str | None = None  # None: outside a fence
    for line in text.splitlines():
        fence = FENCE.match(line)
        if fence:
            language = fence.group(1) if language is None else None
            continue
        if language is not None:
            if language != "python":
                match = re.search(r"(?:^|\s)(memcore\s.*)$", line)
                if match:
                    found.append(match.group(1).split(" #")[0].strip())
            continue
        if line.startswith("    memcore "):
            found.append(line.strip())
            continue
        spans = [span.strip() for span in re.findall(r"`([^`]+)`", line)]
        commands = [span for span in spans if span.startswith("memcore ")]
        if commands:
            # `memcore erase NS --memory ID` (or `--episode ID`, `--all`): options cited
            # on their own belong to the line's last command.
            extra = [span for span in spans if span.startswith("--")]
            commands[-1] = " ".join([commands[-1], *extra])
        found += commands
    return found


def option(command: Any, word: str) -> Any:
    """The parameter ``word`` (``--name`` or ``--name=value``) names, if any."""
    name = word.split("=", 1)[0]
    for param in command.params:
        if name in param.opts or name in param.secondary_opts:
            return param
    return None


def resolve(words: list[str]) -> tuple[list[str], list[str]]:
    """The command path the words name, and the options no command on that path has."""
    # Typer ships its own copy of click: walk its objects by their attributes.
    command: Any = typer.main.get_command(app)
    path: list[str] = []
    unknown: list[str] = []
    rest = list(words)
    while rest:
        word = rest.pop(0)
        if word.startswith("-"):
            param = option(command, word)
            if param is None:
                if word.split("=", 1)[0] != "--help":
                    unknown.append(word.split("=", 1)[0])
            elif (param.param_type_name == "option" and not param.is_flag
                  and not param.count and "=" not in word and rest):
                rest.pop(0)  # its value
            continue
        if hasattr(command, "commands"):  # a group: the word names a subcommand
            sub = command.commands.get(word)
            assert sub is not None, f"memcore {' '.join([*path, word])}: no such command"
            command, path = sub, [*path, word]
    return path, unknown


def test_python_blocks_are_found() -> None:
    blocks = python_blocks(DOCS)
    assert len(blocks) >= 2
    assert any("from memcore import Client" in b for b in blocks)


def test_readme_python_blocks_run_against_a_real_stack(
        celery_stack: LocalStack, tmp_path: Path) -> None:
    api_server = serve(celery_stack.redis_url)
    api = next(api_server)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMCORE_")}
    env["MEMCORE_REDIS_URL"] = celery_stack.redis_url
    env["KEY"] = api.key("alice", role="write")
    outputs = []
    blocks = python_blocks(DOCS)
    try:
        for number, block in enumerate(blocks, 1):
            outputs.append(run_block(number, block, {README_REDIS_URL: celery_stack.redis_url,
                                                     README_API_URL: api.url}, env, tmp_path))
    finally:
        api_server.close()
    quick_start = outputs[0]
    assert "Berlin" in quick_start, quick_start  # the search found the stored turn


def run_block(number: int, block: str, urls: dict[str, str], env: dict[str, str],
              cwd: Path) -> str:
    """Run one block with the docs' server URLs replaced; its stdout."""
    for scheme in ("redis://", "rediss://", "unix://", "http://", "https://"):
        for start in [m.start() for m in re.finditer(re.escape(scheme), block)]:
            assert any(block.startswith(url, start) for url in urls), (
                f"block {number} names a server other than as {' or '.join(urls)}")
    code = block
    for literal, url in urls.items():
        code = code.replace(literal, url)
    done = subprocess.run([sys.executable, "-c", code], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, f"docs python block {number}:\n{block}\n{done.stderr}"
    return done.stdout


def test_readme_command_lines_are_found() -> None:
    lines = command_lines(DOCS)
    # The pages that name commands are all checked below.
    assert {p.name for p in DOCS_WITH_COMMANDS if command_lines(p.read_text())} >= {
        "README.md", "usage.md", "cli.md", "http-api.md", "operations.md", "design.md"}
    assert len(lines) > 20
    assert "memcore consolidate NS [--full] --full" in lines
    assert "memcore erase NS --memory ID --episode ID --all --yes" in lines
    assert any(line.startswith("memcore bench locomo --data") for line in lines)
    assert "memcore stats alice" in lines  # after an environment variable in a shell block


@pytest.mark.parametrize("doc", [page for page in DOCS_WITH_COMMANDS
                                 if command_lines(page.read_text())], ids=lambda p: p.name)
def test_every_memcore_command_and_option_exists(doc: Path) -> None:
    problems = []
    lines = command_lines(doc.read_text())
    for line in lines:
        words = [w.strip("[]") for w in shlex.split(line)[1:]]
        words = [w for w in words if w and w != "..."]
        try:
            path, unknown = resolve(words)
        except AssertionError as err:
            problems.append(f"{line}: {err}")
            continue
        result = CliRunner().invoke(app, [*path, "--help"])
        if result.exit_code != 0:
            problems.append(f"{line}: `memcore {' '.join(path)} --help` exits "
                            f"{result.exit_code}")
        if unknown:
            problems.append(f"{line}: memcore {' '.join(path)} has no {', '.join(unknown)}")
    assert problems == []


def test_the_checker_rejects_a_missing_option_and_command() -> None:
    assert resolve(["consolidate", "NS", "--full"]) == (["consolidate"], [])
    assert resolve(["consolidate", "NS", "--fully"]) == (["consolidate"], ["--fully"])
    # An option's value is not taken for a command or an unknown option.
    assert resolve(["--redis-url", "redis://h/0", "stats", "NS"]) == (["stats"], [])
    assert resolve(["bench", "scale", "--n", "100", "--quick"]) == (["bench", "scale"], [])
    with pytest.raises(AssertionError, match="no such command"):
        resolve(["consolidated", "NS"])
