"""Signing in to the inspector with an API key, kept in an HttpOnly cookie.

The cookie holds the key itself and every request verifies it again, so revoking a key
(``memcore keys revoke``) signs its sessions out at once. ``SameSite=Strict`` keeps
other sites from sending it along with a forged form (CSRF).
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from memcore.api.auth import INSECURE_DEV, Principal, check_namespace
from memcore.api.state import ApiState, api_state
from memcore.store.api_keys import ApiRole

COOKIE = "memcore_ui_key"


class SignInRequired(Exception):
    """No valid key: the handler answers with a redirect to the sign-in page."""


class NotVisible(Exception):
    """The namespace or memory is unknown or outside the key's scopes (one answer for
    both, so a page never tells whether an out-of-scope namespace exists)."""


class RoleTooLow(Exception):
    """The key's role does not allow this action."""

    def __init__(self, needed: ApiRole) -> None:
        super().__init__(f"this key's role cannot do this (needs {needed.value!r})")
        self.needed = needed


@dataclass(frozen=True)
class Viewer:
    """Who is looking: the key's principal and what it may do."""

    principal: Principal
    state: ApiState

    @property
    def can_write(self) -> bool:
        """Pin, unpin, restore, delete, erase a memory, save a review."""
        return self.principal.role.rank >= ApiRole.WRITE.rank

    @property
    def is_admin(self) -> bool:
        """Roll back a version."""
        return self.principal.role.rank >= ApiRole.ADMIN.rank

    def require(self, role: ApiRole) -> None:
        """Raise :class:`RoleTooLow` unless the key has ``role``."""
        if self.principal.role.rank < role.rank:
            raise RoleTooLow(role)

    def namespace(self, namespace: str) -> str:
        """``namespace`` if the key may see it and it exists, else :class:`NotVisible`."""
        try:
            check_namespace(namespace)
        except ValueError as exc:
            raise NotVisible() from exc
        if not self.principal.allows(namespace):
            raise NotVisible()
        if namespace not in self.state.client.store.records.namespaces():
            raise NotVisible()
        return namespace

    def visible_namespaces(self) -> list[str]:
        """Every stored namespace in the key's scopes, sorted."""
        return [ns for ns in self.state.client.store.records.namespaces()
                if self.principal.allows(ns)]


def verify(state: ApiState, key: str) -> Principal | None:
    """The principal of ``key``, or None if it is unknown or revoked."""
    if state.insecure_dev:
        return INSECURE_DEV
    if not key:
        return None
    found = state.keys().verify(key)
    return None if found is None else Principal.of(found)


def viewer(request: Request) -> Viewer:
    """FastAPI dependency: the signed-in viewer, or :class:`SignInRequired`."""
    state = api_state(request)
    principal = verify(state, request.cookies.get(COOKIE, ""))
    if principal is None:
        raise SignInRequired()
    return Viewer(principal, state)
