"""A medicine's dose: "takes 5mg of amlodipine", "is on 500mg of metformin", "the
consultant has increased the amlodipine to 10mg" -> ``dose:amlodipine`` = ``10mg`` of
the one who takes it. The attribute is single-valued per medicine
(:data:`memcore.core.frames.SINGLE_VALUED_PREFIXES`), so a new dose retires the old one
and another medicine's dose never does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spacy.tokens import Token

# Units a dose is given in.
UNITS = frozenset({"mg", "mcg", "µg", "g", "ml", "units", "unit", "iu", "milligrams",
                   "micrograms", "puffs", "tablets", "tablet"})
# Verbs that state a dose taken ("takes 5mg of X", "is on 5mg of X", "put her on ...").
_TAKING = frozenset({"take", "be", "put", "start", "prescribe", "give"})
# Verbs that change a dose ("increased the amlodipine to 10mg").
_CHANGING = frozenset({"increase", "raise", "up", "reduce", "lower", "cut", "drop", "change",
                       "double", "halve", "bump", "adjust"})
# Who changes a dose: the patient's carers ("Ann's consultant has increased ...").
CARERS = frozenset({"doctor", "consultant", "gp", "nurse", "specialist", "psychiatrist",
                    "cardiologist", "diabetologist", "pharmacist", "surgeon", "team"})


def _amount(unit: Token) -> str | None:
    """"5mg" from the unit and its number, or None without a number."""
    number = next((c for c in unit.children if c.dep_ == "nummod" and c.like_num), None)
    if number is None:
        return None
    return f"{number.text}{unit.lower_}" if number.i + 1 == unit.i and not \
        number.whitespace_ else f"{number.text} {unit.lower_}"


def _of_medicine(unit: Token) -> str | None:
    """The medicine in "<amount> of <medicine>"."""
    for prep in unit.children:
        if prep.dep_ == "prep" and prep.lower_ == "of":
            drug = next((c for c in prep.children if c.dep_ == "pobj"), None)
            if drug is not None and drug.pos_ in ("NOUN", "PROPN"):
                return drug.lower_
    return None


def dose(root: Token) -> tuple[str, str] | None:
    """``(medicine, amount)`` the clause ``root`` states or sets, or None."""
    lemma = root.lemma_.lower()
    if lemma in _TAKING:
        return _stated(root)
    if lemma in _CHANGING:
        return _set_to(root)
    return None


def _stated(root: Token) -> tuple[str, str] | None:
    """"takes 5mg of amlodipine", "is on 500mg of metformin"."""
    for unit in root.subtree:
        if unit.lower_ in UNITS and unit.head.i != unit.i:
            drug, amount = _of_medicine(unit), _amount(unit)
            if drug is not None and amount is not None:
                return drug, amount
    return None


def _set_to(root: Token) -> tuple[str, str] | None:
    """"increased the amlodipine to 10mg"."""
    drug = next((c for c in root.children if c.dep_ == "dobj"
                 and c.pos_ in ("NOUN", "PROPN")), None)
    to = next((c for c in root.children if c.dep_ == "prep" and c.lower_ == "to"), None)
    if drug is None or to is None:
        return None
    target = next((c for c in to.children if c.dep_ == "pobj" and c.lower_ in UNITS), None)
    amount = _amount(target) if target is not None else None
    return (drug.lower_, amount) if amount is not None else None


def patient(subject: str, possessed: Token | None, root: Token) -> str | None:
    """Who takes the dose: the subject, or the one whose carer set it ("Ann's consultant
    increased ..." -> "ann"; "the doctor put Ann on ..." -> "ann"); None when unknown."""
    if possessed is None:
        if subject in CARERS:
            carer = next((c for c in root.children if c.dep_ == "nsubj"), None)
            owner = next((c for c in carer.children if c.dep_ == "poss"), None) \
                if carer is not None else None
            if owner is not None:  # "Ola's GP" (a name-like carer the tagger calls PROPN)
                return owner.lower_.removesuffix("'s")
            put = next((c for c in root.children if c.dep_ == "dobj"
                        and c.pos_ in ("PROPN", "PRON")), None)
            return put.lower_ if put is not None else None
        return subject
    return subject if possessed.lemma_.lower() in CARERS else None
