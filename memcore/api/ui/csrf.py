"""Forged-form protection for the inspector (docs/design.md, inspector security).

``SameSite=Strict`` alone does not stop a page served from another port of the same host
(same site, other origin) from posting a form with the session cookie. So every POST
under ``/ui`` must pass two checks:

* **Origin**: the ``Origin`` header (``Referer`` when a browser sends no ``Origin``) must
  name this server's own host and port. ``Origin: null`` (sandboxed frames, ``data:``
  pages) is refused. A request with neither header (curl, scripts) is left to the token.
* **Token**: the form's ``csrf`` field must equal ``HMAC(pre-session secret, session)``.
  The pre-session secret is a random value in its own HttpOnly cookie, set with the first
  page (the sign-in form included, which closes login CSRF) and replaced at sign-in and
  sign-out; "session" is the session cookie (the API key, empty before signing in). A
  page elsewhere can read neither cookie, so it cannot make the token; and a forged
  pre-session cookie (writable from another port) still gives no token for a key it
  does not know.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from urllib.parse import urlsplit

from starlette.requests import Request
from starlette.responses import Response

PRE_SESSION_COOKIE = "memcore_ui_pre"
FIELD = "csrf"
"""The name of the hidden form field that carries the token."""


class CsrfRefused(Exception):
    """A state-changing request failed the origin or token check: answered 403."""


def new_secret() -> str:
    """A fresh pre-session secret."""
    return secrets.token_urlsafe(32)


def token(secret: str, session: str) -> str:
    """The form token for a pre-session ``secret`` and a ``session`` cookie value."""
    return hmac.new(secret.encode(), b"memcore-ui-csrf\0" + session.encode(),
                    hashlib.sha256).hexdigest()


def set_secret(response: Response, request: Request, secret: str) -> None:
    """Keep ``secret`` in the pre-session cookie (HttpOnly, SameSite=Strict, /ui only)."""
    response.set_cookie(PRE_SESSION_COOKIE, secret, httponly=True, samesite="strict",
                        secure=request.url.scheme == "https", path="/ui")


def _netloc(url: str) -> str | None:
    """``host:port`` of ``url`` (default port filled in), None when it has no host."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if not parts.hostname:
        return None
    port = port or (443 if parts.scheme == "https" else 80)
    return f"{parts.hostname.lower()}:{port}"


def check_origin(request: Request) -> None:
    """Raise :class:`CsrfRefused` unless the request comes from a page of this server."""
    claimed = request.headers.get("origin") or request.headers.get("referer")
    if claimed is None:
        return
    host = request.headers.get("host", "")
    own = _netloc(f"{request.url.scheme}://{host}")
    if own is None or _netloc(claimed) != own:
        raise CsrfRefused(f"refused: a form from {claimed[:80]!r}, not from this server")


def check_token(request: Request, sent: str, session: str) -> None:
    """Raise :class:`CsrfRefused` unless ``sent`` is the token of this browser's session."""
    secret = request.cookies.get(PRE_SESSION_COOKIE, "")
    if not secret or not sent or not hmac.compare_digest(sent, token(secret, session)):
        raise CsrfRefused("refused: this form has no valid token (reload the page and try "
                          "again)")
