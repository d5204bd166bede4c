"""Security headers on every inspector answer (docs/design.md, inspector security).

The pages are server-rendered without a line of script, so the policy allows none:
styles and images only from this server, forms only to it, no framing (clickjacking),
no ``<base>`` rewrite, and no URL (a memory id, a search query) sent in ``Referer`` to
another site.
Only ``/ui``: the OpenAPI pages at ``/docs`` load their own scripts.
"""

from __future__ import annotations

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

CONTENT_SECURITY_POLICY = ("default-src 'none'; style-src 'self'; img-src 'self'; "
                           "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
HEADERS = {
    "Content-Security-Policy": CONTENT_SECURITY_POLICY,
    "X-Frame-Options": "DENY",
    # same-origin, not no-referrer: under no-referrer a browser sends "Origin: null" with
    # this server's own form posts, which the origin check must refuse.
    "Referrer-Policy": "same-origin",
    "X-Content-Type-Options": "nosniff",
}
PREFIX = "/ui"


class SecurityHeaders:
    """ASGI middleware: add :data:`HEADERS` to every response under ``/ui``."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "") if scope["type"] == "http" else ""
        if path != PREFIX and not path.startswith(PREFIX + "/"):
            await self.app(scope, receive, send)
            return

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = MutableHeaders(scope=message)
                for name, value in HEADERS.items():
                    headers[name] = value
            await send(message)

        await self.app(scope, receive, send_with_headers)
