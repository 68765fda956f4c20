"""Parsers: decoding, normalization, sections with breadcrumbs, HTML extraction, the registry."""

from __future__ import annotations

import itertools
import random
import subprocess
import sys

import pytest

from ragwright.errors import ParseError, ParseLimitExceeded, RegistryError
from ragwright.models import ParsedDocument, Section
from ragwright.parsers import HtmlParser, MarkdownParser, ParserRegistry, TextParser
from ragwright.parsers._html_depth import MAX_DEPTH
from ragwright.parsers.csv import CsvParser
from ragwright.parsers.json import JsonParser
from ragwright.ports import Parser


def section_text(doc: ParsedDocument, section: Section) -> str:
    return doc.content[section.char_start : section.char_end]


def assert_tiles(doc: ParsedDocument) -> None:
    """Sections are contiguous, in order, and run to the end of the content."""
    assert doc.sections, "expected sections"
    for before, after in itertools.pairwise(doc.sections):
        assert before.char_end == after.char_start
    assert doc.sections[-1].char_end == len(doc.content)


def breadcrumbs(doc: ParsedDocument) -> list[str]:
    return [section.breadcrumb for section in doc.sections]


# --- decoding and normalization (shared by every text-like parser) ---------------------------


class TestDecoding:
    def test_utf8_bom_is_stripped(self) -> None:
        doc = TextParser().parse("\ufeffhéllo".encode(), "a.txt")
        assert doc.content == "héllo"

    @pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
    def test_utf16_and_utf32_with_bom(self, encoding: str) -> None:
        # Python's "utf-16"/"utf-32" codecs write a BOM; the -le/-be ones need it spelled out
        bom = "" if encoding in ("utf-16", "utf-32") else "\ufeff"
        data = f"{bom}naïve 数据\nline".encode(encoding)
        assert TextParser().parse(data, "a.txt").content == "naïve 数据\nline"

    def test_cp1252_fallback_keeps_smart_quotes_and_dashes(self) -> None:
        data = "café “quoted” — 10 €".encode("cp1252")
        parsed = TextParser().parse(data, "a.txt")
        assert parsed.content == "café “quoted” — 10 €"
        assert parsed.warnings == (
            "not valid UTF-8: read as cp1252, a guess; check the text, or save it as UTF-8",
        )

    def test_bytes_undefined_in_cp1252_fall_back_to_latin1(self) -> None:
        parsed = TextParser().parse(b"a\x81b\xe9", "a.txt")
        assert parsed.content == "a\x81bé"
        assert "read as latin-1, a guess" in parsed.warnings[0]

    @pytest.mark.parametrize(
        ("parser", "name"),
        [(TextParser(), "a.txt"), (MarkdownParser(), "a.md"), (CsvParser(), "a.csv")],
    )
    def test_utf8_and_declared_encodings_are_no_guess(self, parser: Parser, name: str) -> None:
        assert parser.parse("naïve, “quoted”".encode(), name).warnings == ()
        html = '<meta charset="windows-1252"><p>“x”</p>'.encode("cp1252")
        assert HtmlParser().parse(html, "a.html").warnings == ()

    @pytest.mark.parametrize(
        ("parser", "name"),
        [
            (TextParser(), "notes.txt"),
            (MarkdownParser(), "notes.md"),
            (HtmlParser(), "notes.html"),
            (CsvParser(), "notes.csv"),
            (JsonParser(), "notes.json"),
        ],
    )
    def test_every_text_format_warns_of_an_encoding_guess(self, parser: Parser, name: str) -> None:
        text = '"caf\xe9 \x93quoted\x94"'.encode("latin-1")  # cp1252 bytes, not UTF-8
        assert "read as cp1252, a guess" in parser.parse(text, name).warnings[0]

    @pytest.mark.parametrize("seed", range(5))
    def test_random_bytes_without_nul_are_binary(self, seed: int) -> None:
        noise = random.Random(seed).randbytes(20_000).replace(b"\x00", b"\x01")
        with pytest.raises(ParseError, match="binary data"):
            TextParser().parse(noise, "noise.txt")

    def test_text_with_some_escapes_is_still_text(self) -> None:
        log = "\x1b[32mok\x1b[0m step done\x07\n" * 200  # a coloured log with bells
        assert TextParser().parse(log.encode(), "build.log.txt").content == log

    def test_binary_data_is_a_parse_error_naming_the_file(self) -> None:
        png = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00"
        with pytest.raises(ParseError) as raised:
            TextParser().parse(png, "images/logo.txt")
        assert raised.value.source == "images/logo.txt"
        assert "binary" in raised.value.reason

    def test_line_endings_normalized_tabs_and_spacing_kept(self) -> None:
        doc = TextParser().parse(b"a\r\nb\rc\n\td  e ", "a.txt")
        assert doc.content == "a\nb\nc\n\td  e "

    def test_unicode_nfc(self) -> None:
        doc = TextParser().parse("cafe\u0301".encode(), "a.txt")
        assert doc.content == "caf\u00e9"

    def test_html_meta_charset_is_honoured(self) -> None:
        html = '<html><head><meta charset="shift_jis"></head><body><p>日本語</p></body></html>'
        doc = HtmlParser().parse(html.encode("shift_jis"), "a.html")
        assert doc.content == "日本語"

    def test_html_latin1_label_reads_as_cp1252(self) -> None:
        html = '<meta http-equiv="Content-Type" content="text/html; charset=ISO-8859-1"><p>“x”</p>'
        assert HtmlParser().parse(html.encode("cp1252"), "a.html").content == "“x”"


# --- plain text ---------------------------------------------------------------------------------


class TestTextParser:
    def test_one_section_over_everything(self) -> None:
        doc = TextParser().parse(b"# not a heading\n\nbody", "notes.txt")
        assert doc.sections == (Section(0, len(doc.content)),)
        assert doc.sections[0].heading_path == ()
        assert doc.sections[0].level == 0
        assert doc.content_type == "text/plain"

    def test_empty_file_has_no_sections(self) -> None:
        doc = TextParser().parse(b"", "empty.txt")
        assert doc.content == ""
        assert doc.sections == ()


# --- markdown -----------------------------------------------------------------------------------

GUIDE_MD = """Preamble text.

# Guide

Welcome.

## Install

```bash
# this is a shell comment, not a heading
pip install ragwright
```

~~~
## nor is this
~~~

    # indented code is not a heading either

### Linux

Use apt.

Windows **setup**
-----------------

Use the installer.

> # quoted heading, not structure

# Reference `API`

Done.
"""


class TestMarkdownParser:
    def parse(self, text: str) -> ParsedDocument:
        return MarkdownParser().parse(text.encode(), "guide.md")

    def test_content_is_the_source_itself(self) -> None:
        doc = MarkdownParser().parse(GUIDE_MD.replace("\n", "\r\n").encode(), "guide.md")
        assert doc.content == GUIDE_MD
        assert doc.content_type == "text/markdown"

    def test_breadcrumbs_follow_heading_levels(self) -> None:
        doc = self.parse(GUIDE_MD)
        assert breadcrumbs(doc) == [
            "",
            "Guide",
            "Guide > Install",
            "Guide > Install > Linux",
            "Guide > Windows setup",
            "Reference API",
        ]
        assert [section.level for section in doc.sections] == [0, 1, 2, 3, 2, 1]

    def test_code_fences_and_quotes_hold_no_headings(self) -> None:
        doc = self.parse(GUIDE_MD)
        install = doc.sections[2]
        text = section_text(doc, install)
        assert "# this is a shell comment" in text
        assert "## nor is this" in text
        assert "# indented code" in text
        reference_before = section_text(doc, doc.sections[4])
        assert "> # quoted heading" in reference_before

    def test_section_offsets_start_at_the_heading_line(self) -> None:
        doc = self.parse(GUIDE_MD)
        starts = [section_text(doc, section).split("\n", 1)[0] for section in doc.sections]
        assert starts == [
            "Preamble text.",
            "# Guide",
            "## Install",
            "### Linux",
            "Windows **setup**",
            "# Reference `API`",
        ]
        assert_tiles(doc)

    def test_setext_heading_spans_text_and_underline(self) -> None:
        doc = self.parse("Title\n=====\n\nBody.\n\nSub\n---\nMore.\n")
        assert breadcrumbs(doc) == ["Title", "Title > Sub"]
        assert section_text(doc, doc.sections[0]) == "Title\n=====\n\nBody.\n\n"
        assert section_text(doc, doc.sections[1]) == "Sub\n---\nMore.\n"

    def test_inline_markup_is_stripped_from_headings(self) -> None:
        doc = self.parse("# **Bold** _it_ `code` [link text](http://x) ![alt](i.png) &amp; ~~s~~\n")
        assert doc.sections[0].heading_path == ("Bold it code link text alt & s",)

    def test_title_is_the_first_h1(self) -> None:
        doc = self.parse("## Intro\n\n# The *Title*\n\n# Second\n")
        assert doc.metadata["title"] == "The Title"

    def test_no_title_without_h1(self) -> None:
        assert "title" not in self.parse("## Only h2\n").metadata

    def test_front_matter_becomes_metadata_and_stays_in_content(self) -> None:
        text = (
            "---\n"
            'title: "Front Title"\n'
            "author: Ada  # a comment\n"
            "tags:\n"
            "  - a\n"
            "draft: false\n"
            "---\n"
            "# Heading\n\nBody\n"
        )
        doc = self.parse(text)
        assert dict(doc.metadata) == {"title": "Front Title", "author": "Ada", "draft": False}
        assert doc.content == text
        # the closing "---" must not turn the front matter into a setext heading
        assert breadcrumbs(doc) == ["", "Heading"]
        assert section_text(doc, doc.sections[1]).startswith("# Heading")

    def test_toml_front_matter(self) -> None:
        doc = self.parse('+++\ntitle = "Hugo page"\nweight = 3\n+++\nText\n')
        assert dict(doc.metadata) == {"title": "Hugo page", "weight": 3}

    def test_front_matter_values_are_typed_unless_quoted(self) -> None:
        doc = self.parse('---\nyear: 2020\nscore: -0.5\nid: "007"\npublished: True\n---\nx\n')
        assert dict(doc.metadata) == {"year": 2020, "score": -0.5, "id": "007", "published": True}

    def test_leading_thematic_break_is_not_front_matter(self) -> None:
        doc = self.parse("---\nJust a paragraph.\n\n---\n# Real\n")
        assert dict(doc.metadata) == {"title": "Real"}
        assert breadcrumbs(doc) == ["", "Real"]

    def test_empty_heading_opens_no_section(self) -> None:
        doc = self.parse("# A\n\ntext\n\n#\n\nmore\n")
        assert breadcrumbs(doc) == ["A"]

    def test_blank_preamble_is_not_a_section(self) -> None:
        doc = self.parse("\n\n# A\ntext\n")
        assert breadcrumbs(doc) == ["A"]
        assert doc.sections[0].char_start == 2


# --- html ---------------------------------------------------------------------------------------

PAGE_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
  <title>  Ragwright   Guide </title>
  <meta name="description" content="How to install">
  <style>body { color: red }</style>
  <script>var tracking = "SCRIPT-TEXT";</script>
</head>
<body>
  <header><div class="logo">SITE-BANNER</div></header>
  <nav><a href="/">NAV-LINK</a></nav>
  <div role="navigation">ROLE-NAV</div>
  <main>
    <h1>Guide</h1>
    <p>Intro   text,
       with <b>bold</b> and <a href="#">a link</a> &amp; entities&nbsp;here.</p>
    <h2>Install</h2>
    <h3>Linux</h3>
    <p>Line one<br>line two</p>
    <noscript>NOSCRIPT-TEXT</noscript>
    <template><p>TEMPLATE-TEXT</p></template>
    <form><label>FORM-TEXT</label><input></form>
    <aside>ASIDE-TEXT</aside>
    <div hidden>HIDDEN-TEXT</div>
    <div style="display: none">STYLE-HIDDEN</div>
    <svg><text>SVG-TEXT</text></svg>
    <iframe src="x">IFRAME-TEXT</iframe>
    <h2>Usage</h2>
    <pre>def f():
    return  1</pre>
  </main>
  <p>OUTSIDE-MAIN</p>
  <footer>FOOTER-TEXT</footer>
</body>
</html>
"""


class TestHtmlParser:
    def parse(self, html: str) -> ParsedDocument:
        return HtmlParser().parse(html.encode(), "page.html")

    def test_boilerplate_is_dropped(self) -> None:
        content = self.parse(PAGE_HTML).content
        for marker in (
            "SCRIPT-TEXT",
            "color: red",
            "SITE-BANNER",
            "NAV-LINK",
            "ROLE-NAV",
            "NOSCRIPT-TEXT",
            "TEMPLATE-TEXT",
            "FORM-TEXT",
            "ASIDE-TEXT",
            "HIDDEN-TEXT",
            "STYLE-HIDDEN",
            "SVG-TEXT",
            "IFRAME-TEXT",
            "FOOTER-TEXT",
            "OUTSIDE-MAIN",  # <main> is preferred over the rest of the body
        ):
            assert marker not in content, marker

    def test_text_layout(self) -> None:
        doc = self.parse(PAGE_HTML)
        assert doc.content == (
            "Guide\n\n"
            "Intro text, with bold and a link & entities here.\n\n"
            "Install\n\n"
            "Linux\n\n"
            "Line one\nline two\n\n"
            "Usage\n\n"
            "def f():\n    return  1"
        )

    def test_sections_have_breadcrumbs_and_exact_offsets(self) -> None:
        doc = self.parse(PAGE_HTML)
        assert breadcrumbs(doc) == [
            "Guide",
            "Guide > Install",
            "Guide > Install > Linux",
            "Guide > Usage",
        ]
        for section in doc.sections:
            assert section_text(doc, section).startswith(section.heading_path[-1])
        assert_tiles(doc)
        assert doc.sections[0].char_start == 0

    def test_metadata(self) -> None:
        doc = self.parse(PAGE_HTML)
        assert dict(doc.metadata) == {
            "title": "Ragwright Guide",
            "description": "How to install",
            "language": "en",
        }
        assert doc.content_type == "text/html"

    def test_svg_title_is_not_the_page_title(self) -> None:
        doc = self.parse("<svg><title>icon</title></svg><h1>Real</h1>")
        assert doc.metadata["title"] == "Real"

    def test_title_falls_back_to_first_h1(self) -> None:
        assert self.parse("<h2>a</h2><h1>Main <i>Title</i></h1>").metadata["title"] == "Main Title"

    def test_lists(self) -> None:
        doc = self.parse(
            "<ul><li>one</li><li>two<ul><li>nested</li></ul></li><li></li></ul>"
            '<ol start="3"><li><p>three</p></li><li>four</li></ol>'
        )
        assert doc.content == "- one\n- two\n  - nested\n\n3. three\n4. four"

    def test_data_tables_render_as_pipe_rows_under_their_header(self) -> None:
        doc = self.parse(
            "<p>before</p><table><caption>Prices</caption>"
            "<thead><tr><th>Name</th><th>Value</th></tr></thead>"
            "<tbody><tr><td>a</td><td></td><td>c <p>more</p></td></tr>"
            "<tr><td></td><td>x|y</td></tr><tr><td></td><td></td></tr></tbody></table>"
            "<p>after</p>"
        )
        assert doc.content == (
            "before\n\nPrices\n| Name | Value |\n| --- | --- |\n| a |  | c more |\n"
            "|  | x\\|y |\n\nafter"
        )

    def test_layout_tables_are_read_as_content(self) -> None:
        doc = self.parse(
            "<table><tr><td><h1>Title</h1><p>Body text.</p></td></tr></table>"
            "<table><tr><td>one cell</td></tr></table>"
        )
        assert "|" not in doc.content
        assert doc.sections[0].heading_path == ("Title",)

    def test_paragraphs_are_separated_by_blank_lines(self) -> None:
        doc = self.parse("<p>one</p><p>two</p><div>three</div><div><div>four</div></div>")
        assert doc.content == "one\n\ntwo\n\nthree\nfour"

    def test_lone_article_is_preferred_and_keeps_its_own_header(self) -> None:
        doc = self.parse(
            "<body><div>SIDEBAR</div><article><header><h1>Post</h1></header>"
            "<p>Body.</p><footer>Posted today</footer></article></body>"
        )
        assert doc.content == "Post\n\nBody.\n\nPosted today"
        assert breadcrumbs(doc) == ["Post"]

    def test_articles_nested_in_the_post_do_not_count(self) -> None:
        doc = self.parse(
            "<div>SIDEBAR</div><article><p>Post</p>"
            "<article>Comment one</article><article>Comment two</article></article>"
        )
        assert doc.content == "Post\n\nComment one\n\nComment two"

    def test_entities_are_normalized_like_text(self) -> None:
        doc = self.parse("<p>cafe&#x301; a&#13;b</p><pre>x&#13;y</pre>")
        assert doc.content == "caf\u00e9 a b\n\nx\ny"

    def test_several_articles_read_the_body(self) -> None:
        doc = self.parse("<p>Index</p><article>A</article><article>B</article>")
        assert doc.content == "Index\n\nA\n\nB"

    def test_empty_main_falls_back_to_body(self) -> None:
        assert self.parse("<main></main><p>Rendered elsewhere</p>").content == "Rendered elsewhere"

    def test_text_before_first_heading_is_a_plain_section(self) -> None:
        doc = self.parse("<p>Lead</p><h2>Part</h2><p>x</p>")
        assert breadcrumbs(doc) == ["", "Part"]
        assert section_text(doc, doc.sections[0]) == "Lead\n\n"

    def test_deep_nesting_does_not_overflow(self) -> None:
        depth = MAX_DEPTH - 2  # past Python's recursion limit; html and body add two levels
        doc = self.parse("<div>" * depth + "deep" + "</div>" * depth)
        assert doc.content == "deep"

    def test_nesting_past_the_limit_is_refused(self) -> None:
        depth = 5000  # the tree builder's work grows with the depth (see _html_depth)
        with pytest.raises(ParseLimitExceeded, match="more than 1,024 deep"):
            self.parse("<div>" * depth + "deep" + "</div>" * depth)

    def test_page_without_text(self) -> None:
        doc = self.parse("<script>x()</script>")
        assert doc.content == ""
        assert doc.sections == ()


# --- registry -----------------------------------------------------------------------------------


class FakeRstParser:
    extensions = (".rst", ".MD")
    content_types = ("text/x-rst",)

    def parse(self, data: bytes, source: str) -> ParsedDocument:
        return ParsedDocument(content=data.decode())


class TestParserRegistry:
    def test_builtins_satisfy_the_parser_port(self) -> None:
        for parser in (TextParser(), MarkdownParser(), HtmlParser()):
            assert isinstance(parser, Parser)

    def test_entry_points_find_the_builtins(self) -> None:
        registry = ParserRegistry.from_entry_points()
        assert {"text", "markdown", "html"} <= set(registry.names)
        assert {".txt", ".text", ".md", ".markdown", ".html", ".htm"} <= set(registry.extensions)
        assert isinstance(registry.parser_for("docs/Guide.MD"), MarkdownParser)
        assert isinstance(registry.parser_for("index.htm"), HtmlParser)
        assert isinstance(registry.parser_for("notes.v2.txt"), TextParser)

    def test_building_the_registry_imports_no_parsing_library(self) -> None:
        code = (
            "import sys; from ragwright.parsers import ParserRegistry; "
            "registry = ParserRegistry.from_entry_points(); "
            "print(registry.supports('a.md'), 'selectolax' in sys.modules, "
            "'markdown_it' in sys.modules)"
        )
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        assert result.stdout.split() == ["True", "False", "False"], result.stderr

    def test_parser_instances_are_reused(self) -> None:
        registry = ParserRegistry.from_entry_points()
        assert registry.parser_for("a.md") is registry.parser_for("b.markdown")

    def test_unknown_extension_is_a_parse_error_listing_supported(self) -> None:
        registry = ParserRegistry([TextParser(), MarkdownParser()])
        with pytest.raises(ParseError) as raised:
            registry.parser_for("data/file.xyz")
        assert raised.value.source == "data/file.xyz"
        assert "'.xyz'" in raised.value.reason
        assert ".md" in raised.value.reason and ".txt" in raised.value.reason
        with pytest.raises(ParseError, match="without an extension"):
            registry.parser_for("Makefile")

    def test_supports(self) -> None:
        registry = ParserRegistry([TextParser()])
        assert registry.supports("a.TXT")
        assert not registry.supports("a.md")

    def test_two_claims_on_one_extension_name_both(self) -> None:
        registry = ParserRegistry([MarkdownParser()])
        with pytest.raises(RegistryError, match=r"'markdown' and 'rst' both claim '\.md'"):
            registry.register(FakeRstParser(), "rst")
        # the refused registration left nothing behind
        assert not registry.supports("x.rst")
        assert registry.names == ("markdown",)

    def test_replaces_takes_over_every_extension_of_the_named_parser(self) -> None:
        registry = ParserRegistry([MarkdownParser(), TextParser()])
        replacement = FakeRstParser()
        registry.register(replacement, "rst", replaces="markdown")
        assert registry.parser_for("a.md") is replacement
        assert registry.parser_for("a.rst") is replacement
        assert not registry.supports("a.markdown")
        assert registry.names == ("rst", "text")

    def test_replacing_an_unknown_parser_is_refused(self) -> None:
        registry = ParserRegistry([TextParser()])
        with pytest.raises(RegistryError, match="replaces 'pdf', which is not registered"):
            registry.register(FakeRstParser(), "rst", replaces="pdf")

    def test_duplicate_name_is_refused(self) -> None:
        registry = ParserRegistry([TextParser()])
        with pytest.raises(RegistryError, match="'text' is already registered"):
            registry.register(HtmlParser(), "text")

    def test_factories_are_built_on_first_use(self) -> None:
        built: list[str] = []

        def factory() -> Parser:
            built.append("rst")
            return FakeRstParser()

        registry = ParserRegistry()
        registry.register_factory(factory, "rst", (".rst",))
        assert registry.supports("a.rst")
        assert built == []
        registry.parser_for("a.rst")
        registry.parser_for("b.rst")
        assert built == ["rst"]
