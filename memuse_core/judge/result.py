"""Settings, prompts and the saved result of one judge attempt (MemUse A.3.2 "The saved reports
retain the resolved settings, prompt hashes, conversations, validation attempts, and rollbacks").
"""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from ..verdicts import EntrySignals, SpanVerdict, span_verdict
from .contract import JudgeAnswer

JudgeKind = Literal["rules", "llm"]
JudgmentStatus = Literal["accepted", "error", "interrupted"]
PROMPT_DIR = Path(__file__).resolve().parents[2] / "prompts"
PROMPT_FILES = ("judge_system.txt", "judge_user.txt", "judge_forced.txt", "judge_nudge.txt")


class JudgeConfigError(ValueError):
    """A judge setting a user must fix (missing key, missing model)."""


class JudgeSettings(BaseModel):
    """Resolved judge settings (saved with every judgment; never holds the API key)."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    judge: JudgeKind = "rules"
    """`rules` (offline, deterministic) or `llm` (OpenAI-compatible endpoint)."""
    model: str | None = None
    """Model name for the LLM judge."""
    base_url: str | None = None
    """Endpoint base URL (None: the SDK default, api.openai.com)."""
    api_key_env: str = "OPENAI_API_KEY"
    """Name of the environment variable holding the API key (the key itself is never saved)."""
    temperature: float = 0.0
    """Sampling temperature (the paper uses 0)."""
    reference: bool = False
    """Include the reference solution (reference mode, A.2.3)."""
    max_calls: int = 8
    """Model calls per span, including the forced final-answer call (A.3.2)."""
    context_tokens: int = 100_000
    """Input budget per call in tokens."""
    reserve_tokens: int = 6_000
    """Part of the budget kept for output, runtime overhead and the forced-answer message."""
    inline_chars: int = 48_000
    """Evidence shown in full in the first message beyond the mandatory files (0: mandatory only)."""
    timeout: float = 120.0
    """Seconds before one HTTP request times out."""
    max_retries: int = 4
    """Retries of one call on 429, 5xx, timeouts and connection errors."""
    backoff: float = 1.0
    """First retry delay in seconds (doubles each retry, capped at 30 s; Retry-After wins)."""
    price_input: float | None = None
    """USD per million uncached input tokens (None: use the provider-reported cost, else 0)."""
    price_cached: float | None = None
    """USD per million cached input tokens."""
    price_output: float | None = None
    """USD per million output tokens."""

    def public(self) -> dict[str, Any]:
        return self.model_dump()


@dataclass(frozen=True)
class Prompts:
    """The judge prompt texts and their content hash."""

    system: str
    user: str
    forced: str
    nudge: str
    hash: str

    @classmethod
    def load(cls, folder: Path | None = None) -> Prompts:
        from .tools import tool_schemas

        d = folder or PROMPT_DIR
        texts = []
        for name in PROMPT_FILES:
            p = d / name
            if not p.exists():
                raise FileNotFoundError(str(p))
            texts.append(p.read_text(encoding="utf-8"))
        h = hashlib.sha256()
        for name, t in zip(PROMPT_FILES, texts, strict=True):
            h.update(name.encode() + b"\0" + t.encode() + b"\0")
        h.update(json.dumps(tool_schemas(), sort_keys=True).encode())
        system, user, forced, nudge = texts
        return cls(system=system, user=user, forced=forced, nudge=nudge, hash=h.hexdigest()[:16])


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
    """The parsed answer, when it parsed."""


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
    input_tokens: int = 0
    """Reported input tokens, cached included."""
    cached_tokens: int = 0
    """Reported cached input tokens."""
    output_tokens: int = 0
    """Reported output tokens."""
    cost_usd: float = 0.0
    """Cost from prices or provider-reported cost."""
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
    def uncached_tokens(self) -> int:
        return max(0, self.input_tokens - self.cached_tokens)


def verdict_for(res: JudgmentResult) -> None:
    """Attach the verdict of an accepted answer (verdict assembly, 3.5; effect reset, A.3.1)."""
    if res.answer is None:
        return
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
