"""Shared plumbing of the ``memcore`` CLI: connection, exit codes, output.

Exit codes: 0 ok, 1 not found or a failed check, 2 usage error (Typer's own),
3 no Redis (none configured, unreachable, or unsafe eviction policy).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any, NoReturn, ParamSpec, TypeVar

import typer

if TYPE_CHECKING:
    from rich.console import Console

    from memcore.client.client import Client
    from memcore.core.models import Memory

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_NO_REDIS = 3

P = ParamSpec("P")
R = TypeVar("R")

NO_URL = ("no Redis configured: set MEMCORE_REDIS_URL or pass --redis-url "
          "(`memcore up` starts a local stack and prints its URL)")


@dataclass
class CliState:
    """Global options of the current invocation."""

    redis_url: str | None = None


class CliError(Exception):
    """A failure to report on stderr with ``code``."""

    def __init__(self, message: str, code: int = EXIT_FAILED) -> None:
        super().__init__(message)
        self.code = code


_STATE = CliState()


def set_state(new: CliState) -> None:
    """Set by the root callback on every invocation (so tests in one process are isolated)."""
    global _STATE
    _STATE = new


def state() -> CliState:
    """The global options of the running command."""
    return _STATE


def redis_url() -> str | None:
    """``--redis-url`` if given, else MEMCORE_REDIS_URL (through Settings)."""
    from memcore.core.config import get_settings

    return state().redis_url or get_settings().redis_url


def open_client() -> Client:
    """A Client on the configured Redis, or CliError(exit 3)."""
    import redis

    from memcore.client.client import Client
    from memcore.store import DurabilityError

    url = redis_url()
    if not url:
        raise CliError(NO_URL, EXIT_NO_REDIS)
    try:
        return Client(url)
    except (redis.ConnectionError, redis.TimeoutError, DurabilityError) as exc:
        raise CliError(f"cannot use Redis at {url}: {exc}", EXIT_NO_REDIS) from exc


def fail(message: str, code: int = EXIT_FAILED) -> NoReturn:
    """Stop the command with ``message`` on stderr and exit ``code``."""
    raise CliError(message, code)


def require_namespace(client: Client, namespace: str) -> None:
    """Exit 1 if ``namespace`` has no data: a typo ("Alice" for "alice") would otherwise
    print an empty table and exit 0, or (erase --all, consolidate) write keys for it."""
    missing = client.no_data(namespace)
    if missing:  # the sentence the Python warning and the HTTP answers say too
        fail(missing)


def handles_errors(fn: Callable[P, R]) -> Callable[P, R]:
    """Map errors to exit codes: CliError -> its code, Redis unreachable -> 3,
    KeyError (store: not found) -> 1, ValueError (bad input) -> 2."""
    import redis

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except CliError as exc:
            code, message = exc.code, str(exc)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            code, message = EXIT_NO_REDIS, f"cannot connect to Redis: {exc}"
        except KeyError as exc:
            code, message = EXIT_FAILED, str(exc.args[0]) if exc.args else "not found"
        except ValueError as exc:
            code, message = EXIT_USAGE, str(exc)
        typer.echo(f"Error: {message}", err=True)
        raise typer.Exit(code)

    return wrapper


def console() -> Console:
    """A Rich console on the current stdout (created per call, so tests capture it).
    Markup is off: memory texts hold brackets of their own ("[redacted: pin]") that Rich
    would take for markup and drop; styles are given as :class:`rich.text.Text`."""
    from rich.console import Console

    return Console(highlight=False, soft_wrap=False, markup=False)


def emit_json(data: Any) -> None:
    """Print ``data`` as JSON on stdout (datetimes as ISO strings)."""
    typer.echo(json.dumps(data, indent=2, default=_default, ensure_ascii=False))


def emit_listing(title: str, columns: Sequence[str], rows: Sequence[Sequence[str]],
                 data: Any, *, json_out: bool) -> None:
    """A ``list`` command's output: ``data`` as JSON with ``--json``, else a table."""
    if json_out:
        emit_json(data)
        return
    from rich.table import Table

    table = Table(title=title)
    for column in columns:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    console().print(table)


def emit_removed(item_id: str, done: str, *, json_out: bool) -> None:
    """A removing command's output: ``{"id": ..., "<done>": true}`` or "<done> <id>"."""
    if json_out:
        emit_json({"id": item_id, done: True})
    else:
        console().print(f"{done} {item_id}")


def _default(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if hasattr(value, "model_dump"):
        return value.model_dump(mode="json")
    return str(value)


def memory_json(memory: Memory) -> dict[str, Any]:
    """A memory as JSON-able data, without its vector."""
    return memory.model_dump(mode="json", exclude={"vector"})


def parse_time(value: str | None, option: str = "--now") -> datetime | None:
    """An ISO-8601 time (naive = UTC), or None; bad input is a usage error naming the option."""
    if value is None:
        return None
    from memcore.core.models import as_utc

    try:
        return as_utc(datetime.fromisoformat(value))
    except ValueError as exc:
        raise typer.BadParameter(f"{value!r} is not an ISO-8601 time", param_hint=option) from exc


JSON_OPTION = typer.Option(False, "--json", help="Print JSON on stdout instead of a table.")
