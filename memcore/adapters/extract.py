"""The deterministic, rule-based fact extractor (the offline default).

Per allowed turn: split into sentences, drop greetings, small talk, questions
and requests, resolve the first person to the speaker's name, then rate kind,
importance and explicitness from content cues and resolve time phrases.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime, timedelta

from memcore.adapters.person import ADVERB_STEMS as _ADVERB_STEMS
from memcore.adapters.person import FIRST_PERSON as _FIRST_PERSON
from memcore.adapters.person import IRREGULAR_PAST, resolve_first_person
from memcore.adapters.person import SECOND_PERSON as _SECOND_PERSON
from memcore.adapters.spoken_requests import HABIT_ASK as _HABIT_ASK
from memcore.adapters.spoken_requests import PLEASE as _PLEASE
from memcore.adapters.spoken_requests import STANDING as _STANDING
from memcore.adapters.spoken_requests import STANDING_QUESTION as _STANDING_QUESTION
from memcore.adapters.spoken_requests import request_as_fact
from memcore.adapters.timephrases import TimeInfo, resolve
from memcore.core.interfaces import ExtractedFact
from memcore.core.models import Episode, Kind, Role
from memcore.core.secrets import MARKER_RE
from memcore.language import language_pack
from memcore.language.english import EnglishPack
from memcore.language.english.compare import relation_for
from memcore.language.english.lexicon import content_terms, fold, word_set
from memcore.language.english.spelling import without_listener_tags
from memcore.observability.usage import Metered

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+|;\s+|\s+-\s+(?=[A-Z])")
_MAX_FACT_CHARS = 400

# Leading interjections and discourse fillers stripped before judging a sentence.
_LEADING_FILLER = re.compile(
    r"^(?:(?:he+y+|hi+|hello+|hiya|yo|oh|ooh|wow|whoa|yeah|yes|yep|nope|ok|okay|so|well|um|uh|"
    # "no" and "right" only as interjections ("No, ..."): "No emojis", "right now" keep them.
    r"no(?=\s*[,!.:-]|\s+i\b)|right(?=\s*[,!.:-])|"
    r"hmm|haha|lol|omg|aw+|ah|thanks|thank you|sure|anyway|anyways|btw|by the way|"
    r"honestly|actually|also|plus|and|but|great|cool|nice|awesome|good|totally|true|"
    r"exactly|absolutely|definitely|of course|sorry|correction|update|no wait|wait|ugh|"
    # "Sad news, ...", "Quick health update: ...", "Fun fact, ...": an announcing noun
    # with up to two words before it announces the statement after the comma.
    r"finally|(?:[a-z]+ ){0,2}(?:news|update|fact|confession)(?=\s*[,!.:-])|big news|news|"
    r"guess what|change of plans?|plan change|"
    r"since (?:we|i) last (?:spoke|talked|chatted|met)|"
    r"(?:like|as) i (?:said|mentioned|told you))"
    r"\b[\s,!.:-]*)+",
    re.IGNORECASE,
)
# A clause that only announces the statement after it ("I should mention that I have
# accepted ...", "I wanted to let you know that ..."): the statement is the fact.
_PREAMBLE = re.compile(
    r"^(?:(?:i )?(?:should|must|have to|need to|wanted to|want to|just wanted to|forgot to|"
    r"meant to|just want to) (?:mention|say|tell you|let you know|admit|add|update you|"
    r"point out|share)|(?:i )?(?:thought|figured) i'?d (?:mention|say|share|tell you|"
    r"let you know)|(?:just )?(?:a )?(?:quick )?heads[- ]up|fyi|"
    r"let me (?:mention|tell you|add)|you should know|i'?m (?:happy|glad|sad|excited) to "
    r"(?:say|report|share|tell you)|just to let you know|quick update)"
    r"(?: that)?\b[\s,:]*(?=\S)", re.IGNORECASE)
_SMALL_TALK = re.compile(
    r"^(?:good (?:morning|afternoon|evening|night|to see you|to hear|luck)|nice to (?:meet|see)|"
    r"see you|talk (?:to you )?(?:soon|later)|take care|bye|goodbye|have a (?:good|great|nice)|"
    r"you'?re welcome|no problem|no worries|congrat|"
    # "We're back!", "I'm finally back": a greeting, unless it says from where or to what
    r"(?:i'?m|we'?re|i am|we are) (?:finally |just |now )?back(?: home)?[\s!.]*$|"
    r"that'?s (?:so |really |very )?"
    r"(?:cool|great|awesome|amazing|nice|good|wonderful|lovely|sweet|fun|interesting|funny|sad|"
    r"tough|true|right)|sounds (?:great|good|fun|amazing|awesome|lovely)|me too|same here|"
    r"i (?:\w+ )?(?:agree|see|know|understand|hear you)(?=[\s,.!]*(?:$|what you mean|right|"
    r"the feeling|that\b))|"
    r"glad (?:to hear|you)|i'?m (?:so )?(?:glad|happy) "
    r"(?:for you|to hear)|how (?:are|have) you|what'?s up|how'?s it going|miss you|love (?:that|it|"
    r"this)|take a look|look at this|check (?:this|it) out)\b",
    re.IGNORECASE,
)
# Chat spellings read as words before anything else ("we r going", "my gf and i",
# "dev @ stripe", "last wk").
_CHAT_SPELLINGS = tuple((re.compile(p, re.I), r) for p, r in (
    (r"(?<=\w) @ (?=\w)", " at "), (r"\bwe r\b", "we are"), (r"\bu(?=\s)", "you"),
    (r"\bur(?=\s)", "your"), (r"\bgf\b", "girlfriend"), (r"\bbf\b", "boyfriend"),
    (r"\bwk\b", "week"), (r"\bwks\b", "weeks"), (r"\byr\b", "year"), (r"\byrs\b", "years"),
    (r"\bi(?=\s)", "I"),
))


# A fact whose value is a masked secret says nothing but that a secret exists ("Sam's
# bank PIN is [redacted: pin], don't tell anyone"): no fact.
# Only that clause: nothing joined before it ("Sam banks with Monzo, and ..."), nothing
# after it but a plea to keep it quiet.
_ONLY_A_SECRET = re.compile(
    r"^(?:(?!\band\b)[^,;])+?\b(?:is|are|was|were|'s)\s*:?\s*\[redacted: [^\]]+\]\s*"
    r"(?:[.!]?|,\s*(?:don'?t|do not|never|please|pls|keep|just|between)\b[^,;]*)$", re.I)


def chat_spelled_out(text: str) -> str:
    """``text`` with common chat spellings written out (see ``_CHAT_SPELLINGS``, then the
    English pack's :func:`~memcore.language.english.spelling.spelled`); a secret's
    marker stays as it is ("[redacted: national id]" is no "I'd")."""
    parts = MARKER_RE.split(text)
    out: list[str] = []
    for n, part in enumerate(parts):
        if n % 2:  # a marker's kind (the split keeps the pattern's one group)
            out.append(f"[redacted: {part}]")
            continue
        for pattern, word in _CHAT_SPELLINGS:
            part = pattern.sub(word, part)
        out.append(language_pack("english").spelled(part) if part.strip() else part)
    return "".join(out)


_ASK_TO_REMEMBER = re.compile(r"^(?:can|could|would|will) (?:you|u) (?:please )?(?:remember|note|"
                              r"keep in mind)(?: that)? (?P<x>.+)$", re.I)
_QUESTION_START = re.compile(
    r"^(?:what|why|how|where|who|which|whose|do|does|did|are|is|was|were|can|could|would|will|"
    r"should|shall|have|has|any|anything|wanna)\b(?:'s|'re)?\s+(?:you|your|u|we|it|that|there|"
    r"this|they|he|she|anyone|anybody|i)\b"
    # chat drops the question mark and the apostrophe: "whats the diff between X and Y"
    r"|^(?:what|how|where|who|which)(?:'?s|\s+is|\s+are)\s+(?:the|a|an|your|ur)\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"^(?:please|pls|can you|could you|would you|will you|tell me|show me|give me|help me|"
    r"let'?s|let me know|make sure|don'?t forget|"
    # "I need gift ideas": asks the listener for something now, says nothing lasting
    r"i(?: need| could use| want| would love|'d love|'m looking for| am looking for) "
    r"(?:some |a few |more |any |good |a couple of )?(?:[\w-]+ )?(?:ideas|suggestions|advice|"
    r"help|tips|recommendations|inspiration|pointers)|"
    # chat drops the "I": "need help w fortnite building", "need an email to our ward
    # manager", "Need a rent tracker": a task for the listener, nothing lasting
    r"(?:i )?need (?:some |a |)(?:help|hand)|"
    r"(?:i )?need (?:a|an|some) (?:[\w-]+ ){0,2}(?:email|e-mail|letter|message|note|plan|"
    r"list|summary|tracker|template|draft|reply|speech|toast|poem|recipe|spreadsheet|script|"
    r"function|essay|caption|bio|cv|itinerary|outline|checklist|agenda))\b",
    re.IGNORECASE,
)
# A task for the listener to do now ("Write me a function that ...", "Draft an email to
# my landlord"): asked once, nothing lasting about the speaker (a standing rule, "always
# write ...", is read as one).
_ONE_OFF_TASK = re.compile(
    r"^(?:(?:now|ok(?:ay)?|so|and|also|quick one|next)[\s,:]+)?(?:write|draft|make|create|"
    r"generate|compose|rewrite|redo|edit|proofread|translate|summari[sz]e|outline|plan|design|"
    r"build|list|suggest|recommend|find|check|fix|calculate|explain|brainstorm|prepare|"
    r"convert|sketch|put together|come up with|work out)\s+(?:me|us|a|an|the|some|this|that|"
    r"these|those|my|our|\d+|two|three|four|five|up)\b", re.I)
# Sentences opening with a vague pronoun say nothing self-contained unless the
# speaker is the subject somewhere in them.
_VAGUE_START = re.compile(r"^(?:it|it's|that|that's|this|this's|those|these|they|they're|he|"
                          r"sounds|looks|seems|"
                          r"she|there|there's|here|here's)\b", re.I)
# "it's X, not Y": a correction names what it replaces, so it is not vague.
_CORRECTION = re.compile(r"^(?:it'?s|it is|that'?s|that is|they'?re)\s+[^,]+,\s+not\s+\w", re.I)
_FIRST_SUBJECT = re.compile(r"\b(?:i|i'm|i've|i'd|i'll|my|we|we're|our)\b", re.I)
# Short reactions anywhere in a short sentence ("That race sounds great, Mel").
_REACTION = re.compile(r"\b(?:sounds?|looks?|seems?) (?:so |really |super )?(?:great|good|fun|"
                       r"amazing|awesome|lovely|cool|nice|interesting|wonderful)\b", re.I)
_REACTION_WORDS = 8
# "Mel, ..." addresses someone; "Please, ...", "Honestly, ..." do not.
_VOCATIVE = re.compile(r"^(?!(?:Please|Pls|Thanks|Sorry|Okay|Well|Also|Actually|Honestly|"
                       r"Seriously|Again|Anyway|Btw|Yes|No|Oh|Hey|Now|Currently)\b)"
                       r"[A-Z][a-z]+,\s+")
_SUBJECTLESS_TASTE = re.compile(r"^(?:(?:don'?t|dont|do not|never|really|totally|kinda) "
                                r"(?:like|love|enjoy|mind)|(?:really |totally )?(?:love|hate|"
                                r"prefer|enjoy|dislike|adore|can'?t stand))\s+(?!you\b|u\b|it\b)"
                                r"\w", re.I)
_GOTTA = re.compile(r"^(?:gotta|got to|have to|need to)\s+", re.I)
_SUBJECTLESS = re.compile(r"^(?:gonna|going to|planning|hoping|trying|thinking|researching|"
                          r"working|heading|looking|off to|currently|still|just|now based|"
                          r"back in|back home|officially|now an?|now the|"
                          r"(?:not )?(?:a )?(?:big |huge |great )?fan of|not really into)\b",
                          re.I)
# Chat drops the "I" before a past-tense verb: "Moved to Porto", "Replaced my phone".
_SUBJECTLESS_PAST = re.compile(
    r"^(?:replaced|finished|moved|got|started|switched|dropped|sold|quit|bought|joined|left|"
    r"relocated|went|visited|adopted|passed|graduated|gave up|stopped|tried|took|met|had|"
    r"cut|ran|won|lost|found|spent|decided|booked|signed|handed|accepted|think|swapped|"
    r"ditched|traded|settled|broke|lost|picked up|took up|learned|learnt)\b", re.I)
# "Wrist is fine now": chat leaves out whose body part it is.
_BODY_PART_STATE = re.compile(r"^(?:wrist|back|knee|ankle|shoulder|neck|foot|leg|arm|hand|hip|"
                              r"elbow|head|throat|stomach|tooth|eye|finger|toe|ear)s? (?:is|are|"
                              r"feels?|has|have)\b", re.I)
# "Been reading that book", "Been only to Rome once": a present perfect whose "I have"
# chat left out (not "Been a long week", which has no subject to give).
_SUBJECTLESS_PERFECT = re.compile(r"^been\s+(?=(?:(?:only|just|never|already|mostly|"
                                  r"really|also)\s+)?(?:[a-z]+ing|to|in|at)\b)", re.I)
_NEXT_GOAL = re.compile(r"^(?:next|new|main|big|my) goal\s*(?::|is)\s*(?:to\s+)?", re.I)
_KIND_CUES: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    (Kind.GOAL, re.compile(
        r"\b(?:want(?:s)? to|wants|plan(?:s|ning)? to|going to|gonna|hope(?:s)? to|aim(?:s|ing)? "
        r"to|trying to|tries to|try to|goal|dream|revising|studying for|preparing for|saving "
        r"(?:up )?for|working (?:on|towards)|"
        # "learning" as what the speaker does, not the field in "machine learning engineer"
        r"(?<!machine )(?<!deep )(?<!reinforcement )(?<!statistical )(?<!e-)learning"
        r"(?! (?:engineer|scientist|researcher|research|team|model|models|platform|curve)\b)|"
        r"would love to|'d love to|intend|"
        r"decided to|wish(?:es)? to|keen on|thinking (?:of|about)|looking forward|will start|"
        r"about to|need(?:s)? to|has to|have to)\b", re.I)),
    (Kind.PREFERENCE, re.compile(
        # "like" as a comparison ("looks like", "feel like") is no liking
        r"\b(?:(?<!looks )(?<!look )(?<!sounds )(?<!seems )(?<!feels )(?<!feel )(?<!felt )"
        r"(?<!just )(?<!more )(?<!something )(?<!nothing )(?<!anything )likes?|"
        r"loves?|enjoys?|prefers?|favou?rite|hates?|dislikes?|can't stand|would rather|"
        r"(?:is|am) (?:a )?(?:big )?fan of|into|fond of|passionate about|adores?)\b", re.I)),
    (Kind.TEMPORARY, re.compile(
        r"\b(?:today|tonight|right now|at the moment|this (?:morning|afternoon|evening|week)|"
        r"(?:is|am|'m|feels?|feeling) (?:so |really |a bit |very |\w+ly )?(?:tired|sick|ill|busy|"
        r"swamped|"
        r"stressed|exhausted|hungry|bored|sleepy|anxious|nervous|excited|soaked|drenched|"
        r"knackered|shattered|freezing|starving|running late)|for now|"
        # Leaving the conversation: "off to make tea", "heading out", "on my way"
        r"(?:is|am|'m|are|'re) (?:just )?(?:off|heading|headed) (?:to|out|off|home|back)|"
        r"on (?:my|his|her|their|our|[\w-]+'s) way|(?:is|am|'m) about to)\b", re.I)),
    (Kind.EVENT, re.compile(
        r"\b(?:went|visited|attended|moved|started|finished|graduated|got (?:married|engaged|a|"
        r"an|my|the)|bought|joined|won|met|adopted|traveled|travelled|took|had a|was born|"
        r"ran|participated|celebrated|on \d{1,2} \w+ \d{4}|around \d{1,2} \w+ \d{4}|"
        r"yesterday|ago|last (?:week|month|year|night))\b", re.I)),
)
_IMPORTANT = re.compile(
    r"\b(?:name|live[sd]?|moved|work(?:s|ed)? (?:at|for|as)|job|career|married|divorced|wife|"
    r"husband|partner|kids?|children|son|daughter|birthday|born|allerg\w*|diagnos\w*|health|"
    r"vegan|vegetarian|religio\w*|transgender|identity|graduat\w*|degree|pregnan\w*|died|"
    r"passed away|adopt\w*|phone|address|email|password|medication|disease|cancer)\b", re.I)
_EMOTIONAL = re.compile(r"\b(?:love|hate|dream|passion\w*|important|afraid|scared|proud)\b", re.I)
# Hedges, and hearsay or appearance ("apparently", "sounds like"): not the user's own word.
_HEDGE = re.compile(r"\b(?:maybe|perhaps|probably|might|i think|i guess|not sure|kinda|sort of|"
                    r"apparently|supposedly|allegedly|(?:sounds|seems|looks) like)\b", re.I)


# A dot after these ends no sentence: titles and saints before a name ("St. Mary's",
# "Dr. Lee") and Latin shorthands ("e.g. tea").
_NEVER_END = word_set("""mr mrs ms mx dr prof st mt ft jr sr sen rep gen col capt lt sgt rev fr
    vs approx dept est fig no nos vol ca cf e.g i.e viz""")
# After "etc." or an initialism ("U.S.", "a.m.", "J."), a sentence ends only if the next
# word opens one ("... in the U.S. My sister ..."; not "the U.S. Army").
_MAYBE_END = word_set("etc")
_INITIALISM = re.compile(r"^(?:[a-z]\.)+[a-z]?$", re.I)
_OPENERS = word_set("""i i'm i've i'd i'll my we we're our it it's the this that he she they
    but and so also now then last next yesterday today tomorrow anyway btw please thanks
    actually there here what how why when where who can could would will do did is are""")


def _ends_sentence(before: str, after: str) -> bool:
    """Whether a ``.`` at the end of ``before`` ends the sentence that ``after`` follows."""
    if not before.endswith("."):
        return True  # "!", "?"
    word = fold(before.rsplit(None, 1)[-1]).rstrip(".").lstrip("(\"'")
    following = fold(after.split(None, 1)[0]) if after.split() else ""
    if word in _NEVER_END:
        return False
    if word in _MAYBE_END:
        return after[:1].isupper()
    if _INITIALISM.match(word + ".") and ("." in word or len(word) == 1):
        # "the U.S. last year": a lower-case opener after an initialism goes on the sentence
        return following.strip(",") in _OPENERS and (after[:1].isupper() or following == "i")
    return True


def split_sentences(text: str) -> list[str]:
    """Sentences of a turn (on ``.!?``, semicolons, new lines and dash breaks); the dot
    of an abbreviation ("St.", "Dr.", "e.g.", "etc.", "U.S.") ends none."""
    out: list[str] = []
    pending = ""
    for part in _SENTENCE_END.split(text):
        if not part or not part.strip():
            continue
        part = part.strip()
        if pending and not _ends_sentence(pending, part):
            pending = f"{pending} {part}"
            continue
        if pending:
            out.append(pending)
        pending = part
    if pending:
        out.append(pending)
    return out


_FP = r"(?:i|i'm|im|i've|i'd|i'll|my|we|we're|we've|our)\b"
_CONJ = r"(?:and|but|so|plus|while|whereas|although|though|because|since|yet)"
# A new clause with its own first-person subject: ", I ...", " and I ...", " but my ...".
_CLAUSE_SPLIT = re.compile(rf"(?:,\s*(?:{_CONJ}\s+|then\s+|as\s+)?|\s+{_CONJ}\s+)"
                           rf"(?=(?:(?:now|these days|nowadays|currently),?\s+)?{_FP})", re.I)
# "I'm vegan, so please don't ...": the request after a fact is a claim of its own.
_REQUEST_SPLIT = re.compile(r"(?:,\s*(?:(?:so|and|but|then)\s+)?|\s+(?:so|and)\s+)"
                            r"(?=(?:please|pls|plz|kindly)\s+[a-z])|"
                            # "I'm vegetarian, so no meat recipes please": a request too
                            r",\s*so\s+(?=(?:no|don'?t|do not|never|avoid)\s+[a-z])|"
                            r",\s*(?:so|and|but)\s+(?=[a-z][^,]*\bplease\b)",
                            re.I)
# "I don't drink coffee anymore, only tea": the item after the negation is what the
# speaker does, not a second thing they don't.
_NEG_CONTRAST = re.compile(
    r"^(?P<subj>.*?\b(?:i|i'm|i am|im|we|we're|we are))\s+(?P<neg>don'?t|do not|never|not|"
    r"no longer)\s+(?P<rest>[^,]+?),\s*(?:but\s+)?(?P<adv>only|just)\s+(?P<x>[^,]+?)"
    r"(?:\s+(?:now|these days|nowadays))?$", re.I)
_PREPOSITION = word_set("on in at to with into for from about of")


def _contrast(clause: str) -> list[str]:
    """A negated clause with ", only Y" after it as two claims, the second positive:
    "I don't eat pork, just chicken" -> "I don't eat pork", "I eat just chicken"."""
    m = _NEG_CONTRAST.match(clause.strip(" .!"))
    if not m:
        return [clause]
    words = m.group("rest").split()
    keep: list[str] = []
    if m.group("neg").lower() != "not" and words:
        keep.append(words.pop(0))  # the verb after "don't", "never", "no longer"
    adv = m.group("adv")
    if words and fold(words[0]) in _PREPOSITION:
        keep.append(adv)  # "only on Mastodon", "only to jazz"
        keep.append(words[0])
    else:
        keep.append(adv)
    negated = f"{m.group('subj')} {m.group('neg')} {m.group('rest')}"
    return [negated, " ".join([m.group("subj"), *keep, m.group("x")])]
# A new clause about someone named: ", Mateo is 7 and Sofía is 4".
_NAMED_SPLIT = re.compile(r"(?:,\s*(?:and\s+)?|\s+and\s+)(?=[A-Z][\w\u00c0-\u024f]+ "
                          r"(?:is|was|has|lives|works|loves|likes)\b|the (?:[\w-]+ ){1,2}"
                          r"(?:is|was|are|were|has) (?:now )?(?:over|done|finished|gone|closed|"
                          r"cancel+ed|sold)\b)")
# "since" before a time is when, not why: "Since 2023 I live in ..." keeps it.
_SINCE_A_TIME = (r"since\s+(?:\d|last\b|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
                 r"[a-z]*\b)")
_LEADING_CONJ = re.compile(rf"^(?:(?!{_SINCE_A_TIME}){_CONJ}|"
                           rf"(?:(?:especially|particularly|even|right|just)\s+)?"
                           # "Especially after I failed the test, ...": the clause is the event
                           rf"(?:after|once|ever since)(?=\s+{_FP}))\s+", re.I)
# ", started a new job as ...": a first-person clause whose "I" chat left out.
_VERB_SPLIT = re.compile(r",\s*(?:and\s+)?(?=(?:started|moved|got|switched|joined|bought|sold|"
                         r"quit|left|finished|adopted|relocated)\b)", re.I)
# "... and she's 6", "..., she's a doctor", "... and he plays the cello": a clause about
# the person the clause before named (see ``_about_antecedent``).
_PRONOUN_SPLIT = re.compile(r"(?:(?:,\s*|\s+)and\s+|,\s*)(?=(?:she|he|they)(?:'s|'re| is| was| "
                            r"has| are| were)\b)|(?:,\s*|\s+)and\s+(?=(?:she|he|they)\s+"
                            rf"(?:[a-z]+s|[a-z]+ed|{'|'.join(sorted(IRREGULAR_PAST))})\b)", re.I)
# Failing an opening one, the last name inside the clause: "I met Anna at the gym" (Anna).
_NAME_INSIDE = re.compile(r"(?<=\s)(?!I\b|I'|(?:January|February|March|April|May|June|July|"
                          r"August|September|October|November|December|Monday|Tuesday|Wednesday|"
                          r"Thursday|Friday|Saturday|Sunday)\b)[A-Z][a-z\u00e0-\u024f]+(?:-[A-Z]"
                          r"[a-z]+)?\b(?!')")
# Whom such a clause is about: "Our daughter Maya ..." (Maya), "My sister ..." (my sister),
# "Tom ..." (Tom). The speaker is no antecedent ("I bought shoes and they're great").
# "My daughter's name is Ella and she's 6", "My best friend is Karim, he's a pilot": Ella, Karim.
_ANTECEDENT = re.compile(r"^(?:(?P<np>(?:[Mm]y|[Oo]ur)\s+(?:(?:little|older|younger|big|baby|best|"
                         r"eldest|youngest|oldest)\s+)?[a-z][\w-]*)(?:(?:'s name is|'s name's|"
                         r" is named| is called| is|,)?\s+(?P<name>[A-Z][\w\u00c0-\u024f'-]+))?|"
                         r"(?P<bare>[A-Z][\w\u00c0-\u024f-]+))(?:'s\b)?")
# A name right after one of these is a place or a time ("a rescue in Hove", "moving to
# Thursdays"), never whom a following "she" or "he" is about.
_PLACE_OR_TIME_BEFORE = re.compile(r"\b(?:in|at|from|to|on|near|around|into|outside|until|till|"
                                   r"since|by|via|towards?)\s+(?:the\s+)?$", re.I)
_PRONOUN_START = re.compile(r"^(?P<p>she|he|they)(?P<c>'s|'re)?\b\s*", re.I)
# After "she's" these words mean "she has", not "she is".
_HAS_AFTER_S = word_set("been got gotten had")
# "she's (already) joined the club", "he's done his exams": a participle with an object
# after it is "has" ("she's called Pickle", "he's retired" stay "is").
_PARTICIPLES = word_set("done gone seen taken made found left bought sold won lost met told "
                        "given written begun broken chosen driven eaten fallen forgotten grown "
                        "known shown spoken stolen thrown worn passed booked")
_HAS_DONE = re.compile(r"^(?:(?:already|just|also|finally|recently|never|now)\s+)?"
                       rf"(?:[a-z]+ed|{'|'.join(sorted(_PARTICIPLES))})\s+"
                       r"(?:the|a|an|my|his|her|their|our|its|some|two|three|\d)\b", re.I)


def _about_antecedent(before: str, clause: str) -> str:
    """``clause`` ("she's obsessed with dinosaurs") with its pronoun replaced by whom
    ``before`` named ("Our daughter Maya just turned 7" -> "Maya is obsessed with
    dinosaurs"); as it is when ``before`` names nobody."""
    pronoun = _PRONOUN_START.match(clause)
    if not pronoun:
        return clause
    before = _LEADING_CONJ.sub("", before.strip(" ,"))
    ante = _ANTECEDENT.match(before)
    who = (ante.group("name") or ante.group("np") or ante.group("bare")) if ante else None
    if who is None or fold(who) in _NOT_A_PARTNER or fold(who) in _OPENERS:
        inside = [m.group() for m in _NAME_INSIDE.finditer(before)
                  if not _PLACE_OR_TIME_BEFORE.search(before, 0, m.start())]
        who = inside[-1] if inside else None
    if who is None:
        return clause
    plural = pronoun.group("p").lower() == "they"
    rest = clause[pronoun.end():]
    if pronoun.group("c") == "'re" or (plural and pronoun.group("c")):
        return f"{who} are {rest}"
    if pronoun.group("c") == "'s":
        verb = "has" if _HAS_DONE.match(rest) or fold(rest.split(" ", 1)[0]) in _HAS_AFTER_S \
            else "is"
        return f"{who} {verb} {rest}"
    return f"{who} {rest}"


# "..., I find the borrow checker appealing": a verdict on something the clause before
# introduced ("the", "its") belongs with it, so that ending that ends the verdict too.
_EVALUATION = re.compile(
    r"^(?:(?:and|but|so|plus)\s+)?(?:i|we)\s+(?:(?:really|also|actually|just|still|kind of|"
    r"genuinely|honestly|especially|absolutely)\s+)*(?:find|found|love|like|enjoy|hate|"
    r"dislike|adore|appreciate|miss|admire)s?\s+(?:the|its|their|how|what)\b", re.I)
_FIRST_OR_ELIDED = re.compile(rf"\b{_FP}|^(?:now|back|officially|finally|just)\b", re.I)


# "We went again last weekend": says nothing without the sentence before ("I love hiking
# in the Alps."), so it stays with it rather than becoming "Sam went again ...".
_REPEAT_OF_BEFORE = re.compile(
    r"^(?:(?:and|so)\s+)?(?:(?:i|we)\s+(?:(?:just|even|already)\s+)?(?:go|do|were|was)|"
    # chat leaves the subject out of a past repeat: "Did it again in October!"
    r"(?:(?:i|we)\s+)?(?:(?:just|even|already)\s+)?(?:went|did|tried))\s+"
    r"(?:(?:it|that|there)\s+)?(?:again|once more)\b", re.I)


# "We got a puppy! His name is Mango.": the name of what the sentence before introduced.
_ITS_NAME = re.compile(r"^(?i:his|her|its|their)\s+names?(?:\s+(?:is|are)|'s)\s+"
                       r"(?P<name>[A-Z][\w\u00c0-\u024f'-]*(?:\s+(?:and\s+)?[A-Z][\w'-]*)*)")


def _leans_on_before(clause: str) -> bool:
    """A verdict on, a repeat of, or the name of what the clause before introduced."""
    return bool(_EVALUATION.match(clause) or _REPEAT_OF_BEFORE.match(clause)
                or _ITS_NAME.match(clause))


def _joined(before: str, clause: str) -> str:
    """``clause`` said as part of ``before`` ("We got a puppy" + "His name is Mango" ->
    "We got a puppy named Mango")."""
    named = _ITS_NAME.match(clause)
    if named:
        return f"{before.rstrip(' .!,')} named {named.group('name')}{clause[named.end():]}"
    return f"{before.rstrip(' .!,')}, {clause}"


def _with_verdicts(sentences: list[str]) -> list[str]:
    """A sentence that only judges something the sentence before introduced ("I've been
    learning Rust. I find the borrow checker appealing.") or only repeats it ("... We went
    again last weekend.") joins it, as a clause does."""
    out: list[str] = []
    for sentence in sentences:
        bare = _LEADING_FILLER.sub("", sentence)
        if (out and _leans_on_before(bare)
                and not out[-1].endswith("?") and _FIRST_PERSON.search(out[-1])):
            out[-1] = _joined(out[-1], bare)
        else:
            out.append(sentence)
    return out


# Words that open a sentence but name nobody ("So I ...", "Then she ...").
_NOT_A_PARTNER = word_set("""so and but then now yes no ok okay well oh hey hi actually also
    honestly today yesterday tomorrow""")


# "My wife and I are expecting", "Tom and I live", "Me and my brother run": a shared
# subject. Said as "I ... with X" the fact keeps X and still fills the speaker's slot
# (a later move supersedes "lives in Leeds with Sam's husband").
_AND_I = re.compile(r"^(?P<other>(?:(?:[Mm]y|[Oo]ur)\s+[a-z][\w'-]*(?:\s+[a-z][\w'-]*)?)|"
                    r"[A-Z][\w'-]+)\s+and\s+(?:I|me)\s+(?P<rest>[a-z].+)$")
_ME_AND = re.compile(r"^(?:[Mm]e|I)\s+and\s+(?P<other>(?:my|our)\s+[a-z][\w'-]*|[A-Z][\w'-]+)"
                     r"\s+(?P<rest>[a-z].+)$")
_PLURAL_TO_I = (("are", "am"), ("were", "was"), ("our", "my"), ("ours", "mine"), ("us", "me"),
                ("we", "I"), ("ourselves", "myself"), ("each other", "each other"))
_FIRST_CLAUSE_END = re.compile(r",|\s+(?:and|but|so|because|since)\s+")


def with_partner(sentence: str) -> str:
    """A shared first-person subject as "I ... with X": "My wife and I are expecting our
    first baby in March" -> "I am expecting my first baby in March with my wife"."""
    m = _AND_I.match(sentence) or _ME_AND.match(sentence)
    if not m or fold(m.group("other").split()[0]) in _NOT_A_PARTNER:
        return sentence
    words = m.group("rest").split(" ")
    singular = dict(_PLURAL_TO_I)
    rest = " ".join(singular.get(w.lower(), w) for w in words)
    end = _FIRST_CLAUSE_END.search(rest)
    cut = end.start() if end else len(rest.rstrip(" .!"))
    return f"I {rest[:cut]} with {m.group('other')}{rest[cut:]}"


_FRONTED_WORDS = 5  # "Last Friday", "Back in 2022", "After the show": no clause


def _with_fronted(pieces: list[str]) -> list[str]:
    """``pieces`` of a clause split with a fronted adverbial ("Last Friday, I went to a
    workshop", "In 2022, we moved") joined back to the clause it opens: a short piece
    without a verb of its own says when or where, not a claim (split off, the time was
    lost and the clause read as leaning on the one before)."""
    out: list[str] = []
    for piece in pieces:
        if out and len(out) == 1 and _fronted(out[0]):
            out[0] = f"{out[0].strip()}, {piece}"
        else:
            out.append(piece)
    return out


# How a fronted adverbial of time or place opens ("Last Friday", "In 2022", "Back in
# May", "Two weeks ago"); "Cheers", "Bit terrified", "Random" open no adverbial.
_ADVERBIAL_START = re.compile(
    r"^(?:(?:especially|even|right|just|only|mostly|ever)\s+)?(?:in|on|at|during|after|before|since|over|around|by|last|this|next|earlier|later|"
    r"yesterday|today|tonight|tomorrow|recently|lately|once|every|each|a few|a couple|"
    r"a week|a month|a year|\d+|one|two|three|four|five|six|seven|eight|nine|ten|"
    r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"january|february|march|april|may|june|july|august|september|october|november|"
    r"december)\b", re.I)


def _fronted(piece: str) -> bool:
    """Is ``piece`` a short adverbial of time or place ("Last Friday", "In 2022"),
    without a first person or a verb of its own?"""
    piece = piece.strip(" ,")
    words = piece.split()
    return (0 < len(words) <= _FRONTED_WORDS and bool(_ADVERBIAL_START.match(piece))
            and not _FIRST_SUBJECT.search(piece) and not _is_clause(piece))


def split_claims(sentence: str) -> list[str]:
    """One claim per clause: a compound sentence becomes one sentence per subject clause.

    "I live in Lisbon and I work as a nurse" -> ["I live in Lisbon", "I work as a nurse"];
    a list after a listing verb becomes one claim per item ("My hobbies are painting
    and salsa" -> "My hobbies are painting", "My hobbies are salsa").
    """
    sentence = with_partner(sentence)
    parts: list[str] = []
    clauses: list[str] = []
    asks = _REQUEST_SPLIT.split(sentence)
    # "I'm on a diet, so no desserts": what follows "so" is asked of the listener
    asks[1:] = [a if _PLEASE.search(a) else f"please {a}" for a in asks[1:]]
    pieces = [c for part in asks for c in _with_fronted(_CLAUSE_SPLIT.split(part))]
    for clause in (c for piece in pieces for c in _contrast(piece)):
        if clauses and _leans_on_before(clause.strip(" ,")):
            clauses[-1] = _joined(clauses[-1], clause.strip(" ,"))
        else:
            clauses.append(clause)
    for clause in clauses:
        for named in _NAMED_SPLIT.split(clause):
            first, *others = _PRONOUN_SPLIT.split(named)
            # a clause about nobody named ("... and they're great") is dropped later as vague
            for part in (first, *(_about_antecedent(first, o) for o in others)):
                parts.extend(_VERB_SPLIT.split(part) if _FIRST_OR_ELIDED.search(sentence)
                             else [part])
    out: list[str] = []
    for part in parts:
        part = _LEADING_CONJ.sub("", part.strip(" ,;:-"))
        if part:
            out.extend(split_list(part))
    return out


_LIST_HEAD = re.compile(
    r"^(?P<head>.*?\b(?:are|include|includes|been to|visited|grow|grows|own|owns|play|plays|"
    r"speak|speaks|enjoy|enjoys|like|likes|love|loves|use|uses|drink|drinks|eat|eats|collect|"
    r"collects|do|does|practi[sc]e|practi[sc]es|into|hobbies are|hobby is)\s+)(?P<items>.+)$",
    re.I)
_LIST_SEP = re.compile(r"\s*,\s*(?:and\s+|&\s+)?|\s+(?:and|&)\s+", re.I)
_LIST_TAIL = re.compile(r"\s+(?:in|at|on|for|with|from|every|each|since)\s+.+$", re.I)
_NOT_AN_ITEM = re.compile(r"\b(?:i|i'm|my|me|we|is|are|was|were|he|she|they|it|you|has|have|"
                          r"not|no|but|because|then|who|which|that|please|pls|plz|thanks|"
                          r"thank)\b", re.I)


def split_list(clause: str) -> list[str]:
    """``clause`` once per item of a trailing list of short noun phrases, or as it is."""
    m = _LIST_HEAD.match(clause)
    if not m or not re.search(r"(?:,|\band\b|&)", m.group("items")):
        return [clause]
    items = _LIST_SEP.split(m.group("items"))
    if len(items) == 2 and not re.search(r"\b(?:and|&)\b", m.group("items")):
        return [clause]  # "long, thorough explanations": stacked adjectives, not a list
    tail_m = _LIST_TAIL.search(items[-1])
    tail = tail_m.group(0) if tail_m else ""
    if tail:
        items[-1] = items[-1][: tail_m.start()] if tail_m else items[-1]
    items = [i.strip() for i in items]
    if (len(items) < 2 or any(not i or len(i.split()) > 3 or _NOT_AN_ITEM.search(i)
                              for i in items)):
        return [clause]
    return [f"{m.group('head')}{item}{tail}" for item in items]


# A correction of what was just said ("Sorry, it's Anne, not Anna", "Actually, it's May
# 5", "I meant Porto"): kept as "It's X[, not Y]" for the decider to apply to the fact
# it corrects (see memcore.language.english.compare.corrected).
_CORRECTION_CUE = re.compile(r"^(?:actually|sorry|oops|correction|my bad|my mistake|no wait|"
                             r"wait|i mean|i meant|scratch that|typo|err|erm|rather|no)\b",
                             re.I)
_CORRECTION_BODY = re.compile(
    r"^(?:(?:i mean|i meant|it'?s|it is|that'?s|that is|it was|it should be|should be|"
    r"make that|it'?s actually|it is actually)\s+(?:to (?:say|write) )?)(?P<x>[^,;]+?)"
    r"(?:,?\s+(?:and )?not\s+(?P<y>[^,;]+?))?$|"
    r"^not (?P<y2>[^,;]+?),\s*(?:it'?s\s+)?(?P<x2>[^,;]+)$|"
    r"^i (?:said|wrote|typed) (?P<y3>[^,;]+?),? but (?:i )?meant (?P<x3>[^,;]+)$", re.I)
_BARE_CORRECTION = re.compile(r"^(?P<x>[^,;]+?),?\s+not\s+(?P<y>[^,;]+)$", re.I)
_MAX_CORRECTION_WORDS = 5
# "Maya's into space now", "Tom is at Google now": a statement with its own subject and
# verb, not a bare corrected value ("Anne", "Tom's birthday", "the 5th").
_CLAUSE_LIKE = re.compile(r"^\S+(?:'s\s+(?:into|in|at|on|from|not|now|still|just|also|so|very|"
                          r"really|always|never|a|an|the|going|been|got|doing|getting|\w+ing|"
                          r"\w+ly)|'re|\s+(?:is|are|was|were|has|have))\s+\S", re.I)
# Without "not Y" a correction names a value: a number, a date, a name.
_VALUE_LIKE = re.compile(r"\d|^[A-Z]|\b(?i:january|february|march|april|may|june|july|"
                         r"august|september|october|november|december)\b")
_ARTICLE_START = re.compile(r"^(?:a|an|the)\s+", re.I)


def _is_clause(text: str) -> bool:
    """Does ``text`` have a finite verb of its own ("the tender closes 19 June"), so it
    is news, not the value a correction gives ("Thursday", "all rust and c++ here")?"""
    pack = language_pack()
    if not isinstance(pack, EnglishPack):  # the rules here are English anyway
        return False
    return any(t.tag_ in ("VBZ", "VBP", "VBD", "MD") for t in pack.parse([text])[0])


def _cleaned(raw: str) -> tuple[str, str]:
    """``(raw, sentence)``: the sentence without fillers and a leading vocative; an ask
    to remember ("can u remember that ...") is the statement it asks to keep."""
    sentence = _TRAILING_FILLER.sub("", _LEADING_FILLER.sub("", raw)).strip(" ,.!-:")
    remember = _ASK_TO_REMEMBER.match(sentence)
    if remember:  # "can u remember that my wife's name is Ana": a statement
        raw = sentence = f"please remember that {remember.group('x').rstrip('?')}"
    if _VOCATIVE.match(sentence) and not sentence.startswith("I,"):
        sentence = _LEADING_FILLER.sub("", _VOCATIVE.sub("", sentence, count=1))
    return raw, sentence


def _a_question(raw: str, sentence: str) -> bool:
    """A question gives no fact, unless it asks for a standing habit ("could you always
    use metric units?")."""
    asks_a_habit = bool((m := _STANDING_QUESTION.match(sentence))
                        and (_STANDING.search(m.group("rest"))
                             or _HABIT_ASK.match(m.group("rest"))))
    return bool(raw.strip().endswith("?") or _QUESTION_START.match(sentence)) \
        and not asks_a_habit


def _before_farewell(raw: str, sentence: str) -> tuple[str, str] | None:
    """``(raw, sentence)`` without a farewell it ends in ("my sister lives in Lima, bye
    for now": the statement stays); None when nothing is left or the clause says the
    speaker is going."""
    farewell = _SIGN_OFF.search(sentence)
    if not farewell:
        return raw, sentence
    sentence = sentence[:farewell.start()].strip()
    if not sentence or _LEAVING.search(sentence):
        return None
    return sentence, sentence


# Words that say a sentence corrects what was said ("I told you wrong, X not Y"): with
# one, a "not" without its comma may be a correction too.
_CORRECTION_WORD = re.compile(r"\b(?:correct|mistake|wrong|typo|misspo|misspeak|misremember)",
                              re.I)


def _parsed_correction(raw: str) -> str | None:
    """"Sorry, I told you wrong, the physio is Wednesdays, not Thursdays": the correction
    the language pack reads in the parse ("It's Wednesdays, not Thursdays."), asked only
    of a sentence that says ", not", or "not" and a word of correction (the rest pays no
    parse here)."""
    if ", not " not in raw and not (" not " in raw and _CORRECTION_WORD.search(raw)):
        return None
    found = language_pack().corrections([raw])[0]
    return found.rstrip(".") if found else None


def correction_claim(raw: str, sentence: str) -> str | None:
    """``sentence`` as "It's X, not Y" (or "It's X") when it corrects what was just said,
    else None. Without a cue word ("actually", "sorry", ...) only "it's X, not Y" counts."""
    if not sentence or _SMALL_TALK.match(sentence):
        return None
    cued = bool(_CORRECTION_CUE.match(raw.strip()))
    while (cue := _CORRECTION_CUE.match(sentence)) and cue.group(0).lower() not in (
            "i mean", "i meant"):
        sentence = sentence[cue.end():].strip(" ,.:;!-")  # "My mistake, it's 41"
    values = _corrected_values(sentence, cued)
    if values is not None:  # "it's on Sunday actually": the value is Sunday
        values = (_TRAILING_CUE.sub("", _LEADING_PREP.sub("", values[0].strip())), values[1])
    if (values is None or not _a_corrected_value(*values, cued)) and cued:
        values = _value_first(sentence)
    if values is None or not _a_corrected_value(*values, cued):
        return None
    x, y = values
    return f"It's {x.strip()}, not {y.strip()}" if y else f"It's {x.strip()}"


# A preposition before a corrected value and a cue word after it are not the value.
_LEADING_PREP = re.compile(r"^(?:on|at|in)\s+(?=\S)", re.I)
_TRAILING_CUE = re.compile(r"[\s,]+(?:actually|instead|then|sorry|lol|haha|oops)$", re.I)


def _value_first(sentence: str) -> tuple[str, str | None] | None:
    """A cued correction whose value comes first and a remark after it ("no wait, it's 4
    Oct, I had last year's date in my head", "no sorry, 21 July, the 14 is when the
    school finishes", "typo, 1:24:57, so PB by 20s"): the value before the comma, when
    it is one (a number, a date, a name; no clause of its own)."""
    head = re.split(r"\s*[,;]\s*", sentence, maxsplit=1)[0].strip(" .!")
    if not head or head == sentence.strip(" .!") or re.search(r"(?i),\s*(?:and\s+)?not\b",
                                                              sentence):
        return None  # "it's a T14, not an X1, I mix them up": the pack reads "X, not Y"
    values = _corrected_values(head, True)
    if values is not None:
        return values
    if _VALUE_LIKE.search(head) and not _CLAUSE_LIKE.match(head) and not _is_clause(head):
        return head, None
    return None


def _corrected_values(sentence: str, cued: bool) -> tuple[str, str | None] | None:
    """``(X, Y)`` of "it's X, not Y" (Y None for "it's X"); a cued sentence may say only
    "X, not Y"."""
    m = _CORRECTION_BODY.match(sentence.strip(" .!"))
    if m and m.group("x2") and not cued and _is_clause(m.group("x2")):
        return None  # "Not appointed yet, the tender closes 19 June": a negation, then news
    if m:
        return (m.group("x") or m.group("x2") or m.group("x3"),
                m.group("y") or m.group("y2") or m.group("y3"))
    bare = _BARE_CORRECTION.match(sentence.strip(" .!")) if cued else None
    if bare and not _CLAUSE_LIKE.match(bare.group("x")):
        return bare.group("x"), bare.group("y")
    return None


def _a_corrected_value(x: str, y: str | None, cued: bool) -> bool:
    """Are X (and Y) short values, not the speaker's own clauses? Without "not Y" the
    sentence must be cued and X look like a value (a number, a date, a name)."""
    if not (cued or y) or len(x.split()) > _MAX_CORRECTION_WORDS or _FIRST_PERSON.search(x):
        return False
    if not y and not _VALUE_LIKE.search(_ARTICLE_START.sub("", x.strip())):
        return False  # "Actually, it's so beautiful": chat, not a corrected value
    return not (y and (len(y.split()) > _MAX_CORRECTION_WORDS or _FIRST_PERSON.search(y)))


_NAME = re.compile(r"^(?i:i'?m|i am|im|my name is|my name's|call me|this is)\s+"
                   r"(?P<v>[A-Z][\w\u00c0-\u024f'-]+)(?:\s*,\s*(?P<rest>.+))?$")
_NOT_NAMES = word_set("fine good sorry back here okay ok happy tired not so very really in on "
                      "at the a an from just still also now")
# "I'm Canadian", "I'm Jewish": capitalized, but who the speaker is, not their name.
_NOT_NAME_IDENTITIES = word_set("""american canadian mexican brazilian argentinian argentine
    chilean colombian peruvian venezuelan cuban puerto jamaican haitian british english
    scottish irish welsh french german italian spanish portuguese dutch belgian swiss
    austrian swedish norwegian danish finnish icelandic polish czech slovak hungarian
    romanian bulgarian greek turkish russian ukrainian belarusian serbian croatian bosnian
    albanian lithuanian latvian estonian georgian armenian chinese japanese korean
    vietnamese thai filipino filipina indonesian malaysian singaporean indian pakistani
    bangladeshi nepali sri iranian persian iraqi syrian lebanese israeli palestinian
    jordanian saudi emirati egyptian moroccan algerian tunisian nigerian ghanaian kenyan
    ethiopian somali ugandan tanzanian south australian aussie kiwi zealander jewish muslim
    catholic buddhist hindu sikh mormon protestant orthodox atheist agnostic latino latina
    latinx hispanic asian african european arab black white native indigenous deaf
    autistic adhd queer gay lesbian bi bisexual trans nonbinary""")
_HYPOTHETICAL = re.compile(r"\b(?:if|wish|would be|could be|suppose|imagine|someday)\b", re.I)


_ENDING = re.compile(r"\b(?:any ?more|any longer|no longer|no more|quit|stopped|gave up|given up|"
                     r"sold|switched|replaced|instead of|done|over|finished|completed|died)\b",
                     re.I)


# "Budget went up to 6000", "rent is now 900": a new amount, short but a change.
_NEW_AMOUNT = re.compile(r"\b(?:(?:went|gone|goes|go|is|was|has gone) (?:up|down)|increased|"
                         r"decreased|dropped|rose|risen|fell|fallen|raised|lowered|cut|"
                         r"(?:is|are) now)\s+(?:to\s+)?(?:about |around |roughly )?[£$€]?\d",
                         re.I)


# "I now freelance" (after _after_subject), "I freelance these days": a change of state.
_NOW_CHANGE = re.compile(r"^(?:i|we)\s+(?:now|currently|nowadays)\s+[a-z]|"
                         r"\b(?:now|nowadays|these days)$", re.I)


# "I don't have a car", "I never drive": a standing negative about the speaker, short
# but a fact (not "I don't know", "I don't think so", "I don't mind").
_NEGATED_HABIT = re.compile(
    r"^(?:i|we)\s+(?:don'?t|do not|never|can'?t|cannot)\s+(?!know|think|care|mind|remember|"
    r"understand|get|see|agree|mean|want|need|like|believe|feel|guess|recall)[a-z]+\b"
    r"(?!.*\b(?:it|that|this|them)\b)", re.I)
# A sentence opening with a name and its verb ("Biscuit hates the rain", "Maya's into
# space now"): a fact about someone the speaker knows.
_NAMED_SUBJECT = re.compile(r"^(?!(?:The|This|That|These|Those|It|There|Here|What|When|Where|Why|"
                            r"How|Who|Which|Some|Any|Every|Each|All|No|One|Our|My|Your|His|Her|"
                            r"Their|Its|If|So|But|And|Then|Now|Today|Yesterday|Tomorrow|Last|"
                            r"Next|Everyone|Everybody|Nobody|Someone)\b)[A-Z][a-z\u00e0-\u024f]+"
                            r"(?:'s|\s+(?:is|was|has|loves|likes|hates|lives|works|plays|wants|"
                            r"goes|started|moved|got|turned))\s+\S")
_META_REMARK = re.compile(r"^(?:that'?s|that is|this is|it'?s|it is)\s+(?:not\s+)?(?:what|how|"
                          r"why)\s+(?:i|we)\b", re.I)


# A pronoun pointing back at the clause before ("them", "it"): not a claim on its own.
# "these"/"those" before a noun are determiners: "I've known these friends for 4 years"
# says what it is about.
_ANAPHORA = re.compile(r"\b(?:them|it|that one|there|(?:these|those)(?=\s*(?:[,.;:!?]|$|"
                       r"\s+(?:are|were|is|was|who|which|that|of|in|on|for|with|and|to|too|"
                       r"ones|things)\b)))", re.I)
_OWN_SUBJECT = re.compile(r"^(?:i|i'm|i've|i'd|we|we're|we've|my|our)\b", re.I)


def _leans_back(claim: str) -> bool:
    """Does a later clause of a sentence lean on the one before ("my doctor said I don't
    need them")? Not one that opens with its own first-person statement and only mentions
    "there" in an aside after it ("I teach at St Anne's, been there eleven years")."""
    if _OWN_SUBJECT.match(claim):
        # only the claim's own first clause: in "I went to a workshop and it was great"
        # the "it" is the workshop it just named
        head = _FIRST_CLAUSE_END.split(claim, maxsplit=1)[0]
        return bool(_ANAPHORA.search(head))
    return bool(_ANAPHORA.search(claim))


# A sentence that ends in a farewell is leaving the conversation ("aight im off, laters",
# "gotta run, Pickle needs her walk, byeee"): what it says is about the next minutes.
_SIGN_OFF = re.compile(r"[,;-]\s*(?:(?:ok(?:ay)?|right|anyway|aight)\s+)?(?:b+y+e+\w*|laters|"
                       r"cya|see ya|see you(?: soon| later| tomorrow)?|ttyl|gtg|g2g|ciao|"
                       r"cheerio|hasta luego|adios|night night|ta-?ra|talk soon)"
                       r"(?: for now)?[\s.!x]*$", re.I)
# ... and a clause before it that says the speaker is going: the whole sentence is.
_LEAVING = re.compile(r"\b(?:(?:i'?m|im|i am|am) (?:\w+ )?off|(?:gotta|got to|have to|has to|"
                      r"must|need to|needs to) (?:go|run|dash|fly|head off)|heading (?:out|off)"
                      r"|off (?:to|now))\b", re.I)
# "..., to be honest": a closing hedge of manner, not part of the claim.
_TRAILING_FILLER = re.compile(r",?\s*\b(?:to be honest|tbh|honestly|to be fair|haha|lol|by the way|"
                              r"btw|fyi|just so you know|sadly|unfortunately|luckily|"
                              r"thankfully)"
                              r"[\s.!]*$", re.I)


_FRONTED_ADVERB = re.compile(r"^(?P<adv>now|currently|nowadays|these days),?\s+"
                             r"(?P<subj>i'm|i am|i've|i have|i|we're|"
                             r"we are|we)\s+", re.I)


def _after_subject(claim: str) -> str:
    """A fronted time adverb after the subject: "Now I work at Bosch" -> "I now work at
    Bosch" (so the fact reads, and is compared, with its subject first)."""
    m = _FRONTED_ADVERB.match(claim)
    if not m:
        return claim
    adv = "now" if m.group("adv").lower() == "these days" else m.group("adv").lower()
    return f"{m.group('subj')} {adv} {claim[m.end():]}"


def _with_subject(sentence: str) -> str:
    """Chat drops the subject: "Gonna continue my edu", "Moved to Porto", "Next goal: X"."""
    if _SUBJECTLESS.match(sentence):
        return f"I'm {sentence[:1].lower()}{sentence[1:]}"
    if _SUBJECTLESS_TASTE.match(sentence):  # "dont like verbose answers", "love the new house"
        return f"I {sentence[:1].lower()}{sentence[1:]}"
    if _GOTTA.match(sentence):  # "Gotta check the floor" -> "I have to check the floor"
        return _GOTTA.sub("I have to ", sentence, count=1)
    if _SUBJECTLESS_PERFECT.match(sentence):
        return f"I have {sentence[:1].lower()}{sentence[1:]}"
    if _SUBJECTLESS_PAST.match(sentence):
        return f"I {sentence[:1].lower()}{sentence[1:]}"
    if _BODY_PART_STATE.match(sentence):
        return f"My {sentence[:1].lower()}{sentence[1:]}"
    if _NEXT_GOAL.match(sentence):
        return "My goal is to " + _NEXT_GOAL.sub("", sentence)
    pack = language_pack()
    if isinstance(pack, EnglishPack) and pack.dropped_progressive([sentence])[0]:
        return f"I'm {sentence[:1].lower()}{sentence[1:]}"  # "Learning Spanish on Duolingo"
    return sentence


def _listener_aside(sentence: str) -> bool:
    """The speaker's own statement that names the listener only in an aside ("I read the
    book you recommended"): a fact about the speaker, not about the listener."""
    pack = language_pack()
    return isinstance(pack, EnglishPack) and pack.listener_asides([sentence])[0]


def _names_things(sentence: str) -> bool:
    """A sentence opening with a pronoun that still names what it says something of
    ("It was a poetry reading where people shared their stories"): not vague."""
    pack = language_pack()
    return isinstance(pack, EnglishPack) and pack.name_things([sentence])[0]


def _is_noise(sentence: str) -> bool:
    """Greetings, small talk, questions, requests and sentences about the listener."""
    if sentence.endswith("?") or _QUESTION_START.match(sentence):
        return True
    if _SMALL_TALK.match(sentence) or _REQUEST.match(sentence) or _META_REMARK.match(sentence):
        return True
    if _ONE_OFF_TASK.match(sentence) and not _STANDING.search(sentence):
        return True
    if _SECOND_PERSON.search(sentence) and not _listener_aside(_with_subject(sentence)):
        return True
    if (_VAGUE_START.match(sentence) and not _FIRST_SUBJECT.search(sentence)
            and not _CORRECTION.search(sentence) and not _names_things(sentence)):
        return True
    return len(sentence.split()) <= _REACTION_WORDS and bool(_REACTION.search(sentence))


# A main clause reporting something ended ("Sam quit smoking last month, trying to stay
# off it"): the trailing clause's aim does not make the fact a goal.
_ENDED_MAIN = re.compile(r"^[^,;]*\b(?:quit|stopped|gave up|has given up|finished|completed|"
                         r"sold|retired|ended|cancel+ed|kicked)\b", re.I)


def _kind(sentence: str) -> Kind:
    main = re.split(r"[,;]", sentence, maxsplit=1)[0]
    ended = bool(_ENDED_MAIN.match(sentence))
    for kind, pattern in _KIND_CUES:
        if kind is Kind.GOAL and ended and not pattern.search(main):
            continue
        if pattern.search(sentence):
            return kind
    return Kind.KNOWLEDGE


def _importance(sentence: str, kind: Kind, explicit: bool, timed: bool) -> int:
    score = 5
    # Told about someone named ("Maya's into space now", "Biscuit hates the rain"): about
    # the user's people, not a passing remark, so the idle rule does not sweep it away.
    named = not explicit and bool(_NAMED_SUBJECT.match(sentence))
    score += 1 if named else 0
    score += 2 if _IMPORTANT.search(sentence) else 0
    score += 1 if _EMOTIONAL.search(sentence) else 0
    score += 1 if explicit else 0
    score += 1 if kind is Kind.GOAL or timed else 0
    score -= 2 if kind is Kind.TEMPORARY else 0
    score -= 1 if _HEDGE.search(sentence) else 0
    score -= 1 if len(content_terms(sentence)) < 4 and not named else 0
    return max(1, min(10, score))


class OfflineExtractor(Metered):
    """Deterministic rule-based extraction; one "call" per batch of turns.

    Only user turns give facts unless ``allow_assistant`` is set; tool and
    system turns never do (their text is untrusted or not about the user).
    """

    def __init__(self, allow_assistant: bool = False, min_terms: int = 2,
                 temporary_days: float = 3.0) -> None:
        super().__init__()
        self.allow_assistant = allow_assistant
        self.min_terms = min_terms
        self.temporary_days = temporary_days

    def _allowed(self, episode: Episode) -> bool:
        if episode.role is Role.USER:
            return True
        return episode.role is Role.ASSISTANT and self.allow_assistant

    def extract(self, episodes: Sequence[Episode]) -> list[ExtractedFact]:
        """Facts of all allowed ``episodes``, in turn and sentence order."""
        self.count_call()
        facts: list[ExtractedFact] = []
        for episode in episodes:
            if self._allowed(episode):
                facts.extend(self.extract_turn(episode))
        return facts

    def extract_turn(self, episode: Episode) -> list[ExtractedFact]:
        """Facts of one turn (no role check): one per claim, requests as preferences."""
        default = "User" if episode.role is Role.USER else "Assistant"
        name = episode.speaker.strip() or default
        seen: set[str] = set()
        out: list[ExtractedFact] = []
        for raw in _with_verdicts(split_sentences(chat_spelled_out(episode.text))):
            raw, sentence = _cleaned(without_listener_tags(raw))
            if not sentence or _a_question(raw, sentence):
                continue
            kept = _before_farewell(raw, sentence)
            if kept is None:
                continue
            raw, sentence = kept
            correction = _parsed_correction(raw) or correction_claim(raw, sentence)
            if correction is not None:
                fact = self._fact(correction, name, episode, explicit="not" in correction,
                                  kind=Kind.KNOWLEDGE, min_terms=1, timeless=True,
                                  said_by_self=True)
                if fact is not None and fold(fact.text) not in seen:
                    seen.add(fold(fact.text))
                    out.append(fact)
                continue
            said_by_self = bool(_FIRST_PERSON.search(sentence))
            for n, claim in enumerate(split_claims(sentence)):
                if n and _leans_back(claim) and not _PLEASE.search(claim):
                    continue  # "..., my doctor said I don't need them": leans on the clause before
                for fact in self._claim_facts(claim, name, episode, said_by_self):
                    if fold(fact.text) not in seen and not _ONLY_A_SECRET.search(fact.text):
                        seen.add(fold(fact.text))
                        out.append(fact)
        return out

    def _claim_facts(self, claim: str, name: str, episode: Episode, said_by_self: bool
                     ) -> list[ExtractedFact]:
        claim = _TRAILING_FILLER.sub("", _LEADING_FILLER.sub("", claim)).strip(" ,.!-:")
        claim = _after_subject(_PREAMBLE.sub("", claim))
        if not claim:
            return []
        request = request_as_fact(claim, name)
        if request is not None:
            if request.startswith(name + " "):  # a preference about the assistant's answers
                fact = self._fact(request, name, episode, explicit=True,
                                  kind=Kind.PREFERENCE, min_terms=1)
            else:  # "please remember that ...": the statement itself, stated explicitly
                fact = self._fact(request, name, episode, explicit=True, min_terms=1)
            return [fact] if fact is not None else []
        if _is_noise(claim):
            return []
        named = _NAME.match(claim)
        if (named and named.group("v").lower() not in _NOT_NAMES
                and fold(named.group("v")) not in _NOT_NAME_IDENTITIES
                and not named.group("v").lower().endswith(("ese", "ish"))):
            facts = [self._fact(f"{name}'s name is {named.group('v')}", name, episode,
                                explicit=True, min_terms=1)]
            if named.group("rest"):
                facts.append(self._fact(f"I'm {named.group('rest')}", name, episode,
                                        explicit=True))
            return [f for f in facts if f is not None]
        fact = self._fact(claim, name, episode, explicit=None, said_by_self=said_by_self)
        return [fact] if fact is not None else []

    def _fact(self, sentence: str, name: str, episode: Episode, *, explicit: bool | None,
              kind: Kind | None = None, min_terms: int | None = None,
              said_by_self: bool = False, timeless: bool = False) -> ExtractedFact | None:
        sentence = _with_subject(sentence)
        first_person = bool(_FIRST_PERSON.search(sentence))
        needed = self._terms_needed(sentence, first_person, said_by_self or bool(explicit),
                                    min_terms)
        terms = [t for t in content_terms(sentence) if t not in _ADVERB_STEMS]
        if len(terms) < needed:
            return None
        if explicit is None:
            vouched = first_person or said_by_self or bool(_NAMED_SUBJECT.match(sentence))
            explicit = episode.role is Role.USER and _asserted(sentence) and (
                vouched or _says_enough(sentence))
        now = episode.timestamp
        # A correction's date is the corrected fact's value, not a deadline of its own.
        timing = TimeInfo(rewritten=sentence) if timeless else resolve(sentence, now)
        said = resolve_first_person(timing.rewritten, name,
                                    past=timing.happened is not None).rstrip(" ,;:-")
        kind = kind or _kind(said)
        text = _fact_text(said)
        expires_at = timing.deadline
        if kind is Kind.TEMPORARY and expires_at is None:
            expires_at = now + timedelta(days=self.temporary_days)
        kind = _timed_kind(kind, timing, now, timedelta(days=self.temporary_days))
        valid_from, valid_until = _validity(timing)
        return ExtractedFact(
            text=text,
            kind=kind,
            importance=_importance(sentence, kind, explicit, timing.deadline is not None),
            explicit=explicit,
            source=episode.id,
            valid_from=valid_from,
            valid_until=valid_until,
            expires_at=expires_at,
            relation=relation_for(text),
        )

    def _terms_needed(self, sentence: str, first_person: bool, vouched: bool,
                      min_terms: int | None) -> int:
        """How many content terms a claim needs to be a fact. ``vouched``: said by the
        speaker about themselves or explicitly."""
        needed = self.min_terms if min_terms is None else min_terms
        # Third-person chatter needs more substance than a first-person statement.
        if not (first_person or vouched):
            # Someone named ("Biscuit hates the rain") is a subject; "It was nice" is not.
            needed += 1 if _NAMED_SUBJECT.match(sentence) else 2
        if _ENDING.search(sentence) or _NEW_AMOUNT.search(sentence) or (first_person and (
                _NOW_CHANGE.search(sentence) or _NEGATED_HABIT.search(sentence))):
            # "I don't do salsa anymore", "Now I freelance": short, but a change; a bare
            # "Done." names nothing that changed.
            needed = 1 if first_person or vouched else 2
        return needed


def _asserted(sentence: str) -> bool:
    """A plain assertion is an explicit statement (seed 000: the user's own word stands
    in for a second episode); hedges and hypotheticals are not."""
    return not _HEDGE.search(sentence) and not _HYPOTHETICAL.search(sentence)


_THINGS_OF_A_STATEMENT = 2
# A value said to hold from now: "eight words max now, not ten", "quarterly from now on".
_CURRENT_VALUE = re.compile(r"\b(?:from now on|going forward|from here on|these days|nowadays|"
                            r"now|any ?more|no longer)\b|,\s*not\s+[\w£$€]", re.I)


def _says_enough(sentence: str) -> bool:
    """Does a sentence about no one (or with its "I" dropped) say enough to be a
    statement of the user's world: a value said to hold now ("investor updates go
    quarterly from now on"), or two things named ("Site start confirmed for 17 August",
    "Features stay at 1,200"), not small talk ("Bit of a slow one here lately", "Docs are
    done")?"""
    if _VAGUE_START.match(sentence):
        return False  # "He's a chef in Utrecht now": whose "he", this sentence does not say
    if _CURRENT_VALUE.search(sentence):
        return True
    pack = language_pack()
    if not isinstance(pack, EnglishPack):  # the rules here are English anyway
        return False
    return pack.things_named([sentence])[0] >= _THINGS_OF_A_STATEMENT


# Degree words that only stress what follows ("so powerful", "really enjoyed", "super
# excited"): a fact says the same without them, in fewer stored words.
_INTENSIFIER = re.compile(
    r"(?<=[a-z] )(?:really|totally|truly|absolutely|definitely|super|so)\s+"
    r"(?!(?:much|many|far|that|long|on|as|to|i|we|he|she|they|it|you|the|a|an|my|his|her|"
    r"their|our|what|how|if|and|but|or|then|now|too|also|is|was|are|were|do|does|did|"
    r"will|would|could|can)\b)(?=[a-z])")
_NEGATED_BEFORE = re.compile(r"(?:\bnot|n't|\bnever)\s+$", re.I)


def _without_intensifiers(text: str) -> str:
    """``text`` without degree words that only stress an adjective or a verb; one after a
    negation stays ("not really into jazz" is not "not into jazz")."""
    return _INTENSIFIER.sub(
        lambda m: m.group(0) if _NEGATED_BEFORE.search(text, 0, m.start()) else "", text)


def _fact_text(text: str) -> str:
    """A claim as a fact's text: one sentence ending in a full stop, bounded, without
    mere intensifiers."""
    text = _without_intensifiers(text)
    if not text.endswith((".", "!")):
        text += "."
    return text.replace("!", ".")[:_MAX_FACT_CHARS]


def _timed_kind(kind: Kind, timing: TimeInfo, now: datetime, temporary: timedelta) -> Kind:
    """The kind a fact's time phrases make it: something that happened is an event, a
    state with a far deadline a plan, a statement with a deadline an event or a goal."""
    if timing.happened is not None and kind is Kind.KNOWLEDGE:
        kind = Kind.EVENT
    if kind is Kind.TEMPORARY and timing.deadline is not None and timing.happened is None \
            and timing.deadline - now > temporary:
        kind = Kind.GOAL  # "off to Lisbon in May": a plan, not a state of the moment
    if timing.deadline is not None and kind in (Kind.KNOWLEDGE, Kind.PREFERENCE):
        kind = Kind.EVENT if timing.happened else Kind.GOAL
    return kind


def _validity(timing: TimeInfo) -> tuple[datetime | None, datetime | None]:
    """``(valid_from, valid_until)``: from when it happened until its deadline; a start
    after the end is dropped."""
    valid_from, valid_until = timing.happened, timing.deadline
    if valid_from is not None and valid_until is not None and valid_until < valid_from:
        valid_from = None
    return valid_from, valid_until
