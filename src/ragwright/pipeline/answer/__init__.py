"""Answers: route the question, retrieve, and stream an engine's answer (see `asking`)."""
