"""Values inside the events of the log (DESIGN.md "The event log", MemUse A.1.1): messages, model
requests and responses, usage, memory entries, placements with their proofs, search results, and
the digest that proofs and entry equality use. The event records themselves are `events.records`.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..vocab import INT32_MAX, INT64_MAX

EVENT_SCHEMA_VERSION = 1
"""Version of the event-log format; bump it and add a step to `migrate_event` on any change."""

CallRole = Literal["agent", "memory", "embedding"]
CallStatus = Literal["ok", "error", "incomplete"]
Route = Literal["host", "agent"]
ChangeOp = Literal["create", "update", "delete"]


# Numbers are strict: `true` or "12" is not a token count, a cost or a time (lax parsing turned
# `"input_tokens": true` into 1 token); an integer is still accepted where a float is expected.
Count = Annotated[int, Field(ge=0, le=INT64_MAX, strict=True)]
"""A non-negative count stored in a 64-bit column (tokens, characters)."""
Index = Annotated[int, Field(ge=0, le=INT32_MAX, strict=True)]
"""A non-negative position or offset stored in a 32-bit column."""
Int32 = Annotated[int, Field(ge=-INT32_MAX - 1, le=INT32_MAX, strict=True)]
"""A signed value stored in a 32-bit column (exit codes, step guesses)."""
Number = Annotated[float, Field(strict=True)]
"""A finite number (times, scores); finiteness comes from the models' `allow_inf_nan=False`."""
Cost = Annotated[float, Field(ge=0, strict=True)]
"""A cost in USD: finite and not negative."""


def text_digest(text: str) -> str:
    """Digest used by placement proofs and entry equality: sha256 of the UTF-8 text, 16 hex chars."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


_HEX = frozenset("0123456789abcdef")


def normalize_digest(digest: str) -> str:
    """The canonical form of a digest (`text_digest`: the first 16 lowercase hex characters of the
    sha256) for the three ways producers write one: `sha256:<64 hex>`, the 64 hex alone, or the
    16-hex prefix (any case). Any other string comes back unchanged, so it matches no text."""
    if len(digest) == 16 and _HEX.issuperset(digest):
        return digest
    d = digest.strip().lower()
    if d.startswith("sha256:"):
        d = d[7:]
    if len(d) in (16, 64) and _HEX.issuperset(d):
        return d[:16]
    return digest


def digest_matches(digest: object, text: str) -> bool:
    """True when `digest` (any accepted form, see `normalize_digest`) is the digest of `text`."""
    return isinstance(digest, str) and normalize_digest(digest) == text_digest(text)


class _Model(BaseModel):
    # every float of the contract is finite: NaN and Infinity are refused where they are read
    model_config = ConfigDict(extra="forbid", frozen=False, allow_inf_nan=False)


# --------------------------------------------------------------------------------------------
# Messages and calls
# --------------------------------------------------------------------------------------------


class ToolCall(_Model):
    """One tool call requested by a model response (OpenAI chat-completions shape)."""

    id: str | None = None
    """Tool-call id that the matching tool message or `tool_result` refers to."""
    name: str
    """Function/tool name."""
    arguments: str = ""
    """Arguments exactly as the model produced them (usually a JSON string)."""


class Message(_Model):
    """One message of a model request."""

    model_config = ConfigDict(extra="allow")

    role: str
    """`system`, `user`, `assistant`, `tool` (or a harness-specific role)."""
    content: str | list[dict[str, Any]] | None = None
    """Text, or a list of content parts (`{"type": "text", "text": ...}`); None when absent."""
    name: str | None = None
    """Optional participant or function name."""
    tool_call_id: str | None = None
    """For `tool` messages: the tool call this message answers."""
    tool_calls: list[ToolCall] | None = None
    """For `assistant` messages: the tool calls the model made."""

    def text(self) -> str:
        """The message's visible text: the content string, or its text parts joined by newlines."""
        return message_text(self.content)


def message_text(content: str | list[dict[str, Any]] | None) -> str:
    """Flatten a message content value to the text a model sees."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts = []
    for part in content:
        if isinstance(part, dict):
            t = part.get("text")
            if isinstance(t, str):
                parts.append(t)
    return "\n".join(parts)


class Request(_Model):
    """The input of a model call."""

    model_config = ConfigDict(extra="allow")

    messages: list[Message] = Field(default_factory=list)
    """The messages sent; with `base_call_id` set, only the messages after the shared prefix."""
    tools: list[dict[str, Any]] | None = None
    """Tool schemas offered to the model, as sent."""
    base_call_id: str | None = None
    """Delta encoding: the earlier call (same episode) whose request prefix this one repeats."""
    base_len: Index | None = None
    """Delta encoding: how many leading messages of `base_call_id`'s request are repeated."""


class Response(_Model):
    """The output of a model call."""

    model_config = ConfigDict(extra="allow")

    content: str | None = None
    """Text of the response."""
    tool_calls: list[ToolCall] | None = None
    """Tool calls the model made."""
    reasoning: str | None = None
    """Reasoning text when the provider returns it (e.g. `reasoning_content`)."""


class Usage(_Model):
    """Token counts reported by the provider. Cached and reasoning are subsets (A.4.4)."""

    input_tokens: Count | None = None
    """Prompt tokens, including cached ones."""
    output_tokens: Count | None = None
    """Completion tokens, including reasoning ones."""
    cached_tokens: Count | None = None
    """Prompt tokens served from the provider's cache."""
    reasoning_tokens: Count | None = None
    """Completion tokens spent on reasoning."""


# --------------------------------------------------------------------------------------------
# Memory
# --------------------------------------------------------------------------------------------


class Entry(_Model):
    """One delivered memory entry (MemUse 3.1, A.1.4 for the identity fields)."""

    namespace: str = "default"
    """Memory namespace or scope (e.g. `mem0:repo/django`)."""
    item_id: str | None = None
    """Identity of the memory item; None when the system exposes none."""
    id_scheme: str | None = None
    """How `item_id` was obtained (e.g. `mem0-uuid`, `card-id`, `rendered`)."""
    version: str | None = None
    """Version identifier of the delivered state of the item."""
    version_portable: bool = True
    """False for operation-local version ids, which cannot establish equality across operations."""
    digest: str | None = None
    """Digest of the delivered value (`text_digest`); computed from `value` when omitted."""
    value: str | None = None
    """The entry's full recorded value; None when unknown (exposure is then unknown)."""
    display_key: str | None = None
    """A key shown to the agent beside the value (e.g. `[mem0:1a2b3c4d]`), if any."""
    labels: dict[str, Any] = Field(default_factory=dict)
    """Annotation-only metadata (type labels, scores): never shown to the judge (A.2.1)."""

    @model_validator(mode="after")
    def _fill_digest(self) -> Entry:
        if self.digest is None:
            if self.value is not None:
                self.digest = text_digest(self.value)
        else:
            self.digest = normalize_digest(self.digest)
        return self


class Proof(_Model):
    """Where a placement sits in the consuming request (MemUse A.1.1 "Placements and proofs")."""

    message_index: Index | None = None
    """Index of the host message in the consuming request's messages."""
    json_pointer: str | None = None
    """RFC 6901 pointer into the request body (e.g. `/messages/0/content`)."""
    message_digest: str | None = None
    """`text_digest` of the host message's text, when the proof pins it."""
    start: Index | None = None
    """Character offset of the placement inside the host message text, if the adapter knows it."""
    verified: bool | None = None
    """The recorder's check of this proof against the request it forwarded (None: not checked)."""
    problem: str | None = None
    """Why the recorder could not verify the proof (e.g. text not found, text occurs twice)."""

    @model_validator(mode="after")
    def _canonical_digest(self) -> Proof:
        if self.message_digest is not None:
            self.message_digest = normalize_digest(self.message_digest)
        return self


class Placement(_Model):
    """A piece of memory text at one location (slot) of a model request."""

    slot: str
    """Named location, e.g. `system_suffix`, `user_prefix`, `tool_result`."""
    kind: str = "text"
    """What the slot holds, e.g. `block`, `tool_output`, `message`."""
    text: str | None = None
    """The placement text exactly as sent; None when redacted (then `digest`/`size` stand in)."""
    digest: str | None = None
    """`text_digest` of `text`; computed when omitted."""
    size: Count | None = None
    """Character count when `text` is redacted."""
    proof: Proof | None = None
    """Proof of location; None when absent (the placement then cannot be verified)."""

    @model_validator(mode="after")
    def _fill_digest(self) -> Placement:
        if self.digest is None:
            if self.text is not None:
                self.digest = text_digest(self.text)
        else:
            self.digest = normalize_digest(self.digest)
        return self


class SearchResult(_Model):
    """One result of a memory search."""

    namespace: str = "default"
    """Namespace of the item."""
    item_id: str | None = None
    """Item identity."""
    version: str | None = None
    """Version of the item returned."""
    value: str | None = None
    """Returned text."""
    score: Number | None = None
    """Retriever score (annotation only)."""
