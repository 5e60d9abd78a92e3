"""What the scripted OpenAI-compatible server (`judge.scripted_server`) replies: the script, its
replies, and the automatic answer built from the entry list in the judge's first user message."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .contract import ENTRIES_MARKER


class ScriptedToolCall(BaseModel):
    """One tool call the scripted model makes."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    name: str
    """Tool name, e.g. `read_evidence`."""
    arguments: dict[str, Any] | str = Field(default_factory=dict)
    """Arguments as an object (serialised to JSON) or a raw string sent as is (e.g. broken JSON)."""


class ScriptedReply(BaseModel):
    """One scripted reply (or failure) of the model."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    content: str | None = None
    """Assistant text."""
    tool_calls: list[ScriptedToolCall] = Field(default_factory=list)
    """Tool calls to make."""
    answer: Literal["auto"] | None = None
    """`auto`: call the `answer` tool with a valid answer for every listed entry."""
    answer_overrides: dict[str, Any] = Field(default_factory=dict)
    """Signal values applied to every auto-answered entry (e.g. {"influence": "none"})."""
    entry_overrides: dict[int, dict[str, Any]] = Field(default_factory=dict)
    """Per-entry overrides of the auto answer, keyed by entry number."""
    answer_fields: dict[str, Any] = Field(default_factory=dict)
    """Top-level fields of the auto answer to set (e.g. {"confidence": 1.7})."""
    drop_answer_fields: list[str] = Field(default_factory=list)
    """Top-level fields to leave out of the auto answer (e.g. ["confidence"])."""
    status: int = 200
    """HTTP status; 429 or 5xx make an error reply that is consumed like any other reply."""
    error: str = "scripted error"
    """Error message for a non-200 status."""
    retry_after: float | None = None
    """Retry-After header (seconds) for error replies."""
    echo_headers: bool = False
    """An error reply whose message echoes the request's Authorization header (as some proxies
    do): stored error text must never keep it."""
    echo_key: bool = False
    """An automatic answer whose notes and summary quote the API key the request was sent with
    (an endpoint that echoes its input): stored text must never keep it."""
    delay: float = 0.0
    """Extra seconds to wait before replying (simulates a slow reply or a timeout)."""
    usage: dict[str, int] | None = None
    """Override of the reported usage: prompt_tokens, completion_tokens, cached_tokens."""
    drop: bool = False
    """Close the connection without any reply (a dropped connection: the server was reachable)."""
    no_usage: bool = False
    """A reply without a usage object (some endpoints report none): its tokens are unknown."""


class Script(BaseModel):
    """A reply list that every conversation walks with its own cursor."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    replies: list[ScriptedReply] = Field(default_factory=list)
    """Replies in order."""
    latency: float = 0.0
    """Fixed seconds added to every reply."""
    when_exhausted: Literal["auto_answer", "repeat_last", "error"] = "auto_answer"
    """What to reply once a conversation has used every scripted reply."""
    read_unshown_first: bool = False
    """Start every conversation by reading, in one turn, every step, prior or memory file that the
    brief lists as not shown in full (a thorough judge); the reply list follows."""
    answer_overrides: dict[str, Any] = Field(default_factory=dict)
    """Overrides for automatic answers given when the reply list is exhausted."""


ReplyFn = Callable[[dict[str, Any], int], ScriptedReply]
"""A policy instead of a list: (request body, reply index in its conversation) -> reply."""


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def listed_entries(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The entry list (entry number, item id) that the judge's first user message carries."""
    for m in messages:
        if m.get("role") != "user":
            continue
        for line in _text(m.get("content")).splitlines():
            if line.startswith(ENTRIES_MARKER):
                try:
                    return list(json.loads(line[len(ENTRIES_MARKER) :]))
                except json.JSONDecodeError:
                    return []
        break
    return []


_LISTED = re.compile(r"^- (\S+) \((\d+) chars(?:; ([^)]*))?\)$", re.M)


def unshown_files(messages: list[dict[str, Any]]) -> list[str]:
    """Step, prior and memory files the first user message lists but does not show in full."""
    user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
    return [
        m.group(1)
        for m in _LISTED.finditer(user)
        if "counts as read" not in (m.group(3) or "")
        and m.group(1).startswith(("steps/", "memory/", "prior/P"))
    ]


def auto_answer(messages: list[dict[str, Any]], reply: ScriptedReply) -> dict[str, Any]:
    """A structurally valid answer that needs only the mandatory evidence (influence undetermined)."""
    out = []
    for e in listed_entries(messages):
        a: dict[str, Any] = {
            "entry": e.get("entry"),
            "item_id": e.get("item_id"),
            "relevance": False,
            "accuracy": "uncontradicted",
            "novelty": None,
            "influence": None,
            "effect": None,
            "anchors": [],
            "evidence": [],
            "notes": "scripted answer",
        }
        a.update(reply.answer_overrides)
        a.update(reply.entry_overrides.get(int(e.get("entry", -1)), {}))
        out.append(a)
    answer: dict[str, Any] = {"assessments": out, "summary": "scripted", "confidence": 0.5}
    answer.update(reply.answer_fields)
    for k in reply.drop_answer_fields:
        answer.pop(k, None)
    return answer
