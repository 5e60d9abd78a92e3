"""The outcome class of a span and whether it is profiled (MemUse A.4.1 "Span Outcomes and Aggregate
Statistics", A.4.2 "Profiled spans", 3.3 "Eligibility").

Every span is in exactly one outcome class. The four triage labels (positive, negative, unresolved,
neutral) enter the triage denominator N_triage; error, unjudged, empty and unassessable spans are
counted apart (Eq. 4). The class is decided here, once, and stored with the span
(`store.outcomes`); the aggregates, the drill-downs and the app read the stored value.
"""

from __future__ import annotations

from ..vocab import TRIAGE_PRECEDENCE, OutcomeClass

_UNPROFILED_STATUSES = ("error", "empty", "unassessable", "auto_neutral")


def outcome_class(status: str, triage: str | None, judge_failed: bool) -> OutcomeClass:
    """The outcome class of a span from its status (3.3), its current verdict's triage label and
    whether a judge attempt on it failed (A.4.1):

    - a span that failed the recording checks is `error`, as is one whose verdict says `error`;
    - an empty span is `empty`, one without an attributed consuming step `unassessable`;
    - a span whose entries all have empty windows is `neutral` (the automatic neutral label);
    - otherwise the verdict's triage label, when the span has one;
    - otherwise `error` when a judge attempt failed ("error spans failed ... judge execution"),
      else `unjudged` (pending, or beyond the evaluation's span limit).
    """
    if status == "error" or triage == "error":
        return "error"
    if status == "empty":
        return "empty"
    if status == "unassessable":
        return "unassessable"
    if status == "auto_neutral":
        return "neutral"
    for label in TRIAGE_PRECEDENCE:
        if triage == label:
            return label
    return "error" if judge_failed else "unjudged"


def is_profiled(
    status: str, triage: str | None, verdict_profiled: bool | None, n_entries: int | None
) -> bool:
    """Whether a span contributes an entry-share profile (A.4.2 "Profiled spans"): its verdict has
    one (every entry has an accepted assessment), it has entries, and it is neither an error,
    empty, unassessable nor automatic neutral span (those keep their delivery volume only)."""
    return (
        bool(verdict_profiled)
        and (n_entries or 0) > 0
        and status not in _UNPROFILED_STATUSES
        and triage != "error"
    )
