"""The filter language: property tests of the evaluator and its errors (pure, no Redis)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memcore.core.filters import (
    FIELDS,
    OPERATORS,
    TIME_FIELDS,
    FilterError,
    compile_filter,
    matches,
)
from memcore.core.models import Kind, Memory, Status

T0 = datetime(2026, 1, 1, tzinfo=UTC)
WORDS = ["red", "blue", "green", "redish"]
KEYS = ["a", "b", "c"]

scalar = st.one_of(st.sampled_from(WORDS), st.integers(-3, 3),
                   st.floats(-3, 3, allow_nan=False, allow_infinity=False), st.booleans())
meta_value = st.one_of(scalar, st.lists(st.sampled_from(WORDS), max_size=3))
scope = st.one_of(st.none(), st.sampled_from(["alice", "bob"]))


@st.composite
def memories(draw: st.DrawFn) -> Memory:
    created = T0 + timedelta(hours=draw(st.integers(0, 100)))
    start = draw(st.one_of(st.none(), st.integers(0, 100)))
    end = draw(st.one_of(st.none(), st.integers(0, 100)))
    valid_from = None if start is None else T0 + timedelta(hours=start)
    valid_until = None if end is None else (valid_from or T0) + timedelta(hours=end)
    return Memory(
        namespace="ns", text="some fact", last_used=created, created_at=created,
        valid_from=valid_from, valid_until=valid_until,
        updated_at=created + timedelta(hours=draw(st.integers(0, 5))),
        kind=draw(st.sampled_from(list(Kind))), status=draw(st.sampled_from(list(Status))),
        user_id=draw(scope), agent_id=draw(scope), run_id=draw(scope),
        metadata=draw(st.dictionaries(st.sampled_from(KEYS), meta_value, max_size=3)))


@st.composite
def leaves(draw: st.DrawFn) -> dict[str, Any]:
    """One valid field condition."""
    field = draw(st.sampled_from([*FIELDS, "metadata.a", "metadata.b", "metadata.c"]))
    if field in ("user_id", "agent_id", "run_id"):
        value: Any = draw(st.sampled_from(["alice", "bob"]))
        ops = ["eq", "ne", "in", "nin", "contains"]
    elif field == "kind":
        value, ops = draw(st.sampled_from([k.value for k in Kind])), ["eq", "ne", "in", "nin"]
    elif field == "status":
        value, ops = draw(st.sampled_from([s.value for s in Status])), ["eq", "ne", "in", "nin"]
    elif field in TIME_FIELDS:
        value = (T0 + timedelta(hours=draw(st.integers(0, 100)))).isoformat()
        ops = ["eq", "ne", "gt", "gte", "lt", "lte"]
    else:
        value, ops = draw(scalar), list(OPERATORS)
    op = draw(st.sampled_from([*ops, "bare"]))
    if op == "bare":
        return {field: value}
    if op in ("in", "nin"):
        return {field: {op: [value, *draw(st.lists(st.just(value), max_size=1))]}}
    if op == "contains":
        return {field: {op: value if isinstance(value, str) else "re"}}
    if op in ("gt", "gte", "lt", "lte") and isinstance(value, bool):
        value = 1
    return {field: {op: value}}


filters = st.recursive(
    leaves(),
    lambda inner: st.one_of(
        st.builds(lambda xs: {"and": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda xs: {"or": xs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda x: {"not": x}, inner)),
    max_leaves=6)


@settings(max_examples=300, deadline=None)
@given(memories(), filters, filters)
def test_connectives_are_boolean_algebra(m: Memory, f: dict[str, Any], g: dict[str, Any]) -> None:
    a, b = matches(m, f), matches(m, g)
    assert matches(m, {"not": f}) is (not a)
    assert matches(m, {"and": [f, g]}) is (a and b)
    assert matches(m, {"or": [f, g]}) is (a or b)
    assert matches(m, {"not": {"not": f}}) is a


@settings(max_examples=300, deadline=None)
@given(memories(), st.sampled_from(KEYS), scalar, st.lists(scalar, min_size=1, max_size=3))
def test_operators_mean_what_they_say_on_metadata(m: Memory, key: str, value: Any,
                                                  options: list[Any]) -> None:
    field = f"metadata.{key}"
    present = key in m.metadata
    held = m.metadata.get(key)

    def same(x: Any, y: Any) -> bool:  # equality where a boolean is never a number
        return isinstance(x, bool) == isinstance(y, bool) and x == y and \
            isinstance(x, str) == isinstance(y, str)

    def eq(v: Any) -> bool:
        if not present:
            return False
        if isinstance(held, list):
            return any(same(h, v) for h in held)
        return same(held, v)

    assert matches(m, {field: value}) is eq(value)
    assert matches(m, {field: {"ne": value}}) is (not eq(value))
    assert matches(m, {field: {"in": options}}) is any(eq(o) for o in options)
    assert matches(m, {field: {"nin": options}}) is (not any(eq(o) for o in options))
    assert matches(m, {field: None}) is (not present)
    number = isinstance(held, int | float) and not isinstance(held, bool)
    if isinstance(value, int | float) and not isinstance(value, bool):
        assert matches(m, {field: {"gt": value}}) is (number and held > value)
        assert matches(m, {field: {"lte": value}}) is (number and held <= value)
        assert matches(m, {field: {"gte": value, "lt": value + 1}}) is (
            number and value <= held < value + 1)
    if isinstance(value, str):
        contained = (isinstance(held, str) and value in held) or \
            (isinstance(held, list) and value in held)
        assert matches(m, {field: {"contains": value}}) is contained


@settings(max_examples=200, deadline=None)
@given(memories(), st.sampled_from(["alice", "bob"]), st.sampled_from(list(Kind)),
       st.sampled_from(list(Status)), st.integers(0, 100))
def test_first_class_fields(m: Memory, who: str, kind: Kind, status: Status, h: int) -> None:
    assert matches(m, {"user_id": who}) is (m.user_id == who)
    assert matches(m, {"agent_id": who, "run_id": who}) is (m.agent_id == who == m.run_id)
    assert matches(m, {"user_id": None}) is (m.user_id is None)
    assert matches(m, {"kind": kind.value}) is (m.kind is kind)
    assert matches(m, {"status": {"in": [status.value]}}) is (m.status is status)
    at = T0 + timedelta(hours=h)
    assert matches(m, {"created_at": {"gte": at.isoformat()}}) is (m.created_at >= at)
    assert matches(m, {"updated_at": {"lt": at}}) is (m.updated_at < at)
    # Validity bounds: a missing one fails every comparison (and matches null).
    assert matches(m, {"valid_from": {"lte": at}}) is (m.valid_from is not None
                                                      and m.valid_from <= at)
    assert matches(m, {"valid_to": {"gt": at}}) is (m.valid_until is not None
                                                   and m.valid_until > at)
    assert matches(m, {"valid_until": None}) is (m.valid_until is None)
    assert matches(m, {"event_at": {"gte": at}}) is ((m.valid_from or m.created_at) >= at)


@settings(max_examples=200, deadline=None)
@given(memories(), filters)
def test_evaluation_never_changes_the_memory(m: Memory, f: dict[str, Any]) -> None:
    before = m.model_dump()
    compiled = compile_filter(f)
    assert compiled(m) is compiled(m)
    assert m.model_dump() == before


@given(st.text(min_size=1, max_size=12).filter(
    lambda s: s not in FIELDS and not s.startswith("metadata.") and s not in ("and", "or", "not")))
def test_unknown_field_is_named(name: str) -> None:
    with pytest.raises(FilterError, match="unknown field") as err:
        compile_filter({name: 1})
    assert repr(name) in str(err.value)


@given(st.text(min_size=1, max_size=12).filter(lambda s: s not in OPERATORS))
def test_unknown_operator_is_named(op: str) -> None:
    with pytest.raises(FilterError, match="unknown operator") as err:
        compile_filter({"and": [{"metadata.x": {op: 1}}]})
    assert repr(op) in str(err.value) and "filters.and[0].metadata.x" in str(err.value)


@pytest.mark.parametrize(("spec", "named"), [
    ({"namespace": "other"}, "unknown field 'namespace'"),
    ({"kind": "opinion"}, "filters.kind: unknown kind 'opinion'"),
    ({"status": {"in": "active"}}, "filters.status.in: expected a list"),
    ({"user_id": {"gt": "a"}}, "filters.user_id.gt: gt applies to"),
    ({"created_at": {"gt": "last week"}}, "filters.created_at.gt: expected an ISO 8601 time"),
    ({"created_at": {"contains": "2026"}}, "contains does not apply to created_at"),
    ({"metadata.": 1}, "names no metadata key"),
    ({"metadata.a": {}}, "filters.metadata.a: empty operator object"),
    ({"metadata.a": {"gt": None}}, "null is not comparable"),
    ({"metadata.a": {"eq": {"x": 1}}}, "expected a string, number, boolean or list"),
    ({"or": []}, "filters.or: expected a non-empty list"),
    ({"not": [1]}, "filters.not: expected a JSON object"),
    ([{"user_id": "a"}], "filters: expected a JSON object"),
])
def test_bad_filters_are_named(spec: Any, named: str) -> None:
    with pytest.raises(FilterError) as err:
        compile_filter(spec)
    assert named in str(err.value)
    assert isinstance(err.value, ValueError)


def test_limits_bound_the_work() -> None:
    deep: dict[str, Any] = {"user_id": "a"}
    for _ in range(20):
        deep = {"not": deep}
    with pytest.raises(FilterError, match="nested deeper"):
        compile_filter(deep)
    with pytest.raises(FilterError, match="more than 256 conditions"):
        compile_filter({"or": [{"metadata.a": i} for i in range(300)]})


def test_none_and_empty_filters_match_everything() -> None:
    m = Memory(namespace="ns", text="x", last_used=T0, created_at=T0, updated_at=T0)
    assert compile_filter(None)(m) and compile_filter({})(m)
