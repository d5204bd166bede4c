"""The export file format (``memcore-export``, version 1): one JSON object per line.

Line 1 is a header (format name and version, the export's id, the source namespace);
then one line per memory (every status: superseded and tombstoned ones with their
validity, so history survives), per episode (``--with-episodes``) and per audit event,
oldest first; the last line is an ``end`` trailer counting the lines between, so a
truncated file is refused. Records carry no namespace: an import writes them into the
namespace it is given. Vectors travel as the store keeps them (int8 codes and a scale,
base64), so an import stores the same bytes and ranks the same. The JSON Schema is
``memcore/data/export.schema.json``; docs/operations.md, "Export and import", documents the lines.
"""

from __future__ import annotations

import base64
import binascii
import json
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from memcore.core.models import AuditEvent, Episode, Memory, validate_identifier
from memcore.store.codec import pack_memory, packed_vector, unpack_vector

FORMAT = "memcore-export"
FORMAT_VERSION = 1
KINDS = ("memory", "episode", "audit")


class ExportFormatError(ValueError):
    """A line of an export file that cannot be imported; names the line and field."""

    def __init__(self, line: int, field: str, message: str) -> None:
        super().__init__(f"line {line}: {field}: {message}")
        self.line, self.field = line, field


@dataclass(frozen=True)
class Header:
    """The first line of an export file."""

    export_id: str
    namespace: str
    exported_at: str
    with_episodes: bool
    as_of: str | None = None
    """The instant an ``--as-of`` export was taken at (None: the current version whole)."""

    def line(self) -> str:
        """The header as its JSON line."""
        return _dumps({"format": FORMAT, "version": FORMAT_VERSION, "export_id": self.export_id,
                       "namespace": self.namespace, "exported_at": self.exported_at,
                       "with_episodes": self.with_episodes, "as_of": self.as_of})

    @classmethod
    def new(cls, namespace: str, now: datetime, with_episodes: bool,
            as_of: datetime | None = None) -> Header:
        """A header with a fresh export id."""
        return cls(uuid.uuid4().hex, namespace, now.isoformat(), with_episodes,
                   None if as_of is None else as_of.isoformat())


def _dumps(data: Mapping[str, Any]) -> str:
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


def memory_line(memory: Memory, packed: bytes | None = None) -> str:
    """A memory as its line; ``packed``: its packed vector as stored (else packed here)."""
    data = memory.model_dump(mode="json", exclude={"namespace", "vector", "capped"})
    if packed is None:
        packed = packed_vector(pack_memory(memory))
    vec = unpack_vector(packed)
    data["vector_q8"] = None if vec is None else base64.b64encode(packed).decode()
    return _dumps({"type": "memory", **data})


def episode_line(episode: Episode) -> str:
    """An episode as its line."""
    return _dumps({"type": "episode", **episode.model_dump(mode="json", exclude={"namespace"})})


def audit_line(event: AuditEvent) -> str:
    """An audit event as its line."""
    return _dumps({"type": "audit", **event.model_dump(mode="json", exclude={"namespace"})})


def end_line(records: int) -> str:
    """The trailer: how many record lines lie between header and trailer."""
    return _dumps({"type": "end", "records": records})


def _object(text: str, line: int) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ExportFormatError(line, "(line)", f"not JSON: {exc.msg} at column {exc.colno}"
                                ) from exc
    if not isinstance(data, dict):
        raise ExportFormatError(line, "(line)", "expected a JSON object")
    return data


def parse_header(text: str, line: int = 1) -> Header:
    """The header line, checked (format name, version, fields)."""
    data = _object(text, line)
    if data.get("format") != FORMAT:
        raise ExportFormatError(line, "format",
                                f"expected {FORMAT!r} (is this a memcore export?), "
                                f"got {data.get('format')!r}")
    if data.get("version") != FORMAT_VERSION:
        raise ExportFormatError(line, "version", f"unsupported version {data.get('version')!r}"
                                f" (this memcore reads version {FORMAT_VERSION})")
    for name, kind in (("export_id", str), ("namespace", str), ("exported_at", str),
                       ("with_episodes", bool)):
        if not isinstance(data.get(name), kind):
            raise ExportFormatError(line, name, f"expected a {kind.__name__}")
    try:
        validate_identifier(data["export_id"])
    except ValueError as exc:
        raise ExportFormatError(line, "export_id", str(exc)) from exc
    if not isinstance(data.get("as_of"), str | None):
        raise ExportFormatError(line, "as_of", "expected a time or null")
    extra = set(data) - {"format", "version", "export_id", "namespace", "exported_at",
                         "with_episodes", "as_of"}
    if extra:
        raise ExportFormatError(line, sorted(extra)[0], "unknown field")
    return Header(data["export_id"], data["namespace"], data["exported_at"],
                  data["with_episodes"], data.get("as_of"))


def _field(exc: ValidationError) -> tuple[str, str]:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(record)"
    return loc, err["msg"]


Record = Memory | Episode | AuditEvent | int
"""A parsed record line; an ``int`` is the end trailer's record count."""


def parse_record(text: str, line: int, namespace: str) -> Record:
    """A record line as the object it describes, rewritten into ``namespace``."""
    data = _object(text, line)
    kind = data.pop("type", None)
    if kind == "end":
        count = data.get("records")
        if not isinstance(count, int) or isinstance(count, bool) or set(data) != {"records"}:
            raise ExportFormatError(line, "records", "the end line is {type: end, records: n}")
        return count
    if kind not in KINDS:
        raise ExportFormatError(line, "type", f"expected one of {', '.join(KINDS)} or end, "
                                              f"got {kind!r}")
    if "namespace" in data:
        raise ExportFormatError(line, "namespace", "records carry no namespace (the import "
                                                   "names it)")
    if kind == "memory" and "capped" in data:
        raise ExportFormatError(line, "capped", "unknown field (not part of a stored record)")
    try:
        if kind == "episode":
            return Episode.model_validate({**data, "namespace": namespace})
        if kind == "audit":
            return AuditEvent.model_validate({**data, "namespace": namespace})
        packed = _vector(data.pop("vector_q8", None), line)
        memory = Memory.model_validate({**data, "namespace": namespace})
    except ValidationError as exc:
        field, message = _field(exc)
        raise ExportFormatError(line, field, message) from exc
    # The exact vector the source stored (the model's validator would renormalize it).
    return memory.model_copy(update={"vector": None if packed is None
                                     else unpack_vector(packed)})


def _vector(value: Any, line: int) -> bytes | None:
    if value is None:
        return None
    try:
        packed = base64.b64decode(value, validate=True) if isinstance(value, str) else b""
        if len(packed) < 6 or unpack_vector(packed) is None:
            raise ValueError("too short")
        return packed
    except (binascii.Error, ValueError) as exc:
        raise ExportFormatError(line, "vector_q8", f"not a base64 packed vector ({exc})"
                                ) from exc
