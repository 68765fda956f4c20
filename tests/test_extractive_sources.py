"""The extractive answer where sources disagree (the newer or superseding one is quoted, and
the answer says so) and where the retrieved passages do not cover the question (it abstains)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ragwright import Index
from ragwright.answers.extractive import NOT_FOUND, ExtractiveAnswerer, ExtractiveOptions
from ragwright.answers.recency import SourceFacts, Strength, overrides
from ragwright.models import Answer, Document
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


def test_abstains_when_the_passages_never_mention_a_name_the_question_asks_about(
    docs: Path, tmp_path: Path
) -> None:
    """Every other word is covered ("keep", "index", "database"); the name decides."""
    _write(
        docs,
        "postgres.md",
        None,
        "# PostgreSQL\n\nThe index can be kept in a PostgreSQL database with pgvector.\n",
    )
    anything = ExtractiveOptions(min_similarity=-1.0)
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as index:
        index.ingest(docs)
        oracle = index.ask("Can the index be kept in an Oracle database?", options=anything)
        assert oracle.text == NOT_FOUND and not oracle.found
        named = index.ask("Can the index be kept in a PostgreSQL database?", options=anything)
        assert named.found and "pgvector" in named.text
        # Nothing to quote mentions Oracle either: the quoted-name rule alone abstains too.
        unnamed = ExtractiveOptions(min_similarity=-1.0, require_names=False)
        assert not index.ask("Can the index be kept in an Oracle database?", options=unnamed).found
        lenient = ExtractiveOptions(
            min_similarity=-1.0, require_names=False, require_quoted_names=False
        )
        assert index.ask("Can the index be kept in an Oracle database?", options=lenient).found


def test_a_small_handbook_end_to_end(docs: Path, tmp_path: Path) -> None:
    """Through Index.ask, as `ragwright ask` runs it: whole sentences and a whole list, never
    a code line; the newer policy wins and the answer says so; an unrelated question abstains;
    every citation is an exact span of its document."""
    _write(
        docs,
        "support-2024.md",
        "2024-03-04",
        "# Support policy\n\n## Supported releases\n\n"
        "Each minor release is supported for 12 months after its release date.\n",
    )
    _write(
        docs,
        "support-2026.md",
        "2026-01-12",
        "# Support policy 2026\n\nThis policy supersedes the Support Policy 2024.\n\n"
        "## Supported releases\n\n"
        "Each minor release is now supported for 18 months after its release date.\n\n"
        "## Platforms\n\nSupported platforms are:\n\n- Debian 13 on arm64\n- Ubuntu 24.04\n\n"
        "Check the platform before you ask:\n\n```bash\nuname --all --platform supported\n```\n",
    )
    with Index(tmp_path / "index", embedder=HashingEmbedder()) as index:
        index.ingest(docs)
        release = index.ask("How long is a minor release supported?")
        assert "18 months" in release.text and "12 months" not in release.text
        assert "The sources disagree; this quotes the newer support-2026.md" in release.text
        platforms = index.ask("Which platforms are supported?")
        assert "Supported platforms are: - Debian 13 on arm64 - Ubuntu 24.04" in platforms.text
        assert "uname" not in platforms.text
        unrelated = index.ask("How many vacation days do new employees get?")
        assert unrelated.text == NOT_FOUND
        for answer in (release, platforms):
            _assert_exact(answer, index)
