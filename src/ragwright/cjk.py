"""Keyword terms for Chinese, Japanese and Korean text: overlapping character bigrams.

FTS5's ``unicode61`` tokenizer reads a run of CJK characters (no spaces between words) as one
token, so a sentence is a single term that no query word matches. Bigrams are the standard
answer that needs no dictionary: "北京是中国的首都" gives 北京 京是 是中 中国 国的 的首 首都, and a
two-character word such as 中国 is one of them, found by BM25 like any other term. (FTS5's
``trigram`` tokenizer cannot match a query shorter than three characters, which most Chinese
words are: benchmarks/multilingual_bm25.py measures both.)
"""

from __future__ import annotations

import re

#: Han (with extensions A and compatibility), kana and Hangul: scripts written without spaces.
_CJK_RUN = re.compile(
    "[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u309f\u30a0-\u30ff\u31f0-\u31ff"
    "\uac00-\ud7af\u1100-\u11ff]+"
)


def has_cjk(text: str) -> bool:
    return _CJK_RUN.search(text) is not None


def cjk_bigrams(text: str) -> list[str]:
    """The overlapping bigrams of each CJK run in ``text``, in order (a one-character run is
    its own term); other text gives none."""
    grams: list[str] = []
    for run in _CJK_RUN.findall(text):
        grams.extend([run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)])
    return grams
