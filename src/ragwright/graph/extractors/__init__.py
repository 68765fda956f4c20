"""The built-in graph extractors, each registered in the ``ragwright.extractors`` entry-point
group and created by name through `ragwright.graph.registry`::

    spacy                 spaCy NER (the offline default; needs the ``graph`` extra)
    spacy:noun-chunks     spaCy NER and filtered noun chunks
    rules                 capitalized n-grams, acronyms, quoted titles (no dependency)
    llm                   an LLM over the `LLM` port, constrained by an ontology
"""
