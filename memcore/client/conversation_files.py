"""Reading conversation files into batches for :meth:`memcore.Client.add`.

Two formats:

- **JSONL turns** (a chat history; JSON Schema: ``memcore/data/turns.schema.json``): one
  object per line, ``{role, content | text, speaker?, timestamp?, id?, conversation?,
  session?, metadata?}``. Lines are grouped by ``conversation`` and ``session`` (in file
  order of each group's first line), so each one can be waited for before the next. A
  turn without an ``id`` gets one derived from its content (:func:`derive_ids`), so a
  turn sent again (a resumed or repeated ingest) is not stored twice.
- **LoCoMo** (one conversation of the LoCoMo benchmark as JSON):
  ``session_<n>`` lists of turns ``{speaker, dia_id, text, [blip_caption]}`` and
  ``session_<n>_date_time`` like ``"1:56 pm on 8 May, 2023"``. Both speakers become
  role ``user`` with their name as speaker; :func:`locomo_episode_id` turns a
  ``dia_id`` into the episode id; the session's date-time is every turn's timestamp.
  A file holding the original ``locomo10.json`` list, or one sample with a
  ``conversation`` object, is read too.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memcore.client.backoff import patiently
from memcore.client.client import MAX_BATCH
from memcore.client.messages import to_episodes
from memcore.core.models import Episode
from memcore.messaging.task_names import INGEST_QUEUE

if TYPE_CHECKING:
    from memcore.client.client import Client
    from memcore.client.errors import Backpressure

Message = dict[str, Any]
LOCOMO_TIME_FORMAT = "%I:%M %p on %d %B, %Y"
_SESSION_RE = re.compile(r"^session_(\d+)$")
_BAD_ID_CHARS = re.compile(r"[^A-Za-z0-9_.@-]")


@dataclass
class Batch:
    """Turns enqueued together (one session), in order."""

    label: str
    messages: list[Message] = field(default_factory=list)
    # Where each message came from ("line 7", "session_3[4]"), for errors a user can find.
    origins: list[str] = field(default_factory=list)

    def append(self, message: Message, origin: str) -> None:
        """Add a message and the place in the file it came from."""
        self.messages.append(message)
        self.origins.append(origin)


def locomo_episode_id(dia_id: str) -> str:
    """The episode id of a LoCoMo ``dia_id``: every character outside the id alphabet
    ``[A-Za-z0-9_.@-]`` becomes ``-`` (``"D1:3"`` -> ``"D1-3"``)."""
    cleaned = _BAD_ID_CHARS.sub("-", str(dia_id).strip())
    if not cleaned:
        raise ValueError(f"dia_id: {dia_id!r} is empty")
    return cleaned[:128]


def parse_locomo_time(value: str) -> datetime:
    """``"1:56 pm on 8 May, 2023"`` as an aware UTC datetime."""
    try:
        return datetime.strptime(value.strip(), LOCOMO_TIME_FORMAT).replace(tzinfo=UTC)
    except ValueError as exc:
        raise ValueError(f"session date_time: {value!r} is not like "
                         "'1:56 pm on 8 May, 2023'") from exc


def is_locomo(data: Any) -> bool:
    """True if ``data`` (parsed JSON) looks like a LoCoMo conversation or sample list."""
    if isinstance(data, list):
        return bool(data) and all(isinstance(d, Mapping) and is_locomo(d) for d in data)
    if not isinstance(data, Mapping):
        return False
    inner = data.get("conversation", data)
    return isinstance(inner, Mapping) and any(_SESSION_RE.match(str(k)) for k in inner)


def locomo_batches(data: Mapping[str, Any], *, captions: bool = True) -> list[Batch]:
    """One batch per session of a LoCoMo conversation, in session order.

    With ``captions``, an image turn's ``blip_caption`` is appended to its text
    (``[shares an image: ...]``), as LoCoMo's own baselines do.
    """
    conv = data.get("conversation", data)
    if not isinstance(conv, Mapping):
        raise ValueError("conversation: expected an object")
    numbers = sorted(int(m.group(1)) for k in conv if (m := _SESSION_RE.match(str(k))))
    batches: list[Batch] = []
    for n in numbers:
        turns = conv[f"session_{n}"]
        if not turns:
            continue
        when_raw = conv.get(f"session_{n}_date_time")
        if not when_raw:
            raise ValueError(f"session_{n}_date_time: missing")
        when = parse_locomo_time(str(when_raw))
        batch = Batch(f"session {n}")
        for i, turn in enumerate(turns):
            if not isinstance(turn, Mapping) or "dia_id" not in turn or "text" not in turn:
                raise ValueError(f"session_{n}[{i}]: expected {{speaker, dia_id, text}}")
            text = str(turn["text"])
            if captions and turn.get("blip_caption"):
                text = f"{text} [shares an image: {turn['blip_caption']}]".strip()
            batch.append({
                "role": "user", "speaker": str(turn.get("speaker", "")), "content": text,
                "timestamp": when, "id": locomo_episode_id(str(turn["dia_id"])),
                "metadata": {"source": "locomo", "session": n, "dia_id": str(turn["dia_id"])},
            }, f"session_{n}[{i}] ({turn['dia_id']})")
        batches.append(batch)
    return batches


GROUP_KEYS = ("conversation", "session")
"""The fields a JSONL turn is grouped by (and that go to its metadata)."""


def jsonl_batches(text: str) -> list[Batch]:
    """Turns of a JSONL file, grouped by ``conversation`` and ``session``; turns without
    an ``id`` get one derived from their content (:func:`derive_ids`)."""
    batches: dict[tuple[str, str], Batch] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ValueError(f"line {n}: not JSON ({exc.msg})") from exc
        if not isinstance(row, Mapping):
            raise ValueError(f"line {n}: expected an object with role and content")
        group = (_group_part(row, "conversation", n), _group_part(row, "session", n))
        batches.setdefault(group, Batch(_group_label(*group))).append(
            turn_message(row, n), f"line {n}")
    out = list(batches.values())
    derive_ids(out)
    return out


def _group_part(row: Mapping[str, Any], name: str, line: int) -> str:
    value = row.get(name)
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise ValueError(f"line {line}: {name}: expected a string or an integer, "
                         f"got {type(value).__name__}")
    return str(value)


def _group_label(conversation: str, session: str) -> str:
    parts = [f"conversation {conversation}" if conversation else "",
             f"session {session}" if session else ""]
    return " ".join(p for p in parts if p) or "turns"


def turn_message(row: Mapping[str, Any], line: int) -> Message:
    """A JSONL turn as a Client.add message (conversation and session go to metadata)."""
    if not isinstance(row, Mapping):
        raise ValueError(f"line {line}: expected an object with role and content")
    if row.get("content", row.get("text")) is None:
        raise ValueError(f"line {line}: content (or text) is required")
    if row.get("metadata") is not None and not isinstance(row["metadata"], Mapping):
        raise ValueError(f"line {line}: metadata: expected an object, "
                         f"got {type(row['metadata']).__name__}")
    msg: Message = {k: row[k] for k in ("role", "speaker", "timestamp", "id", "metadata")
                    if row.get(k) is not None}
    msg["content"] = row.get("content", row.get("text"))
    msg.setdefault("role", "user")
    grouped = {k: row[k] for k in GROUP_KEYS if _group_part(row, k, line)}
    if grouped:
        msg["metadata"] = {**dict(msg.get("metadata") or {}), **grouped}
    return msg


def derive_ids(batches: Sequence[Batch]) -> None:
    """Give every message without an ``id`` one derived from what it says: a hash of its
    conversation, session, role, speaker, timestamp and text as written in the file, and
    of how many identical turns came before it (two "ok"s in a row stay two turns). The
    same file read again gives the same ids, so the write path stores a turn sent twice
    once (an episode id already stored is not stored again)."""
    seen: dict[str, int] = {}
    for batch in batches:
        for msg in batch.messages:
            if msg.get("id") is not None:
                continue
            meta = msg.get("metadata") or {}
            ts = msg.get("timestamp")
            basis = json.dumps([meta.get("conversation"), meta.get("session"),
                                msg.get("role"), msg.get("speaker"),
                                ts if ts is None or isinstance(ts, (str, int, float))
                                else str(ts), msg.get("content")],
                               sort_keys=True, ensure_ascii=False, default=str)
            count = seen.get(basis, 0)
            seen[basis] = count + 1
            digest = hashlib.sha256(f"{basis}#{count}".encode()).hexdigest()
            msg["id"] = "t" + digest[:31]


def read_batches(path: Path, *, captions: bool = True) -> list[Batch]:
    """The batches of a JSONL turns file or a LoCoMo JSON file (by content, not name)."""
    text = Path(path).read_text(encoding="utf-8")
    data: Any = None
    if text.lstrip()[:1] in ("{", "["):
        try:
            data = json.loads(text)
        except json.JSONDecodeError:
            data = None  # several JSON lines: JSONL
    if data is None:
        return jsonl_batches(text)
    if is_locomo(data):
        samples = data if isinstance(data, list) else [data]
        if len(samples) != 1:
            raise ValueError(f"{path}: holds {len(samples)} LoCoMo conversations; "
                             "ingest one per namespace")
        return locomo_batches(samples[0], captions=captions)
    if isinstance(data, list):  # a JSON array of turns
        batches = [Batch("turns", [turn_message(r, i) for i, r in enumerate(data, 1)],
                         [f"turn {i}" for i in range(1, len(data) + 1)])]
    elif isinstance(data, Mapping):  # a single JSON object: one turn
        batches = [Batch("turns", [turn_message(data, 1)], ["the turn"])]
    else:
        raise ValueError(f"{path}: neither JSONL turns nor a LoCoMo conversation")
    derive_ids(batches)
    return batches


def validate(namespace: str, batches: Sequence[Batch], *,
             max_turn_bytes: int | None = None) -> list[list[Episode]]:
    """Every turn as an :class:`Episode` before anything is enqueued (errors name the
    batch and message); ``max_turn_bytes`` is the setting of that name."""
    out = []
    for batch in batches:
        try:
            out.append(to_episodes(namespace, batch.messages, None, None,
                                   max_turn_bytes=max_turn_bytes))
        except ValueError as exc:
            raise ValueError(_located(batch, str(exc))) from exc
    return out


def _located(batch: Batch, error: str) -> str:
    """``messages[1].content: ...`` said where the turn is in the file (``line 2:
    content: ...``): the index counts the batch's messages from 0, not the file's lines."""
    found = re.match(r"messages\[(\d+)\]\.?(.*)", error, re.S)
    if found and int(found.group(1)) < len(batch.origins):
        return f"{batch.origins[int(found.group(1))]}: {found.group(2)}"
    return f"{batch.label}: {error}"


def file_id(path: Path) -> str:
    """The id of a conversation file's content (names its resume marker): a hash of its
    bytes, so an edited file is a new file."""
    sha = hashlib.sha256()
    with Path(path).open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            sha.update(block)
    return sha.hexdigest()[:32]


def ingest_batches(client: Client, namespace: str, batches: Sequence[Sequence[Episode]], *,
                   wait: bool = True, timeout: float = 600.0,
                   progress: Callable[[int], None] | None = None,
                   fail_fast: bool = False,
                   on_wait: Callable[[Backpressure, float], None] | None = None,
                   start: int = 0, chunk: int = MAX_BATCH,
                   on_done: Callable[[int], object] | None = None) -> list[str]:
    """Enqueue each batch in order, in pieces of at most ``chunk`` turns (waiting for
    each piece if ``wait``, so later turns see earlier ones); returns the Celery task
    ids. ``fail_fast``: see :meth:`memcore.Client.wait` (no ingest worker: NoWorker
    within seconds). A piece refused by back-pressure is sent again after the wait the
    refusal asks, for up to ``timeout`` seconds (memcore.client.backoff), ``on_wait``
    told of each wait. ``start``: how many turns, counted in batch order, are in
    already (a resumed ingest): they are skipped. ``on_done(turns)`` is told, after
    each piece is stored (``wait``) or enqueued, how many turns from the first are in:
    the resume marker."""
    if chunk < 1:
        raise ValueError(f"chunk: must be >= 1, got {chunk}")
    task_ids: list[str] = []
    done = 0
    for batch in batches:
        for begin in range(0, len(batch), chunk):
            piece = list(batch[begin:begin + chunk])
            end = done + len(piece)
            piece = piece[max(0, start - done):]  # the part a stopped run did not finish
            done = end
            if not piece:
                continue
            ids = patiently(functools.partial(client.add, namespace, piece),
                            give_up_after=timeout, on_wait=on_wait)
            task_ids += ids
            if wait:
                client.wait(ids, timeout=timeout, queue=INGEST_QUEUE, fail_fast=fail_fast)
            if on_done is not None:
                on_done(done)
            if progress is not None:
                progress(len(piece))
    return task_ids
