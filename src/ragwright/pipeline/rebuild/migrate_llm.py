"""Copy an index's LLM records (cost ledger, response cache, fence-token key) into another
index's, as `ragwright migrate` does after the collections.

A re-run adds nothing twice: a ledger call the target already holds (the same time, scope,
model, tokens and cost) is not added again, nor a cached response whose key the target has.
The fence-token key is copied when the target has none, so the prompts, and with them the
cache keys, stay those of the source and its cached answers keep being found; a target that
made its own key keeps it (its cached answers would otherwise be lost), which the report says.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Literal

from ragwright.ports import LLMRecordsCopy

#: What became of the fence-token key: copied; the same already; none in the source;
#: the target's own kept (the copied cache then serves only prompts made without a key).
KeyOutcome = Literal["copied", "same", "none", "kept the target's"]


@dataclass(frozen=True, slots=True)
class LLMRecordsReport:
    calls_copied: int
    calls_present: int
    responses_copied: int
    responses_present: int
    boundary_key: KeyOutcome


def migrate_llm_records(source: LLMRecordsCopy, target: LLMRecordsCopy) -> LLMRecordsReport:
    """Add what ``target`` lacks of ``source``'s LLM records, in one target transaction."""
    source_calls, source_responses = source.recorded_calls(), source.cached_responses()
    present = Counter(target.recorded_calls())  # a multiset: two identical calls are two
    calls = []
    for call in source_calls:
        if present[call] > 0:
            present[call] -= 1
        else:
            calls.append(call)
    cached = {response.key for response in target.cached_responses()}
    responses = [r for r in source_responses if r.key not in cached]
    outcome = _key_outcome(source.stored_boundary_key(), target.stored_boundary_key())
    if calls or responses or outcome == "copied":
        target.add_records(
            calls, responses, source.stored_boundary_key() if outcome == "copied" else None
        )
    return LLMRecordsReport(
        calls_copied=len(calls),
        calls_present=len(source_calls) - len(calls),
        responses_copied=len(responses),
        responses_present=len(source_responses) - len(responses),
        boundary_key=outcome,
    )


def _key_outcome(key: bytes | None, target_key: bytes | None) -> KeyOutcome:
    if key is None:
        return "none"
    if target_key is None:
        return "copied"
    return "same" if target_key == key else "kept the target's"
