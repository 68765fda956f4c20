"""Pages that make a parser work for hours, and uploads full of them (issue 31, item 8).

80,000 nested ``<div>`` (0.9 MB) took 97 s to parse, and a hundred of them in one upload held
the ingest lock for hours. Now a page nested deeper than `MAX_DEPTH` is refused before its tree
is built, and an upload's parsing has a total budget after which its files are skipped."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from peak_memory import ALLOWANCE, MB, baseline_peak, ingest_in_child
from ragwright import Index
from ragwright.chunkers import create_chunker
from ragwright.config import load_config
from ragwright.errors import ParseBudgetSpent, ParseLimitExceeded
from ragwright.parsers import ParserRegistry, TextParser
from ragwright.parsers._html_depth import MAX_DEPTH, deeper_than
from ragwright.parsers.html import HtmlParser
from ragwright.pipeline.ingest.ingestor import Ingestor, IngestReport
from ragwright.pipeline.ingest.parse_worker import ParseLimits, ParseWorker
from ragwright.server import ServerSettings
from ragwright.stores.sqlite import SQLiteStore
from ragwright.testing import HashingEmbedder
from server_helpers import build_index, serve

DEPTH_REASON = f"the HTML nests elements more than {MAX_DEPTH:,} deep"


def nested(depth: int, text: str = "deep text") -> str:
    return f"<html><body>{'<div>' * depth}{text}{'</div>' * depth}</body></html>"


@pytest.mark.parametrize(
    ("page", "deep"),
    [
        (nested(80_000), True),
        (nested(MAX_DEPTH - 2), False),  # html and body count too
        ("<div>x</div>" * 80_000, False),  # as many tags, side by side
        ("<p>x" * 80_000, False),  # end tags that may be left out
        ("<ul>" + "<li>x" * 80_000 + "</ul>", False),
        ("<table>" + "<tr><td>x" * 20_000 + "</table>", False),
        ("<br><img src=a.png><hr>" * 20_000, False),  # void elements
        ("<svg>" + '<path d="M0"/>' * 20_000 + "</svg>", False),  # self-closing in SVG
        ("<div/>" * 2_000, True),  # HTML ignores the slash: each opens a div
        ("<!--" + "<div>" * 2_000 + "-->", False),
        ("<script>var s = '" + "<div>" * 2_000 + "';</script>", False),
        ("<b>" * 2_000, True),  # left open: the tree nests them
    ],
)
def test_the_depth_is_read_as_the_tree_builder_nests(page: str, deep: bool) -> None:
    assert (deeper_than(page) is not None) == deep


def test_a_page_nested_too_deep_is_refused_with_a_typed_error() -> None:
    with pytest.raises(ParseLimitExceeded, match=DEPTH_REASON):
        HtmlParser().parse(nested(80_000).encode(), "deep.html")


def test_a_page_just_below_the_limit_is_read() -> None:
    parsed = HtmlParser().parse(nested(MAX_DEPTH - 2).encode(), "deep.html")
    assert parsed.content == "deep text"


def test_many_deep_pages_in_one_ingest_are_each_refused_in_bounded_memory(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "pages"
    folder.mkdir()
    page = nested(80_000).encode()  # 0.9 MB
    for number in range(20):
        (folder / f"deep{number:02}.html").write_bytes(page)
    (folder / "good.html").write_text("<p>A page of ordinary depth.</p>")
    baseline = baseline_peak(tmp_path)
    measured = ingest_in_child(folder, tmp_path / "index")
    assert measured["added"] == ["pages/good.html"]
    assert len(measured["failed"]) == 20
    assert all(DEPTH_REASON in reason for reason in measured["failed"].values())
    assert measured["peak"] <= baseline + 4 * len(page) + ALLOWANCE, measured["peak"] / MB


class StepClock:
    """A clock that moves ``step`` seconds each time it is read: parsing "takes" time without
    any waiting."""

    def __init__(self, step: float) -> None:
        self.ticks = itertools.count(step=step)

    def __call__(self) -> float:
        return float(next(self.ticks))


def test_files_after_the_parse_budget_is_spent_are_refused_unread() -> None:
    taken: list[str] = []

    def take(name: str) -> bytes:
        taken.append(name)
        return b"some text"

    limits = ParseLimits(timeout=30, memory_mb=None, budget=25)
    with ParseWorker(limits, clock=StepClock(10)) as worker:  # each file spends 10 s
        for name in ("a.txt", "b.txt", "c.txt"):
            parsed = worker.parse_taking(TextParser(), lambda name=name: take(name), name)
            assert parsed.content == "some text"
        with pytest.raises(ParseBudgetSpent, match="the 25 s this run may spend parsing"):
            worker.parse_taking(TextParser(), lambda: take("d.txt"), "d.txt")
    assert taken == ["a.txt", "b.txt", "c.txt"]  # d.txt was never read


def budget_ingest(root: Path, names: list[str], budget: float, step: float) -> IngestReport:
    docs = root / "docs"
    docs.mkdir()
    for name in names:
        (docs / name).write_text(f"The text of {name}.")
    embedder = HashingEmbedder()
    store = SQLiteStore(root / "index", create=True)
    try:
        store.bind_space(embedder.space)
        ingestor = Ingestor(
            store,
            embedder,
            ParserRegistry([TextParser()]),
            create_chunker("recursive"),
            chunker_spec="recursive",
            base=root,
        )
        survey = ingestor.survey([docs])
        limits = ParseLimits(timeout=30, memory_mb=None, budget=budget)
        with ParseWorker(limits, clock=StepClock(step)) as worker:
            ingestor.ingest_found(survey.found.candidates, survey.known, survey.report, worker)
        return survey.report
    finally:
        store.close()


def test_an_ingest_reports_the_files_past_its_parse_budget_as_skipped(tmp_path: Path) -> None:
    names = [f"{letter}.txt" for letter in "abcde"]
    report = budget_ingest(tmp_path, names, budget=25, step=10)
    assert report.added == ["docs/a.txt", "docs/b.txt", "docs/c.txt"]
    assert report.failed == []
    assert [failure.source for failure in report.skipped] == ["docs/d.txt", "docs/e.txt"]
    assert all("not parsed: the 25 s" in failure.reason for failure in report.skipped)


@pytest.fixture
def index(tmp_path: Path) -> Iterator[Index]:
    with build_index(tmp_path) as index:
        yield index


def upload(url: str, *files: tuple[str, bytes]) -> httpx.Response:
    with httpx.Client(base_url=url, timeout=60) as client:
        parts = [("files", (name, data, "text/html")) for name, data in files]
        return client.post("/v1/documents", files=parts)


def test_an_upload_of_deep_pages_reports_each_and_ingests_the_rest(index: Index) -> None:
    deep = nested(80_000).encode()
    files = [(f"deep{n}.html", deep) for n in range(10)]
    with serve(index) as url:
        response = upload(url, *files, ("good.html", b"<p>Quokkas live on Rottnest.</p>"))
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["added"] == ["uploads/good.html"]
    assert {failure["source"] for failure in body["failed"]} == {
        f"uploads/deep{n}.html" for n in range(10)
    }
    assert all(DEPTH_REASON in failure["reason"] for failure in body["failed"])


def test_an_upload_past_its_parse_budget_skips_its_remaining_files(index: Index) -> None:
    # A budget no parse fits in: the first file's parse is stopped and the others are skipped
    # unread. The first page is large (3.4 MB: tens of milliseconds to parse) so that its
    # answer cannot be there already when the wait for it starts; a one-line page's could,
    # when this process was descheduled right after sending it (it failed so in CI, at load).
    settings = ServerSettings(upload_parse_seconds=1e-6)
    large = b"<p>Some text.</p>" * 200_000
    files = [("page0.html", large)] + [(f"page{n}.html", b"<p>Some text.</p>") for n in (1, 2)]
    with serve(index, settings) as url:
        response = upload(url, *files)
    assert response.status_code == 422
    body = response.json()
    assert body["error"]["code"] == "ingest_failed"
    assert [failure["source"] for failure in body["failed"]] == ["uploads/page0.html"]
    assert "this run may spend parsing ran out" in body["failed"][0]["reason"]
    assert [failure["source"] for failure in body["skipped"]] == [
        "uploads/page1.html",
        "uploads/page2.html",
    ]
    statuses = {entry["source"]: entry["status"] for entry in body["documents"]}
    assert statuses == {
        "uploads/page0.html": "failed",
        "uploads/page1.html": "skipped",
        "uploads/page2.html": "skipped",
    }


def test_the_upload_parse_budget_is_a_server_setting(tmp_path: Path) -> None:
    config_file = tmp_path / "ragwright.toml"
    config_file.write_text("[server]\nupload_parse_seconds = 2.5\n")
    settings = ServerSettings.from_config(load_config(config_file))
    assert settings.upload_parse_seconds == 2.5
    assert ServerSettings().upload_parse_seconds == 300
