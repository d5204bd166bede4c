"""Requests said to the assistant, as the preference or fact they carry: "Please keep
your answers short" -> "<name> asks the assistant to keep its answers short", "please
remember that I'm allergic to peanuts" -> the statement itself; one-off tasks give none."""

from __future__ import annotations

import re

from memcore.adapters.person import SECOND_PERSON as _SECOND_PERSON
from memcore.adapters.person import resolve_first_person
from memcore.adapters.person import third_person as _third_person
from memcore.language.english.lexicon import word_set

PLEASE = re.compile(r"\b(?:please|pls|plz|kindly)\b[\s,]*", re.I)
_REMEMBER = re.compile(r"^(?:(?:please\s+)?(?:remember|note|keep in mind|don'?t forget|never "
                       r"forget|bear in mind|remind me|don'?t let me forget)(?:\s+that)?|fyi|"
                       r"for the record|just so "
                       r"you know)\b[\s,:]*(?=\S)", re.I)
_REMIND_TO = re.compile(r"^(?:remind me|don'?t let me forget|help me remember)\s+to\s+"
                        r"(?P<task>\S.*)$", re.I)
# "Note to self: dentist on the 12th at 3pm": a reminder of the speaker's own.
_NOTE_TO_SELF = re.compile(r"^(?:note to self|reminder|memo)\s*[:,-]\s*(?P<note>\S.*)$", re.I)
_CALL_ME = re.compile(r"^(?:call me|address me as|refer to me as)\s+(?P<v>[^,;]+?)"
                      r"(?:\s+(?:rather than|instead of|not)\s+[^,;]+)?(?:[,;].*)?$", re.I)
_STANDING_REQUEST = re.compile(r"^(?:i'?d like you to|i would like you to|i want you to|"
                               r"i need you to)\s+(?P<rest>.+)$", re.I)
# A wish about how the listener answers ("I'd rather you used metric units", "it'd be
# great if you kept it short"): a standing request, said politely.
_WISH = re.compile(
    r"^(?:(?:i'?d|i would) (?:much )?(?:rather|prefer(?: it)?(?: if)?|like it if|love it if|"
    r"appreciate it if|be grateful if)|i (?:really )?prefer (?:it )?(?:when|if|that)|"
    r"it(?:'d| would)? (?:be|help)(?: (?:great|nice|helpful|better|best|good|ideal|easier|"
    r"lovely|perfect))?(?: for me)? (?:if|when)|it helps(?: me)? (?:if|when)|"
    r"i (?:really )?prefer (?:that )?(?=you\b)|i (?:really )?(?:like|love|appreciate) it "
    r"(?:when|if))\s*you\s+(?P<rest>.+)$", re.I)
# The same, disliked: "I hate it when you apologise", "it annoys me when you ...".
_UNWISH = re.compile(
    r"^(?:i (?:really )?(?:hate|dislike|can'?t stand|don'?t like|do not like)(?: it)? "
    r"(?:when|if)|"
    r"it (?:really )?(?:annoys|bothers|irritates|bugs) me (?:when|if))\s+you\s+"
    r"(?P<rest>.+)$", re.I)
# A standing marker said first ("From now on, answer in English").
_LEADING_STANDING = re.compile(r"^(?:(?:so|ok|okay|and|also),?\s+)?(?P<m>from now(?: on)?|"
                               r"from today(?: on)?|starting (?:now|today)|going forward|"
                               r"in future|in the future|always|by default),?\s+", re.I)
# A question asking for a standing habit ("Could you always use metric units?").
STANDING_QUESTION = re.compile(r"^(?:could|can|would|will) you (?:please |kindly )?(?P<rest>.+)$",
                               re.I)
# "Don't use emojis", "Never add disclaimers", "Stop apologizing": an imperative about
# what the listener does is a request even without "please". Only verbs of answering
# count: "Don't know", "Never been to Peru" are the speaker's own clauses, subject dropped.
_ANSWER_VERBS = (r"(?:us|add|includ|writ|giv|send|call|say|mention|suggest|recommend|"
                 r"apologi[sz]|repeat|explain|ask|assum|format|put|start|end|sign|answer|"
                 r"repl|respond|show|list|quot|cit|translat|summari[sz]|sugarcoat|pad|hedg|"
                 r"lectur|moraliz|correct|chang|switch|round|convert|bold|capitali[sz]|"
                 r"abbreviat|shorten|bring|remind|overexplain|rambl|talk|speak|tell|mak|offer|"
                 r"greet|address|refer|spell|number|label|link|past|print|output|generat|"
                 r"return|reply|go|leav|skip|swear|curs|emoji)")
_NEG_IMPERATIVE = re.compile(
    rf"^(?:(?:don'?t|do not|never|please never)(?: ever| just| always)? {_ANSWER_VERBS}[a-z]*\b|"
    rf"(?:stop|quit|avoid) {_ANSWER_VERBS}[a-z]*ing\b|avoid \w|refrain from \w)", re.I)
# The listener's verb after "you" in a wish, back to the imperative: "used" -> "use".
_PAST_TO_BASE = {"wrote": "write", "kept": "keep", "gave": "give", "made": "make",
                 "sent": "send", "spoke": "speak", "told": "tell", "stuck": "stick",
                 "put": "put", "went": "go", "began": "begin", "said": "say", "brought": "bring",
                 "left": "leave", "took": "take", "chose": "choose", "quit": "quit"}
_WISH_VERB = re.compile(r"^(?:(?:would|could|'d|will|can)\s+)?(?P<neg>(?:didn'?t|did not|"
                        r"wouldn'?t|would not|don'?t|do not|never|not)\s+)?(?P<adv>(?:always|"
                        r"just|only|also|generally|usually)\s+)?(?P<verb>[a-z']+)", re.I)


def _base_form(verb: str) -> str:
    """"used", "using" -> "use"; "stopped" -> "stop"; "replied" -> "reply"."""
    if verb in _PAST_TO_BASE:
        return _PAST_TO_BASE[verb]
    if verb.endswith("ied") and len(verb) > 3:
        return verb[:-3] + "y"
    for suffix in ("ed", "ing"):
        if verb.endswith(suffix) and len(verb) > len(suffix) + 1 and verb not in ("bring",
                                                                                  "sing"):
            stem_ = verb[: -len(suffix)]
            if len(stem_) > 2 and stem_[-1] == stem_[-2] and stem_[-1] not in "lsz":
                return stem_[:-1]  # "stopped" -> "stop"
            if stem_.endswith(("us", "at", "iz", "is", "ad", "uot", "it", "id", "ov", "bl",
                               "ang", "rit", "uc", "ag", "rg", "rv", "ur", "ud", "ut", "mat")):
                return stem_ + "e"  # "used" -> "use", "summarizing" -> "summarize"
            return stem_
    return verb


def _imperative(rest: str) -> str:
    """A wish's clause after "you" as an imperative: "used metric units" -> "use metric
    units", "didn't use emojis" -> "don't use emojis"."""
    m = _WISH_VERB.match(rest)
    if not m:
        return rest
    verb = _base_form(m.group("verb").lower())
    negative = "don't " if m.group("neg") else ""
    return f"{negative}{m.group('adv') or ''}{verb}{rest[m.end():]}"

_IMPERATIVE = word_set(
    """
    keep use give write answer explain show make be format include add mention suggest stop
    switch correct speak reply respond send tell avoid cite put list call address remind
    check focus limit provide translate summarise summarize offer skip treat consider assume
    talk recommend describe always only never prefer start try ask reply structure number
    break label highlight spell quote round convert label go stick leave let quit refrain
    ignore disregard
    """
)
# "Keep it short": the "it" is the answers, not one thing to fix.
_KEEP_IT = re.compile(r"^keep (?:it|them|things) (?:short|brief|simple|concise|casual|formal|"
                      r"light|clean|tight|under)", re.I)
# "Could you stop ...?", "would you mind using ...": asking for a habit, no marker needed.
HABIT_ASK = re.compile(r"^(?:mind |please )?(?=(?:stop|quit|avoid|never|always)\b)|^mind ",
                       re.I)
# A bare imperative about answering that says it is for good ("Always answer in English",
# "Use metric units from now on").
_IMPERATIVE_HABIT = re.compile(
    rf"^(?:always |only )?{_ANSWER_VERBS}[a-z]*\b.*\b(?:from now(?: on)?|going forward|in future|"
    r"in the future|by default|every time|whenever|always)\b|^always "
    rf"{_ANSWER_VERBS}[a-z]*\b", re.I)
# A one-off task rather than a standing preference ("please fix this").
_ONE_OFF = re.compile(r"^[^,;]*\b(?:this|these|that one|the following|above|below|it|them|"
                      r"here)\b|\bthat[.!?]*$|^(?:help|fix|check|find|look|read|draft|compare|calculate)\b",
                      re.I)
STANDING = re.compile(r"\b(?:always|from now(?: on)?|from today|in future|in the future|"
                      r"whenever|every time|each time|when|all|any|never|anymore|any more|"
                      r"default|generally|going forward)\b",
                      re.I)
_YOU = (
    (re.compile(r"\byour\b", re.I), "its"), (re.compile(r"\byou'?re\b", re.I), "it is"),
    (re.compile(r"\byourself\b", re.I), "itself"),
)
_YOU_VERB = re.compile(r"\byou ([a-z']+)", re.I)


def _assistant_person(text: str) -> str:
    """The listener in a request as "it" ("when you review my code" -> "when it reviews")."""
    for pattern, repl in _YOU:
        text = pattern.sub(repl, text)
    text = _YOU_VERB.sub(lambda m: "it " + _third_person(m.group(1)), text)
    return re.sub(r"\byou\b", "it", text, flags=re.I)


# "short pls im on my phone": the clause after "please" is the reason, not the request.
_REASON_AFTER_PLEASE = re.compile(r"(?:(?<=\bplease)|(?<=\bpls)|(?<=\bplz))\s*,?\s+"
                                  r"(?=(?:i'?m|im|i am|i'?ve|i have|cos|cause|because|as|"
                                  r"since)\b)", re.I)
# A request that is only how answers should be: "short pls", "shorter please".
_STYLE_ONLY = re.compile(r"^(?:(?:and|also|ok|okay|but)\s+)?"
                         r"(?P<adj>short|shorter|brief|briefer|concise|simple|simpler|"
                         r"longer|detailed)\s+(?:please|pls|plz)\b[\s.!]*", re.I)


def request_as_fact(sentence: str, name: str) -> str | None:
    """The preference or fact a request carries, in the third person, or None.

    "Please keep your answers short" -> "<name> asks the assistant to keep its answers
    short"; "please remember that I'm allergic to peanuts" -> "I'm allergic to peanuts"
    (a plain statement, rewritten later); "please call me Pri" -> "<name> wants to be
    called Pri". One-off tasks ("please fix this") give None.
    """
    text = _REASON_AFTER_PLEASE.split(sentence.strip(), maxsplit=1)[0]
    style = _STYLE_ONLY.match(text)
    if style is not None:  # "short pls": how answers should be
        return f"{name} asks the assistant to keep answers {style.group('adj').lower()}"
    note = _NOTE_TO_SELF.match(PLEASE.sub("", text).strip(" ,"))
    if note:
        return f"I want to be reminded of this: {note.group('note').strip(' .!')}"
    request = _as_please(_standing_marker_last(text))
    if request is None:
        return None
    text = PLEASE.sub("", request).strip(" ,.!:;")
    text = re.sub(r"^(?:again|also|and|oh|ok|okay|so|btw)\b[\s,:]*", "", text, flags=re.I)
    reminder = _REMIND_TO.match(text)
    if reminder:  # "remind me to call my mom on Sunday": a task of the speaker's own
        return f"I want to be reminded to {reminder.group('task').strip()}"
    remembered = _REMEMBER.match(text)
    if remembered:
        said = text[remembered.end():].strip()
        if not re.match(r"(?i)to\s", said):
            return said  # the fact itself, said as a statement
        return _remember_to(said[3:].strip(), name)
    return _standing_request(text, name)


def _standing_marker_last(text: str) -> str:
    """"From now on, answer in English" -> "please answer in English from now on"."""
    bare = PLEASE.sub("", text).strip(" ,")
    marker = _LEADING_STANDING.match(bare)
    if not marker or marker.group("m").lower() == "always":
        return text
    rest = bare[marker.end():].rstrip(" .!")
    if rest.split()[:1] and rest.split()[0].lower() in _IMPERATIVE:
        return f"please {rest} {marker.group('m').lower()}"
    return text


# Leave given to the listener, which sets or lifts a habit: "you can stop correcting my
# English", "u can just give me the answers now", "you can suggest paid tools again".
# A withdrawing verb, or a word saying from now, makes it one ("you can use my car" is
# an offer).
_PERMISSION = re.compile(r"^(?:(?:ok|okay|so|and|btw|also),?\s+)?(?:you|u|ya) (?:can|could|may) "
                         r"(?:now |just |also |totally |)*(?P<rest>\S.*)$", re.I)
_LIFTING = re.compile(r"^(?:stop|quit|drop|skip|ignore|forget about|lose|ditch)\b", re.I)
# "ignore the 150 word limit from now on": a rule of the listener's set aside.
_SET_ASIDE = re.compile(r"^(?:ignore|disregard|forget about) (?:the|that|my|this|those|your) "
                        r"(?:[\w-]+ ){0,3}(?:rule|limit|thing|instruction|request|"
                        r"preference)s?\b", re.I)
_FROM_NOW = re.compile(r"\b(?:now|again|from now(?: on)?|anymore|any more|going forward|"
                       r"these days)\b", re.I)
# "no more making me work it out", "no need for bullet points anymore": the habit ends.
_NO_MORE = re.compile(r"^(?:(?:and|so|also|oh),?\s+)?(?:no more|no need (?:for|to)|"
                      r"there'?s no need (?:for|to))\s+(?P<rest>\S.*?)"
                      r"(?:\s+(?:anymore|any more|now|thanks))*[.!]*$", re.I)


def _lifted_or_allowed(text: str) -> str | None:
    """Leave to the listener or a habit said to end, as "please <imperative>"; None
    for anything else."""
    permission = _PERMISSION.match(text)
    if permission is not None:
        rest = permission.group("rest")
        first = rest.split()[0].lower()
        if _LIFTING.match(rest) or (first in _IMPERATIVE and _FROM_NOW.search(rest)):
            return "please " + rest
        return None
    if _SET_ASIDE.match(text):
        return "please " + text
    ended = _NO_MORE.match(text)
    if ended is not None and re.search(r"\b(?:anymore|any more)\b|^no more\b", text, re.I):
        rest = ended.group("rest")
        words = rest.split()
        if words and words[0].lower().endswith("ing") and (
                re.search(r"(?i)\b(?:me|my)\b", rest)
                or re.match(rf"(?i){_ANSWER_VERBS}", words[0])):
            # what the listener does to the speaker ("no more making me work it out");
            # "no more flipping between days and nights" is the speaker's own news
            return f"please stop {rest} from now on"
        if re.search(r"(?i)\bneed to\b", text):
            return f"please don't {rest} from now on"
        if re.search(r"(?i)\bneed for\b", text) and words:
            return f"please stop giving {rest}"
    return None  # "no more coffee for me": the speaker's own, read as any statement


def _as_please(text: str) -> str | None:
    """A request said as a wish, a dislike or a question about a habit, said as "please
    <imperative>"; a request said plainly as it is; None for no request."""
    lifted = _lifted_or_allowed(text)
    if lifted is not None:
        return lifted
    standing = _STANDING_REQUEST.match(text)
    if standing:
        return "please " + standing.group("rest")
    wish = _WISH.match(text)
    if wish:
        return "please " + _imperative(wish.group("rest"))
    unwish = _UNWISH.match(text)
    if unwish:
        return "please don't " + _imperative(unwish.group("rest"))
    asked = STANDING_QUESTION.match(text.rstrip("?"))
    if asked and (STANDING.search(asked.group("rest"))
                  or HABIT_ASK.match(asked.group("rest"))):
        return "please " + _imperative(HABIT_ASK.sub("", asked.group("rest")).rstrip("?"))
    if (PLEASE.search(text) or _REMEMBER.match(text) or _NEG_IMPERATIVE.match(text)
            or _IMPERATIVE_HABIT.match(text)):
        return text
    return None


def _remember_to(text: str, name: str) -> str | None:
    """"remember to use metric units": a request about answers like any imperative;
    "remember to water the plants": a reminder of the speaker's own task."""
    if _SECOND_PERSON.search(text):
        return None  # "don't forget to rest when you need to": advice, no fact
    first = text.split()[0].lower() if text.split() else ""
    if first not in _IMPERATIVE and first not in ("always", "never"):
        return f"I want to be reminded to {text}"
    return _standing_request(text, name)


# How a request that opens with a refusal is written ("don't ...", "no ...").
_REFUSALS = (("don't ", "{n} asks the assistant not to {r}"),
             ("dont ", "{n} asks the assistant not to {r}"),
             ("do not ", "{n} asks the assistant not to {r}"),
             ("never ", "{n} asks the assistant never to {r}"),
             # "no strawberry recipes please": a standing prohibition to the assistant
             ("no ", "{n} asks the assistant to avoid {r}"),
             ("without ", "{n} asks the assistant to avoid {r}"))


def _standing_request(text: str, name: str) -> str | None:
    """A request without "please", in the third person; None for a one-off task."""
    if not text:
        return None
    call = _CALL_ME.match(text)
    if call:
        return f"{name} wants to be called {call.group('v').strip()}"
    low = text.lower()
    if _ONE_OFF.search(text) and not STANDING.search(text) and not _KEEP_IT.match(text):
        return None
    body = resolve_first_person(_assistant_person(text), name)
    body = body[:1].lower() + body[1:]
    for prefix, template in _REFUSALS:
        if low.startswith(prefix):
            return template.format(n=name, r=body[len(prefix):])
    first = low.split()[0]
    if first in _IMPERATIVE or first.endswith("ly"):
        return f"{name} asks the assistant to {body}"
    return f"{name} asks for {body}"
