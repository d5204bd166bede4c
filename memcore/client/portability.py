"""Export a namespace to a ``memcore-export`` file and import one (memcore.store.portable).

Export streams lines straight from the store (memories with every status, optionally
episodes, then the audit log). Import of a file reads it twice: first every line is
checked (a bad file stops before anything is written, naming the line and field), then
chunks are committed by the store's :class:`~memcore.store.imports.Importer`, each with
the resume marker, so a killed import resumes after its last whole chunk. Import of an
upload reads it once (:func:`import_stream`): checked and committed chunk by chunk.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass
from datetime import datetime

from memcore.core.models import (
    AuditEvent,
    Episode,
    Memory,
    as_instant,
    utcnow,
    validate_namespace,
)
from memcore.core.timeline import valid_at
from memcore.store import MemoryStore
from memcore.store.portable import (
    ExportFormatError,
    Header,
    audit_line,
    end_line,
    episode_line,
    memory_line,
    parse_header,
    parse_record,
)

READ_CHUNK = 500
"""Memories read per round trip while exporting."""

IMPORT_CHUNK = 500
"""Lines per import commit (the resume granularity)."""

LineSource = Callable[[], Iterable[str]]
"""Opens the file's lines afresh (an import reads them twice)."""


def export_lines(store: MemoryStore, namespace: str, *, with_episodes: bool = False,
                 as_of: datetime | None = None) -> Iterator[str]:
    """The export file of ``namespace``, line by line (no newlines).

    ``as_of``: only the memories valid at that instant (:func:`memcore.core.timeline.
    valid_at`, what ``search(as_of=...)`` reads), each as its record is now, and the
    turns and audit events up to then; as_of reads of the import at that instant answer
    as the source's do."""
    validate_namespace(namespace)
    instant = None if as_of is None else as_instant(as_of, "as_of")
    yield Header.new(namespace, utcnow(), with_episodes, instant).line()
    count = 0
    ids = [f.id for f in store.records.iter_filter_fields(namespace)
           if instant is None or valid_at(f, instant)]
    for start in range(0, len(ids), READ_CHUNK):
        for item in store.records.get_many_packed(namespace, ids[start:start + READ_CHUNK]):
            if item is not None:  # erased since the id was listed
                count += 1
                yield memory_line(*item)
    if with_episodes:
        for episode in store.episodes.iter_episodes(namespace):
            if instant is None or episode.timestamp <= instant:
                count += 1
                yield episode_line(episode)
    for _, event in store.audit.scan(namespace):
        if instant is None or event.at <= instant:
            count += 1
            yield audit_line(event)
    yield end_line(count)


@dataclass
class ImportReport:
    """What an import did."""

    namespace: str
    export_id: str
    source_namespace: str
    lines: int
    resumed_after: int
    added: int = 0
    existing: int = 0
    episodes: int = 0
    audit: int = 0

    def as_dict(self) -> dict[str, object]:
        """JSON-ready."""
        return asdict(self)


def check_file(lines: Iterable[str], namespace: str) -> tuple[Header, int]:
    """Check every line of an export file; its header and number of lines."""
    header: Header | None = None
    records = 0
    end: int | None = None
    number = 0
    for number, text in enumerate(lines, 1):
        if not text.strip():
            raise ExportFormatError(number, "(line)", "empty line")
        if header is None:
            header = parse_header(text, number)
            continue
        if end is not None:
            raise ExportFormatError(number, "type", "a line after the end line")
        parsed = parse_record(text, number, namespace)
        if isinstance(parsed, int):
            end = parsed
            if end != records:
                raise ExportFormatError(number, "records", f"the end line counts {end} "
                                        f"records but the file has {records}")
        else:
            records += 1
    if header is None:
        raise ExportFormatError(1, "format", "empty file (no header line)")
    if end is None:
        raise ExportFormatError(number + 1, "type", "no end line: the file is truncated")
    return header, number


def import_lines(store: MemoryStore, namespace: str, source: LineSource, *,
                 resume: bool = False, chunk: int = IMPORT_CHUNK,
                 progress: Callable[[int, int], None] | None = None) -> ImportReport:
    """Import an export file into ``namespace`` (the file's own namespace is ignored).

    Every line is checked before the first is written (the file is read twice).
    ``resume``: continue an import of this file that stopped; without it, an import of
    the same file that stopped midway is refused (re-running a finished one adds
    nothing). ``progress(lines_done, lines_total)`` is called after each chunk."""
    validate_namespace(namespace)
    if chunk < 1:
        raise ValueError(f"chunk: must be >= 1, got {chunk}")
    _, total = check_file(source(), namespace)
    return import_stream(store, namespace, source(), resume=resume, chunk=chunk,
                         total=total, progress=progress)


def import_stream(store: MemoryStore, namespace: str, lines: Iterable[str], *,
                  resume: bool = False, chunk: int = IMPORT_CHUNK, total: int | None = None,
                  progress: Callable[[int, int], None] | None = None) -> ImportReport:
    """Import an export file read once, line by line (an HTTP upload): each chunk is
    checked, then committed with the resume marker, before the next line is read, so
    memory holds one chunk whatever the file's size.

    Unlike :func:`import_lines`, a bad line (or a missing end line) is found after the
    chunks before it are committed: the error names the line, and the import resumes
    like a killed one (``resume``) once the file is fixed (its header, hence its export
    id, unchanged). ``total``: the file's line count when known (progress reports 0
    while it is not)."""
    validate_namespace(namespace)
    if chunk < 1:
        raise ValueError(f"chunk: must be >= 1, got {chunk}")
    stream = _StreamImport(store, namespace, resume, chunk, total, progress)
    number = 0
    for number, text in enumerate(lines, 1):
        stream.read(number, text)
    return stream.finish(number)


class _StreamImport:
    """The state of :func:`import_stream`: the header, the report, the lines committed
    (``done``), the records counted for the end line and the chunk not yet written."""

    def __init__(self, store: MemoryStore, namespace: str, resume: bool, chunk: int,
                 total: int | None, progress: Callable[[int, int], None] | None) -> None:
        self.store = store
        self.namespace = namespace
        self.resume = resume
        self.chunk = chunk
        self.total = total
        self.progress = progress
        self.header: Header | None = None
        self.report: ImportReport | None = None
        self.done = 0
        self.records = 0
        self.end: int | None = None
        self.memories: list[Memory] = []
        self.episodes: list[Episode] = []
        self.events: list[AuditEvent] = []

    def read(self, number: int, text: str) -> None:
        """Check line ``number``; write the chunk it completes."""
        if not text.strip():
            raise ExportFormatError(number, "(line)", "empty line")
        header = self.header
        if header is None:
            self._start(number, text)
            return
        assert self.report is not None
        if self.end is not None:
            raise ExportFormatError(number, "type", "a line after the end line")
        if number > self.report.resumed_after > 0 and not self.resume:
            # Lines past the marker: this file's import stopped midway (a finished one
            # committed through its end line).
            raise ValueError(f"an import of this file ({header.export_id}) into "
                             f"{self.namespace!r} stopped after line "
                             f"{self.report.resumed_after}"
                             f"{'' if self.total is None else f' of {self.total}'}: run it "
                             "again with --resume")
        parsed = parse_record(text, number, self.namespace)
        self._count(number, parsed)
        if number <= self.done:
            return  # committed before the resume (checked again for the count)
        if isinstance(parsed, Memory):
            self.memories.append(parsed)
        elif isinstance(parsed, Episode):
            self.episodes.append(parsed)
        elif isinstance(parsed, AuditEvent):
            self.events.append(parsed)
        if number - max(self.done, 1) >= self.chunk or self.end is not None:
            self._write(header, self.report, number)

    def _start(self, number: int, text: str) -> None:
        """The header line: where an earlier import of this file stopped."""
        header = self.header = parse_header(text, number)
        self.done = self.store.imports.progress(self.namespace, header.export_id)
        self.report = ImportReport(self.namespace, header.export_id, header.namespace,
                                   self.total or 0, self.done)
        if self.progress is not None:
            self.progress(self.done, self.total or 0)

    def _count(self, number: int, parsed: Memory | Episode | AuditEvent | int) -> None:
        """Count a record; the end line must count as many."""
        if not isinstance(parsed, int):
            self.records += 1
            return
        self.end = parsed
        if parsed != self.records:
            raise ExportFormatError(number, "records", f"the end line counts {parsed} "
                                    f"records but the file has {self.records}")

    def _write(self, header: Header, report: ImportReport, number: int) -> None:
        """Commit the chunk ending at line ``number`` with the resume marker."""
        result = self.store.imports.write(self.namespace, header.export_id, number,
                                          self.memories, self.episodes, self.events, utcnow())
        report.added += result.added
        report.existing += result.existing
        report.episodes += result.episodes
        report.audit += result.audit
        self.memories, self.episodes, self.events = [], [], []
        self.done = number
        if self.progress is not None:
            self.progress(self.done, self.total or 0)

    def finish(self, number: int) -> ImportReport:
        """The report, after the last line ``number``; a file without a header or an end
        line is refused."""
        if self.header is None or self.report is None:
            raise ExportFormatError(1, "format", "empty file (no header line)")
        if self.end is None:
            raise ExportFormatError(number + 1, "type", "no end line: the file is truncated")
        self.report.lines = number
        return self.report
