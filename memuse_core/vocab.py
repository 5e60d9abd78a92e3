"""The vocabulary of MemUse: every label set, axis list and unit conversion in one place.

Rules, the store's SQL, the views and the pages import these names; nothing else spells a label
list out. Each group cites the paper section that defines it (MemUse = "Delivered, Not Used").
"""

from __future__ import annotations

from typing import Literal, get_args

# ---- Judge signals, one per delivered entry (MemUse 3.4, Table 4, A.2.2) ----------------------
SIGNALS = ("relevance", "accuracy", "novelty", "influence", "effect")
"""The five signals of every assessed entry (Table 1)."""
UNDETERMINED = "undetermined"
"""How a null (undetermined) novelty, influence or effect is shown and labelled (A.2.2)."""
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

# ---- Delivery forms (A.6.5, Table 11) -------------------------------------------------------------
COPY_FORM = "copy of visible entries"
"""Form label of automatic neutral spans (restated copies with empty windows) in Table 11."""

# ---- Evaluation context (3.3, A.1.2, A.1.4) -------------------------------------------------------
Exposure = Literal["full", "clipped", "unknown"]
SpanStatus = Literal["eligible", "empty", "unassessable", "error", "auto_neutral"]
Visibility = Literal["visible", "not_visible", "same_input", "undetermined"]
"""Whether an earlier copy of a target entry is still visible in the span's first input (A.2.1)."""

MIN_CLIPPED_PREFIX = 8
"""Shortest matched prefix that counts as a clipped exposure (A.1.2: "at least eight characters")."""
MAX_JSON_LEVELS = 4
"""Nested JSON-string levels the exposure matcher decodes (A.1.2: "up to four nested levels")."""

# ---- Judges and judgments (A.3.2) ------------------------------------------------------------------
JudgeKind = Literal["rules", "llm"]
JUDGE_KINDS: tuple[JudgeKind, ...] = get_args(JudgeKind)
JudgmentStatus = Literal["accepted", "error", "interrupted"]
"""`judgments.status`: an accepted answer, a failed attempt, or one cut short (judged again)."""
ERROR_JUDGMENT_STATUSES: tuple[str, ...] = ("error", "failed")
"""Statuses of a judge attempt that ended without an accepted answer (`failed` in older stores)."""
TRANSPORT_REASON = "transport"
"""`judgments.reason` prefix of a judge attempt that failed for a transport failure (refused or
dropped connection, timeout, rate limit, 5xx after retries): not final, the span stays pending and
the next batch judges it again (`judge.endpoint`)."""
RULE_JUDGE = "rule"
"""`verdicts.judge` of a verdict a rule assigned without a judge call (automatic neutral, A.4.1)."""
DEFAULT_JUDGE_ORDER: tuple[JudgeKind, ...] = ("llm", "rules")
"""Which judge a table shows when none is chosen: the LLM judge where it has accepted verdicts in
the store, else the rules judge (`store.judging.resolve_judge`). One judge per table, never mixed."""

# ---- Aggregation thresholds (A.4.2, A.5.4, A.6.3) --------------------------------------------------
RECURRING_MIN_EPISODES = 2
RECURRING_EPISODE_SHARE = 0.1
"""An item is recurring when delivered in at least max(2, 0.1 E) distinct episodes (A.4.2)."""
DELAYED_USE_STEPS = 5
"""Use counted as delayed by "at least five steps" after the first consuming step (A.6.3)."""

# ---- Task outcomes from the benchmark harness (A.5.4) ---------------------------------------------
HarnessStatus = Literal["resolved", "unresolved", "empty_patch", "error"]
HARNESS_STATUSES: tuple[HarnessStatus, ...] = get_args(HarnessStatus)
"""How a SWE-bench harness report classifies a task: `resolved`; `unresolved` (the tests ran and
fail); `empty_patch` (nothing was submitted); `error` (the evaluation failed, e.g. the patch did
not apply). Only `resolved` resolves the task; the other three are "not resolved", as the
harness's own resolve rate counts them. A task the report does not list has no outcome (unknown,
never counted as unresolved)."""
HARNESS_RESOLVED: dict[str, bool] = {
    "resolved": True,
    "unresolved": False,
    "empty_patch": False,
    "error": False,
}
"""The episode outcome (`episodes.resolved`) each harness status sets."""

# ---- Memory of one episode, as the Episodes and Timeline pages tell it ----------------------------
MemoryState = Literal["none_delivered", "not_built", "built"]
MEMORY_STATES: tuple[MemoryState, ...] = get_args(MemoryState)
"""`none_delivered`: the episode's recording holds no memory delivery (nothing to build; its spans
are empty because no memory reached the agent); `not_built`: deliveries were recorded but the
evaluation context was not built yet (`memuse build`); `built`: the context is built."""

# ---- Delivered tokens (A.4.4: "floor(chars/4)") ---------------------------------------------------
CHARS_PER_TOKEN = 4
"""Characters per estimated token: delivered-token estimates are floor(chars / 4) (A.4.4)."""


def estimate_tokens(chars: int) -> int:
    """Estimated tokens of `chars` delivered characters, floor(chars / 4) (A.4.4)."""
    return int(chars) // CHARS_PER_TOKEN


# ---- Episode outcomes (A.5.4) ---------------------------------------------------------------------
EpisodeOutcome = Literal["resolved", "failed", "no_result"]
EPISODE_OUTCOMES: tuple[EpisodeOutcome, ...] = get_args(EpisodeOutcome)
"""An episode's harness result; `no_result` is unknown (no harness result): left out of resolve
rates, never counted as unresolved (A.5.4)."""


# ---- MemTrim (memtrim paper 3.3, Eq. 1) ------------------------------------------------------------
TrimOutcome = Literal["kept", "relabelled", "suppressed", "none"]
TRIM_OUTCOMES: tuple[TrimOutcome, ...] = get_args(TrimOutcome)
"""What MemTrim did with a retrieved memory's stored answer (Eq. 1; `none`: it had none)."""
TrimClass = Literal["redundant", "partial", "novel", "empty"]
TRIM_CLASSES: tuple[TrimClass, ...] = get_args(TrimClass)
"""A delivered entry's evidence against the prior context: every unit shared, some shared or
conflicting, none, or no units at all (the MemTrim counterpart of the judge's novelty label)."""


# ---- Input limits (what the recorder writes and ingest reads back) ---------------------------------
MAX_BODY_BYTES = 128 << 20
"""Largest request body the recorder's proxy accepts (the whole body is held to be recorded)."""
MAX_BODY_DEPTH = 100
"""Deepest model-call request body (levels of nested arrays/objects) the recorder records as
structure; deeper bodies are recorded unparsed, with the reason."""
EVENT_ENVELOPE_DEPTH = 3
"""Levels an event line adds around a recorded body (event object, `request`, one container)."""
MAX_EVENT_DEPTH = MAX_BODY_DEPTH + EVENT_ENVELOPE_DEPTH
"""Deepest JSON ingest accepts (an event line, a trajectory document): every line the recorder
writes stays within it, and nothing deeper reaches a recursive parser or serialiser."""


def nests_deeper(obj: object, limit: int) -> bool:
    """True when a parsed JSON value nests arrays/objects more than `limit` levels (a top-level
    array or object is level 1). The one depth rule of the recorder and of ingest; the walk visits
    containers only and recursion is bounded by `limit`."""
    return isinstance(obj, (dict, list)) and not _within(obj, limit)


def _within(obj: dict[object, object] | list[object], levels: int) -> bool:
    if levels <= 0:
        return False
    for c in obj.values() if type(obj) is dict else obj:
        if (type(c) is dict or type(c) is list) and not _within(c, levels - 1):
            return False
    return True


MAX_LINE_BYTES = 2 * MAX_BODY_BYTES
"""Longest event line ingest reads (room for the largest body the recorder accepts, re-encoded)."""
MAX_DOCUMENT_BYTES = 1 << 30
"""Largest trajectory document (one JSON value, after decompression) ingest parses whole."""
MAX_CALLS_PER_EPISODE = 100_000
"""Most model calls one trajectory may claim (e.g. mini-swe-agent `api_calls`); a count above it
is refused rather than materialised as that many calls."""
INT32_MAX = 2**31 - 1
"""Largest value of a 32-bit column (positions, steps, offsets, exit codes)."""
INT64_MAX = 2**63 - 1
"""Largest value of a 64-bit column (token counts, sizes)."""
