"""Embedders: texts in, vectors of one embedding space out."""
