"""Exception types for "the broker cannot be reached", so upper layers need not import kombu."""

from __future__ import annotations

from kombu.exceptions import OperationalError

BROKER_UNREACHABLE: tuple[type[Exception], ...] = (OperationalError,)
"""Raised when a task cannot be sent (broker down or not answering in time)."""
