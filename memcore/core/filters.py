"""The filter language of ``search`` and ``list`` (pure: compiled once, run per memory).

A filter is a JSON object. ``{"field": value}`` is equality; ``{"field": {"op": value}}``
applies operators (several in one object must all hold); ``{"and": [...]}``,
``{"or": [...]}`` and ``{"not": {...}}`` combine filters, and several keys in one
object are AND-ed. Fields: ``user_id``, ``agent_id``, ``run_id``, ``kind``,
``status``, the times ``created_at``, ``updated_at``, ``valid_from``, ``valid_until``
(alias ``valid_to``) and ``event_at`` (when the fact happened: ``valid_from``, else
``created_at``), and ``metadata.<key>``. Operators: ``eq``,
``ne``, ``in``, ``nin``, ``gt``, ``gte``, ``lt``, ``lte``, ``contains``.

Semantics (MongoDB's, which Mem0 users know):

- a missing field (no such metadata key, no ``user_id``) fails every condition except
  ``ne`` and ``nin``; ``{"field": null}`` matches exactly the memories without it;
- on a list-valued metadata field, equality, ``in`` and ``contains`` hold when any
  element matches (equality with a list compares the whole list);
- ``contains`` is a substring test on a string field and membership on a list;
- ``gt``/``gte``/``lt``/``lte`` compare numbers with numbers, strings with strings and
  times with times (ISO 8601 strings are read as times for the time fields); values of
  another type never match (a boolean is not a number). An open validity bound (no
  ``valid_until``) is a missing field: ``{"valid_until": null}`` finds the open ones.

Every filter is applied before ranking (see :mod:`memcore.client.search`), so a time
filter finds old memories that many newer, closer ones would push out of a top ``k``.

Any other field or operator raises :class:`FilterError` naming it. A filter only ever
narrows what the caller's namespace already holds: there is no namespace field.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from memcore.core.models import SCOPE_FIELDS, Kind, Status, as_utc


class Filterable(Protocol):
    """What a filter reads: a :class:`~memcore.core.models.Memory`, or the cheaper
    :class:`FilterFields` a scan decodes."""

    @property
    def user_id(self) -> str | None: ...
    @property
    def agent_id(self) -> str | None: ...
    @property
    def run_id(self) -> str | None: ...
    @property
    def kind(self) -> Kind: ...
    @property
    def status(self) -> Status: ...
    @property
    def created_at(self) -> datetime: ...
    @property
    def updated_at(self) -> datetime: ...
    @property
    def valid_from(self) -> datetime | None: ...
    @property
    def valid_until(self) -> datetime | None: ...
    @property
    def expires_at(self) -> datetime | None: ...
    @property
    def expiry_given(self) -> bool: ...
    @property
    def event_at(self) -> datetime: ...
    @property
    def metadata(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class FilterFields:
    """Only the fields filters and listing read, for scanning many records without
    building whole memories."""

    id: str
    kind: Kind
    status: Status
    created_at: datetime
    updated_at: datetime
    user_id: str | None = None
    agent_id: str | None = None
    run_id: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    valid_from: datetime | None = None
    valid_until: datetime | None = None
    expires_at: datetime | None = None
    expiry_given: bool = False

    @property
    def event_at(self) -> datetime:
        """When the fact happened: its ``valid_from``, else when it was stored."""
        return self.valid_from or self.created_at


Predicate = Callable[[Filterable], bool]

TIME_FIELDS = ("created_at", "updated_at", "valid_from", "valid_until", "event_at")
ALIASES = {"valid_to": "valid_until"}
"""Other names a filter may use for a field (the bi-temporal literature's ``valid_to``)."""
ENUM_FIELDS: dict[str, tuple[str, ...]] = {"kind": tuple(k.value for k in Kind),
                                          "status": tuple(s.value for s in Status)}
FIELDS = (*SCOPE_FIELDS, "kind", "status", *TIME_FIELDS)
METADATA_PREFIX = "metadata."
OPERATORS = ("eq", "ne", "in", "nin", "gt", "gte", "lt", "lte", "contains")
LOGICAL = ("and", "or", "not")
MAX_CONDITIONS = 256
MAX_DEPTH = 16
MAX_IN = 1024

_MISSING = object()


class FilterError(ValueError):
    """An invalid filter; the message names the field or operator at fault."""


def compile_filter(spec: Mapping[str, Any] | None) -> Predicate:
    """Check ``spec`` and return a predicate over memories (None or ``{}``: everything)."""
    if spec is None:
        return _always
    counter = [0]
    return _compile(spec, "filters", 0, counter)


def matches(memory: Filterable, spec: Mapping[str, Any] | None) -> bool:
    """Whether ``memory`` satisfies ``spec`` (compile once with :func:`compile_filter`
    when testing many memories)."""
    return compile_filter(spec)(memory)


def _always(_: Filterable) -> bool:
    return True


def _compile(spec: Any, where: str, depth: int, counter: list[int]) -> Predicate:
    if not isinstance(spec, Mapping):
        raise FilterError(f"{where}: expected a JSON object, got {type(spec).__name__}")
    if depth > MAX_DEPTH:
        raise FilterError(f"{where}: nested deeper than {MAX_DEPTH} levels")
    parts: list[Predicate] = []
    for key, value in spec.items():
        if not isinstance(key, str):
            raise FilterError(f"{where}: keys must be strings, got {key!r}")
        if key == "and" or key == "or":
            parts.append(_combine(key, value, f"{where}.{key}", depth, counter))
        elif key == "not":
            parts.append(_negate(_compile(value, f"{where}.not", depth + 1, counter)))
        else:
            parts.append(_field(key, value, where, counter))
    return _all(parts)


def _negate(inner: Predicate) -> Predicate:
    return lambda m: not inner(m)


def _combine(key: str, value: Any, where: str, depth: int, counter: list[int]) -> Predicate:
    if not isinstance(value, list) or not value:
        raise FilterError(f"{where}: expected a non-empty list of filters")
    subs = [_compile(item, f"{where}[{i}]", depth + 1, counter) for i, item in enumerate(value)]
    if key == "and":
        return _all(subs)
    return lambda m: any(p(m) for p in subs)


def _all(parts: list[Predicate]) -> Predicate:
    if not parts:
        return _always
    if len(parts) == 1:
        return parts[0]
    return lambda m: all(p(m) for p in parts)


def _getter(field: str, where: str) -> Callable[[Filterable], Any]:
    field = ALIASES.get(field, field)
    if field.startswith(METADATA_PREFIX):
        key = field[len(METADATA_PREFIX):]
        if not key:
            raise FilterError(f"{where}: field {field!r} names no metadata key")
        return lambda m: (m.metadata or {}).get(key, _MISSING)
    if field in SCOPE_FIELDS:
        return lambda m: _MISSING if getattr(m, field) is None else getattr(m, field)
    if field in ENUM_FIELDS:
        return lambda m: str(getattr(m, field).value)
    if field in TIME_FIELDS:
        def when(m: Filterable) -> Any:
            value = getattr(m, field)
            return _MISSING if value is None else as_utc(value)
        return when
    raise FilterError(f"{where}: unknown field {field!r} (fields: {', '.join(FIELDS)}, "
                      f"{METADATA_PREFIX}<key>)")


def _field(field: str, cond: Any, where: str, counter: list[int]) -> Predicate:
    here = f"{where}.{field}"
    get = _getter(field, here)
    field = ALIASES.get(field, field)
    if isinstance(cond, Mapping):
        if not cond:
            raise FilterError(f"{here}: empty operator object")
        tests = [_operator(field, str(op), arg, f"{here}.{op}", counter)
                 for op, arg in cond.items()]
    else:
        tests = [_operator(field, "eq", cond, here, counter)]
    def predicate(m: Filterable) -> bool:
        value = get(m)
        return all(t(value) for t in tests)
    return predicate


def _operator(field: str, op: str, arg: Any, where: str,
              counter: list[int]) -> Callable[[Any], bool]:
    counter[0] += 1
    if counter[0] > MAX_CONDITIONS:
        raise FilterError(f"{where}: more than {MAX_CONDITIONS} conditions")
    if op not in OPERATORS:
        raise FilterError(f"{where}: unknown operator {op!r} (operators: {', '.join(OPERATORS)})")
    if op in ("eq", "ne"):
        want = _value(field, arg, where, allow_null=True, allow_list=True)
        if op == "eq":
            return lambda v: _equals(v, want)
        return lambda v: not _equals(v, want)
    if op in ("in", "nin"):
        if not isinstance(arg, list):
            raise FilterError(f"{where}: expected a list, got {type(arg).__name__}")
        if len(arg) > MAX_IN:
            raise FilterError(f"{where}: {len(arg)} values; the limit is {MAX_IN}")
        options = [_value(field, a, f"{where}[{i}]", allow_null=True, allow_list=False)
                   for i, a in enumerate(arg)]
        if op == "in":
            return lambda v: any(_equals(v, o) for o in options)
        return lambda v: not any(_equals(v, o) for o in options)
    if op == "contains":
        if field in TIME_FIELDS:
            raise FilterError(f"{where}: contains does not apply to {field}")
        if not isinstance(arg, str):
            raise FilterError(f"{where}: expected a string, got {type(arg).__name__}")
        return lambda v: _contains(v, arg)
    if field in SCOPE_FIELDS or field in ENUM_FIELDS:
        raise FilterError(f"{where}: {op} applies to time fields ({', '.join(TIME_FIELDS)}) "
                          "and metadata fields")
    bound = _value(field, arg, where, allow_null=False, allow_list=False)
    if isinstance(bound, bool):
        raise FilterError(f"{where}: expected a number, string or time, got a boolean")
    return _ordering(op, bound)


def _ordering(op: str, bound: Any) -> Callable[[Any], bool]:
    def test(v: Any) -> bool:
        if not _comparable(v, bound):
            return False
        if op == "gt":
            return bool(v > bound)
        if op == "gte":
            return bool(v >= bound)
        if op == "lt":
            return bool(v < bound)
        return bool(v <= bound)
    return test


def _comparable(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    if isinstance(a, int | float) and isinstance(b, int | float):
        return True
    if isinstance(a, datetime) and isinstance(b, datetime):
        return True
    return isinstance(a, str) and isinstance(b, str)


def _value(field: str, arg: Any, where: str, *, allow_null: bool, allow_list: bool) -> Any:
    """Check one comparison value against what ``field`` can hold."""
    if arg is None:
        if not allow_null:
            raise FilterError(f"{where}: null is not comparable")
        return _MISSING
    if field in TIME_FIELDS:
        return _time(arg, where)
    if field in ENUM_FIELDS:
        allowed = ENUM_FIELDS[field]
        if not isinstance(arg, str) or arg not in allowed:
            raise FilterError(f"{where}: unknown {field} {arg!r} (one of: {', '.join(allowed)})")
        return arg
    if field in SCOPE_FIELDS:
        if not isinstance(arg, str):
            raise FilterError(f"{where}: expected a string, got {type(arg).__name__}")
        return arg
    if isinstance(arg, list):
        if not allow_list:
            raise FilterError(f"{where}: a list is not allowed here")
        if not all(isinstance(a, str) for a in arg):
            raise FilterError(f"{where}: lists may hold only strings")
        return list(arg)
    if isinstance(arg, bool | int | float | str):
        if isinstance(arg, float) and arg != arg:
            raise FilterError(f"{where}: NaN is not comparable")
        return arg
    raise FilterError(f"{where}: expected a string, number, boolean or list of strings, got "
                      f"{type(arg).__name__}")


def _time(arg: Any, where: str) -> datetime:
    if isinstance(arg, datetime):
        return as_utc(arg)
    if isinstance(arg, str):
        try:
            return as_utc(datetime.fromisoformat(arg))
        except ValueError:
            pass
    raise FilterError(f"{where}: expected an ISO 8601 time, got {arg!r}")


def _same(a: Any, b: Any) -> bool:
    """Equality without Python's True == 1."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _equals(value: Any, want: Any) -> bool:
    if want is _MISSING or value is _MISSING:
        return value is want
    if isinstance(value, list) and not isinstance(want, list):
        return any(_same(v, want) for v in value)
    return _same(value, want)


def _contains(value: Any, needle: str) -> bool:
    if isinstance(value, str):
        return needle in value
    if isinstance(value, list):
        return needle in value
    return False
