"""A task strategy that rejects malformed task messages instead of dying on them.

Why: Celery's default strategy (``celery.worker.strategy:default``) runs in the
worker's main process and assumes the decoded body is a dict or a list. kombu skips
decoding an empty body and hands back raw ``b""`` (and a JSON body can decode to
``null``, a number or a string), so ``'args' in message.payload`` raises a
``TypeError``. The consumer only turns ``InvalidTaskError``, ``ContentDisallowed`` and
``DecodeError`` into a rejected message; anything else ends the worker with
"Unrecoverable error". This wrapper checks the message's shape first and turns
shape errors into ``InvalidTaskError``: the consumer logs and rejects the message
(not requeued), and the worker keeps consuming.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from celery import Task
from celery.exceptions import InvalidTaskError
from celery.worker.strategy import default
from kombu.exceptions import ContentDisallowed, DecodeError
from kombu.utils.encoding import safe_repr

log = logging.getLogger(__name__)

# Data-shape errors the default handler raises on a malformed message. OSError and
# connection errors (handing a valid task to the pool) are NOT converted: rejecting
# would drop a valid message, while a crash lets it come back after the visibility timeout.
_SHAPE_ERRORS = (TypeError, ValueError, KeyError, AttributeError, IndexError)


def check_message(message: Any, body: Any) -> None:
    """Raise ``InvalidTaskError`` unless ``message`` looks like a Celery task message."""
    payload = message.payload if body is None else body  # DecodeError: consumer handles it
    if isinstance(payload, dict):  # protocol 1 / hybrid
        if not isinstance(payload.get("args", ()), list | tuple):
            raise InvalidTaskError("task message: args must be a list")
        return
    ok = (isinstance(payload, list | tuple) and len(payload) == 3
          and isinstance(payload[0], list | tuple) and isinstance(payload[1], dict)
          and isinstance(payload[2], dict | None))
    if not ok:
        raise InvalidTaskError(
            f"task message body must be [args, kwargs, embed], got {safe_repr(payload)[:80]}")
    headers = message.headers
    if not isinstance(headers, dict) or not isinstance(headers.get("id"), str):
        raise InvalidTaskError("task message headers: id must be a string")
    # Read only once the request holds a pool slot: a bad value there would leak the slot.
    limits = headers.get("timelimit")
    if limits is not None and not (
            isinstance(limits, list | tuple) and len(limits) == 2
            and all(v is None or (isinstance(v, int | float) and not isinstance(v, bool)
                                  and v >= 0) for v in limits)):
        raise InvalidTaskError("task message headers: timelimit must be [hard, soft] seconds")


def guarded(task: Any, app: Any, consumer: Any, **kwargs: Any) -> Callable[..., Any]:
    """Celery ``Task.Strategy``: the default strategy behind a message-shape check."""
    handler = default(task, app, consumer, **kwargs)

    def task_message_handler(message: Any, body: Any, ack: Any, reject: Any, callbacks: Any,
                             **kw: Any) -> Any:
        check_message(message, body)
        try:
            return handler(message, body, ack, reject, callbacks, **kw)
        except (InvalidTaskError, ContentDisallowed, DecodeError):
            raise  # the consumer already handles these
        except _SHAPE_ERRORS as exc:
            raise InvalidTaskError(f"malformed task message: {exc!r}"[:300]) from exc

    return task_message_handler


class GuardedTask(Task):
    """memcore's task base class (``Celery(task_cls=...)``): malformed messages are rejected."""

    Strategy = "workers.strategy:guarded"
