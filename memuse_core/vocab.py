"""The vocabulary of MemUse: every label set, axis list and unit conversion in one place.

Rules, the store's SQL, the views and the pages import these names; nothing else spells a label
list out. Each group cites the paper section that defines it (MemUse = "Delivered, Not Used").
"""

from __future__ import annotations

from typing import Literal, get_args

# ---- Judge signals, one per delivered entry (MemUse 3.4, Table 4, A.2.2) ----------------------
Accuracy = Literal["corroborated", "contradicted", "uncontradicted"]
Novelty = Literal["novel", "confirming", "redundant"]
Influence = Literal["acted_on", "selected", "referenced", "none"]
Effect = Literal["improved", "no_effect", "harmed"]

ACCURACY: tuple[Accuracy, ...] = get_args(Accuracy)
NOVELTY: tuple[Novelty, ...] = get_args(Novelty)
INFLUENCE: tuple[Influence, ...] = get_args(Influence)
EFFECT: tuple[Effect, ...] = get_args(Effect)

# ---- Verdicts (MemUse 3.5 "Usage and triage labels", A.4.1) ------------------------------------
UsageLabel = Literal[
    "used", "unproductive", "misused", "unclear", "selected", "noted", "ignored", "ambiguous"
]
USAGE_LABELS: tuple[UsageLabel, ...] = get_args(UsageLabel)

TriageLabel = Literal["negative", "positive", "unresolved", "neutral"]
TRIAGE_PRECEDENCE: tuple[TriageLabel, ...] = ("negative", "positive", "unresolved", "neutral")
"""Triage precedence, highest first (Eq. 2): a span takes the first label any entry earns."""

# ---- Span outcome classes (A.4.1): every span is in exactly one -----------------------------------
OtherClass = Literal["error", "unjudged", "empty", "unassessable"]
OTHER_CLASSES: tuple[OtherClass, ...] = get_args(OtherClass)
"""Spans outside the triage denominator N_triage, reported separately (A.4.1)."""
OutcomeClass = Literal[
    "negative", "positive", "unresolved", "neutral", "error", "unjudged", "empty", "unassessable"
]
OUTCOME_CLASSES: tuple[OutcomeClass, ...] = TRIAGE_PRECEDENCE + OTHER_CLASSES

# ---- Entry-share profiles (MemUse 3.5 "Entry-share profiles", A.4.2) ------------------------------
Axis = Literal["relevance", "corroboration", "information_gain", "acted_on", "benefit", "harm"]
AXES: tuple[Axis, ...] = get_args(Axis)
UncertaintyShare = Literal["u_accuracy", "u_novelty", "u_influence", "u_effect"]
UNCERTAINTY: tuple[UncertaintyShare, ...] = get_args(UncertaintyShare)

# ---- Evaluation context (A.1.2, A.1.6) ------------------------------------------------------------
Exposure = Literal["full", "clipped", "unknown"]
SpanStatus = Literal["eligible", "empty", "unassessable", "error", "auto_neutral"]

# ---- Judges ---------------------------------------------------------------------------------------
JudgeKind = Literal["rules", "llm"]

# ---- Delivered tokens (A.4.4: "floor(chars/4)") ---------------------------------------------------
CHARS_PER_TOKEN = 4
"""Characters per estimated token: delivered-token estimates are floor(chars / 4) (A.4.4)."""


def estimate_tokens(chars: int) -> int:
    """Estimated tokens of `chars` delivered characters, floor(chars / 4) (A.4.4)."""
    return int(chars) // CHARS_PER_TOKEN


# ---- MemTrim (memtrim paper 3.3, Eq. 1) ------------------------------------------------------------
TrimOutcome = Literal["kept", "relabelled", "suppressed", "none"]
TRIM_OUTCOMES: tuple[TrimOutcome, ...] = get_args(TrimOutcome)
"""What MemTrim did with a retrieved memory's stored answer (Eq. 1; `none`: it had none)."""
TrimClass = Literal["redundant", "partial", "novel", "empty"]
TRIM_CLASSES: tuple[TrimClass, ...] = get_args(TrimClass)
"""A delivered entry's evidence against the prior context: every unit shared, some shared or
conflicting, none, or no units at all (the MemTrim counterpart of the judge's novelty label)."""
