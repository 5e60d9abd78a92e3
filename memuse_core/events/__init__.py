"""The event log: the input contract of MemUse Studio (DESIGN.md "The event log", MemUse A.1.1).

Every importer and recorder produces these events, one JSON object per line; the store ingests
nothing else. The models are the single source of truth for field names and allowed values, and
`memuse schema` publishes their JSON Schema. `events.values` holds what events carry (messages,
requests, entries, placements); `events.records` the ten event types and their parsing.

Two deliberate extensions of the DESIGN.md table:

* `model_call.request` may be *delta encoded*: `base_call_id` + `base_len` say "the first
  `base_len` messages of that earlier call's request, then `messages`". A 250-step episode that
  resends its history would otherwise make the log itself quadratic in size. Full requests remain
  valid and are what the recorder writes.
* `memory_change` and `memory_search` carry an optional `run_id`, so per-run memory stores (each
  run starts empty) can be told apart from a fixed corpus shared by all runs.
"""

from .records import (
    EVENT_ADAPTER,
    EVENT_TYPES,
    EpisodeEnd,
    EpisodeStart,
    Event,
    HistoryRewrite,
    MemoryChange,
    MemoryDelivery,
    MemorySearch,
    ModelCall,
    Retraction,
    RunEvent,
    ToolResultEvent,
    dump_event,
    event_json_schema,
    migrate_event,
    parse_event,
)
from .values import (
    EVENT_SCHEMA_VERSION,
    CallRole,
    CallStatus,
    ChangeOp,
    Entry,
    Message,
    Placement,
    Proof,
    Request,
    Response,
    Route,
    SearchResult,
    ToolCall,
    Usage,
    digest_matches,
    message_text,
    normalize_digest,
    text_digest,
)

__all__ = [
    "EVENT_ADAPTER",
    "EVENT_SCHEMA_VERSION",
    "EVENT_TYPES",
    "CallRole",
    "CallStatus",
    "ChangeOp",
    "Entry",
    "EpisodeEnd",
    "EpisodeStart",
    "Event",
    "HistoryRewrite",
    "MemoryChange",
    "MemoryDelivery",
    "MemorySearch",
    "Message",
    "ModelCall",
    "Placement",
    "Proof",
    "Request",
    "Response",
    "Retraction",
    "Route",
    "RunEvent",
    "SearchResult",
    "ToolCall",
    "ToolResultEvent",
    "Usage",
    "digest_matches",
    "dump_event",
    "event_json_schema",
    "message_text",
    "migrate_event",
    "normalize_digest",
    "parse_event",
    "text_digest",
]
