"""Sentence spans, where the pipeline has always imported them from; the splitter lives in
`ragwright.sentences`, below the adapters, so chunkers can use it too."""

from ragwright.sentences import sentence_spans

__all__ = ["sentence_spans"]
