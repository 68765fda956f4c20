"""A small corpus with three themes whose entities the capitalized extractor finds, each theme
its own community (shared by the community, report and global-search tests)."""

from __future__ import annotations

from pathlib import Path

THEMES = {
    "space.md": (
        "Neil Armstrong flew Apollo Eleven for NASA. Neil Armstrong trained in Houston.\n\n"
        "NASA built Apollo Eleven in Houston. Apollo Eleven carried Neil Armstrong to the Moon.\n"
    ),
    "music.md": (
        "John Lennon met Paul McCartney in Liverpool. The Beatles formed in Liverpool.\n\n"
        "Paul McCartney and John Lennon wrote songs for The Beatles at Abbey Road.\n"
    ),
    "cooking.md": (
        "Julia Child studied at Le Cordon Bleu in Paris. Julia Child loved Paris markets.\n\n"
        "Le Cordon Bleu taught Julia Child French cooking. Paris shaped Julia Child.\n"
    ),
}

SPACE = {"neil armstrong", "apollo eleven", "nasa", "houston", "moon"}
MUSIC = {"john lennon", "paul mccartney", "liverpool", "beatles", "abbey road"}


def write_corpus(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in THEMES.items():
        (folder / name).write_text(text, "utf-8")
    return folder
