"""The event log: the input contract of MemUse Studio (DESIGN.md "The event log", MemUse A.1.1).

Every importer and recorder produces these events, one JSON object per line; the store ingests
nothing else. The models are the single source of truth for field names and allowed values, and
`memuse schema` publishes their JSON Schema.

Two deliberate extensions of the DESIGN.md table (see docs/decisions.md):

* `model_call.request` may be *delta encoded*: `base_call_id` + `base_len` say "the first
  `base_len` messages of that earlier call's request, then `messages`". A 250-step episode that
  resends its history would otherwise make the log itself quadratic in size. Full requests remain
  valid and are what the recorder writes.
* `memory_change` and `memory_search` carry an optional `run_id`, so per-run memory stores (each
  run starts empty) can be told apart from a fixed corpus shared by all runs.
"""

from __future__ import annotations

import hashlib
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

EVENT_SCHEMA_VERSION = 1
"""Version of the event-log format; bump it and add a step to `migrate_event` on any change."""

CallRole = Literal["agent", "memory", "embedding"]
CallStatus = Literal["ok", "error", "incomplete"]
Route = Literal["host", "agent"]
ChangeOp = Literal["create", "update", "delete"]


def text_digest(text: str) -> str:
    """Digest used by placement proofs and entry equality: sha256 of the UTF-8 text, 16 hex chars."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)


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
    base_len: int | None = Field(default=None, ge=0)
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

    input_tokens: int | None = None
    """Prompt tokens, including cached ones."""
    output_tokens: int | None = None
    """Completion tokens, including reasoning ones."""
    cached_tokens: int | None = None
    """Prompt tokens served from the provider's cache."""
    reasoning_tokens: int | None = None
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
        if self.digest is None and self.value is not None:
            self.digest = text_digest(self.value)
        return self


class Proof(_Model):
    """Where a placement sits in the consuming request (MemUse A.1.1 "Placements and proofs")."""

    message_index: int | None = None
    """Index of the host message in the consuming request's messages."""
    json_pointer: str | None = None
    """RFC 6901 pointer into the request body (e.g. `/messages/0/content`)."""
    message_digest: str | None = None
    """`text_digest` of the host message's text, when the proof pins it."""
    start: int | None = Field(default=None, ge=0)
    """Character offset of the placement inside the host message text, if the adapter knows it."""
    verified: bool | None = None
    """The recorder's check of this proof against the request it forwarded (None: not checked)."""
    problem: str | None = None
    """Why the recorder could not verify the proof (e.g. text not found, text occurs twice)."""


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
    size: int | None = None
    """Character count when `text` is redacted."""
    proof: Proof | None = None
    """Proof of location; None when absent (the placement then cannot be verified)."""

    @model_validator(mode="after")
    def _fill_digest(self) -> Placement:
        if self.digest is None and self.text is not None:
            self.digest = text_digest(self.text)
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
    score: float | None = None
    """Retriever score (annotation only)."""


# --------------------------------------------------------------------------------------------
# Events
# --------------------------------------------------------------------------------------------


class RunEvent(_Model):
    """A run: one configuration executing a task sequence once."""

    type: Literal["run"] = "run"
    v: int = EVENT_SCHEMA_VERSION
    """Event schema version."""
    run_id: str
    """Unique id of the run."""
    config: str = "default"
    """Memory system/configuration name (runs of one config are pooled)."""
    label: str | None = None
    """Human label of the run."""
    agent: str | None = None
    """Agent harness (e.g. `mini-swe-agent 2.4.6`)."""
    model: str | None = None
    """Agent model name."""
    meta: dict[str, Any] = Field(default_factory=dict)
    """Free-form metadata (source file, harness settings)."""


class EpisodeStart(_Model):
    """Start of an episode: one execution of the agent on a task."""

    type: Literal["episode_start"] = "episode_start"
    v: int = EVENT_SCHEMA_VERSION
    """Event schema version."""
    episode_id: str
    """Unique id of the episode."""
    run_id: str
    """The run it belongs to."""
    task_id: str
    """Task identifier (same across runs for paired comparisons)."""
    position: int = 0
    """Order of the episode in the run's task sequence."""
    repo: str | None = None
    """Repository or environment the task is in."""
    task: str | None = None
    """Task text as given to the agent."""
    reference: str | None = None
    """Optional reference solution (e.g. gold patch) for the judge's reference mode."""


class ModelCall(_Model):
    """One model call at the API boundary."""

    type: Literal["model_call"] = "model_call"
    v: int = EVENT_SCHEMA_VERSION
    """Event schema version."""
    episode_id: str
    """Episode of the call."""
    call_id: str
    """Unique id of the call."""
    role: CallRole = "agent"
    """Who made the call: the agent, the memory system, or an embedding request."""
    request: Request = Field(default_factory=Request)
    """Request (messages, tools)."""
    response: Response | None = None
    """Response; None for failed or incomplete calls."""
    usage: Usage | None = None
    """Reported token usage."""
    cost_usd: float | None = None
    """Reported or computed cost in USD."""
    status: CallStatus = "ok"
    """`ok` completed, `error` failed, `incomplete` cut off (no attributed step)."""
    started_at: float | None = None
    """Unix time when the request was sent."""
    ended_at: float | None = None
    """Unix time when the response completed."""
    op_ref: str | None = None
    """Memory operation this call served (search/generation id) for memory-system calls."""
    model: str | None = None
    """Model name used by this call, when recorded."""


class ToolResultEvent(_Model):
    """The result of a tool execution requested by a call."""

    type: Literal["tool_result"] = "tool_result"
    v: int = EVENT_SCHEMA_VERSION
    """Event schema version."""
    episode_id: str
    """Episode."""
    call_id: str
    """The model call whose response issued the tool call."""
    tool_call_id: str | None = None
    """The tool call id, when the harness uses tool calling."""
    name: str | None = None
    """Tool name (e.g. `bash`)."""
    arguments: str | None = None
    """The command or arguments executed."""
    output: str = ""
    """What the tool returned to the agent."""
    exit_code: int | None = None
    """Exit status, when known."""


class Retraction(_Model):
    """The harness removed earlier messages before a call (A.1.3)."""

    type: Literal["retraction"] = "retraction"
    v: int = EVENT_SCHEMA_VERSION
    """Event schema version."""
    episode_id: str
    """Episode."""
    before_call_id: str
    """The first call whose input no longer has these messages."""
    removed: list[int]
    """Positions (in the previous call's messages) that were removed."""


class HistoryRewrite(_Model):
    """The harness replaced its history (e.g. summarised) before a call (A.1.3)."""

    type: Literal["history_rewrite"] = "history_rewrite"
    v: int = EVENT_SCHEMA_VERSION
    """Event schema version."""
    episode_id: str
    """Episode."""
    before_call_id: str
    """The first call whose input shows the rewritten history."""
    kept_prefix: int = Field(ge=0)
    """How many leading messages of the previous input were kept."""
    replacement: list[Message] = Field(default_factory=list)
    """Messages that replaced the rest."""


class MemoryChange(_Model):
    """A memory item was created, updated or deleted."""

    type: Literal["memory_change"] = "memory_change"
    v: int = EVENT_SCHEMA_VERSION
    """Event schema version."""
    namespace: str = "default"
    """Namespace or scope."""
    item_id: str
    """Item identity."""
    version: str | None = None
    """Version created by this change."""
    op: ChangeOp
    """Operation."""
    value: str | None = None
    """New value (None for delete)."""
    episode_id: str | None = None
    """Episode that caused the change; None when the origin is unobserved."""
    run_id: str | None = None
    """Run whose store changed; None for a corpus shared by every run."""
    op_ref: str | None = None
    """Memory operation (generation) id, linking memory-system model calls."""
    at: float | None = None
    """Unix time of the change."""


class MemorySearch(_Model):
    """A memory search and its results."""

    type: Literal["memory_search"] = "memory_search"
    v: int = EVENT_SCHEMA_VERSION
    """Event schema version."""
    episode_id: str | None = None
    """Episode the search belongs to."""
    search_id: str
    """Unique id of the search."""
    route: Route = "host"
    """`host` (scheduled by the host) or `agent` (a memory-tool call)."""
    query: str | None = None
    """Query text."""
    scope: str | None = None
    """Scope searched."""
    results: list[SearchResult] = Field(default_factory=list)
    """Results in rank order."""
    run_id: str | None = None
    """Run whose store was searched."""


class MemoryDelivery(_Model):
    """Memory text placed into a model input (MemUse 3.1-3.2)."""

    type: Literal["memory_delivery"] = "memory_delivery"
    v: int = EVENT_SCHEMA_VERSION
    """Event schema version."""
    episode_id: str
    """Episode."""
    delivery_id: str
    """Unique id of the delivery."""
    route: Route = "host"
    """`host`-scheduled insertion or `agent`-directed tool result."""
    form: str = "block"
    """Delivered form: `search_preview`, `full_card`, `task_recall`, `persona`, `skill_catalog`..."""
    consuming_call_id: str | None = None
    """The call whose input carried the delivery (bound by the recorder); None when unbound."""
    search_id: str | None = None
    """The search whose results this delivery shows, if any."""
    entries: list[Entry] = Field(default_factory=list)
    """Ordered entries; empty for a search that returned nothing."""
    placements: list[Placement] = Field(default_factory=list)
    """Where the text was placed, with proofs."""
    provisional_step: int | None = None
    """Audit-only step guess for unbound deliveries (never used for judging)."""


class EpisodeEnd(_Model):
    """End of an episode with its outcome."""

    type: Literal["episode_end"] = "episode_end"
    v: int = EVENT_SCHEMA_VERSION
    """Event schema version."""
    episode_id: str
    """Episode."""
    resolved: bool | None = None
    """Task outcome; None when unknown (no harness result)."""
    exit_status: str | None = None
    """Harness exit status (`Submitted`, `LimitsExceeded`, an exception name...)."""
    submission: str | None = None
    """Final patch or answer, if any."""


Event = Annotated[
    Union[
        RunEvent,
        EpisodeStart,
        ModelCall,
        ToolResultEvent,
        Retraction,
        HistoryRewrite,
        MemoryChange,
        MemorySearch,
        MemoryDelivery,
        EpisodeEnd,
    ],
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)
EVENT_TYPES = (
    "run",
    "episode_start",
    "model_call",
    "tool_result",
    "retraction",
    "history_rewrite",
    "memory_change",
    "memory_search",
    "memory_delivery",
    "episode_end",
)


def migrate_event(obj: dict[str, Any]) -> dict[str, Any]:
    """Bring an event dict of an older schema version up to EVENT_SCHEMA_VERSION (in place)."""
    v = obj.get("v", EVENT_SCHEMA_VERSION)
    if isinstance(v, int) and v > EVENT_SCHEMA_VERSION:
        raise ValueError(f"event schema version {v} is newer than this MemUse ({EVENT_SCHEMA_VERSION})")
    obj["v"] = EVENT_SCHEMA_VERSION
    return obj


def parse_event(obj: dict[str, Any]) -> Event:
    """Validate one event dict (raises pydantic.ValidationError)."""
    return EVENT_ADAPTER.validate_python(migrate_event(obj))


def event_json_schema() -> dict[str, Any]:
    """The JSON Schema of one event line."""
    schema = EVENT_ADAPTER.json_schema()
    schema["title"] = "MemUse event"
    schema["description"] = (
        f"One line of a MemUse event log (schema version {EVENT_SCHEMA_VERSION}); "
        "events are JSON objects discriminated by `type`."
    )
    return schema


def dump_event(ev: Event) -> str:
    """Serialise an event as one compact JSON line (no trailing newline)."""
    return ev.model_dump_json(exclude_none=True, exclude_defaults=False)
