"""A tiny BERT-style tokenizer.json, built by tests instead of shipping a binary or downloading."""

from __future__ import annotations

from pathlib import Path


def save_word_level_tokenizer(path: Path, vocab: dict[str, int]) -> None:
    """A lower-casing WordLevel tokenizer with ``[CLS] A [SEP]`` and ``[CLS] A [SEP] B [SEP]``
    templates ([CLS] = 2, [SEP] = 3) that, like many exports, pads and truncates to a fixed 16
    tokens, which ragwright must override."""
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors

    tokenizer = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[UNK]"))
    tokenizer.normalizer = normalizers.Lowercase()
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tokenizer.enable_padding(length=16, pad_id=0, pad_token="[PAD]")
    tokenizer.enable_truncation(16)
    tokenizer.save(str(path))
