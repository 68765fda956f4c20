"""Entity hygiene (issue 33, item 4): what the offline extractor keeps of the NER model's
spans in technical text and in prose, and under which type."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from ragwright.graph.extractors.hygiene import (
    UNTYPED,
    in_code,
    not_a_name,
    retyped,
    shaped_label,
)
from ragwright.graph.extractors.spacy_names import named_spans
from ragwright.models import Chunk

TECHNICAL = """# Search modes

The `bm25` mode ranks with SQLite FTS5; bm25 is the default arm. Run
`.venv/bin/python benchmarks/graph_build.py` and compare it with Index.graph.build, which took
300k chunks and 12 MB at commit 7c88d881. Its settings live in `GraphSettings`.

| Parameter | Value |
|---|---|
| Measure | Kubernetes |

```python
from ragwright import Index, LLMSettings
```

Marie Curie worked in Paris with Pierre Curie.
"""


@pytest.mark.parametrize(
    "surface",
    ["Index.graph.build", ".venv/bin", "/sitemap.xml", "max_size", "set_ann(mode", "300k",
     "x0.73", "0.75 / 0.78", "7c88d881", "MB", "bm25", "docs", "QUANTITY", "http://a.b/c",
     "Jaroslav Seifert\n\nJaroslav Seifert"],
)  # fmt: skip
def test_code_paths_numbers_hashes_units_and_lower_case_words_are_not_names(surface: str) -> None:
    assert not_a_name(surface)


@pytest.mark.parametrize(
    "surface", ["Marie Curie", "A.R. Rahman", "C/Z Records", "Apollo 11", "SQLite FTS5", "NASA"]
)
def test_names_stay_names(surface: str) -> None:
    assert not not_a_name(surface)


def test_code_spans_blocks_and_table_rows_are_code() -> None:
    for inside in ("bm25`", "LLMSettings", "Kubernetes", "Measure"):
        assert in_code(TECHNICAL, TECHNICAL.index(inside)), inside
    for outside in ("SQLite FTS5", "Marie Curie", "Search modes"):
        assert not in_code(TECHNICAL, TECHNICAL.index(outside)), outside
    # A chunk that starts inside a block: its first, bare fence closes it.
    started_inside = "x = Index()\n```\n\nPython is a language."
    assert in_code(started_inside, 0) and not in_code(started_inside, started_inside.index("P"))


def test_types_the_context_contradicts_are_corrected_or_taken_away() -> None:
    assert retyped("Castner Range", "PERSON") == "LOC"
    assert retyped("NFL Draft", "PERSON") == "EVENT"
    assert retyped("Gateway South Boulevard", "ORG") == "FAC"
    assert retyped("Marie Curie", "PERSON") == "PERSON"
    for surface, label in (("SQLite FTS5", "PERSON"), ("PyMuPDF", "GPE"),
                           ("Sorry About Dresden", "PERSON"), ("Sandpoint", "NORP")):  # fmt: skip
        assert shaped_label(surface, label) == UNTYPED, surface
    for surface, label in (("Ludwig van Beethoven", "PERSON"), ("P. J. Byrne", "PERSON"),
                           ("İsmail Tüfekçi", "PERSON"), ("Brazilian", "NORP"),
                           ("SQLite", "ORG")):  # fmt: skip
        assert shaped_label(surface, label) == label, surface


def test_the_spacy_extractor_keeps_names_and_drops_the_noise_of_technical_text() -> None:
    from ragwright.graph.extractors.spacy import SpacyExtractor

    chunk = Chunk("c", "d", 0, TECHNICAL, 0, len(TECHNICAL))
    mentions = SpacyExtractor().extract([chunk])[0].mentions
    labels = {m.key: m.label for m in mentions}
    assert {"marie curie", "paris", "pierre curie"} <= labels.keys()
    assert labels["marie curie"] == "PERSON"
    for noise in ("bm25", "graphsettings", "llmsettings", "index.graph.build", "300k", "mb",
                  "7c88d881", "measure", "value", "parameter", "kubernetes"):  # fmt: skip
        assert noise not in labels, noise
    assert all(label != "PERSON" or key in ("marie curie", "pierre curie")
               for key, label in labels.items()), labels  # fmt: skip


@dataclass
class Token:
    text: str
    pos_: str = "PROPN"
    tag_: str = "NNP"


@dataclass
class Span:
    """What `named_spans` reads of a spaCy span."""

    text: str
    label_: str
    start_char: int
    tags: tuple[str, ...] = ()

    def __len__(self) -> int:
        return len(self.text.split())

    def __getitem__(self, index: int) -> Token:
        words = self.text.split()
        tags = self.tags or ("NNP",) * len(words)
        return Token(words[index], tag_=tags[index])


def test_a_lone_surname_of_a_person_named_in_the_chunk_is_that_person() -> None:
    text = "Lisa Raymond played alongside Flavia Pennetta. Huber defeated Pennetta and Raymond."
    spans = [
        Span(name, label, text.index(name))
        for name, label in (
            ("Flavia Pennetta", "PERSON"),
            ("Huber", "PERSON"),
            ("Lisa Raymond", "ORG"),
        )
    ]
    spans.append(Span("Pennetta", "GPE", text.rindex("Pennetta")))
    spans.append(Span("Raymond", "GPE", text.rindex("Raymond")))  # its full name is no PERSON
    kept = {(span.text, span.start_char): label for span, label in named_spans(text, spans)}
    assert kept[("Pennetta", text.rindex("Pennetta"))] == "PERSON"
    assert kept[("Raymond", text.rindex("Raymond"))] == "GPE"


@pytest.mark.parametrize(
    ("text", "name", "label", "expected"),
    [
        ("In the movie, she plays the role of Kaoru Amane, a girl.", "Kaoru Amane", "ORG",
         "PERSON"),
        ("Alain Resnais (3 June 1922 – 1 March 2014) was a French film director.",
         "Alain Resnais", "GPE", "PERSON"),
        ("Usman Ally is an American film, stage and television actor.", "Usman Ally", "ORG",
         "PERSON"),
        ("Ann Lee (born 1950) sings.", "Ann Lee", "GPE", "PERSON"),
        ("He was born in Copenhagen in 1950.", "Copenhagen", "ORG", "GPE"),
        ("Scarface is the soundtrack album of the film.", "Scarface", "ORG", "WORK_OF_ART"),
        ("The Smiths were an English rock band.", "The Smiths", "PERSON", "ORG"),
        ("He served as Chamberlain of the staff.", "Chamberlain", "ORG", None),
        ("Spirit of the Border is a novel.", "Spirit", "ORG", None),
        # no cue, or one the span's words are not shaped for: the model's type stays
        ("He died in Manhattan of AIDS.", "Manhattan", "GPE", "GPE"),
        ("Jo Smith is a member of the band.", "Jo Smith", "PERSON", "PERSON"),
        ("It was born in SQLite FTS5 days.", "SQLite FTS5", "ORG", "ORG"),
    ],
)  # fmt: skip
def test_the_words_around_a_span_say_what_it_is(
    text: str, name: str, label: str, expected: str | None
) -> None:
    from ragwright.graph.extractors.cues import cue_label

    start = text.index(name)
    assert cue_label(text, start, start + len(name), label) == expected


def test_technical_text_untypes_places_and_works_and_drops_descriptions() -> None:
    from ragwright.graph.extractors.technical import is_technical, technical_label

    assert is_technical(TECHNICAL) and is_technical("Run `ragwright graph build`.")
    assert not is_technical("Marie Curie worked in Paris with Pierre Curie.")
    assert technical_label("Gephi", "GPE") == UNTYPED
    assert technical_label("Obama", "WORK_OF_ART") == UNTYPED
    assert technical_label("SPLADE", "ORG") == "ORG"
    assert technical_label("the Python API", "ORG") is None
    assert technical_label("the MCP server", "ORG") is None
    # through named_spans: the same place is typed in prose and untyped beside code
    prose = "Python is spoken of in Paris."
    code = "Python is spoken of in Paris; run `x`."
    for text, expected in ((prose, "GPE"), (code, UNTYPED)):
        spans = [Span("Paris", "GPE", text.index("Paris"))]
        assert [label for _, label in named_spans(text, spans)] == [expected]


@pytest.mark.parametrize(
    "surface", ["N", "The 1970", "the Faculty of Law of", "BM25 files", "RRF k", "CPU-s"]
)
def test_letters_bare_years_cut_names_descriptions_and_units_are_not_names(surface: str) -> None:
    assert not_a_name(surface)


def test_a_lone_person_the_chunk_does_not_back_is_untyped_and_an_address_makes_a_town() -> None:
    text = ("The Rams finished first. Nicolas Cage met Ron Perlman; Perlman laughed. "
            "Sir Galahad rode. Clapp is from Boise, Idaho, and studied at Fort William "
            "College, Calcutta.")  # fmt: skip
    names = (("Rams", "PERSON"), ("Nicolas Cage", "PERSON"), ("Ron Perlman", "PERSON"),
             ("Perlman", "PERSON"), ("Galahad", "PERSON"), ("Boise", "ORG"), ("Idaho", "GPE"),
             ("Fort William College", "ORG"), ("Calcutta", "ORG"))  # fmt: skip
    spans = [Span(name, label, text.rindex(name)) for name, label in names]
    kept = {span.text: label for span, label in named_spans(text, spans)}
    assert kept["Rams"] == UNTYPED  # no full name, no cue: the model's guess
    assert kept["Perlman"] == "PERSON"  # Ron Perlman's surname
    assert kept["Galahad"] == "PERSON"  # "Sir" says so
    assert kept["Boise"] == "GPE" and kept["Calcutta"] == "GPE"


@pytest.mark.parametrize(
    ("text", "name", "label", "expected"),
    [
        ("Shows ran from 1993. Great Eastern also ran shows in Texas.", "Eastern", "ORG",
         "ORG"),  # the capitalized word before starts the sentence
        ("Shows were run by Great Eastern in Texas.", "Eastern", "ORG", None),
        ("He was a runner-up for Rookie of the Year in 1961.", "Rookie", "PERSON", None),
        ("a genus of plants in the family Apiaceae, found", "Apiaceae", "ORG", UNTYPED),
        ("a plant in the Apocynaceae family", "Apocynaceae", "PERSON", UNTYPED),
        ("from the island of Menorca is rare", "Menorca", "ORG", "GPE"),
    ],
)  # fmt: skip
def test_cut_names_taxa_and_islands(text: str, name: str, label: str, expected: str | None) -> None:
    from ragwright.graph.extractors.cues import cue_label

    start = text.index(name)
    assert cue_label(text, start, start + len(name), label) == expected


def test_a_word_the_chunk_writes_as_inline_code_is_an_identifier() -> None:
    text = "Python code builds a `Config`. A Config is read; `onnx:PATH` where PATH is a folder."
    spans = [Span("Config", "PERSON", text.rindex("Config")),
             Span("PATH", "ORG", text.rindex("PATH")), Span("Python", "GPE", 0)]  # fmt: skip
    assert [s.text for s, _ in named_spans(text, spans)] == ["Python"]


def test_a_name_the_tagger_ends_with_a_common_word_or_a_possessive_is_untyped() -> None:
    text = (
        "It was nominated for Best Original Score in a Scottish Baronial style, like "
        "The Flying Doctor, by the Fox Network, in Lemony Snicket's A Series of Events."
    )
    names = [
        ("Best Original Score", "ORG", ("JJS", "JJ", "NN")),  # a description, not an org
        ("Scottish Baronial", "ORG", ("JJ", "JJ")),
        ("The Flying Doctor", "WORK_OF_ART", ("DT", "NNP", "NN")),  # a title may end so
        ("Fox Network", "ORG", ("NNP", "NNP")),  # read as a proper noun: the model's type
        ("Lemony Snicket's", "WORK_OF_ART", ("NNP", "POS")),  # the title's owner, cut
    ]
    spans = [Span(name, label, text.index(name), tags) for name, label, tags in names]
    kept = {span.text: label for span, label in named_spans(text, spans)}
    assert kept == {"Best Original Score": UNTYPED, "Scottish Baronial": UNTYPED,
                    "The Flying Doctor": "WORK_OF_ART", "Fox Network": "ORG",
                    "Lemony Snicket's": UNTYPED}  # fmt: skip


@pytest.mark.parametrize(
    ("text", "name", "label", "expected"),
    [
        # the definition's head noun, not a modifier before it, says the kind
        ("It tells of Walter White (Bryan Cranston), a struggling high school chemistry "
         "teacher diagnosed with cancer.", "Walter White", "PERSON", "PERSON"),
        ("Mystery Girl is a rock-mockumentary musical comedy.", "Mystery Girl", "PERSON",
         "WORK_OF_ART"),
        ("Clinton is a city and county seat in Iowa.", "Clinton", "PERSON", "GPE"),
    ],
)  # fmt: skip
def test_a_definition_is_read_by_its_head_nouns(
    text: str, name: str, label: str, expected: str
) -> None:
    from ragwright.graph.extractors.cues import cue_label

    start = text.index(name)
    assert cue_label(text, start, start + len(name), label) == expected


@pytest.mark.parametrize(
    ("surface", "label", "following", "expected"),
    [
        ("the Native Summer Tour", "ORG", "", "EVENT"),
        ("Chicken Alley", "PERSON", "", "FAC"),
        ("Association of Pickers of Jardim Gramacho", "PERSON", "", "ORG"),
        ("Kertha Gosa", "PERSON", "pavilion", "FAC"),  # a lower-case head after the name
        ("Kertha Gosa", "PERSON", "Pavilion", "PERSON"),  # a capital: another name's word
        ("New York", "GPE", "bridge", "GPE"),  # a place only qualifies the head after it
        ("Hoover", "PERSON", "building", "PERSON"),  # a lone word: too often a person's name
    ],
)
def test_head_nouns_inside_and_after_a_name_correct_its_type(
    surface: str, label: str, following: str, expected: str
) -> None:
    assert retyped(surface, label, following) == expected


def test_no_cue_makes_an_institution_a_person() -> None:
    assert shaped_label("Association of Pickers of Jardim Gramacho", "PERSON") == UNTYPED
    assert shaped_label("Catherine of Aragon", "PERSON") == "PERSON"


@pytest.mark.parametrize(
    ("text", "name", "label", "expected"),
    [
        ("Oceans (French: Océans) is a 2009 film.", "Océans", "NORP", UNTYPED),
        ("Astro Boy (アストロボーイ , Asutoro Bōi: Tetsuwan Atomu) is a remake.",
         "Tetsuwan Atomu", "PERSON", UNTYPED),
        ("The languages, also known as Tibeto-Burman or Trans-Himalayan, are spoken.",
         "Tibeto-Burman", "ORG", UNTYPED),
        ("Rod Rat (aka Rod Hibbert) played drums.", "Rod Hibbert", "PERSON", "PERSON"),
        ("Oceans (2009) is a film by Jacques Perrin.", "Jacques Perrin", "PERSON", "PERSON"),
    ],
)  # fmt: skip
def test_another_name_of_the_subject_is_untyped_unless_a_person_s_alias(
    text: str, name: str, label: str, expected: str
) -> None:
    from ragwright.graph.extractors.cues import cue_label

    start = text.index(name)
    assert cue_label(text, start, start + len(name), label) == expected


def test_types_that_disagree_in_a_name_s_mentions_or_in_a_list_are_taken_away() -> None:
    text = ("Dirleton lies between North Berwick (east), Gullane (west), Fenton Barns (south) "
            "and Yellowcraigs. The Bede House, Old Aberdeen was used by Bedesmen; Old Aberdeen "
            "is a town. Visit Leeds, Leeds and Leeds. It stars Clive Brook, Betty Lawford and "
            "Arthur Conan Doyle.")  # fmt: skip
    names = (("North Berwick", "GPE"), ("Gullane", "GPE"), ("Fenton Barns", "PERSON"),
             ("Yellowcraigs", "LOC"), ("Old Aberdeen", "PERSON"), ("Clive Brook", "PERSON"),
             ("Betty Lawford", "PERSON"), ("Arthur Conan Doyle", "ORG"))  # fmt: skip
    spans = [Span(name, label, text.index(name)) for name, label in names]
    spans.append(Span("Old Aberdeen", "GPE", text.rindex("Old Aberdeen")))
    spans.sort(key=lambda span: span.start_char)
    kept = [(span.text, label) for span, label in named_spans(text, spans)]
    assert ("Fenton Barns", UNTYPED) in kept  # a person among places
    assert ("Gullane", "GPE") in kept and ("Yellowcraigs", "LOC") in kept  # places all
    assert kept.count(("Old Aberdeen", UNTYPED)) == 2  # a person once, a place once
    assert ("Arthur Conan Doyle", UNTYPED) in kept and ("Clive Brook", "PERSON") in kept


def test_the_value_of_a_command_line_option_is_no_name() -> None:
    from ragwright.graph.extractors.hygiene import option_value

    text = "ragwright index --ann auto [--index DIR]\nnice python x.py --cache-dir DIR --out=OUT"
    for placeholder, at in (("DIR", text.index("DIR")), ("DIR", text.rindex("DIR")),
                            ("OUT", text.index("OUT"))):  # fmt: skip
        assert option_value(text, at), placeholder
    prose = "Ada Lovelace -- a mathematician -- met Charles Babbage."
    assert not option_value(prose, prose.index("Charles"))
    kept = named_spans(text, [Span("DIR", "ORG", text.index("DIR"))])
    assert kept == []
