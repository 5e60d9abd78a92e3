"""The event records of the log (DESIGN.md "The event log", MemUse A.1.1): one JSON object per line,
discriminated by `type`, and their parsing, migration, schema and serialisation."""

from __future__ import annotations

from typing import Annotated, Any, Literal, Union

from pydantic import Field, TypeAdapter

from .values import (
    EVENT_SCHEMA_VERSION,
    CallRole,
    CallStatus,
    ChangeOp,
    Cost,
    Entry,
    Index,
    Int32,
    Message,
    Number,
    Placement,
    Request,
    Response,
    Route,
    SearchResult,
    Usage,
    _Model,
)

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
    position: Index = 0
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
    cost_usd: Cost | None = None
    """Reported or computed cost in USD (finite, not negative)."""
    status: CallStatus = "ok"
    """`ok` completed, `error` failed, `incomplete` cut off (no attributed step)."""
    started_at: Number | None = None
    """Unix time when the request was sent."""
    ended_at: Number | None = None
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
    exit_code: Int32 | None = None
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
    removed: list[Index]
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
    kept_prefix: Index
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
    at: Number | None = None
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
    provisional_step: Int32 | None = None
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
