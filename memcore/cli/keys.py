"""``memcore keys create|list|revoke``: API keys of the HTTP service."""

from __future__ import annotations

from typing import TYPE_CHECKING

import typer

from memcore.cli.common import (
    JSON_OPTION,
    console,
    emit_json,
    emit_listing,
    emit_removed,
    fail,
    handles_errors,
    open_client,
)

if TYPE_CHECKING:
    from memcore.store.api_keys import ApiKeyRepository

keys_app = typer.Typer(help="API keys of the HTTP service (stored only as hashes in Redis).",
                       no_args_is_help=True)


def _repo() -> ApiKeyRepository:
    return open_client().store.api_keys


@keys_app.command("create")
@handles_errors
def create(scope: list[str] = typer.Option(..., "--scope", metavar="PATTERN",
                                           help="Namespace glob the key may use, e.g. "
                                                "'acme-*' or 'alice' (repeatable)."),
           role: str = typer.Option(..., "--role", metavar="read|write|admin",
                                    help="read: search and reads; write: also add, edit, "
                                         "delete, erase a memory; admin: also erase a "
                                         "namespace and roll back."),
           name: str = typer.Option("", "--name", help="A label to recognise the key by."),
           json_out: bool = JSON_OPTION) -> None:
    """Create a key and print it once (only its hash is stored)."""
    repo = _repo()
    record, plain = repo.create(scope, role, name)
    if json_out:
        emit_json({**record.public(), "key": plain})
        return
    out = console()
    out.print(f"key {record.id} ({record.role.value} on {', '.join(record.scopes)}"
              f"{', ' + record.name if record.name else ''}):")
    out.print(plain)
    out.print("This is the only time the key is shown: store it now.")


@keys_app.command("list")
@handles_errors
def list_keys(json_out: bool = JSON_OPTION) -> None:
    """Every key: id, name, role, scopes, creation time (never the key)."""
    found = _repo().list()
    emit_listing("API keys", ("id", "name", "role", "scopes", "created"),
                 [(k.id, k.name, k.role.value, " ".join(k.scopes),
                   k.created_at.isoformat(timespec="seconds")) for k in found],
                 [k.public() for k in found], json_out=json_out)


@keys_app.command("revoke")
@handles_errors
def revoke(key_id: str = typer.Argument(..., metavar="ID", help="Key id (from keys list)."),
           json_out: bool = JSON_OPTION) -> None:
    """Revoke a key: requests with it get 401 from now on."""
    if not _repo().revoke(key_id):
        fail(f"no key with id {key_id!r}")
    emit_removed(key_id, "revoked", json_out=json_out)


def register(app: typer.Typer) -> None:
    """Add the ``keys`` group to ``app``."""
    app.add_typer(keys_app, name="keys")
