"""The extractive answer where sources disagree (the newer or superseding one is quoted, and
the answer says so) and where the retrieved passages do not cover the question (it abstains)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragwright import Index
from ragwright.models import Answer, Document
from ragwright.pipeline.extractive import NOT_FOUND, ExtractiveAnswerer, ExtractiveOptions
from ragwright.pipeline.recency import SourceFacts, Strength, overrides
from ragwright.testing import HashingEmbedder


def _write(folder: Path, name: str, updated: str | None, body: str) -> None:
    front = f"---\ntitle: {name.split('.')[0].replace('-', ' ').title()}\n"
    front += f"updated: {updated}\n---\n\n" if updated else "---\n\n"
    (folder / name).write_text(front + body, encoding="utf-8")


def _ask(tmp_path: Path, question: str) -> tuple[Answer, Index]:
    index = Index(tmp_path / "index", embedder=HashingEmbedder())
    index.ingest(tmp_path / "docs")
    return index.ask(question), index


def _assert_exact(answer: Answer, index: Index) -> None:
    for citation in answer.citations:
        document = index.document(citation.document_id)
        assert document is not None
        assert document.content[citation.char_start : citation.char_end] == citation.quote


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    folder.mkdir()
    return folder


def test_a_document_that_supersedes_another_is_quoted_instead_and_the_answer_says_so(
    docs: Path, tmp_path: Path
) -> None:
    _write(docs, "backup-policy.md", "2023-02-10", "# Backups\n\nBackups are kept for 14 days.\n")
    _write(
        docs,
        "backup-policy-2025.md",
        None,  # no date: the statement alone decides
        "# Backups\n\nThis policy supersedes the Backup Policy of 2023.\n\n"
        "Backups are kept for 30 days.\n",
    )
    answer, index = _ask(tmp_path, "How long are backups kept?")
    with index:
        assert "Backups are kept for 30 days." in answer.text
        assert "14 days" not in answer.text
        assert "backup-policy-2025.md, which says it supersedes backup-policy.md" in answer.text
        assert [c.source.rsplit("/", 1)[-1] for c in answer.citations] == ["backup-policy-2025.md"]
        _assert_exact(answer, index)


def test_a_newer_sentence_saying_what_changed_overrides_an_older_document(
    docs: Path, tmp_path: Path
) -> None:
    _write(docs, "configuration.md", "2024-01-15", "# Uploads\n\nThe upload limit is 2 GB.\n")
    _write(
        docs,
        "release-notes.md",
        "2025-04-10",
        "# Version 3.2\n\nThe upload limit is now 5 GB.\n",
    )
    answer, index = _ask(tmp_path, "What is the upload limit?")
    with index:
        assert answer.text.startswith("The upload limit is now 5 GB. [1]")
        assert "The upload limit is 2 GB." not in answer.text
        assert "the newer release-notes.md (2025-04-10) over configuration.md" in answer.text
        _assert_exact(answer, index)


def test_a_later_date_alone_does_not_replace_a_sentence_about_something_else(
    docs: Path, tmp_path: Path
) -> None:
    _write(
        docs,
        "install.md",
        "2024-05-02",
        "# First login\n\nThe setup token expires after 30 minutes of waiting.\n",
    )
    _write(docs, "api.md", "2024-10-12", "# Tokens\n\nAn access token expires after 90 days.\n")
    answer, index = _ask(tmp_path, "When does the setup token expire?")
    with index:
        assert "The setup token expires after 30 minutes of waiting. [1]" in answer.text
        assert "disagree" not in answer.text


def test_without_a_document_lookup_disagreeing_sources_are_quoted_side_by_side(
    docs: Path, tmp_path: Path
) -> None:
    _write(docs, "old.md", "2020-01-01", "# Limits\n\nThe upload limit is 2 GB.\n")
    _write(docs, "new.md", "2025-01-01", "# Limits\n\nThe upload limit is now 5 GB.\n")
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as index:
        index.ingest(docs)
        hits = index.search("What is the upload limit?", top_k=5)
        answer = ExtractiveAnswerer(HashingEmbedder()).answer("What is the upload limit?", hits)
    assert "2 GB" in answer.text and "5 GB" in answer.text
    assert "disagree" not in answer.text


def test_abstains_when_the_passages_lack_the_question_words(docs: Path, tmp_path: Path) -> None:
    _write(
        docs,
        "travel.md",
        None,
        "# Travel policy\n\nThe company pays for hotels up to 180 EUR per night. Meals are "
        "covered up to 45 EUR per day.\n",
    )
    # Any sentence is similar enough here: what decides is whether the question is covered.
    anything = ExtractiveOptions(min_similarity=-1.0)
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as index:
        index.ingest(docs)
        answer = index.ask("What is the parental leave policy?", options=anything)
        assert answer.text == NOT_FOUND and not answer.found and answer.citations == ()
        covered = index.ask("How much is the meal cover per day?", options=anything)
        assert covered.found and "45 EUR" in covered.text  # "meals" covers "meal"


def _facts(source: str, content: str = "", **metadata: str) -> SourceFacts:
    return SourceFacts.of(Document.from_text(source, content, metadata))


def test_source_facts_read_the_first_valid_date_and_the_supersede_claims() -> None:
    facts = _facts(
        "/docs/policy-v2.md",
        "Intro text. This revision replaces the Travel Policy of 2022. Other text.",
        title="Travel policy v2",
        updated="2024-13-45",  # no date: the next key is read
        modified="2024-09-01T10:00:00",
    )
    assert facts.date is not None and facts.date.isoformat() == "2024-09-01"
    assert facts.supersedes == ("this revision replaces the travel policy of 2022.",)
    older = _facts("/docs/policy.md", "The old one.", title="Travel Policy", date="2022-03-01")
    stated = overrides(facts, older, "Hotels are paid up to 180 EUR.")
    assert stated is not None and stated.strength is Strength.STATED
    assert overrides(older, facts, "Hotels are paid up to 150 EUR.") is None  # it was replaced


def test_dates_decide_only_when_both_documents_have_one() -> None:
    older = _facts("a.md", title="A", date="2021-01-01")
    newer = _facts("b.md", title="B", date="2022-01-01")
    undated = _facts("c.md", title="C")
    dated = overrides(newer, older, "The limit is 5 GB.")
    assert dated is not None and dated.strength is Strength.DATED
    changed = overrides(newer, older, "The limit is now 5 GB.")
    assert changed is not None and changed.strength is Strength.STATED
    assert overrides(older, newer, "The limit is now 2 GB.") is None
    assert overrides(undated, older, "The limit is now 5 GB.") is None
    assert overrides(newer, undated, "The limit is now 5 GB.") is None
