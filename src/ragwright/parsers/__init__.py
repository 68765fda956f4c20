"""Parsers: bytes of one file in, normalized text with sections out."""
