"""The values of one judge attempt (MemUse 3.4, A.2.2-A.2.3 "Assessment output", A.3.1 "Structural
checks", A.3.2 "saved reports"): the answer contract, the validation attempts and the saved
result with its verdict.

These are the models the store writes and reads back (judgments, assessments, verdicts, the
journal), so they live below it. `judge.contract` generates the answer tool's JSON schema from
`JudgeAnswer`, so the schema the judge sees and the parser that checks its reply are one object.
"""

from __future__ import annotations

import math
import re
import time
import uuid
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic_core import to_json

from ..vocab import Accuracy, Effect, Influence, JudgeKind, JudgmentStatus, Novelty
from .verdicts import EntrySignals, SpanVerdict, clip_confidence, span_verdict


class EntryAssessment(BaseModel):
    """The judge's assessment of one delivered entry (A.2.2). Null means undetermined."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    entry: int
    """The entry number exactly as listed in target/entries.md."""
    item_id: str | None = None
    """The entry's item id exactly as listed (null when the list shows none)."""
    relevance: bool
    """True when the exposed content applies to the task or the current subgoal."""
    accuracy: Accuracy
    """corroborated / contradicted by recorded evidence, otherwise uncontradicted."""
    novelty: Novelty | None
    """What the entry adds to the prior context; null when a source is missing or unread."""
    influence: Influence | None
    """What the entry demonstrably shaped inside its credit window; null when undetermined."""
    effect: Effect | None
    """Consequence of the anchored actions (acted_on only); null otherwise or when undetermined."""
    anchors: list[int] = Field(default_factory=list)
    """Steps of actions the entry shaped (inside its credit window)."""
    evidence: list[int] = Field(default_factory=list)
    """Other steps the assessment relies on; each must have been read in full."""
    notes: str = ""
    """Rationale per signal; cite steps as [S7] and prior sources as [P3]."""


class JudgeAnswer(BaseModel):
    """The whole answer for one injection span (A.2.3 "Assessment output")."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    assessments: list[EntryAssessment]
    """Exactly one assessment per delivered entry."""
    summary: str = ""
    """Span summary that keeps entry-level uncertainty visible."""
    confidence: float
    """Confidence in [0, 1]; it supports inspection and never weights counts. Required: a missing
    confidence is a structural violation, never a default value (A.3.1: "Confidence must be finite
    and numeric and is clipped to [0,1] during verdict assembly")."""

    @field_validator("confidence")
    @classmethod
    def _finite(cls, v: float) -> float:
        if not math.isfinite(v):
            raise ValueError("confidence must be a finite number")
        return v


class Attempt(BaseModel):
    """One validation attempt of a submitted answer."""

    call: int
    """Model call (round) that submitted it."""
    forced: bool = False
    """Submitted as the forced final answer."""
    accepted: bool = False
    """Passed every check."""
    violations: list[dict[str, Any]] = Field(default_factory=list)
    """What the checks found."""
    coerced: list[str] = Field(default_factory=list)
    """Signals set to undetermined because a conditional read stayed incomplete."""
    answer: dict[str, Any] | None = None
    """The parsed answer, when it parsed (after any forced-answer coercion)."""
    sent: str | None = None
    """The `answer` tool's arguments exactly as the model sent them (a rejected answer keeps what
    was wrong with it; secrets scrubbed like every stored text)."""


class JudgmentResult(BaseModel):
    """One judge attempt on one span: status, accounting, transcript, answer and verdict."""

    model_config = ConfigDict(use_attribute_docstrings=True)

    judgment_id: str = Field(default_factory=lambda: uuid.uuid4().hex)
    """Unique id (journal replay is idempotent by it)."""
    span_id: str
    """Judged span."""
    episode_id: str = ""
    """Its episode."""
    judge: JudgeKind = "rules"
    """Which judge produced it ("rules" is labelled as such everywhere)."""
    model: str | None = None
    """Model name (None for the rules judge)."""
    batch_id: str | None = None
    """Batch that produced it (None for a single re-judge)."""
    status: JudgmentStatus = "error"
    """accepted / error / interrupted."""
    reason: str | None = None
    """Why it is an error or interrupted."""
    settings: dict[str, Any] = Field(default_factory=dict)
    """Resolved settings (no secrets)."""
    prompt_hash: str | None = None
    """Content hash of the prompt files and tool schemas."""
    calls: int = 0
    """Model calls (rules judge: 0)."""
    followups: int = 0
    """Rejected answers that were sent back with their violations."""
    forced: bool = False
    """A forced final answer was requested."""
    rollbacks: int = 0
    """Rounds rolled back for exceeding the context budget."""
    retries: int = 0
    """HTTP retries (429/5xx/timeouts)."""
    tool_calls: int = 0
    """Read/search tool calls."""
    input_tokens: int | None = 0
    """Reported input tokens, cached included; None (unknown) when a reply reported none (a
    partial sum is never stored: `add_if_known`)."""
    cached_tokens: int | None = 0
    """Reported cached input tokens (0 when input tokens are reported without a cached count);
    None when the input tokens are unknown."""
    output_tokens: int | None = 0
    """Reported output tokens; None (unknown) when a reply reported none."""
    cost_usd: float | None = None
    """Cost from prices or provider-reported cost; None while unknown (no price given and a call
    without a provider-reported cost, or prices given and a reply without usage): unknown stays
    null, never 0 (`add_if_known`). The rules judge costs 0."""
    started_at: float = Field(default_factory=time.time)
    """Unix time."""
    ended_at: float | None = None
    """Unix time."""
    answer: JudgeAnswer | None = None
    """The accepted answer (after any forced-answer coercion)."""
    window_read: dict[int, bool] = Field(default_factory=dict)
    """Per entry: whole credit window read."""
    attempts: list[Attempt] = Field(default_factory=list)
    """Every validation attempt."""
    transcript: dict[str, Any] = Field(default_factory=dict)
    """Conversation (messages, rolled-back rounds) or the rules judge's tool log."""
    verdict: SpanVerdict | None = None
    """Derived verdict of an accepted judgment."""
    mandatory_chars: int = 0
    """Size of the mandatory evidence in characters."""

    @property
    def uncached_tokens(self) -> int | None:
        if self.input_tokens is None or self.cached_tokens is None:
            return None
        return max(0, self.input_tokens - self.cached_tokens)

    @property
    def usage_known(self) -> bool:
        """Every token counter is known (every reply reported its usage)."""
        return None not in (self.input_tokens, self.cached_tokens, self.output_tokens)


def add_if_known(total: float | None, part: float | None) -> float | None:
    """A sum over a judgment's calls that stays unknown once one part is unknown (A.4.4:
    "Unavailable usage and cost remain unknown"): a partial sum would pass for the whole. The one
    rule for token counts and cost; start from a known 0 before the first call."""
    return None if total is None or part is None else total + part


_SECRET_PATTERNS = [
    re.compile(r"(?i)(authorization['\"]?\s*[:=]\s*['\"]?)(?:bearer|basic|token)?\s*[^\s'\",}]+"),
    re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"),
    re.compile(
        r"(?i)((?:api[_-]?key|x-api-key|access[_-]?token|secret)['\"]?\s*[:=]\s*['\"]?)[^\s'\",}]{6,}"
    ),
    re.compile(r"\b()(?:sk|rk|pk)-[A-Za-z0-9_-]{12,}"),
]
REDACTED = "[redacted]"


def scrub_text(text: str, secrets: list[str] | tuple[str, ...] = ()) -> str:
    """`text` without secrets: every given secret value, and anything shaped like an
    Authorization header, a bearer token, an `api_key=` value or an `sk-` key (an endpoint may
    echo the request's headers in its error body). Secrets never reach the database."""
    for sec in secrets:
        if sec and len(sec) >= 8:
            text = text.replace(sec, REDACTED)
    for rx in _SECRET_PATTERNS:
        text = rx.sub(lambda m: m.group(1) + REDACTED, text)
    return text


def _scrub(obj: Any, secrets: list[str] | tuple[str, ...]) -> Any:
    if isinstance(obj, str):
        return scrub_text(obj, secrets)
    if isinstance(obj, dict):
        return {k: _scrub(v, secrets) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_scrub(v, secrets) for v in obj]
    return obj


_SECRET_HINTS = ("authorization", "bearer", "api", "token", "secret", "k-")
"""Lowercase literals of which every `_SECRET_PATTERNS` match contains one (JSON never escapes them)."""


def _may_hold_secret(obj: Any, secrets: list[str] | tuple[str, ...]) -> bool:
    """False only when no string inside `obj` can contain a secret or a secret-shaped text: its JSON
    text (one C call, not a walk over every string) has none of `_SECRET_HINTS`. With secret values
    to remove, non-ASCII text, or data JSON cannot encode, the answer is always True (the full walk decides)."""
    if any(sec and len(sec) >= 8 for sec in secrets):
        return True
    try:
        low = to_json(obj).decode().lower()
    except Exception:  # noqa: BLE001 - anything unusual takes the full walk
        return True
    # non-ASCII text takes the walk: case-insensitive patterns also match e.g. U+017F as "s"
    return not low.isascii() or any(h in low for h in _SECRET_HINTS)


def scrub_result(res: JudgmentResult, secrets: list[str] | tuple[str, ...] = ()) -> JudgmentResult:
    """Scrub, in place, every text a judgment stores that an endpoint or the judge wrote: its
    reason, settings, transcript, each attempt (violations, parsed answer, arguments as sent) and
    the accepted answer (summary and notes). The journal and the tables write nothing else of it
    but numbers, labels, step lists and ids; an accepted item id equals the recorded one (the
    checks require it), so it is not rewritten.

    A part is walked string by string only when it may hold a secret (`_may_hold_secret`): a
    rules judgment's transcript is thousands of file paths, none secret-shaped."""
    if res.reason:
        res.reason = scrub_text(res.reason, secrets)
    if _may_hold_secret(res.settings, secrets):
        res.settings = _scrub(res.settings, secrets)
    if _may_hold_secret(res.transcript, secrets):
        res.transcript = _scrub(res.transcript, secrets)
    for a in res.attempts:
        if _may_hold_secret([a.violations, a.answer, a.sent], secrets):
            a.violations = _scrub(a.violations, secrets)
            a.answer = _scrub(a.answer, secrets)
            a.sent = _scrub(a.sent, secrets)
    ans = res.answer
    if ans is not None and _may_hold_secret([ans.summary, [e.notes for e in ans.assessments]], secrets):
        ans.summary = scrub_text(ans.summary, secrets)
        for e in ans.assessments:
            e.notes = scrub_text(e.notes, secrets)
    return res


def verdict_for(res: JudgmentResult) -> None:
    """Attach the verdict of an accepted answer (verdict assembly, 3.5; effect reset and confidence
    clipped to [0, 1], A.3.1)."""
    if res.answer is None:
        return
    clipped = clip_confidence(res.answer.confidence)
    if clipped is not None:
        res.answer.confidence = clipped
    sig = [
        EntrySignals(
            relevance=a.relevance,
            accuracy=a.accuracy,
            novelty=a.novelty,
            influence=a.influence,
            effect=a.effect,
            window_read=res.window_read.get(a.entry, False),
        )
        for a in sorted(res.answer.assessments, key=lambda a: a.entry)
    ]
    res.verdict = span_verdict(res.span_id, sig, res.judgment_id)
