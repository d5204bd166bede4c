"""Per-record bounds: what one memory may hold however often it is repeated or merged.

A fact said 4,000 times reinforces one memory 4,000 times, and a merge joins its
members' lists; without bounds that one record grew to thousands of source ids and
metadata values (766 KB of JSON), every repeat re-read and re-wrote all of it (the
4th batch of 1,000 took 27 s) and every search hit shipped it whole
(docs/design.md, Bounded records).

The bounds, and how the overflow is folded (the oldest go first, never silently):

* ``sources``: the newest :data:`MAX_SOURCES` turn ids are listed; ``support`` keeps
  counting every distinct turn, so ``support - len(sources)`` older ones are unlisted
  (:func:`unlisted_count`). The store keeps the unlisted ids out of the record, in a set
  of their own, so a redelivered old turn still counts once.
* ``metadata``: a memory's metadata obeys the limits of one add's (at most
  ``MAX_METADATA_KEYS`` keys, ``MAX_METADATA_LIST`` values per key, about
  ``MAX_METADATA_BYTES``; :func:`bound_metadata`). Past them the oldest values of a key
  go first (values are kept in the order they came: a repeat's after the memory's, a
  merge's members strongest first); keys beyond the limit that came later go whole.
* ``member_texts`` (the texts merged into a memory): its own first text and the newest
  others, :data:`MAX_MEMBER_TEXTS` in all
  and at most :data:`MAX_MEMBER_TEXT_BYTES` in all; a merged or summary text longer than
  a turn's limit (``MAX_TEXT_BYTES``) is not taken (:func:`text_fits`).

What was dropped is counted in a :class:`Capped`; the write's audit event says it
(:meth:`Capped.note`). Everything here is linear in the bounded sizes, so a repeat of a
capped memory costs the same as the 100th repeat: no growth, no quadratic rewrite.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memcore.core.models import (
    MAX_METADATA_BYTES,
    MAX_METADATA_KEYS,
    MAX_METADATA_LIST,
    MAX_METADATA_STRING,
    MAX_TEXT_BYTES,
    Memory,
)

MAX_SOURCES = 64
"""Source turn ids one memory lists (the newest); ``support`` counts all of them."""

MAX_VALUES_PER_KEY = MAX_METADATA_LIST
"""Values one metadata key of a memory keeps after repeats and merges (the newest): the
same 256 one add may give."""

MAX_MEMBER_TEXTS = 32
"""Texts merged into one memory that it keeps (the newest)."""

MAX_MEMBER_TEXT_BYTES = 64 * 1024
"""Most UTF-8 bytes of a memory's member texts in all (the newest kept)."""


@dataclass
class Capped:
    """What bounding one record dropped (all zero: nothing)."""

    sources: list[str] = field(default_factory=list)
    """Source ids no longer listed by the record (``support`` still counts them)."""
    values: dict[str, int] = field(default_factory=dict)
    """Metadata key -> how many of its values were dropped (a key dropped whole: all)."""
    member_texts: int = 0
    """Member texts dropped."""

    def __bool__(self) -> bool:
        return bool(self.sources or self.values or self.member_texts)

    def add(self, other: Capped) -> None:
        """Fold ``other`` (a later step of the same write) into this one."""
        self.sources += other.sources
        for key, n in other.values.items():
            self.values[key] = self.values.get(key, 0) + n
        self.member_texts += other.member_texts

    def note(self) -> str:
        """The audit's words for it ("" when nothing was dropped)."""
        parts = []
        if self.sources:
            parts.append(f"{len(self.sources)} oldest source id(s) unlisted (support still "
                         f"counts them; a record lists {MAX_SOURCES})")
        if self.values:
            dropped = ", ".join(f"{key} {n}" for key, n in sorted(self.values.items()))
            parts.append(f"metadata values dropped, oldest first: {dropped}")
        if self.member_texts:
            parts.append(f"{self.member_texts} older member text(s) dropped")
        return "record capped: " + "; ".join(parts) if parts else ""


def unlisted_count(memory: Memory) -> int:
    """How many of the turns ``support`` counts the record no longer lists (0: none)."""
    return max(0, memory.support - len(memory.sources)) if memory.sources else 0


def record_caps(memory: Memory) -> dict[str, Any] | None:
    """Which bounds ``memory``'s record has reached (None: none), as the HTTP API's memory
    JSON (``capped``) and the inspector show it:

    * ``sources_unlisted``: how many source turns ``support`` counts that the record no
      longer lists (exact);
    * ``metadata_keys_full``: keys holding :data:`MAX_VALUES_PER_KEY` values, and
      ``metadata_full``: true at ``MAX_METADATA_KEYS`` keys or within one value of
      ``MAX_METADATA_BYTES``; ``member_texts_full``: true at :data:`MAX_MEMBER_TEXTS`.
      A full list drops its oldest value for each new one; which values went is in the
      write's audit event (:meth:`Capped.note`, ``history``).
    """
    out: dict[str, Any] = {}
    unlisted = unlisted_count(memory)
    if unlisted:
        out["sources_unlisted"] = unlisted
    metadata = memory.metadata or {}
    full = sorted(key for key, value in metadata.items()
                  if isinstance(value, list) and len(value) >= MAX_VALUES_PER_KEY)
    if full:
        out["metadata_keys_full"] = full
    if metadata and (len(metadata) >= MAX_METADATA_KEYS or sum(
            _size(k, v) for k, v in metadata.items()) > MAX_METADATA_BYTES - MAX_METADATA_STRING):
        out["metadata_full"] = True
    if len(memory.member_texts) >= MAX_MEMBER_TEXTS:
        out["member_texts_full"] = True
    return out or None


def bound_sources(sources: Sequence[str]) -> tuple[list[str], list[str]]:
    """(the newest :data:`MAX_SOURCES` of ``sources``, oldest first; the older ones)."""
    cut = max(0, len(sources) - MAX_SOURCES)
    return list(sources[cut:]), list(sources[:cut])


def _size(key: str, value: Any) -> int:
    # The measure validate_metadata applies to one add's metadata.
    return len(key) + len(str(value))


def bound_metadata(metadata: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    """``metadata`` within one add's limits, and how many values of each key went.

    In order: keys past ``MAX_METADATA_KEYS`` (the later ones) go whole; a list keeps
    its newest :data:`MAX_VALUES_PER_KEY` values; then, while the whole is over
    ``MAX_METADATA_BYTES`` (measured as :func:`validate_metadata` does), the oldest value
    of the largest list goes, and once no list holds two values the last key goes."""
    out: dict[str, Any] = {}
    dropped: dict[str, int] = {}

    def drop(key: str, n: int) -> None:
        dropped[key] = dropped.get(key, 0) + n

    for key, value in metadata.items():
        if len(out) >= MAX_METADATA_KEYS:
            drop(key, len(value) if isinstance(value, list) else 1)
            continue
        if isinstance(value, list) and len(value) > MAX_VALUES_PER_KEY:
            drop(key, len(value) - MAX_VALUES_PER_KEY)
            value = value[-MAX_VALUES_PER_KEY:]
        out[key] = list(value) if isinstance(value, list) else value
    sizes = {key: _size(key, value) for key, value in out.items()}
    total = sum(sizes.values())
    while total > MAX_METADATA_BYTES and out:
        lists = [key for key, value in out.items() if isinstance(value, list) and len(value) > 1]
        if lists:
            key = max(lists, key=sizes.__getitem__)
            first = out[key].pop(0)
            shrink = len(repr(first)) + 2  # "'v', " leaves the list's str()
            drop(key, 1)
        else:
            key = next(reversed(out))
            value = out.pop(key)
            shrink = sizes[key]
            drop(key, len(value) if isinstance(value, list) else 1)
        sizes[key] -= shrink
        total -= shrink
    return out, dropped


def bound_member_texts(texts: Sequence[str]) -> tuple[list[str], int]:
    """(the first of ``texts`` -- the surviving record's own original text, which the
    merge overwrites -- and the newest others, :data:`MAX_MEMBER_TEXTS` in all within
    :data:`MAX_MEMBER_TEXT_BYTES`, oldest first; how many went). The members' texts
    that go stay in their tombstones; the survivor has no other copy of its own."""
    if not texts:
        return [], 0
    first = texts[0]
    kept: list[str] = []
    size = len(first.encode("utf-8", "surrogatepass"))
    for text in reversed(texts[1:]):
        size += len(text.encode("utf-8", "surrogatepass"))
        if len(kept) >= MAX_MEMBER_TEXTS - 1 or size > MAX_MEMBER_TEXT_BYTES:
            break
        kept.append(text)
    kept.reverse()
    return [first, *kept], len(texts) - len(kept) - 1


def text_fits(text: str) -> bool:
    """Is ``text`` short enough to be a memory's text (a turn's limit, UTF-8 bytes)?"""
    return len(text.encode("utf-8", "surrogatepass")) <= MAX_TEXT_BYTES


def bound_record(memory: Memory) -> tuple[Memory, Capped]:
    """``memory`` with every per-record list within its bound (the same object when it
    already was), and what went."""
    capped = Capped()
    changes: dict[str, Any] = {}
    if len(memory.sources) > MAX_SOURCES:
        changes["sources"], capped.sources = bound_sources(memory.sources)
    metadata, capped.values = bound_metadata(memory.metadata or {})
    if capped.values:
        changes["metadata"] = metadata
    if len(memory.member_texts) > 1:
        texts, capped.member_texts = bound_member_texts(memory.member_texts)
        if capped.member_texts:
            changes["member_texts"] = texts
    return (memory.model_copy(update=changes) if changes else memory), capped
