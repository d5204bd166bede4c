"""Change from structure: which facts a newer fact retires, judged on frames only.

A frame (:class:`memcore.core.models.Frame`) is a fact's subject, attribute, value,
polarity and event, written by a language pack. The rules here know no language:

- same subject, same **single-valued** attribute, another value, later in time: the
  older fact is superseded (``residence(kenji) = berlin`` -> ``= munich``);
- a later negation of the same subject, attribute and value ends it
  (``instruction:heading(ben) = use heading`` -> not ...);
- a later end event (``event="end"``: died, sold, left, quit, healed) ends the facts of
  the same subject whose value names the ended thing, and the facts whose subject *is*
  the ended thing (a pet that died);
- multi-valued attributes never supersede each other.

No rule matches on anything but a frame's subject and attribute (or the ended entity):
a remark about someone else never retires the user's facts. A newer fact that would
retire more than :data:`MAX_RETIRED_BY_ONE` facts at once retires none of them; it is
reported as *held* for the audit: erase on request, not on guess (docs/design.md,
Snapshots, tombstones, erase).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memcore.core.models import Frame

# Attributes a subject has one value of at a time (language-independent frame names).
SINGLE_VALUED = frozenset({
    "residence", "employer", "job", "name", "age", "birthday", "diet", "school",
    "contact:phone", "contact:email", "contact:address", "main_language", "reading",
    "relation:partner", "relation:doctor", "answer_length", "answer_language", "team",
    "commute", "schedule", "project",
})
# A favourite is single-valued per category ("favorite:colour"); an instruction per thing
# it is about ("instruction:example"): the latest one about examples governs them; a
# qualified contact per qualifier ("contact:email:work"); a medicine's dose per medicine
# ("dose:amlodipine").
SINGLE_VALUED_PREFIXES = ("favorite:", "instruction:", "contact:", "dose:")
INSTRUCTION_PREFIX = "instruction:"
MAX_RETIRED_BY_ONE = 3
# Standing orders and what to call someone: they hold until withdrawn or changed, however
# long ago they were said ("always use metric units", "call me Lena"); age does not make
# them less believed (memcore.core.scoring.profile_standing).
STANDING = frozenset({"name", "answer_length", "answer_language"})


def is_single_valued(attribute: str) -> bool:
    """Does a subject hold one value of ``attribute`` at a time?"""
    return attribute in SINGLE_VALUED or attribute.startswith(SINGLE_VALUED_PREFIXES)


def is_standing(frame: Frame | None) -> bool:
    """Is ``frame`` a standing order (an instruction, a prohibition too: "no strawberry
    recipes") or an affirmative name (:data:`STANDING`), which holds until a later fact
    withdraws or changes it?"""
    if frame is None or frame.event:
        return False
    if frame.attribute.startswith(INSTRUCTION_PREFIX):
        return True
    return frame.polarity > 0 and frame.attribute in STANDING


@dataclass(frozen=True)
class FramedRow:
    """A live fact as the rules see it: its id, frame and when it was last asserted."""

    id: str
    frame: Frame
    time: float
    scope: str = ""


@dataclass(frozen=True)
class Held:
    """A newer fact whose retirements were not applied: it matched too many facts."""

    id: str
    would_retire: tuple[str, ...]
    reason: str


def _words(value: str) -> frozenset[str]:
    return frozenset(value.split())


def values_differ(a: str, b: str) -> bool:
    """Two values of one attribute that name different things (neither contains the
    other's words: "munich" and "munich germany" are one value)."""
    wa, wb = _words(a), _words(b)
    if not wa or not wb:
        return False
    return not (wa <= wb or wb <= wa)


def _names_value(ended: str, value: str) -> bool:
    """Does ``value`` name the ended thing? A bare head ("bike") names any value with
    that word; with modifiers every word must be there ("old car" does not name "new
    car red seat ibiza": the modifiers tell the two apart)."""
    ew, vw = ended.split(), _words(value)
    if not ew or not vw:
        return False
    return ew[-1] in vw if len(ew) == 1 else set(ew) <= vw


def retires(new: Frame, old: Frame) -> str | None:
    """Why the (later) fact ``new`` retires ``old``, or None (module docstring rules)."""
    if old.event == "plan" and old.polarity > 0:
        return _fulfilled(new, old)
    if old.polarity < 0 and not old.event and new.polarity > 0 and _lifted(new, old):
        return f"lifted: {new.attribute}({new.subject}) = {new.value!r}"
    if old.event or old.polarity < 0:
        return None  # only affirmative, plain facts are retired by these rules
    if new.event == "end":
        return _ended(new, old)
    if _withdrawn_by_its_word(new, old):
        return f"withdrawn: not {old.attribute}({new.subject}) = {new.value!r}"
    if new.subject != old.subject or new.attribute != old.attribute:
        return None
    if new.polarity < 0:
        if new.value and (not values_differ(new.value, old.value)
                          or _same_rule(new, old)):
            return f"withdrawn: not {new.attribute}({new.subject}) = {new.value!r}"
        return None
    if is_single_valued(new.attribute) and values_differ(new.value, old.value):
        return (f"{new.attribute} of {new.subject} changed: {old.value!r} -> "
                f"{new.value!r}")
    if new.event == "correction" and values_differ(new.value, old.value):
        return f"corrected: {new.attribute}({new.subject}) = {new.value!r}"
    return None


def _withdrawn_by_its_word(new: Frame, old: Frame) -> bool:
    """A withdrawal naming an instruction by the thing it is about as a modifier ("stop
    using the date format" withdraws "write dates as DD.MM.YYYY", whose thing is the
    date): same subject, both instructions, and the older one's thing is a word of the
    withdrawal's value before the withdrawal's own thing ("bullet points in code answers"
    withdraws no rule about code or answers)."""
    if not (new.polarity < 0 and new.subject == old.subject and old.polarity > 0
            and new.attribute != old.attribute
            and new.attribute.startswith(INSTRUCTION_PREFIX)
            and old.attribute.startswith(INSTRUCTION_PREFIX)):
        return False
    thing = old.attribute[len(INSTRUCTION_PREFIX):]
    words = new.value.split()
    own = new.attribute[len(INSTRUCTION_PREFIX):]
    head = words.index(own) if own in words else len(words)
    return bool(thing) and thing in words[:head]


def _same_rule(new: Frame, old: Frame) -> bool:
    """A withdrawal naming the instruction by another word of it ("ignore the word
    limit" for "keep answers under 150 words"): they share a word besides the thing
    both are about."""
    if not new.attribute.startswith(INSTRUCTION_PREFIX):
        return False
    thing = new.attribute[len(INSTRUCTION_PREFIX):]
    return bool((_words(new.value) & _words(old.value)) - {thing})


def _lifted(new: Frame, old: Frame) -> bool:
    """A newer instruction about the thing an older one forbade ("not to recommend paid
    tools", then "suggest paid tools again"): instructions are single-valued per thing,
    a prohibition included."""
    return (new.attribute == old.attribute and new.subject == old.subject
            and new.attribute.startswith(INSTRUCTION_PREFIX))


def _fulfilled(new: Frame, old: Frame) -> str | None:
    """Why ``new`` fulfils the plan ``old`` ("plan:owns" of a road bike, then "owns" the
    bike), or None: the plan is history, the fulfilment the fact."""
    if (new.subject == old.subject and not new.event and new.polarity > 0
            and old.attribute == f"plan:{new.attribute}"
            and (_names_value(new.value, old.value) or _names_value(old.value, new.value))):
        return f"plan fulfilled: {new.attribute}({new.subject}) = {new.value!r}"
    return None


def _ended(new: Frame, old: Frame) -> str | None:
    """Why the end ``new`` reports retires ``old``, or None."""
    if (not new.value and new.attribute == old.attribute
            and new.subject == old.subject):  # "quit his job": the job ended
        return f"ended: {new.attribute}({new.subject})"
    if new.subject == old.subject and _names_value(new.value, old.value):
        return f"ended: {new.attribute}({new.subject}) = {new.value!r}"
    # The thing itself ended ("Rex died"): its facts, and having it (by its name).
    if new.subject == new.value and (old.subject == new.value
                                     or _names_value(new.value, old.value)):
        return f"ended: {new.value!r}"
    return None


def _a_value_change(new: Frame) -> bool:
    """Does ``new`` retire by giving another value (not by an end, a negation or a
    correction, which name what they retire)?"""
    return not new.event and new.polarity > 0


def supersessions(rows: Sequence[FramedRow], *, max_retired: int = MAX_RETIRED_BY_ONE
                  ) -> tuple[list[tuple[str, str, str]], list[Held]]:
    """``(old_id, new_id, reason)`` for every older fact a newer one retires, and the
    newer facts held back because they would retire more than ``max_retired`` facts.

    Facts only retire facts of their own scope; the newest retiring fact wins.
    """
    by_scope: dict[str, list[FramedRow]] = {}
    for row in rows:
        by_scope.setdefault(row.scope, []).append(row)
    retired: dict[str, tuple[FramedRow, str]] = {}
    held: list[Held] = []
    for members in by_scope.values():
        order = {row.id: i for i, row in enumerate(members)}
        for new in members:
            found: list[tuple[FramedRow, str]] = []
            for old in members:
                if old.id == new.id:
                    continue
                earlier = old.time < new.time or (old.time == new.time
                                                  and order[old.id] < order[new.id])
                if not earlier:
                    continue
                reason = retires(new.frame, old.frame)
                if reason is not None and old.time == new.time and _a_value_change(new.frame):
                    continue  # "founder and CEO": values said together are both current
                if reason is not None:
                    found.append((old, reason))
            if len(found) > max_retired:
                held.append(Held(new.id, tuple(o.id for o, _ in found),
                                 f"would retire {len(found)} facts at once (limit "
                                 f"{max_retired}): held for review"))
                continue
            for old, reason in found:
                known = retired.get(old.id)
                if known is None or known[0].time <= new.time:
                    retired[old.id] = (new, reason)
    out = [(old_id, new.id, reason) for old_id, (new, reason) in sorted(retired.items())]
    return out, held


def overrules_text(new: Frame | None, old: Frame | None) -> bool:
    """Do the frames of two facts overrule a text rule that would retire ``old`` for
    ``new``? Yes when both are read, ``new`` is a plain statement (affirmative, no end
    or correction) and its frame retires nothing of ``old``'s: a text that merely
    mentions a changed value ("a nurse at St Thomas'" when the employer changes) is
    about another attribute (docs/design.md, Frames). Ends and negations still go to
    the text rules: what ended may be named in any fact's words."""
    if new is None or old is None or new.event or new.polarity < 0:
        return False
    return retires(new, old) is None and not conflict(new, old)


def conflict(a: Frame | None, b: Frame | None) -> bool:
    """Do two frames say different things about one attribute of one subject (never the
    same fact, whatever their texts' similarity)? Different values of a single-valued
    attribute, opposite polarities of one value, or one of them ending the other."""
    if a is None or b is None or a.subject != b.subject:
        return False
    if (a.event == "end") != (b.event == "end"):
        return _names_value(a.value, b.value) or _names_value(b.value, a.value)
    if a.attribute != b.attribute:
        return False
    if a.polarity != b.polarity:
        return True
    return is_single_valued(a.attribute) and values_differ(a.value, b.value)
