"""Span verdicts from accepted signals (MemUse 3.5 "Usage and triage labels", "Entry-share profiles",
A.3.1 "Structural checks", A.4.1, A.4.2 "Profiled spans").

Pure functions over plain values; no I/O. A span verdict is the pair (triage label, entry-share
profile). Rule-assigned verdicts (automatic neutral spans) carry only the triage label.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from pydantic import BaseModel, ConfigDict, Field

from ..vocab import AXES, UNCERTAINTY, Accuracy, Effect, Influence, Novelty, TriageLabel, UsageLabel

_ACTED_ON: dict[Effect | None, UsageLabel] = {
    "improved": "used",
    "no_effect": "unproductive",
    "harmed": "misused",
    None: "unclear",
}
_OTHER: dict[str, UsageLabel] = {"selected": "selected", "referenced": "noted", "none": "ignored"}


class EntrySignals(BaseModel):
    """The accepted signals of one entry, as verdict rules need them."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    relevance: bool
    """Relevant to the task or subgoal."""
    accuracy: Accuracy
    """corroborated / contradicted / uncontradicted."""
    novelty: Novelty | None = None
    """novel / confirming / redundant; None = undetermined."""
    influence: Influence | None = None
    """acted_on / selected / referenced / none; None = undetermined."""
    effect: Effect | None = None
    """improved / no_effect / harmed; None = undetermined or not assessed."""
    window_read: bool = False
    """The whole credit window was read (decides ambiguous vs unclear)."""


class SpanVerdict(BaseModel):
    """Triage label plus (for judged spans) the six-axis profile and four uncertainty shares."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    span_id: str
    """Span."""
    judgment_id: str | None = None
    """Accepted judgment it derives from; None for rule-assigned verdicts."""
    triage: TriageLabel
    """negative > positive > unresolved > neutral."""
    profiled: bool = False
    """True when every entry has an accepted assessment (A.4.2)."""
    n_entries: int = 0
    """|M_S|: the common denominator of every share."""
    profile: dict[str, float] | None = None
    """Axis -> share of the span's entries (None when unprofiled)."""
    uncertainty: dict[str, float] | None = None
    """u_accuracy, u_novelty, u_influence, u_effect shares (None when unprofiled)."""
    counts: dict[str, int] = Field(default_factory=dict)
    """Axis and uncertainty counts (numerators)."""
    usage_labels: list[UsageLabel] = Field(default_factory=list)
    """Usage label per entry, in entry order."""
    effect_resets: int = 0
    """Non-null effects reset to null because influence was not acted_on (compliance statistic)."""


def usage_label(influence: str | None, effect: str | None, window_read: bool) -> UsageLabel:
    """Map an entry's influence and effect to its usage label (3.5)."""
    if influence == "acted_on":
        return _ACTED_ON[effect]  # type: ignore[index]
    if influence in _OTHER:
        return _OTHER[influence]
    if influence is None:
        return "ambiguous" if window_read else "unclear"
    raise ValueError(f"unknown influence {influence!r}")


def triage_label(labels: Iterable[str]) -> TriageLabel:
    """Fixed precedence over a span's usage labels (Eq. 2): harm first, so benefit cannot mask it."""
    s = set(labels)
    if "misused" in s:
        return "negative"
    if "used" in s:
        return "positive"
    if "unclear" in s:
        return "unresolved"
    return "neutral"


def reset_effects(entries: list[EntrySignals]) -> tuple[list[EntrySignals], int]:
    """Reset a non-null effect to null where influence is not acted_on; count the corrections."""
    out, n = [], 0
    for e in entries:
        if e.influence != "acted_on" and e.effect is not None:
            out.append(e.model_copy(update={"effect": None}))
            n += 1
        else:
            out.append(e)
    return out, n


def clip_confidence(x: float | None) -> float | None:
    """Confidence is clipped to [0, 1] at verdict assembly (A.3.1); non-finite becomes None."""
    if x is None or not math.isfinite(x):
        return None
    return min(1.0, max(0.0, float(x)))


def entry_axes(e: EntrySignals) -> dict[str, bool]:
    """Which axes and uncertainty counts an entry satisfies (3.5, A.4.2)."""
    acted = e.influence == "acted_on"
    return {
        "relevance": e.relevance,
        "corroboration": e.relevance and e.accuracy == "corroborated",
        "information_gain": e.relevance and e.novelty in ("novel", "confirming"),
        "acted_on": acted,
        "benefit": acted and e.effect == "improved",
        "harm": acted and e.effect == "harmed",
        "u_accuracy": e.relevance and e.accuracy == "uncontradicted",
        "u_novelty": e.relevance and e.novelty is None,
        "u_influence": e.influence is None,
        "u_effect": acted and e.effect is None,
    }


def span_verdict(span_id: str, entries: list[EntrySignals], judgment_id: str | None = None) -> SpanVerdict:
    """The verdict of a judged span whose every entry has an accepted assessment."""
    fixed, resets = reset_effects(entries)
    labels = [usage_label(e.influence, e.effect, e.window_read) for e in fixed]
    n = len(fixed)
    counts: dict[str, int] = dict.fromkeys(AXES + UNCERTAINTY, 0)
    for e in fixed:
        for k, v in entry_axes(e).items():
            counts[k] += int(v)
    profiled = n > 0
    return SpanVerdict(
        span_id=span_id,
        judgment_id=judgment_id,
        triage=triage_label(labels),
        profiled=profiled,
        n_entries=n,
        profile={a: counts[a] / n for a in AXES} if profiled else None,
        uncertainty={u: counts[u] / n for u in UNCERTAINTY} if profiled else None,
        counts=counts,
        usage_labels=labels,
        effect_resets=resets,
    )


def auto_neutral_verdict(span_id: str, n_entries: int = 0) -> SpanVerdict:
    """A rule-assigned verdict (every entry has an empty window): triage label only (A.4.1)."""
    return SpanVerdict(span_id=span_id, triage="neutral", profiled=False, n_entries=n_entries)
