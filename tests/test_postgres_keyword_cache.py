"""The PostgreSQL store's keyword cache: BM25 scores equal to the formula for several k1/b pairs
on both stores, PostgreSQL's equal to SQLite's on the same data, from the cache and from SQL;
the cache kept exact by the change log through another process's writes, deletes, moves and a
collection made again; and a restricted caller's statistics counted over what it may read."""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import psycopg
import pytest

from ragwright.filters import Readable, parse_filter
from ragwright.models import FTS5_BM25, BM25Parameters, Document
from ragwright.ports import DocumentWrite
from ragwright.stores.postgres import PostgresBackend
from ragwright.stores.postgres.keyword_log import KEEP_SECONDS, PRUNED_SETTING
from ragwright.stores.postgres.store import PostgresStore
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing.store_contract import SPACE, make_document, rekeyed, vectors_for

WORDS = "alder birch cedar elm fir hazel larch maple oak pine rowan spruce willow yew".split()
PAIRS = [FTS5_BM25, BM25Parameters(0.5, 0.3), BM25Parameters(2.0, 1.0), BM25Parameters(1.2, 0.0)]


def _reference(texts: dict[str, str], query: list[str], bm25: BM25Parameters) -> dict[str, float]:
    """Each matching document's BM25 by the formula (FTS5's idf), over whitespace tokens."""
    tokens = {source: text.split() for source, text in texts.items()}
    average = sum(map(len, tokens.values())) / len(tokens)
    scores: dict[str, float] = {}
    for term in dict.fromkeys(query):
        hits = sum(term in words for words in tokens.values())
        if not hits:
            continue
        idf = max(math.log((len(tokens) - hits + 0.5) / (hits + 0.5)), 1e-6)
        for source, words in tokens.items():
            tf = words.count(term)
            if tf:
                norm = bm25.k1 * (1 - bm25.b + bm25.b * len(words) / average)
                gained = idf * tf * (bm25.k1 + 1) / (tf + norm)
                scores[source] = scores.get(source, 0.0) + gained
    return scores


def _texts(seed: int, count: int) -> dict[str, str]:
    rng = random.Random(seed)
    return {
        f"doc{seed}-{i}.md": " ".join(rng.choices(WORDS, k=rng.randint(1, 30)))
        for i in range(count)
    }


def _write(store: Any, texts: dict[str, str], principals: tuple[str, ...] = ()) -> None:
    writes = []
    for source, text in texts.items():
        document, chunks = make_document(source, [text])
        if principals:
            document = Document(
                document.id, source, document.content, document.metadata, principals=principals
            )
        writes.append(DocumentWrite(document, chunks, vectors_for("x", len(chunks))))
    store.write(writes)


def _scores(store: Any, query: list[str], bm25: BM25Parameters, where: Any = None) -> dict:
    return {h.source: h.score for h in store.keyword_search(" ".join(query), 500, where, bm25=bm25)}


@pytest.fixture
def stores(pg_url: str, tmp_path: Path) -> Any:
    cached_backend = PostgresBackend(pg_url)
    sql_backend = PostgresBackend(pg_url, keyword_cache=False)
    cached, in_sql = cached_backend.open("kw"), sql_backend.open("kw")
    sqlite = SQLiteStore(tmp_path / "index", background=False)
    for store in (cached, sqlite):
        store.bind_space(SPACE)
    yield cached, in_sql, sqlite
    for closing in (cached, in_sql, sqlite, cached_backend, sql_backend):
        closing.close()


def _settled(store: PostgresStore) -> None:
    store.keyword_search("oak", 1)  # starts the build
    store.wait_for_caches()
    assert store._keyword_cache is not None and store._keyword_cache.taken() is not None


@pytest.mark.parametrize("bm25", PAIRS, ids=str)
def test_scores_follow_the_formula_on_both_stores_from_the_cache_and_from_sql(
    stores: Any, bm25: BM25Parameters
) -> None:
    cached, in_sql, sqlite = stores
    texts = _texts(1, 120)
    for store in (cached, sqlite):
        _write(store, texts)
    _settled(cached)
    rng = random.Random(5)
    for _ in range(15):
        query = rng.sample(WORDS, rng.randint(1, 4))
        want = _reference(texts, query, bm25)
        for store in (cached, in_sql, sqlite):
            assert _scores(store, query, bm25) == pytest.approx(want, rel=1e-9)
        # the same ranking, ties in the order written, on PostgreSQL's cache and SQLite
        hits = [(h.source, h.score) for h in cached.keyword_search(" ".join(query), 10, bm25=bm25)]
        other = [(h.source, h.score) for h in sqlite.keyword_search(" ".join(query), 10, bm25=bm25)]
        assert [s for s, _ in hits] == [s for s, _ in other]


def test_the_cache_follows_another_processs_writes_deletes_and_replacements(
    stores: Any, pg_url: str
) -> None:
    cached, in_sql, _ = stores
    texts = _texts(2, 80)
    _write(cached, texts)
    _settled(cached)
    state = cached._keyword_cache.taken()
    with PostgresBackend(pg_url, keyword_cache=False) as other:  # another writer
        writer = other.open("kw")
        rng = random.Random(9)
        for round_ in range(6):
            _write(writer, _texts(100 + round_, 10))
            gone = rng.sample(sorted(texts), 3)
            for source in gone:
                document = writer.find_document(source)
                assert document is not None
                writer.delete(document.id)
                del texts[source]
            changed = {source: "oak oak pine" for source in rng.sample(sorted(texts), 2)}
            _write(writer, changed)  # a replaced document: new chunk rows
            texts.update(changed)
            where = parse_filter('source in ("doc2-5.md", "doc2-6.md", "doc2-7.md")')
            for query in (["oak"], ["pine", "yew", "cedar"], ["maple", "oak"]):
                for bm25 in PAIRS[:2]:
                    want = _scores(in_sql, query, bm25)
                    assert want and _scores(cached, query, bm25) == pytest.approx(want, rel=1e-12)
                    assert _scores(cached, query, bm25, where) == pytest.approx(
                        _scores(in_sql, query, bm25, where), rel=1e-12
                    )
        writer.close()
    assert cached._keyword_cache.taken() is not state  # replayed, not served stale


def test_a_collection_made_again_is_read_again(stores: Any, pg_url: str) -> None:
    cached, _, _ = stores
    _write(cached, {"first.md": "oak pine"})
    _settled(cached)
    assert [h.source for h in cached.keyword_search("oak", 5)] == ["first.md"]
    with PostgresBackend(pg_url, keyword_cache=False) as other:
        other.drop_collection("kw")
        again = other.open("kw")
        again.bind_space(SPACE)
        _write(again, {"second.md": "oak elm"})
        again.close()
    cached.keyword_search("oak", 5)  # another log: built again
    cached.wait_for_caches()
    assert [h.source for h in cached.keyword_search("oak", 5)] == ["second.md"]


def test_a_restricted_caller_scores_with_the_statistics_of_what_it_reads(stores: Any) -> None:
    cached, in_sql, sqlite = stores
    public, private = _texts(3, 40), _texts(4, 40)
    for store in (cached, sqlite):
        _write(store, public, ("everyone",))
        _write(store, private, ("staff",))
    _settled(cached)
    caller = Readable(("everyone",))
    for query in (["oak"], ["birch", "elm", "yew"]):
        want = _reference(public, query, FTS5_BM25)
        for store in (cached, in_sql, sqlite):
            assert _scores(store, query, FTS5_BM25, caller) == pytest.approx(want, rel=1e-9)


def _log_rows(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM ragwright_kw.chunk_changes").fetchone()
    return int(row[0]) if row else 0


def _age_log(url: str, seconds: float) -> None:
    """Make every change in the log ``seconds`` older."""
    with psycopg.connect(url) as conn:
        conn.execute(
            "UPDATE ragwright_kw.chunk_changes SET at = at - make_interval(secs => %s)", (seconds,)
        )


def test_the_change_log_is_pruned_by_age_and_a_cache_behind_the_cut_is_built_again(
    stores: Any, pg_url: str
) -> None:
    """A write deletes the changes older than KEEP_SECONDS. A cache whose snapshot is older
    than what was deleted is built again (replaying the rest would miss the deleted
    writes); one newer than the cut replays as before."""
    cached, in_sql, _ = stores
    _write(cached, _texts(5, 30))
    _settled(cached)  # this process's cache, as of now
    behind = cached._keyword_cache.taken()
    with PostgresBackend(pg_url, keyword_cache=False) as other:  # another writer
        writer = other.open("kw")
        _write(writer, {"late.md": "oak oak oak yew"})  # a change the cache has not seen
        _age_log(pg_url, KEEP_SECONDS + 60)
        logged = _log_rows(pg_url)
        _write(writer, {"later.md": "oak pine"})  # prunes what is older than the cut
        assert _log_rows(pg_url) == 1  # only the last write's change is left
        assert logged > 1
        assert writer.get_setting(PRUNED_SETTING)
        writer.close()
    want = _scores(in_sql, ["oak"], FTS5_BM25)
    assert "late.md" in want and "later.md" in want
    assert _scores(cached, ["oak"], FTS5_BM25) == pytest.approx(want, rel=1e-12)
    cached.wait_for_caches()  # built again from the postings, not replayed
    assert cached._keyword_cache.taken() is not behind
    assert _scores(cached, ["oak"], FTS5_BM25) == pytest.approx(want, rel=1e-12)
    settled = cached._keyword_cache.taken()
    _write(cached, {"last.md": "oak elm"})  # after the cut: replayed
    want = _scores(in_sql, ["oak"], FTS5_BM25)
    assert _scores(cached, ["oak"], FTS5_BM25) == pytest.approx(want, rel=1e-12)
    replayed = cached._keyword_cache.taken().matrix
    assert len(replayed.segments) == len(settled.matrix.segments) + 1  # one more segment


def test_a_row_written_and_moved_since_the_cache_is_added_once(stores: Any, pg_url: str) -> None:
    """A move changes its rows' metadata in place, logged as each row removed and added
    (for the kept filter matches); a row written and moved since the cache's snapshot is
    still one row added, and a moved row the cache held stays."""
    cached, in_sql, _ = stores
    _write(cached, {"held.md": "oak elm"})
    _settled(cached)
    where = parse_filter("k = 1")
    assert not _scores(cached, ["oak"], FTS5_BM25, where)  # its matches kept: none
    with PostgresBackend(pg_url, keyword_cache=False) as other:  # another writer
        writer = other.open("kw")
        _write(writer, {"new.md": "oak oak pine"})
        for source, target in (("new.md", "moved-new.md"), ("held.md", "moved-held.md")):
            stored = writer.find_document(source)
            assert stored is not None
            moved, chunks = rekeyed(stored, writer.chunks_of(stored.id), target, {"k": 1})
            assert writer.move_document(stored.id, moved, chunks)
        writer.close()
    want = _scores(in_sql, ["oak"], FTS5_BM25)
    assert set(want) == {"moved-new.md", "moved-held.md"}
    assert _scores(cached, ["oak"], FTS5_BM25) == pytest.approx(want, rel=1e-12)
    assert _scores(cached, ["oak"], FTS5_BM25, where) == pytest.approx(want, rel=1e-12)
