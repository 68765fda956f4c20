"""The web page end to end in headless Chromium (Debian's ``chromium``, driven by Playwright;
no browser is downloaded): upload, search, a streamed answer, a citation opened at its span."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from ragwright import Index
from ragwright.llms.settings import ENGINES, LLMSettings
from ragwright.pipeline.ingest.ingestor import Failure
from ragwright.pipeline.sync.folder_sync import SyncReport
from ragwright.pipeline.sync.sync_status import SyncStatus
from ragwright.testing import HashingEmbedder
from ragwright.testing.openai_server import OpenAIServer, Reply, quoting_responder
from server_helpers import model_breaking_mid_stream, serve

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
    "--disable-sync",
]
#: Generous: CI machines are small and shared; the waits end as soon as the page is ready.
TIMEOUT_MS = 20_000
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts"

FILLER = "\n\n".join(
    f"## Chapter {n}\n\nGeneral remarks about marsupials, number {n}, with no island facts."
    for n in range(40)
)
DOCUMENT = f"""# Marsupial field notes

{FILLER}

## Rottnest

Quokkas live on Rottnest Island near Perth. Visitors must not feed the quokkas.
"""


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_upload_search_ask_and_open_a_citation_in_a_browser(tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)

    upload = tmp_path / "quokkas.md"
    upload.write_text(DOCUMENT, encoding="utf-8")
    question = "Where do quokkas live?"
    page_errors: list[str] = []
    sync_status = SyncStatus(("notes",))  # as `serve --watch notes` reports it
    sync_status.record(SyncReport(failed=[Failure("notes/x.txt", "binary")]), reconcile=True)
    with (
        OpenAIServer(quoting_responder) as model,
        Index(
            tmp_path / "index",
            embedder=HashingEmbedder(),
            llm_settings=LLMSettings(model="test-model", base_url=model.url, retry_backoff=0.0),
        ) as index,
        serve(index, sync_status=sync_status) as url,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        page = browser.new_page(viewport={"width": 1100, "height": 800})
        page.set_default_timeout(TIMEOUT_MS)
        page.on("pageerror", lambda error: page_errors.append(str(error)))
        page.on(
            "console",
            lambda m: page_errors.append(m.text) if m.type == "error" else None,
        )
        page.goto(url)
        expect(page.locator("#sync-status")).to_contain_text("0 pending · 1 failing")

        # Upload through the page, with its progress bar.
        page.get_by_role("tab", name="Documents").click()
        page.get_by_label("Files to add").set_input_files(upload)
        page.get_by_role("button", name="Upload").click()
        expect(page.locator("#upload-status")).to_have_text("uploads/quokkas.md: added")
        expect(page.locator("#upload-progress")).to_have_attribute("value", "100")
        expect(page.locator("#documents")).to_contain_text("uploads/quokkas.md")

        # Search: the hit names its source and breadcrumb, with the query terms marked.
        page.get_by_role("tab", name="Search").click()
        page.get_by_role("searchbox", name="Query").fill("quokkas island")
        page.get_by_label("bm25").check()
        page.get_by_role("button", name="Search", exact=True).click()
        first = page.locator("#results li").first
        expect(first).to_contain_text("uploads/quokkas.md")
        expect(first.locator(".breadcrumb")).to_have_text("Marsupial field notes > Rottnest")
        marked = {text.lower() for text in first.locator("mark").all_inner_texts()}
        assert {"quokkas", "island"} <= marked

        # Ask: the streamed answer arrives, its [1] is a link to the cited span.
        page.get_by_role("tab", name="Ask").click()
        page.get_by_label("Question").fill(question)
        page.get_by_role("button", name="Ask", exact=True).click()
        link = page.locator("#answer a.citation").first
        expect(link).to_have_text("[1]")
        expect(page.locator("#answer")).to_contain_text("Rottnest Island")
        expected = httpx.post(f"{url}/v1/ask", json={"question": question}).json()
        assert page.locator("#answer").inner_text() == expected["answer"]
        cited = expected["citations"][0]
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(path=str(ARTIFACTS / "web-page-answer.png"))

        link.click()
        dialog = page.get_by_role("dialog")
        expect(dialog).to_be_visible()
        expect(dialog.locator("h2")).to_have_text("uploads/quokkas.md")
        span = dialog.locator("mark.cited")
        expect(span).to_have_text(cited["quote"])
        expect(span).to_be_in_viewport()
        expect(span).to_be_focused()
        text = dialog.locator("#viewer-text").inner_text()
        assert text.index(cited["quote"]) == cited["char_start"]  # the span is where it says

        screenshot = ARTIFACTS / "web-page-citation.png"
        page.screenshot(path=str(screenshot), full_page=True)
        print(f"screenshots: {ARTIFACTS / 'web-page-answer.png'}, {screenshot}")

        page.keyboard.press("Escape")
        expect(dialog).to_be_hidden()
        expect(link).to_be_focused()  # focus returns to the citation
        expect(page.locator("#answer-meta")).to_have_text("Engine: extractive")

        # The same question through an LLM engine (the loopback model quotes its best source).
        engine = page.get_by_label("Engine")
        expect(engine.locator("option").first).to_have_text("Server default (extractive)")
        offered = engine.locator("option").evaluate_all("options => options.map(o => o.value)")
        assert offered == ["", *ENGINES]
        engine.select_option("stuff")
        page.get_by_role("button", name="Ask", exact=True).click()
        meta = page.locator("#answer-meta")
        expect(meta).to_contain_text("Engine: stuff · model test-model · 1 LLM call")
        expect(meta).to_contain_text("prompt +")
        expect(page.locator("#answer")).to_contain_text("Quokkas live on Rottnest Island")
        assert model.requests and model.requests[-1]["model"] == "test-model"
        quote = page.locator("#citations li q").first.inner_text()
        page.screenshot(path=str(ARTIFACTS / "web-page-llm-answer.png"))
        llm_link = page.locator("#answer a.citation").first
        llm_link.click()
        expect(dialog).to_be_visible()
        expect(span).to_have_text(quote)
        expect(span).to_be_in_viewport()
        document = httpx.get(f"{url}/v1/documents/uploads/quokkas.md").json()
        start = document["content"].index(quote)
        expect(dialog.locator("#viewer-span")).to_have_text(
            f"Characters {start}–{start + len(quote)}"
        )
        page.keyboard.press("Escape")
        expect(llm_link).to_be_focused()

        # A marker naming no source is taken out of the answer, and the page says so.
        model.script(Reply.text("Quokkas live on Rottnest Island near Perth [1]. Also Mars [7]."))
        page.get_by_label("Question").fill("Which island do quokkas live on?")
        page.get_by_role("button", name="Ask", exact=True).click()
        notes = page.locator("#answer-notes li")
        expect(notes.first).to_be_visible()
        assert "Removed citation markers naming no source: [7]" in notes.all_inner_texts()
        expect(page.locator("#answer")).not_to_contain_text("[7]")
        browser.close()
    assert page_errors == []


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_a_server_with_keys_gets_one_from_the_page(tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)

    from ragwright.server import ServerSettings
    from ragwright.server.keys import ApiKey, Scope, digest_of

    secret = "rw_browser-test-key"
    settings = ServerSettings(keys=(ApiKey("browser", Scope.WRITE, digest_of(secret)),))
    upload = tmp_path / "note.txt"
    markup = '<img src=x onerror="window.pwned = 1"><script>window.pwned = 2</script>'
    upload.write_text(f"Wombats dig long burrows {markup} under the ground.\n", encoding="utf-8")
    with (
        Index(tmp_path / "index", embedder=HashingEmbedder()) as index,
        serve(index, settings) as url,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        page = browser.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(url)
        key = page.get_by_label("API key")
        expect(key).to_be_visible()  # the first request was refused with 401
        expect(key).to_be_focused()
        key.fill(secret)
        key.press("Enter")
        page.get_by_role("tab", name="Documents").click()
        page.get_by_label("Files to add").set_input_files(upload)
        page.get_by_role("button", name="Upload").click()
        expect(page.locator("#upload-status")).to_have_text("uploads/note.txt: added")
        page.get_by_role("tab", name="Statistics").click()
        expect(page.locator("#stats")).to_contain_text("Documents1")
        assert page.evaluate("sessionStorage.getItem('ragwright.apiKey')") == secret

        # Document text is shown as text, never run as markup.
        page.get_by_role("tab", name="Search").click()
        page.get_by_role("searchbox", name="Query").fill("wombats")
        page.get_by_role("button", name="Search", exact=True).click()
        expect(page.locator("#results li .snippet")).to_contain_text(markup)
        assert page.locator("#results img, #results script").count() == 0
        # ... and so in an answer, its sources and the document viewer.
        page.get_by_role("tab", name="Ask").click()
        page.get_by_label("Question").fill("wombats dig long burrows img script window pwned")
        page.get_by_role("button", name="Ask", exact=True).click()
        expect(page.locator("#answer")).to_contain_text(markup)
        expect(page.locator("#citations q").first).to_contain_text(markup)
        page.locator("#answer a.citation").first.click()
        expect(page.locator("#viewer-text")).to_contain_text(markup)
        assert page.locator("main img, main script, dialog img, dialog script").count() == 0
        assert page.evaluate("window.pwned") is None
        browser.close()
    with Index(tmp_path / "index") as reopened:
        assert reopened.documents.get("uploads/note.txt") is not None


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_an_answer_that_breaks_mid_stream_shows_the_error_and_keeps_the_text(
    tmp_path: Path,
) -> None:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)

    notes = tmp_path / "quokkas.md"
    notes.write_text(DOCUMENT, encoding="utf-8")
    with model_breaking_mid_stream("Quokkas live on ") as model_url:
        settings = LLMSettings(
            model="test-model", base_url=model_url, retry_backoff=0.0, engine="stuff"
        )
        with (
            Index(tmp_path / "index", embedder=HashingEmbedder(), llm_settings=settings) as index,
            serve(index) as url,
            sync_playwright() as playwright,
        ):
            assert index.ingest([notes]).ok
            browser = playwright.chromium.launch(
                executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
            )
            page = browser.new_page()
            page.set_default_timeout(TIMEOUT_MS)
            page.goto(url)
            page.get_by_role("tab", name="Ask").click()
            engine = page.get_by_label("Engine")
            expect(engine.locator("option").first).to_have_text("Server default (stuff)")
            page.get_by_label("Question").fill("Where do quokkas live?")
            page.get_by_role("button", name="Ask", exact=True).click()
            status = page.locator("#ask-status")
            expect(status).to_contain_text("Error: the stream from")
            expect(status).to_contain_text("broke off")
            answer = page.locator("#answer")
            expect(answer).to_have_text("Quokkas live on ")  # what arrived stays
            expect(answer).to_have_attribute("aria-busy", "false")
            assert page.locator("#citations li").count() == 0
            assert page.locator("#answer-meta").inner_text() == ""
            browser.close()


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_the_api_docs_page_renders_offline(tmp_path: Path) -> None:
    """/docs draws the API from /openapi.json with Swagger UI files the server holds: every
    request the page makes goes to the server itself."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)
    requested: list[str] = []
    with (
        Index(tmp_path / "index", embedder=HashingEmbedder()) as index,
        serve(index) as url,
        sync_playwright() as playwright,
    ):
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        page = browser.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.on("request", lambda request: requested.append(request.url))
        page.goto(f"{url}/docs")
        expect(page.locator(".opblock-summary-path", has_text="/v1/search")).to_be_visible()
        browser.close()
    assert requested and all(address.startswith(url) for address in requested), requested


MARKDOWN_NOTE = """# Ferry guide

## Timetable

Ferries leave **every hour** from the `north pier`, see [the map](map.html).

```bash
ferry --book
```

| Route | Minutes |
| --- | --- |
| Pier to island | 25 |
"""


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_a_new_users_first_look_plain_snippets_honest_labels_and_a_phone(tmp_path: Path) -> None:
    """Issue 18, item 13: snippets read as text (no fences, heading marks, table pipes or
    emphasis), the upload label does not undersell the formats, a failed upload is listed once,
    Delete does not look like the primary action, and a phone shows every tab and statistic."""
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)
    note = tmp_path / "ferry.md"
    note.write_text(MARKDOWN_NOTE, encoding="utf-8")
    bad = tmp_path / "broken.txt"
    bad.write_bytes(b"\x00\xff\x00" * 50)
    with (
        Index(tmp_path / "index", embedder=HashingEmbedder()) as index,
        serve(index) as url,
        sync_playwright() as playwright,
    ):
        assert index.ingest([note]).ok
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        page = browser.new_page(viewport={"width": 1100, "height": 800})
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(url)
        page.get_by_role("searchbox", name="Query").fill("ferries pier island route")
        page.get_by_label("bm25").check()
        page.get_by_role("button", name="Search", exact=True).click()
        snippet = page.locator("#results li .snippet").first
        expect(snippet).to_contain_text(
            "Ferries leave every hour from the north pier, see the map."
        )
        shown = snippet.inner_text()
        assert not any(raw in shown for raw in ("```", "##", "|", "**", "`", "](")), shown
        assert "Pier to island · 25" in shown and "ferry --book" in shown

        page.get_by_role("tab", name="Documents").click()
        label = page.locator('label[for="upload-files"]').inner_text()
        assert all(kind in label for kind in ("PDF", "Word", "Excel", "CSV")), label
        page.get_by_label("Files to add").set_input_files(bad)
        page.get_by_role("button", name="Upload").click()
        status = page.locator("#upload-status")
        expect(status).to_contain_text("uploads/broken.txt failed")
        assert status.inner_text().count("uploads/broken.txt") == 1, status.inner_text()
        delete = page.get_by_role("button", name="Delete ferry.md")
        upload = page.get_by_role("button", name="Upload")
        style = "e => getComputedStyle(e).backgroundColor"
        assert delete.evaluate(style) != upload.evaluate(style)

        phone = browser.new_page(viewport={"width": 360, "height": 740})
        phone.goto(url)
        phone.get_by_role("tab", name="Statistics").click()
        expect(phone.locator("#stats")).to_contain_text("Chunking")
        for tab in ("Search", "Ask", "Documents", "Statistics"):
            box = phone.get_by_role("tab", name=tab).bounding_box()
            assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 360, tab
        assert phone.evaluate("document.documentElement.scrollWidth") <= 360
        assert "{" not in phone.locator("#stats").inner_text()  # "Chunking recursive {}"
        phone.set_viewport_size({"width": 390, "height": 844})
        for tab in ("Search", "Ask", "Documents", "Entities", "Statistics"):
            phone.get_by_role("tab", name=tab).click()
            widest = phone.evaluate(_WIDEST_VISIBLE)
            assert widest <= 390, f"{tab}: an element reaches {widest} px of 390"
        ARTIFACTS.mkdir(exist_ok=True)
        phone.screenshot(path=str(ARTIFACTS / "web-page-phone-stats.png"), full_page=True)
        browser.close()


#: The right edge of the widest visible element of the page (what a phone would scroll to).
_WIDEST_VISIBLE = """() => Math.max(...[...document.querySelectorAll("body *")]
    .filter(e => e.offsetParent !== null || getComputedStyle(e).position === "fixed")
    .map(e => Math.ceil(e.getBoundingClientRect().right)))"""


@pytest.mark.skipif(not CHROMIUM.exists(), reason="needs Debian's chromium at /usr/bin/chromium")
def test_the_collection_picker_scopes_search_and_documents(tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    expect.set_options(timeout=TIMEOUT_MS)
    (tmp_path / "guide").mkdir()
    (tmp_path / "guide" / "install.md").write_text("# Install\n\nRun pip install.", "utf-8")
    (tmp_path / "papers").mkdir()
    (tmp_path / "papers" / "orbit.md").write_text("# Orbits\n\nKepler's laws.", "utf-8")
    with Index(tmp_path / "index", collection="papers", embedder=HashingEmbedder()) as papers:
        assert papers.ingest([tmp_path / "papers"]).ok
    with (
        Index(tmp_path / "index", embedder=HashingEmbedder()) as index,
        serve(index) as url,
        sync_playwright() as playwright,
    ):
        assert index.ingest([tmp_path / "guide"]).ok
        browser = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True
        )
        page = browser.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(url)
        picker = page.get_by_label("Collection")
        expect(picker).to_be_visible()
        expect(picker).to_have_value("default")
        page.get_by_role("searchbox", name="Query").fill("Kepler install")
        page.get_by_role("button", name="Search", exact=True).click()
        expect(page.locator("#results li").first).to_contain_text("guide/install.md")
        picker.select_option("papers")
        page.get_by_role("button", name="Search", exact=True).click()
        expect(page.locator("#results li").first).to_contain_text("papers/orbit.md")
        page.get_by_role("tab", name="Documents").click()
        expect(page.locator("table.documents tbody")).to_contain_text("papers/orbit.md")
        expect(page.locator("table.documents tbody")).not_to_contain_text("guide/install.md")
        browser.close()
