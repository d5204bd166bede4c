"""Standing instructions to the assistant said tersely, read from the parse.

People who set rules for the assistant rarely say "please": "Ground rules: Python 3.11,
polars for dataframes, type hints everywhere", "matplotlib for plots, pytest for
tests" (answering "any preferences?"), "Plots: drop matplotlib, use plotly", "no print
statements, use logging", "make that structlog rather than plain logging", "back to
short answers". Each item becomes "<speaker> asks the assistant to <item>[ for
<topic>]." so the reader gives it an instruction frame (single-valued per thing it is
about: the newer one about plots retires the older).

An item is an instruction when it has the shape of one (an imperative of a standing
verb, "no X", "X for Y", a bare noun phrase in a list of rules) *and* the sentence or
turn says it is standing: a rules label ("One more rule:"), a topic label ("Plots:"),
the assistant's question asking for preferences, a standing word ("from now on",
"always", "rather than", "back to"), or an object that is a kind of thing, not one
thing ("keep answers short", not "write me a function that ...").
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Doc, Span, Token

# Verbs of standing instructions about answers, code and style (imperative, base form).
STANDING_VERBS = frozenset({
    "use", "keep", "give", "write", "make", "switch", "drop", "stop", "avoid", "add",
    "include", "put", "format", "answer", "reply", "respond", "show", "skip", "start",
    "prefer", "stick", "default", "follow", "explain", "remove", "cut", "leave", "limit",
    "wrap", "sort", "go", "move", "change", "replace", "ditch", "lose", "omit", "bring",
    "send", "call", "address", "sign", "mention", "list", "number", "quote", "cite",
})
# Verbs whose bare imperative with a kind of thing is a rule about answers or code.
STYLE_VERBS = frozenset({
    "use", "keep", "avoid", "include", "skip", "stop", "drop", "format", "add", "prefer",
    "stick", "default", "limit", "wrap", "leave", "remove", "omit", "ditch", "lose", "cut",
    "switch", "answer", "reply", "respond", "write", "put", "quote", "cite", "number"})
# Mass nouns that are a kind of thing without a plural ("use British spelling").
MASS_THINGS = frozenset({"code", "spelling", "formatting", "markdown", "prose", "english",
                         "metric", "jargon", "detail", "slang", "punctuation", "indentation",
                         "logging", "typing", "emoji", "bold", "italic", "humour", "humor"})
# Words of a label that announces rules ("Ground rules for any code:", "One more rule:").
RULE_WORDS = frozenset({"rule", "preference", "guideline", "convention", "requirement",
                        "instruction", "setting", "default", "standard", "policy", "note"})
# Words of the assistant's question that ask for the listener's preferences.
ASKS_PREFERENCE = frozenset({"prefer", "preference", "style", "format", "convention"})
_STANDING = re.compile(r"\b(?:from now(?: on)?|always|never|going forward|in future|"
                       r"rather than|instead(?: of)?|back to|like before|any ?more|"
                       r"from today|every time|by default)\b", re.I)
_ONE_THING_DETS = frozenset({"a", "an", "this", "that", "these", "those"})
_PRONOUN_OBJECTS = frozenset({"it", "them", "this", "that", "one"})
_LEADING_WORDS = frozenset({"and", "also", "but", "then", "so", "plus", "oh", "ok", "okay",
                            "please", "pls", "plz", "just", "actually", "right", "yes", "yeah",
                            "yep", "sure", "now", "hmm", "um", "well"})
# Verbs a fragment opens with that a tagger may read as nouns ("use mermaid").
_FRAGMENT_VERBS = frozenset({"use", "keep", "drop", "avoid", "add", "include", "skip", "stop",
                             "switch", "prefer", "put", "write", "format"})
_TRAILING_WORDS = frozenset({"please", "pls", "plz", "thanks", "thx", "too", "though"})
_MAX_LABEL_TOKENS = 9
_MAX_BARE_ITEM = 5  # "British spelling", "two-week lookahead": a preference asked for
# "Do it that way every time", "always like that": the turn's list is standing rules.
_STANDS_FOR_THE_LIST = re.compile(r"\b(?:that way|like that|like this|this way|the same way|"
                                  r"do it|do that)\b.*\b(?:every time|always|from now on|"
                                  r"going forward|in future)\b|\b(?:always|every time|from now "
                                  r"on)\b.*\b(?:that way|like that|like this|this way)\b", re.I)
_ANNOUNCING = frozenset({"news", "update", "question", "thing", "fyi", "reminder", "change",
                         "edit", "correction", "ps", "btw", "q", "idea", "plan", "problem",
                         "issue", "status", "summary", "tldr", "context", "background"})
_NOT_IN_A_LABEL = frozenset({"VB", "VBD", "VBP", "VBG", "MD", "PRP", "DT"})


def _label(sent: Span) -> tuple[str, str, Span | None]:
    """``(kind, topic, rest)`` of a sentence opening with a label and a colon: kind
    ``rules`` ("One more rule:"), ``topic`` ("Plots:", topic "plots") or ``""``."""
    colon = next((t for t in sent if t.text == ":"), None)
    if colon is None or colon.i - sent.start > _MAX_LABEL_TOKENS or colon.i + 1 >= sent.end:
        return "", "", None
    label = sent.doc[sent.start:colon.i]
    rest = sent.doc[colon.i + 1:sent.end]
    if any(t.lemma_.lower() in RULE_WORDS for t in label):
        return "rules", "", rest
    words = [t for t in label if not t.is_punct]
    # "Plots:", "Docstrings:", "Code style:" (a lone plural may be tagged a verb)
    if any(t.lemma_.lower() in _ANNOUNCING for t in words):
        return "", "", None  # "Personal news:", "Quick update:": no topic of rules
    if 0 < len(words) <= 3 and not any(t.tag_ in _NOT_IN_A_LABEL for t in words) and \
            all(t.pos_ in ("NOUN", "PROPN", "ADJ", "VERB") for t in words):
        return "topic", label.text.strip().lower(), rest
    return "", "", None


# A list item's marker at the start of a line: "1) ", "2. ", "- ", "* ", "• ".
_LIST_MARKER = re.compile(r"(?m)^\s*(?:\d{1,2}[.)]|[-*\u2022])\s+")


def _items(span: Span) -> list[str]:
    """The span's items: its lines and their text cut at commas and semicolons, list
    markers and leading fillers gone."""
    lines = [line for line in _LIST_MARKER.sub("", span.text).split("\n") if line.strip()]
    if len(lines) > 1:
        return [item for line in lines for item in _line_items(line)]
    return _line_items(_LIST_MARKER.sub("", span.text))


def _line_items(text: str) -> list[str]:
    """One line's items: cut at commas and semicolons, leading fillers gone."""
    out = []
    head, colon, elaboration = text.partition(":")  # "keep answers short: code first, ..."
    chunks = re.split(r"\s*[;,]\s*|\s+\band\b\s+(?=(?:use|keep|give|no|always|never)\b)", head)
    if colon:
        chunks[-1] = f"{chunks[-1]}:{elaboration}"
    for chunk in chunks:
        words = chunk.strip(" .!:-").split()
        while words and words[0].lower() in _LEADING_WORDS:
            words = words[1:]
        while words and words[-1].lower().strip(".!") in _TRAILING_WORDS:
            words = words[:-1]
        if words:
            out.append(" ".join(words))
    return out


def _first_word(doc: Doc) -> Token | None:
    return next((t for t in doc if not t.is_punct and t.lower_ not in _LEADING_WORDS), None)


def _is_verbless(doc: Doc) -> bool:
    return not any(t.pos_ in ("VERB", "AUX") and t.tag_ != "VBN" for t in doc)


def _kind_of_thing(verb: Token) -> bool:
    """A bare imperative is a standing rule when its object is a kind of thing ("keep
    answers short", "use type hints"), not one thing or a task ("write me a function
    that ...", "give me three ideas", "sign it")."""
    if verb.lemma_.lower() not in STYLE_VERBS:
        return False
    if any(c.dep_ in ("dative", "iobj") for c in verb.children):
        return False  # "write me ...": something for the speaker now
    obj = next((c for c in verb.children if c.dep_ in ("dobj", "obj")), None)
    if obj is None:
        return any(c.dep_ == "prep" for c in verb.children)  # "switch to Google style"
    if obj.lower_ in _PRONOUN_OBJECTS or obj.lower_ in ("me", "us"):
        return False
    if any(c.dep_ in ("det", "nummod", "relcl", "acl", "poss") and c.lower_ not in ("your",)
           for c in obj.children):
        return False
    return obj.tag_ in ("NNS", "NNPS", "NNP") or obj.lemma_.lower() in MASS_THINGS


def _has_content(verb: Token) -> bool:
    """The imperative says what ("switch to Google style", "use plotly"), not only when
    ("switch from now on"). Read from the words, not the parse: a small model often
    misreads a tool's name after a verb."""
    rest = [t for t in verb.doc[verb.i + 1:] if not t.is_punct]
    return any(t.lower_ not in _NO_CONTENT for t in rest)


_NO_CONTENT = frozenset({"now", "from", "on", "today", "please", "pls", "it", "that", "them",
                         "this", "to", "again", "then", "too", "instead", "forward",
                         "going", "onwards", "thanks", "in", "future"})


def _as_instruction(item: Doc, standing: bool, listed: str) -> str | None:
    """The item as what the assistant is asked to do ("use plotly"), or None.
    ``standing``: the sentence says the rule lasts; ``listed``: the item is in a list of
    rules (``rules``: after a rules label; ``topic``: after "Plots:"; ``asked``: the
    assistant asked for preferences), or ``""``."""
    first = _first_word(item)
    if first is None:
        return None
    text = item[first.i:].text.strip(" .!")
    lower = first.lower_
    following = item[first.i + 1:]
    let_go = _let_go(first, following)
    if let_go is not None:  # "never mind the date format thing": the rule is withdrawn
        return f"stop using {let_go}"
    if lower in ("always", "never") and len(following):
        return _always_or_never(lower, following, listed)
    if lower == "no" and listed and len(following) and _is_verbless(following.as_doc()):
        return f"avoid {following.text.strip(' .!')}"
    if _opens_with_dont(lower, following):
        rest = text.split(None, 2 if lower == "do" else 1)[1:]
        return f"not {rest[-1]}" if rest and (standing or listed) else None
    if _back_to(lower, following, standing, listed):
        return f"go {text}"  # "back to short answers", not "back to throwing"
    if _is_imperative(first, following) and first.lemma_.lower() in STANDING_VERBS:
        return _imperative(first, text, standing, listed)
    if _bare_thing_to_use(item, listed) or (standing and _answer_things(item)):
        return f"use {text}"
    return None


# What the assistant's answers are made of: "examples in Go from now on" is about them.
ANSWER_THINGS = frozenset({"example", "answer", "reply", "response", "summary", "comment",
                           "heading", "bullet", "paragraph", "table", "list", "figure",
                           "unit", "snippet", "test", "docstring", "explanation", "citation",
                           "reference", "date", "quote", "link", "diagram", "chart", "plot"})


def _answer_things(item: Doc) -> bool:
    """A verbless item about what answers are made of ("examples in Go", "tables for
    figures"), said to stand ("from now on"); not a plan of the speaker's ("meetings on
    Mondays from now on")."""
    if not _is_verbless(item):
        return False
    head = next((t for t in item if t.pos_ in ("NOUN", "PROPN") and t.dep_ == "ROOT"), None)
    return head is not None and (head.lemma_.lower() in ANSWER_THINGS
                                 or head.lemma_.lower() in MASS_THINGS)


# What answers are made of, as one set (a withdrawal names one of them).
_ANSWER_WORDS = ANSWER_THINGS | MASS_THINGS
# Words that only round off what a withdrawal names ("the date format thing").
_VAGUE_TAILS = frozenset({"thing", "things", "stuff", "business", "bit", "idea"})


def _let_go(first: Token, following: Span) -> str | None:
    """What "never mind X" / "forget (about) X" lets go of, when X is something answers
    are made of ("never mind the bullet points", "forget the date format thing"); None
    for anything else ("never mind, it's fine", "forget it")."""
    if first.lower_ == "never" and len(following) > 1 and following[0].lower_ == "mind":
        rest = following[1:]
    elif first.lemma_.lower() == "forget" and first.tag_ == "VB" and len(following):
        rest = following[1:] if following[0].lower_ == "about" else following
    else:
        return None
    words = [t for t in rest if not t.is_punct]
    while words and words[-1].lower_ in _VAGUE_TAILS:
        words = words[:-1]
    if not words or not any(t.lemma_.lower() in _ANSWER_WORDS or t.lower_ in _ANSWER_WORDS
                            for t in words):
        return None
    return rest.doc[words[0].i:words[-1].i + 1].text


def _always_or_never(lower: str, following: Span, listed: str) -> str | None:
    """"always X" is X said as standing; "never X" is X's negation."""
    inner = _as_instruction(following.as_doc(), True, listed)
    if inner is None:
        return None
    return f"never {inner}" if lower == "never" else inner


def _opens_with_dont(lower: str, following: Span) -> bool:
    """"don't ...", "do not ...", "do n't ..."."""
    if lower in ("don't", "dont"):
        return True
    return lower == "do" and bool(len(following)) and following[0].lower_ in ("n't", "not")


def _back_to(lower: str, following: Span, standing: bool, listed: str) -> bool:
    """"back to <a kind of thing>" said as a rule ("back to short answers")."""
    return (lower == "back" and len(following) > 1 and following[0].lower_ == "to"
            and following[1].tag_ != "VBG"
            and bool(listed or standing or _a_kind_of_thing(following)))


def _is_imperative(first: Token, following: Span) -> bool:
    """A base-form verb, or a fragment verb a tagger read as a noun ("use mermaid")."""
    if first.tag_ == "VB":
        return True
    return first.tag_ in ("NN", "VBP") and bool(len(following)) \
        and first.lower_ in _FRAGMENT_VERBS


def _imperative(first: Token, text: str, standing: bool, listed: str) -> str | None:
    """An imperative of a standing verb: a rule when listed, said as standing, or about
    a kind of thing."""
    words = text.split()
    if first.lemma_.lower() == "make" and len(words) > 2 and \
            words[1].lower() in ("that", "it") and _STANDING.search(text):
        # "make that structlog rather than plain logging": what to use instead
        return "use " + " ".join(words[2:])
    if not _has_content(first):
        return None  # "switch from now on": to what?
    for_someone = any(c.dep_ in ("dative", "iobj") for c in first.children)
    if listed or (standing and not for_someone) or _kind_of_thing(first):
        return text
    return None


def _bare_thing_to_use(item: Doc, listed: str) -> bool:
    """A verbless item naming a tool or style in a list of rules, or one the assistant
    asked for ("polars for dataframes", "British spelling")."""
    if not (_is_verbless(item) and _a_thing_to_use(item)):
        return False
    if listed == "rules":
        return True
    return listed == "asked" and (_for_a_purpose(item) or len(item) <= _MAX_BARE_ITEM)


def _a_kind_of_thing(span: Span) -> bool:
    """A plural or mass noun in ``span`` ("short answers", "bullet points", "British
    spelling")."""
    return any(t.tag_ in ("NNS", "NNPS") or t.lemma_.lower() in MASS_THINGS for t in span)


def _a_thing_to_use(item: Doc) -> bool:
    """A tool, a format or a style ("polars for dataframes", "Python 3.11", "type hints
    everywhere"), not someone's fact ("Ellie's 16") nor an address ("dear")."""
    words = [t for t in item if not t.is_punct]
    if not words or any(t.tag_ == "POS" or t.dep_ == "poss" for t in words):
        return False
    if all(t.like_num for t in words):
        return False
    return any(t.pos_ in ("NOUN", "PROPN") for t in words)


def _for_a_purpose(item: Doc) -> bool:
    """"matplotlib for plots": a thing for a kind of thing."""
    return any(t.lower_ == "for" and any(c.dep_ == "pobj" and c.tag_ in ("NNS", "NN", "NNP")
                                         for c in t.children) for t in item)


def _with_topic(instruction: str, topic: str) -> str:
    words = {w.rstrip("s") for w in re.findall(r"[\w-]+", instruction.lower())}
    if not topic or all(w.rstrip("s") in words for w in topic.split()):
        return instruction
    return f"{instruction} for {topic}"


def _third_person(text: str, speaker: str) -> str:
    """"give me examples in your answers" -> "give <speaker> examples in its answers"."""
    text = re.sub(r"\byour\b", "its", re.sub(r"\byou\b", "it", text, flags=re.I), flags=re.I)
    text = re.sub(r"\b(?:my|our)\b", f"{speaker}'s", text, flags=re.I)
    return re.sub(r"\b(?:me|us)\b", speaker, text, flags=re.I)


def instructions(doc: Doc, speaker: str, question: str,
                 parse: Callable[[Sequence[str]], list[Doc]]) -> list[tuple[str, str]]:
    """The standing instructions of a user turn ``doc`` as ``(said, fact)`` pairs: the
    words that said it (its label and item) and "<speaker> asks the assistant to ...". ``question``
    is the assistant's turn before it (preferences asked for make a list of rules);
    ``parse`` parses the items (one batch)."""
    plan = _plan(doc, _asks_preferences(question))
    allowed = _permissions(doc, speaker)
    if not plan:
        return allowed
    docs = parse([item for _, item, *_ in plan])
    found = [_as_instruction(d, standing, listed)
             for (_, _, _, standing, listed, _), d in zip(plan, docs, strict=True)]
    # "no print statements, use logging": a "no X" beside an instruction is one too.
    with_rules = {s for (s, *_), f in zip(plan, found, strict=True) if f is not None}
    out: list[tuple[str, str, str]] = []
    for (sentence, item, topic, standing, _, label), doc_, instruction in zip(
            plan, docs, found, strict=True):
        if instruction is None and sentence in with_rules:
            instruction = _as_instruction(doc_, standing, "rules") if _starts_with_no(doc_) \
                else None
        if instruction is None:
            continue
        text = _third_person(_with_topic(_lowered(instruction, doc_), topic), speaker)
        out.append((sentence, text, f"{label} {item}".strip()))
    return [(said, _asks(speaker, text)) for said, text in _replacements(out)] + allowed


# Verbs of what the assistant may be allowed to do again ("you can suggest paid tools
# again"): the standing verbs and the ones of advice.
_ALLOWED_VERBS = STANDING_VERBS | {"suggest", "recommend", "propose", "offer", "swear"}
_AGAIN = re.compile(r"\bagain\b", re.I)


def _permissions(doc: Doc, speaker: str) -> list[tuple[str, str]]:
    """Permissions given back or for good ("so you can suggest paid tools again", "you
    may use emojis from now on", "feel free to swear again"): each is a standing
    instruction, which lifts an earlier prohibition of the same thing. A one-off
    permission ("you can use my notes") says neither "again" nor how long, and is none.
    Read off the words ("you can" / "feel free to", then the verb up to the clause's
    end): the small parser tags "suggest" after "you can" an auxiliary at times."""
    out: list[tuple[str, str]] = []
    for sent in doc.sents:
        if not (_AGAIN.search(sent.text) or _STANDING.search(sent.text)):
            continue
        words = [t for t in sent if not t.is_space]
        for i in range(len(words) - 2):
            lead = " ".join(t.lower_ for t in words[i:i + 3])
            at = i + 2 if lead[:7] in ("you can", "you may") else (
                i + 3 if lead == "feel free to" else None)
            if at is None or at >= len(words) or words[at].lemma_.lower() not in _ALLOWED_VERBS:
                continue
            clause, last = [], words[at]
            for t in words[at:]:
                if t.is_punct or t.lower_ in ("but", "just", "and", "as"):
                    break
                last = t
                if t.lower_ != "please":  # "again" stays: the rule is given back
                    clause.append(t.text)
            if len(clause) >= 2:  # said: the permission's own words, not the sentence's
                said = doc[words[i].i:last.i + 1].text
                out.append((said, _asks(speaker, _third_person(" ".join(clause), speaker))))
    return out


def _asks_preferences(question: str) -> bool:
    """Does the assistant's turn ask for the listener's preferences ("Any preferences
    for the format?")?"""
    return question.rstrip().endswith("?") and any(
        w.strip("?.,!").lower().rstrip("s") in ASKS_PREFERENCE for w in question.split()[-14:])


_Planned = tuple[str, str, str, bool, str, str]
"""An item that may be an instruction: its sentence, the item, the topic of its label,
whether the sentence says it is standing, the list it is in, and the label's words."""


def _plan(doc: Doc, asked: bool) -> list[_Planned]:
    """The items of the turn's sentences that may be instructions (most sentences give
    none, so no item of theirs is parsed again)."""
    plan: list[_Planned] = []
    # "some ground rules first. ... 1) code first 2) no emojis": rules announced, then
    # listed line by line
    rules_turn = bool(_STANDS_FOR_THE_LIST.search(doc.text)) or (
        len(_LIST_MARKER.findall(doc.text)) >= 2
        and any(t.lemma_.lower() in RULE_WORDS for t in doc))
    for sent in doc.sents:
        kind, topic, rest = _label(sent)
        rules_turn = rules_turn or kind == "rules"
        body = rest if rest is not None else sent
        standing = bool(_STANDING.search(sent.text))
        listed = "rules" if rules_turn else kind or ("asked" if asked else "")
        if not (listed or standing or _may_instruct(sent)):
            continue
        label = sent.text[:len(sent.text) - len(rest.text)] if rest is not None else ""
        for item in _items(body):
            if {w.lower().rstrip("s") for w in item.split()} & RULE_WORDS:
                continue  # "some ground rules first": the announcement, no rule
            plan.append((sent.text, item, topic, standing, listed, label))
    return plan


def _asks(speaker: str, instruction: str) -> str:
    """"<speaker> asks the assistant to use X." / "... never to use X." / "... not to"."""
    first, _, rest = instruction.partition(" ")
    if first in ("never", "not") and rest:
        return f"{speaker} asks the assistant {first} to {rest}."
    return f"{speaker} asks the assistant to {instruction}."


_WITHDRAWN = re.compile(r"^(?:avoid|drop|stop using|stop|ditch|lose|skip|no more) (?P<x>.+?)"
                        r"(?P<topic> for [\w -]+)?$")
_REPLACING = re.compile(r"^(?:use|switch to|go with|try) (?P<y>.+?)(?P<topic> for [\w -]+)?$")


def _replacements(found: list[tuple[str, str, str]]) -> list[tuple[str, str]]:
    """``(sentence, instruction, span said)`` -> ``(span said, instruction)``; "drop
    matplotlib, use plotly" (one sentence): one instruction, "use plotly instead of
    matplotlib", not a withdrawal beside its replacement."""
    out: list[tuple[str, str, str]] = []
    per_sentence = {sentence: sum(1 for s, *_ in found if s == sentence)
                    for sentence, *_ in found}
    for sentence, text, said in found:
        # Only a pair is one replacement; in a longer list each item is a rule of its own.
        if out and out[-1][0] == sentence and per_sentence[sentence] == 2:
            before = _WITHDRAWN.match(out[-1][1])
            after = _REPLACING.match(text)
            if before and after and (before.group("topic") or "") in ("", after.group("topic")
                                                                       or ""):
                topic = after.group("topic") or before.group("topic") or ""
                out[-1] = (sentence,
                           f"use {after.group('y')}{topic} instead of {before.group('x')}",
                           f"{out[-1][2]}, {said}")
                continue
        out.append((sentence, text, said))
    return [(said, text) for _, text, said in out]


def _lowered(instruction: str, doc: Doc) -> str:
    """"Back to short answers" -> "back to ...": a sentence's capital is no name's."""
    first = _first_word(doc)
    if first is not None and first.pos_ != "PROPN" and instruction[:1].isupper() and \
            first.text[:1].isupper():
        return instruction[:1].lower() + instruction[1:]
    return instruction.replace("go Back", "go back", 1)


_OPENERS = frozenset({"no", "always", "never", "back", "don't", "dont", "do", "make"})


def _may_instruct(sent: Span) -> bool:
    """Could an item of ``sent`` be an instruction: does one open (at the sentence's start
    or after a comma) with an imperative or an opener like "no", "always", "back"?"""
    starts = True
    for tok in sent:
        if tok.is_punct and tok.text in (",", ";", ":"):
            starts = True
            continue
        if starts and tok.lower_ not in _LEADING_WORDS and not tok.is_punct:
            if tok.tag_ == "VB" or tok.lower_ in _OPENERS or (
                    tok.lower_ in _FRAGMENT_VERBS and tok.tag_ in ("NN", "VBP")):
                return True
            starts = False
    return False


def _starts_with_no(doc: Doc) -> bool:
    first = _first_word(doc)
    return first is not None and first.lower_ == "no"
