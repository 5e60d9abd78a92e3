"""Judge settings and prompts (MemUse A.3.2 "The saved reports retain the resolved settings, prompt
hashes, conversations, validation attempts, and rollbacks"). The saved result of one attempt,
`JudgmentResult`, is a value of `rules.judgment`.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..vocab import JudgeKind
from .tools import tool_schemas

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
    """USD per million uncached input tokens (None, and no output price: use the provider-reported
    cost, else the cost is unknown)."""
    price_cached: float | None = None
    """USD per million cached input tokens."""
    price_output: float | None = None
    """USD per million output tokens."""

    @property
    def priced(self) -> bool:
        """Cost is computed from configured prices (else from a provider-reported cost, A.4.4)."""
        return self.price_input is not None or self.price_output is not None

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
