"""`ragwright watch`: file-system events and reconcile walks keep an index equal to a fresh
ingest of its folder, renames and touches cost no embedding, files being written are waited
for, and only events or complete walks delete."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path

from ragwright import Index
from ragwright.pipeline.sync.folder_sync import within
from ragwright.pipeline.sync.sync_status import SyncStatus
from ragwright.pipeline.sync.watch import Settling, Watcher, WatchOptions
from watch_helpers import CountingEmbedder, fresh_state, index_state, settled, wait_for, watching

WORDS = "apple river stone cloud maple ember harbor violet quartz meadow lantern tundra".split()


def test_rename_move_and_touch_cost_no_embedding(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "a").mkdir(parents=True)
    (docs / "b").mkdir()
    (docs / "a" / "one.md").write_text("# One\n\nThe first note about rivers.\n", "utf-8")
    (docs / "a" / "two.txt").write_text("The second note, about stones.\n", "utf-8")
    embedder = CountingEmbedder()
    with Index(tmp_path / "kb", embedder=embedder) as kb, watching(kb, docs) as status:
        assert sorted(index_state(kb)) == ["docs/a/one.md", "docs/a/two.txt"]
        embedded = len(embedder.embedded)
        os.rename(docs / "a" / "one.md", docs / "a" / "uno.md")
        os.rename(docs / "a" / "two.txt", docs / "b" / "two.txt")
        os.utime(docs / "a" / "uno.md")
        assert wait_for(lambda: status.snapshot().moved == 2)
        assert wait_for(settled(status))
        assert len(embedder.embedded) == embedded
        assert index_state(kb) == fresh_state(docs, tmp_path / "fresh")
        (docs / "b" / "two.txt").write_text("The second note, now about clouds.\n", "utf-8")
        (docs / "a" / "uno.md").unlink()
        assert wait_for(lambda: status.snapshot().removed == 1 and status.snapshot().updated == 1)
        assert embedder.embedded[embedded:] == ["The second note, now about clouds."]
        assert list(index_state(kb)) == ["docs/b/two.txt"]


def test_two_hundred_random_operations_end_equal_to_a_fresh_ingest(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    for folder in ("a", "b", "c", "a/deep"):
        (docs / folder).mkdir(parents=True)
    embedder = CountingEmbedder()
    rng = random.Random(14)
    versions: list[str] = []  # every complete content written, each unique

    def content() -> str:
        text = f"note v{len(versions):04d} " + " ".join(rng.choices(WORDS, k=rng.randint(3, 12)))
        versions.append(text)
        return text + "\n"

    def files() -> list[Path]:
        return sorted(p for p in docs.rglob("*") if p.is_file())

    def new_path(suffix: str) -> Path:
        folder = rng.choice(["a", "b", "c", "a/deep"])
        return docs / folder / f"f{rng.randint(0, 40)}{suffix}"

    def slow_write(path: Path) -> None:
        text = content()
        with path.open("w", encoding="utf-8") as handle:
            for start in range(0, len(text), max(1, len(text) // 4)):
                handle.write(text[start : start + max(1, len(text) // 4)])
                handle.flush()
                time.sleep(0.015)

    operations: Counter[str] = Counter()
    # The slow writer pauses 15 ms between pieces; the debounce is ten times that, as the
    # writer shares this process (and its interpreter lock) with the watcher.
    with Index(tmp_path / "kb", embedder=embedder) as kb, watching(kb, docs, 150) as status:
        for _ in range(200):
            present = files()
            kind = rng.choices(
                ["create", "modify", "touch", "rename", "move", "delete", "rapid", "slow"],
                weights=[22, 16, 14, 12, 12, 10, 7, 7] if present else [1, 0, 0, 0, 0, 0, 0, 0],
            )[0]
            operations[kind] += 1
            target = rng.choice(present) if present else None
            if kind == "create":
                new_path(rng.choice([".md", ".txt"])).write_text(content(), "utf-8")
            elif kind == "modify" and target:
                target.write_text(content(), "utf-8")
            elif kind == "touch" and target:
                os.utime(target)
            elif kind == "rename" and target:
                os.replace(target, target.with_name(f"r{rng.randint(0, 40)}{target.suffix}"))
            elif kind == "move" and target:
                os.replace(target, new_path(target.suffix))
            elif kind == "delete" and target:
                target.unlink()
            elif kind == "rapid" and target:
                for _ in range(5):
                    target.write_text(content(), "utf-8")
            elif kind == "slow":
                slow_write(target or new_path(".md"))
            if rng.random() < 0.2:  # let the watcher catch up now and then
                time.sleep(rng.choice([0.02, 0.1, 0.3]))
        assert wait_for(settled(status, quiet=0.6), timeout=30)
        expected = fresh_state(docs, tmp_path / "fresh")
        assert wait_for(lambda: index_state(kb) == expected, timeout=10)
        snapshot = status.snapshot()
    assert min(operations.values()) >= 5, operations
    assert (snapshot.failures, snapshot.error) == ((), None)
    assert snapshot.moved > 0  # renames and moves were followed, not re-ingested
    # No content was embedded twice: renames, moves and touches re-embedded nothing. And only
    # complete contents were: a file still being written was waited for.
    counts = Counter(text.strip() for text in embedder.embedded)
    assert max(counts.values()) == 1
    assert set(counts) <= {v.strip() for v in versions}


def test_a_file_being_written_settles_only_once_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "growing.txt"
    path.write_text("first part", "utf-8")
    settling = Settling(debounce=1.0)
    settling.note(path, now=0.0)
    assert settling.ready(now=0.5) == []  # named too recently
    with path.open("a", encoding="utf-8") as handle:
        handle.write(", second part")
    assert settling.ready(now=1.5) == []  # its size changed since it was named: look again
    assert settling.waiting() == {path}
    assert settling.ready(now=2.0) == []
    assert settling.ready(now=2.5) == [path]
    assert len(settling) == 0


def test_paths_settle_together_once_events_pause(tmp_path: Path) -> None:
    """The two halves of a rename may come in two batches of events: neither is synced while
    events keep coming, so they meet in one pass (unless events never pause)."""
    old, new, busy = tmp_path / "old.md", tmp_path / "new.md", tmp_path / "busy.md"
    new.write_text("moved here", "utf-8")
    busy.write_text("written again and again", "utf-8")
    settling = Settling(debounce=1.0, patience=10.0)
    settling.note(old, now=0.0)
    settling.note(busy, now=0.9)
    settling.note(new, now=1.5)
    assert settling.ready(now=2.0) == []  # old.md is due, but events came 0.5 s ago
    assert sorted(settling.ready(now=2.6)) == [busy, new, old]
    settling.note(busy, now=3.0)
    for now in range(4, 15):  # an event every second, never a pause: patience runs out
        settling.note(new, now=float(now))
        assert settling.ready(now=now + 0.5) == ([busy] if now == 13 else [])


def test_offline_changes_are_caught_up_at_start(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "kept.md").write_text("kept as it was\n", "utf-8")
    (docs / "edited.md").write_text("before the edit\n", "utf-8")
    (docs / "gone.md").write_text("deleted while nothing watched\n", "utf-8")
    (docs / "renamed.md").write_text("renamed while nothing watched\n", "utf-8")
    with Index(tmp_path / "kb", embedder=CountingEmbedder()) as kb:
        kb.ingest([docs])
    (docs / "edited.md").write_text("after the edit\n", "utf-8")
    (docs / "gone.md").unlink()
    os.rename(docs / "renamed.md", docs / "moved.md")
    embedder = CountingEmbedder()
    with Index(tmp_path / "kb", embedder=embedder) as kb, watching(kb, docs) as status:
        snapshot = status.snapshot()
        assert (snapshot.updated, snapshot.moved, snapshot.removed) == (1, 1, 1)
        assert snapshot.reconcile_complete is True and snapshot.last_reconcile is not None
        assert embedder.embedded == ["after the edit"]
        assert index_state(kb) == fresh_state(docs, tmp_path / "fresh")


def test_a_missing_watched_folder_deletes_nothing(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("alpha\n", "utf-8")
    with Index(tmp_path / "kb", embedder=CountingEmbedder()) as kb:
        kb.ingest([docs])
        os.rename(docs, tmp_path / "unmounted")
        with kb.folder_sync([docs]) as sync:
            report = sync.reconcile()
        assert report.complete is False and report.removed == []
        assert [f.reason for f in report.failed] == ["the watched folder is missing"]
        assert list(index_state(kb)) == ["docs/a.md"]


#: Run in a process of its own which, under root, first gives up the capabilities that let
#: root read any folder (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH), so a folder's mode stops it.
PARTIAL_WALK = """
import ctypes, json, os, sys
from pathlib import Path

if os.geteuid() == 0:
    libc = ctypes.CDLL(None, use_errno=True)
    header = (ctypes.c_uint32 * 2)(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3, this process
    data = (ctypes.c_uint32 * 6)()  # (effective, permitted, inheritable) x 2 words
    assert libc.capget(header, data) == 0, ctypes.get_errno()
    for word in (0, 1):  # effective and permitted, low word
        data[word] &= ~((1 << 1) | (1 << 2))
    assert libc.capset(header, data) == 0, ctypes.get_errno()

from ragwright import Index
kb, docs = Path(sys.argv[1]), Path(sys.argv[2])
with Index(kb) as index, index.folder_sync([docs]) as sync:
    partial = sync.reconcile()
    stored = sorted(d.source for d in index.documents.list())
    by_event = sync.sync([docs / "outside.md"])
print(json.dumps([partial.complete, partial.removed, stored, by_event.removed]))
"""


def test_a_partial_walk_deletes_nothing_but_events_do(tmp_path: Path) -> None:
    """A folder the walk cannot list makes the walk partial: the documents of files under it
    (and of files gone elsewhere) stay until a complete walk or an event says otherwise."""
    docs = tmp_path / "docs"
    (docs / "locked").mkdir(parents=True)
    (docs / "locked" / "inside.md").write_text("inside the locked folder\n", "utf-8")
    (docs / "outside.md").write_text("outside it\n", "utf-8")
    with Index(tmp_path / "kb", embedder=CountingEmbedder()) as kb:
        kb.ingest([docs])
    (docs / "outside.md").unlink()
    (docs / "locked").chmod(0)
    try:
        result = subprocess.run(
            [sys.executable, "-c", PARTIAL_WALK, str(tmp_path / "kb"), str(docs)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        (docs / "locked").chmod(0o755)
    assert result.returncode == 0, result.stderr
    complete, removed, stored, removed_by_event = json.loads(result.stdout)
    assert (complete, removed) == (False, [])
    assert stored == ["docs/locked/inside.md", "docs/outside.md"]
    assert removed_by_event == ["docs/outside.md"]
    with Index(tmp_path / "kb") as kb, kb.folder_sync([docs]) as sync:
        assert sync.reconcile().complete is True
        assert list(index_state(kb)) == ["docs/locked/inside.md"]


def test_sources_within_a_scope_are_found_by_name() -> None:
    sources = sorted(["a.md", "a/b.md", "a/c/d.md", "a-b.md", "ab.md", "/abs/x.md", "b.md"])
    assert within(sources, "a") == ["a/b.md", "a/c/d.md"]
    assert within(sources, "a/c") == ["a/c/d.md"]
    assert within(sources, "a.md") == ["a.md"]
    assert within(sources, ".") == [s for s in sources if s != "/abs/x.md"]  # the base itself
    assert within(sources, "/abs") == ["/abs/x.md"]


def test_a_finished_sync_counts_nothing_pending(tmp_path: Path) -> None:
    """The line a pass prints reads the status: the synced paths are no longer pending."""
    folder = tmp_path / "docs"
    folder.mkdir()
    status = SyncStatus((str(folder),))
    seen: list[int] = []
    stop = threading.Event()
    with (
        Index(tmp_path / "kb", embedder=CountingEmbedder()) as kb,
        kb.folder_sync([folder]) as sync,
    ):
        on_pass = lambda report, reconcile: seen.append(status.snapshot().pending)  # noqa: E731
        watcher = Watcher(sync, status, WatchOptions(50, 0), on_pass=on_pass)
        thread = threading.Thread(target=watcher.run, args=(stop,))
        thread.start()
        try:
            assert wait_for(lambda: status.snapshot().passes >= 1)
            (folder / "a.txt").write_text("Alpha.", "utf-8")
            assert wait_for(lambda: status.snapshot().added >= 1)
        finally:
            stop.set()
            thread.join(timeout=30)
    assert seen and seen[-1] == 0
