"""Community reports made from one community's input: the extractive reporter's title, terms
and exact spans, input hashes keyed by what a report reads, and the LLM reporter's bounded,
fenced input and its reply turned into points citing chunks."""

from __future__ import annotations

import json
import re

from ragwright.graph.reports import ExtractiveReporter, community_inputs, readable
from ragwright.graph.snapshot import build_snapshot
from ragwright.models import Chunk
from ragwright.models.communities import Community, CommunityReport
from ragwright.models.graph import ChunkFacts, Mention, Relation, TypedFact
from ragwright.pipeline.graph.llm_reports import LLMReporter
from ragwright.testing.llm import ScriptedLLM

TEXTS = {
    "c1": "Ada Lovelace wrote notes on the Analytical Engine. The weather was cold.",
    "c2": "Charles Babbage designed the Analytical Engine. Ada Lovelace admired Charles Babbage.",
    "c3": "Charles Babbage lived in London.",
}


def _facts(chunk_id: str, text: str) -> ChunkFacts:
    names = ["Ada Lovelace", "Analytical Engine", "Charles Babbage", "London"]
    mentions = []
    for name in names:
        start = text.find(name)
        while start >= 0:
            mentions.append(Mention(start, start + len(name), name, name.casefold(), "X"))
            start = text.find(name, start + 1)
    keys = sorted({m.key for m in mentions})
    relations = tuple(Relation(a, b, "co", 1.0) for i, a in enumerate(keys) for b in keys[i + 1 :])
    return ChunkFacts(chunk_id, "test", tuple(mentions), relations)


def _chunk(chunk_id: str) -> Chunk:
    text = TEXTS[chunk_id]
    return Chunk(chunk_id, "doc", int(chunk_id[1]), text, 0, len(text), {})


SNAPSHOT = build_snapshot(_facts(c, t) for c, t in TEXTS.items())
COMMUNITY = Community(0, 0, None, ("ada lovelace", "analytical engine", "charles babbage"))
CHUNKS = {c: _chunk(c) for c in TEXTS}


def test_the_extractive_report_quotes_its_most_central_sentences() -> None:
    [item] = community_inputs(SNAPSHOT, [COMMUNITY])
    # Weighted degree inside the community (ties: mentions, then key); chunks by the
    # centrality of the members they name.
    assert [key for key, _, _ in item.members] == [
        "ada lovelace",
        "analytical engine",
        "charles babbage",
    ]
    assert item.chunk_ids == ("c2", "c1", "c3")
    report = ExtractiveReporter(max_points=3).report(item, CHUNKS)
    assert report.title == "Ada Lovelace"  # the topic: its most central entity, not a list
    for point in report.points:
        assert CHUNKS[point.chunk_id].text[point.start : point.end] == point.text
    assert "The weather was cold." not in [p.text for p in report.points]  # names no member
    # Coverage first: the sentence naming the two most central members, then the one naming
    # the third, then (three sentences at least) the most central of the rest.
    assert [p.text for p in report.points] == [
        "Ada Lovelace wrote notes on the Analytical Engine.",
        "Charles Babbage designed the Analytical Engine.",
        "Ada Lovelace admired Charles Babbage.",
    ]
    assert report.summary == " ".join(p.text for p in report.points)
    assert report.terms == ("wrote", "notes", "designed", "admired")


def test_the_input_hash_follows_the_members_and_chunks() -> None:
    reporter = ExtractiveReporter()
    [item] = community_inputs(SNAPSHOT, [COMMUNITY])
    [same] = community_inputs(build_snapshot(_facts(c, t) for c, t in TEXTS.items()), [COMMUNITY])
    fewer = build_snapshot(_facts(c, t) for c, t in TEXTS.items() if c != "c1")
    [changed] = community_inputs(fewer, [COMMUNITY])
    assert reporter.digest(item) == reporter.digest(same)
    assert reporter.digest(item) != reporter.digest(changed)
    assert reporter.digest(item) != ExtractiveReporter(max_points=2).digest(item)
    assert reporter.digest(item) != LLMReporter(ScriptedLLM()).digest(item)


def test_the_llm_reporter_bounds_and_fences_its_input_and_cites_chunks() -> None:
    reply = {
        "title": "The Analytical Engine",
        "summary": "Babbage designed it; Lovelace wrote on it.",
        "findings": [
            {"text": "Babbage designed the engine.", "sources": [1]},
            {"text": "Invented.", "sources": [9]},  # names no source: dropped
        ],
    }
    llm = ScriptedLLM(json.dumps(reply))
    [item] = community_inputs(SNAPSHOT, [COMMUNITY])
    report = LLMReporter(llm, max_input_chars=90).report(item, CHUNKS)
    prompt = llm.calls[0][-1].content
    first = CHUNKS[item.chunk_ids[0]]
    assert "BEGIN SOURCE 1" in prompt and "BEGIN SOURCE 2" not in prompt  # 90 chars: one chunk
    assert first.text in prompt and llm.options[0]["json_mode"] is True
    assert (report.title, report.summary) == (reply["title"], reply["summary"])
    [point] = report.points
    assert (point.text, point.chunk_id, point.end) == (
        "Babbage designed the engine.",
        first.id,
        len(first.text),
    )
    assert report.chunk_ids == (first.id,)


def test_an_llm_reply_that_is_not_json_leaves_a_titled_report_without_points() -> None:
    [item] = community_inputs(SNAPSHOT, [COMMUNITY])
    report = LLMReporter(ScriptedLLM("no json here")).report(item, CHUNKS)
    assert report.points == () and report.title == ", ".join(n for _, n, _ in item.members[:3])


def test_a_summary_quotes_whole_prose_sentences_never_code_or_table_rows() -> None:
    for quoted in (
        "Ada Lovelace wrote notes on the Analytical Engine.",
        "The `bm25` mode ranks chunks with SQLite FTS5 and Porter stemming.",
    ):
        assert readable(quoted), quoted
    for rejected in (
        "| mode | SQLite nDCG@10 | PostgreSQL nDCG@10 |",
        "|---|---|\n| bm25 | 0.6859 |",
        "ragwright ingest docs --index kb --graph",
        "```python\nfrom ragwright import Index\n```",
        "## Search modes",
        "- Booleans are true and false.",
        "analytical engine was designed by him.",  # starts mid-sentence
        "Charles Babbage designed the Analytical Engine and",  # no end
        "Run `kb.graph.build(extractor='spacy', noun_chunks=True)` now.",  # mostly code
        "It was designed by Charles Babbage.",  # what "it" is, the sentence before said
        "Without it, the Analytical Engine fails.",
        "This reads every supported file under the folder.",
        'Oracle database?" scores 5.1 against "The index can be kept in PostgreSQL."',  # cut
        "He called it “the engine of the future.",  # a quotation opened, never closed
    ):
        assert not readable(rejected), rejected


def test_a_report_has_a_topic_title_three_to_six_sentences_and_key_facts() -> None:
    texts = {
        "c1": "| Ada Lovelace | Charles Babbage |\n|---|---|\n"
              "Ada Lovelace wrote notes on the Analytical Engine. She published them in 1843.",
        "c2": "Charles Babbage designed the Analytical Engine.\n```\nengine = Engine('Babbage')\n"
              "```\nAda Lovelace admired Charles Babbage. Charles Babbage lived in London.",
        "c3": "The Analytical Engine was never built. Ada Lovelace met Charles Babbage in 1833.",
    }  # fmt: skip
    chunks = {c: Chunk(c, "doc", int(c[1]), t, 0, len(t), {}) for c, t in texts.items()}
    snapshot = build_snapshot(_facts(c, t) for c, t in texts.items())
    facts = [TypedFact("charles babbage", "designed", "analytical engine"),
             TypedFact("ada lovelace", "wrote notes on", "analytical engine"),
             TypedFact("charles babbage", "lived in", "london")]  # fmt: skip
    [item] = community_inputs(snapshot, [COMMUNITY], facts)
    report = ExtractiveReporter().report(item, chunks)
    assert report.title in ("Ada Lovelace", "Analytical Engine", "Charles Babbage")
    assert 3 <= len(report.points) <= 6
    for point in report.points:
        assert chunks[point.chunk_id].text[point.start : point.end] == point.text
        assert readable(point.text) and "|" not in point.text and "Engine(" not in point.text
    # London is no member: the fact naming it is not this community's.
    assert set(report.facts) == {
        ("Charles Babbage", "designed", "Analytical Engine"),
        ("Ada Lovelace", "wrote notes on", "Analytical Engine"),
    }
    again = CommunityReport.from_json(0, "extractive", report.input_hash, report.to_json())
    assert again == report


def test_key_facts_are_plain_one_per_pair_best_supported_first_and_at_most_three() -> None:
    text = "Ann met Bob. Ann saw Bob. Bob wrote to Cal. Cal knew Dee. Ann and Dee talked."
    names = ["Ann", "Bob", "Cal", "Dee"]
    mentions = tuple(Mention(text.find(n), text.find(n) + 3, n, n.casefold(), "X") for n in names)
    # Support (the pair's edge weight): bob–cal 3, ann–bob 2, cal–dee 1.5, ann–dee 1.
    weights = {("bob", "cal"): 3.0, ("ann", "bob"): 2.0, ("cal", "dee"): 1.5, ("ann", "dee"): 1.0}
    relations = tuple(Relation(a, b, "co", w) for (a, b), w in weights.items())
    snapshot = build_snapshot([ChunkFacts("c1", "test", mentions, relations)])
    facts = [
        TypedFact("ann", "in in", "dee"),  # parse debris: never a key fact
        TypedFact("bob", "reads text see [", "cal"),
        TypedFact("cal", "text ms ms ms", "dee"),
        TypedFact("bob", "is", "cal"),  # a bare copula between two names: no fact
        TypedFact("ann", "greeted", "bob"),  # the text does not say so: never a key fact
        TypedFact("ann", "met", "bob"),
        TypedFact("ann", "saw", "bob"),  # the same pair: one fact per pair
        TypedFact("bob", "wrote to", "cal"),
        TypedFact("cal", "knew", "dee"),
        TypedFact("ann", "talked with", "dee"),  # least supported: past the limit
    ]
    community = Community(0, 0, None, ("ann", "bob", "cal", "dee"))
    [item] = community_inputs(snapshot, [community], facts)
    chunks = {"c1": Chunk("c1", "doc", 0, text, 0, len(text), {})}
    report = ExtractiveReporter().report(item, chunks)
    assert report.facts == (
        ("Bob", "wrote to", "Cal"),
        ("Ann", "met", "Bob"),
        ("Cal", "knew", "Dee"),
    )


def test_a_key_fact_reads_in_the_text_as_written_never_stitched_from_two_clauses() -> None:
    text = (
        "The Quill store streams its rows; Brennick does not yet. "
        "A Brennick server keeping an Orrin index is slow. "
        "An Orrin page that declares Vestry is read first."
    )
    names = ["Quill", "Brennick", "Orrin", "Vestry"]
    mentions = tuple(
        Mention(m.start(), m.end(), n, n.casefold(), "X")
        for n in names
        for m in re.finditer(n, text)
    )
    relations = (
        Relation("brennick", "quill", "co", 3.0),
        Relation("brennick", "orrin", "co", 2.0),
        Relation("orrin", "vestry", "co", 1.0),
    )
    snapshot = build_snapshot([ChunkFacts("c1", "test", mentions, relations)])
    facts = [
        TypedFact("quill", "store streams yet", "brennick"),  # two clauses stitched
        TypedFact("brennick", "server keeping index", "orrin"),  # "index" comes after Orrin
        TypedFact("orrin", "page declares", "vestry"),  # reads, "that" between
    ]
    community = Community(0, 0, None, ("brennick", "orrin", "quill", "vestry"))
    [item] = community_inputs(snapshot, [community], facts)
    report = ExtractiveReporter().report(item, {"c1": Chunk("c1", "doc", 0, text, 0, 200, {})})
    assert report.facts == (("Orrin", "page declares", "Vestry"),)


def test_a_summary_reads_one_chunks_sentences_in_their_order() -> None:
    text = (
        "Charles Babbage lived in London. He kept a workshop there. "
        "Ada Lovelace visited Charles Babbage in London."
    )
    chunks = {"c1": Chunk("c1", "doc", 1, text, 0, len(text), {})}
    snapshot = build_snapshot([_facts("c1", text)])
    community = Community(0, 0, None, ("ada lovelace", "charles babbage", "london"))
    [item] = community_inputs(snapshot, [community])
    report = ExtractiveReporter().report(item, chunks)
    # The third sentence names all three members and is chosen first; the summary still
    # reads the passage in its order.
    assert [p.text for p in report.points] == [
        "Charles Babbage lived in London.",
        "Ada Lovelace visited Charles Babbage in London.",
    ]
    assert report.summary == " ".join(p.text for p in report.points)


def test_a_hard_wrapped_sentence_is_quoted_whole_never_from_its_last_line() -> None:
    text = (
        "Charles Babbage designed the Analytical Engine, which Ada Lovelace\n"
        "described in her notes of 1843 with Charles Babbage.\n\n"
        "Ada Lovelace met Charles Babbage in London in 1833."
    )
    names = ["Charles Babbage", "Ada Lovelace", "Analytical Engine"]
    mentions = tuple(
        Mention(text.find(n), text.find(n) + len(n), n, n.casefold(), "X") for n in names
    )
    relations = (Relation("ada lovelace", "charles babbage", "co", 1.0),)
    snapshot = build_snapshot([ChunkFacts("c1", "test", mentions, relations)])
    community = Community(0, 0, None, ("ada lovelace", "analytical engine", "charles babbage"))
    [item] = community_inputs(snapshot, [community], [])
    report = ExtractiveReporter().report(
        item, {"c1": Chunk("c1", "doc", 0, text, 0, len(text), {})}
    )
    assert [p.text.split()[0] for p in report.points] == ["Charles", "Ada"]
    assert report.points[0].text.endswith("with Charles Babbage.")


def test_a_summary_never_says_the_same_thing_twice() -> None:
    text = (
        "The Analytical Engine is Charles Babbage's own design, built of brass and iron. "
        "The Analytical Engine is Charles Babbage's own design, built of brass. "
        "Ada Lovelace described the Analytical Engine in her notes."
    )
    chunks = {"c1": Chunk("c1", "doc", 1, text, 0, len(text), {})}
    snapshot = build_snapshot([_facts("c1", text)])
    [item] = community_inputs(snapshot, [COMMUNITY])
    report = ExtractiveReporter(per_chunk=3).report(item, chunks)
    starts = [p.text for p in report.points if p.text.startswith("The Analytical Engine is")]
    assert len(starts) == 1 and any(p.text.startswith("Ada") for p in report.points)
