"""Span eligibility (MemUse 3.3 "Eligibility", A.1.3 "Recording validity", A.4.1).

Which spans the judge receives: a span needs entries, an attributed consuming step, an episode
that passed the recording checks, and at least one entry with a nonempty credit window.
"""

from __future__ import annotations

from ..vocab import SpanStatus
from .spans import SpanBuild


def span_status(span: SpanBuild, valid: bool, failed: list[str]) -> tuple[SpanStatus, str | None]:
    """Eligibility (3.3): `empty` (no entries), `unassessable` (no attributed consuming step),
    `error` (the episode failed a recording check; reason = failed rules), `auto_neutral` (every
    entry has an empty window), else `eligible`."""
    if not span.nonempty:
        return "empty", "delivery has no entries"
    if not span.attributed:
        return "unassessable", f"no attributed consuming step ({span.first.att.problem})"
    if not valid:
        return "error", "recording check failed: " + ", ".join(failed)
    if all(w is None for w in span.windows):
        return "auto_neutral", "all credit windows are empty"
    return "eligible", None
