"""Chat messages in, validated episodes out (an error names the message and its field)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from memcore.core.models import (
    Episode,
    Role,
    as_instant,
    check_turn_size,
    turn_limit,
    utcnow,
    validate_episode_metadata,
)

MESSAGE_KEYS = frozenset({"role", "content", "text", "speaker", "name", "timestamp", "id",
                          "metadata"})
"""The keys a ``Client.add`` message may carry; any other key is an error."""


def to_episodes(namespace: str, messages: Iterable[Mapping[str, Any] | Episode],
                timestamp: datetime | str | None, metadata: Mapping[str, Any] | None,
                scopes: Mapping[str, str | None] | None = None, *,
                max_turn_bytes: int | None = None) -> list[Episode]:
    """Validate chat messages into episodes (an error names the message and field).

    ``metadata`` (the call's) is under each message's own metadata; ``scopes`` (user_id,
    agent_id, run_id) go to every episode built here. ``max_turn_bytes`` (the setting of
    that name) bounds each turn's text; None leaves the size to whoever receives the
    episodes.
    """
    default_time = as_instant(timestamp, "timestamp") if timestamp is not None else utcnow()
    context = turn_limit(max_turn_bytes) if max_turn_bytes is not None else None
    if metadata is not None:
        validate_episode_metadata(dict(metadata))  # named "metadata", not messages[i]
    base = {"namespace": namespace, "timestamp": default_time,
            **{k: v for k, v in (scopes or {}).items() if v is not None}}
    episodes: list[Episode] = []
    for i, message in enumerate(messages):
        if isinstance(message, Episode):
            episodes.append(_sized(i, message, max_turn_bytes))
        else:
            data = _episode_fields(i, message, base, metadata)
            try:
                episodes.append(Episode.model_validate(data, context=context))
            except ValidationError as exc:
                raise ValueError(_message_error(i, message, exc)) from None
            except ValueError as exc:
                raise ValueError(f"messages[{i}]: {exc}") from exc
    return episodes


_MESSAGE_KEY_OF = {"text": ("content", "text"), "speaker": ("speaker", "name")}
"""Episode fields a message spells differently (its key first, if present)."""


def _message_error(i: int, message: Mapping[str, Any], exc: ValidationError) -> str:
    """One line naming the message's own key (``content``, not the Episode's ``text``)."""
    first = exc.errors()[0]
    loc = [str(part) for part in first["loc"]] or ["?"]
    names = _MESSAGE_KEY_OF.get(loc[0], (loc[0],))
    loc[0] = next((name for name in names if name in message), names[0])
    where = loc[0] + "".join(f"[{p}]" if p.isdigit() else f".{p}" for p in loc[1:])
    reason = str(first["msg"]).removeprefix("Value error, ")
    got = first.get("input")
    shown = f", got {type(got).__name__}" if first["type"].endswith("_type") else ""
    return f"messages[{i}].{where}: {reason}{shown}"


def _sized(i: int, episode: Episode, max_turn_bytes: int | None) -> Episode:
    """``episode`` if its text fits the turn limit (an error naming it otherwise)."""
    if max_turn_bytes is not None:
        try:
            check_turn_size(episode.text, max_turn_bytes)
        except ValueError as exc:
            raise ValueError(f"messages[{i}].text: {exc}") from None
    return episode


def _episode_fields(i: int, message: object, base: Mapping[str, Any],
                    metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """The fields of an episode from message ``i`` (not validated yet, except its keys)."""
    if not isinstance(message, Mapping):
        raise ValueError(f"messages[{i}]: expected a mapping, got {type(message).__name__}")
    unknown = [k for k in message if k not in MESSAGE_KEYS]
    if unknown:
        # A silently dropped "tenant" or per-message "namespace" would store the turn
        # somewhere the caller did not mean.
        raise ValueError(f"messages[{i}].{unknown[0]}: unknown key (allowed: "
                         f"{', '.join(sorted(MESSAGE_KEYS))}; the namespace is the "
                         "argument of add)")
    if message.get("content", message.get("text")) is None:
        raise ValueError(f"messages[{i}].content: required (the turn's text)")
    extra = message.get("metadata")
    extra = {} if extra is None else extra
    if not isinstance(extra, Mapping):
        raise ValueError(f"messages[{i}].metadata: expected a mapping, "
                         f"got {type(extra).__name__}")
    speaker = message.get("speaker", message.get("name"))
    data: dict[str, Any] = {
        **base,
        "role": message.get("role", Role.USER),
        "speaker": "" if speaker is None else speaker,  # 0 or False must fail, not vanish
        "text": message.get("content", message.get("text")),
        "timestamp": message.get("timestamp", base["timestamp"]),
        "metadata": {**(metadata or {}), **dict(extra)},
    }
    if message.get("id") is not None:
        data["id"] = message["id"]
    return data
