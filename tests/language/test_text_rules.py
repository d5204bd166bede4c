"""The core reads text only through a language's TextRules: English rules come from the
English pack, and ``MEMCORE_LANGUAGE=none`` gives rules that know no language (a user
writing in another language gets no English supersession, stemming or merge guard)."""

from __future__ import annotations

import ast
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memcore.adapters import build_models
from memcore.client.client import Client
from memcore.consolidation import consolidate
from memcore.core.config import ConsolidationConfig, Settings
from memcore.core.models import Episode, Role, Status
from memcore.core.text_rules import PLAIN, PlainText, TextRules
from memcore.index import retrieval
from memcore.ingest.write_path import IngestPipeline
from memcore.language import NoLanguage, language_pack, text_rules
from memcore.language.english.compare import relation_for
from memcore.language.english.text_rules import ENGLISH_TEXT
from memcore.store import MemoryStore
from tests.support.helpers import JoinMerger, hours, make_memory

ROOT = Path(__file__).resolve().parents[2]
T0 = datetime(2026, 3, 1, tzinfo=UTC)


def test_both_rule_sets_meet_the_protocol() -> None:
    assert isinstance(PLAIN, TextRules) and isinstance(ENGLISH_TEXT, TextRules)
    assert text_rules("none") is PLAIN and text_rules("english") is ENGLISH_TEXT
    assert NoLanguage.text_rules is PLAIN
    assert language_pack("english").text_rules is ENGLISH_TEXT


def test_an_unknown_language_names_the_setting() -> None:
    try:
        text_rules("klingon")
    except ValueError as exc:
        assert "language" in str(exc) and "klingon" in str(exc)
    else:  # pragma: no cover - the assertion below reports it
        raise AssertionError("an unknown language was accepted")


def test_plain_rules_know_words_of_any_script_and_no_grammar() -> None:
    plain = PlainText()
    assert plain.terms("Ich wohne in Köln, 北京 too") == ["ich", "wohne", "in", "köln",
                                                         "北京", "too"]
    assert plain.query_terms("wohnst du?") == {"wohnst": 1.0, "du": 1.0}
    assert plain.canonical_terms("Zimmer 12") == frozenset({"zimmer"})
    assert plain.conflict("Zimmer 12", "Zimmer 14")
    assert not plain.conflict("Ana vive en Lisboa.", "Ana no vive en Lisboa.")
    assert not plain.may_change("Ana se mudó a Oporto.")
    assert plain.supersessions(["a", "b"], ["Ana vive en Lisboa.", "Ana se mudó a Oporto."],
                               [1.0, 2.0]) == []


def test_english_rules_stem_and_expand_plain_ones_do_not() -> None:
    english, plain = retrieval.TextIndex(rules=ENGLISH_TEXT), retrieval.TextIndex()
    for index in (english, plain):
        index.add(["m1"], ["Sam moved to Porto and adopted two cats."])
    assert [i for i, _ in english.search("pets", 5)] == ["m1"]  # "cats" is a pet
    assert [i for i, _ in english.search("moving", 5)] == ["m1"]  # stemmed
    assert plain.search("pets", 5) == [] and plain.search("moving", 5) == []
    assert [i for i, _ in plain.search("Porto", 5)] == ["m1"]


def _lisbon_then_porto() -> list:  # type: ignore[type-arg]
    return [make_memory(text, vector, explicit=True, last_used_h=at, relation=relation_for(text))
            for text, vector, at in (("Ann lives in Lisbon.", [1.0, 0.0], 0),
                                     ("Ann moved to Porto.", [0.0, 1.0], 24))]


def test_a_pass_applies_english_change_rules_only_with_the_english_pack() -> None:
    cfg = ConsolidationConfig(min_confidence=0.0)
    english = consolidate(_lisbon_then_porto(), hours(48), cfg, JoinMerger(), rules=ENGLISH_TEXT)
    plain = consolidate(_lisbon_then_porto(), hours(48), cfg, JoinMerger(), rules=PLAIN)
    status = {m.text: m.status for m in english.memories}
    assert status["Ann lives in Lisbon."] is Status.SUPERSEDED
    assert {m.text: m.status for m in plain.memories}["Ann lives in Lisbon."] is Status.ACTIVE


def test_the_core_holds_no_language_pack_and_no_english_module() -> None:
    core = ROOT / "memcore" / "core"
    assert not (core / "compare.py").exists() and not (core / "lexicon.py").exists()
    for path in core.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                assert not node.module.startswith("memcore.language"), path


def test_a_namespace_without_a_language_masks_by_shape_and_searches_by_word(
        redis_url: str) -> None:
    settings = Settings(redis_url=redis_url, openai_api_key=None, language="none")
    store = MemoryStore.from_url(redis_url)
    pipeline = IngestPipeline(store, build_models(settings), settings)
    text = "Vivo en Lisboa con mi gata Luna. Tarjeta 4111 1111 1111 1111, contraseña: Zq7!"
    pipeline.ingest("es", [Episode(id="e1", namespace="es", role=Role.USER, speaker="Ana",
                                   text=text, timestamp=T0)])
    stored = " ".join(m.text for m in store.records.iter_memories("es"))
    assert "Lisboa" in stored and "4111" not in stored  # a card has a shape in any language
    client = Client(settings=settings)
    try:
        assert any("Lisboa" in h.memory.text for h in client.search("es", "Lisboa", k=3))
    finally:
        client.close()


@pytest.mark.parametrize(("text", "value", "rest"), [
    ("Ola is a midwife at St. Luke's in Bath.", "midwife", "Ola is a midwife."),
    ("Ola works as a sous chef at Dishoom, and she loves it.", "sous chef",
     "Ola works as a sous chef, and she loves it."),
    ("Ola lives in Hove with her partner Tom.", "hove", "Ola lives in Hove."),
    ("Ola teaches maths.", "math", None),  # nothing attached after the value
    ("Ola works at Lidl.", "aldi", None),  # the value is not in the text
])
def test_a_fact_cut_down_to_its_own_value(text: str, value: str, rest: str | None) -> None:
    assert ENGLISH_TEXT.reduced(text, value) == rest


def test_an_answer_ends_with_what_its_answerer_ended() -> None:
    """'Asked "...", Ola answered: a 2015 Golf.' is Ola's fact: "Ola sold the Golf" ends
    it; someone else's sale does not."""
    answer = 'Asked "What do you drive?", Ola answered: a 2015 Golf.'
    sold = ENGLISH_TEXT.supersessions(["a", "b"], [answer, "Ola sold the Golf."], [1.0, 2.0])
    assert [(old, new) for old, new, _ in sold] == [("a", "b")]
    other = ENGLISH_TEXT.supersessions(["a", "b"], [answer, "Tom sold the Golf."], [1.0, 2.0])
    assert other == []
