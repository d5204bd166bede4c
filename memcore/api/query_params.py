"""Unknown query parameters are refused, not ignored.

FastAPI passes over a query parameter the route does not declare: ``GET .../profile?
filters=...`` answered 200 with the whole profile, unfiltered, and a caller could not
tell. The key check (:class:`~memcore.api.auth.AuthMiddleware`) refuses such a request
with a 400 naming the parameters, after authentication (a caller without a key learns
nothing about the routes).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

_ALLOWED: dict[int, frozenset[str]] = {}


def allowed(route: Any) -> frozenset[str]:
    """The query parameters ``route`` declares (its dependencies' included); empty for a
    route that is not a FastAPI route."""
    key = id(route)
    found = _ALLOWED.get(key)
    if found is None:
        names: set[str] = set()
        todo = [getattr(route, "dependant", None)]
        while todo:
            dependant = todo.pop()
            if dependant is not None:
                names.update(param.alias for param in dependant.query_params)
                todo.extend(dependant.dependencies)
        found = _ALLOWED[key] = frozenset(names)
    return found


def unknown(route: Any, query_string: bytes) -> list[str]:
    """The names in ``query_string`` that ``route`` does not take, in order, once each."""
    if not query_string:
        return []
    names = [name for name, _ in parse_qsl(query_string.decode("latin-1"),
                                           keep_blank_values=True)]
    known = allowed(route)
    return list(dict.fromkeys(n for n in names if n not in known))
