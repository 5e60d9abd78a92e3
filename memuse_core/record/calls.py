"""What one forwarded model call becomes in the event log (MemUse 3.2, A.1.1).

Two pure steps around a call: `parse_request` turns the forwarded body into the recorded request
(normalised messages plus every other top-level field verbatim), and `model_call_event` turns the
finished call into its `model_call` event. The recorder keeps the episode state around them.

A body that cannot be recorded as structure is still recorded: a call whose body is not JSON, or
is JSON nested deeper than `MAX_BODY_DEPTH`, becomes a call with no messages whose request holds
the start of the raw body (`unparsed_body`) and the reason (`unparsed_reason`). The depth limit
keeps every event line the recorder writes readable by a parser with a recursion limit (the
event envelope adds at most 3 levels); a 100k-deep body would otherwise stop the recorder's own
parser and the call would be forwarded but never logged.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ..events import EVENT_SCHEMA_VERSION
from ..vocab import MAX_BODY_DEPTH, nests_deeper
from .deliveries import Delivery
from .wire import MessageMap, ParsedResponse, normalise_request

UNPARSED_PREFIX = 4000
"""Characters of an unparsed body kept in the event."""


@dataclass
class CallContext:
    """A request in flight: what `end_call` needs to write its events."""

    call_id: str
    episode_id: str
    role: str
    kind: str | None
    request: dict[str, Any]
    started_at: float
    op_ref: str | None
    raw: list[Any] = field(default_factory=list)
    """Raw request messages (for delta encoding against the previous call)."""
    pre_events: list[dict[str, Any]] = field(default_factory=list)
    consumed: list[Delivery] = field(default_factory=list)


@dataclass
class ParsedRequest:
    """A forwarded body as the recorder sees it."""

    obj: dict[str, Any] | None
    """The body when it is a JSON object within the depth limit (what proofs are checked against)."""
    mm: MessageMap
    request: dict[str, Any]
    """The recorded request (`model_call.request`)."""


def too_deep(obj: Any, limit: int) -> bool:
    """True when `obj` nests arrays/objects more than `limit` levels deep (a top-level array or
    object is level 1). Recursion is bounded by `limit`; about 0.06 ms for a 250-message request."""
    return nests_deeper(obj, limit)


def load_body(body: bytes, *, limit: int = MAX_BODY_DEPTH) -> tuple[Any, str | None]:
    """(parsed JSON, None), or (None, why it is recorded unparsed)."""
    if not body:
        return {}, None
    try:
        obj = json.loads(body)
    except RecursionError:
        return None, f"request body nested deeper than {limit} levels (too deep for the JSON parser)"
    except UnicodeDecodeError:
        return None, "request body is not UTF-8 text"
    except ValueError as e:
        return None, f"request body is not JSON ({str(e).splitlines()[0]})"
    if too_deep(obj, limit):
        return None, f"request body nested deeper than {limit} levels"
    return obj, None


def parse_request(kind: str | None, body: bytes) -> ParsedRequest:
    """The recorded request of a forwarded body (see module docstring)."""
    obj, why = load_body(body)
    rest: dict[str, Any]
    if isinstance(obj, dict) and kind is not None:
        mm, rest = normalise_request(kind, obj)
    else:
        mm, rest = MessageMap([], []), {}
        if why is not None:
            rest = {
                "unparsed_body": body[:UNPARSED_PREFIX].decode("utf-8", "replace"),
                "unparsed_reason": why,
            }
    request: dict[str, Any] = {"messages": mm.messages}
    for k, v in rest.items():
        if k in ("messages", "base_call_id", "base_len"):
            request[f"raw_{k}"] = v
        elif k == "tools" and not (isinstance(v, list) and all(isinstance(t, dict) for t in v)):
            request["raw_tools"] = v
        else:
            request[k] = v
    request["body_digest"] = hashlib.sha256(body).hexdigest()[:16]
    return ParsedRequest(obj if isinstance(obj, dict) else None, mm, request)


def model_call_event(
    ctx: CallContext,
    *,
    status: str,
    parsed: ParsedResponse | None,
    ended: float,
    http_status: int | None = None,
    error: str | None = None,
    extra: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The `model_call` event of a finished (or failed) call; the request is still in full."""
    resp: dict[str, Any] | None = None
    if parsed is not None and parsed.response is not None:
        resp = dict(parsed.response)
    if http_status is not None and (status != "ok" or http_status != 200):
        resp = resp or {"content": None}
        resp["http_status"] = http_status
    if error is not None:
        resp = resp or {"content": None}
        resp["error"] = error
    if extra:
        resp = resp or {"content": None}
        resp.update(extra)
    model = ctx.request.get("model")
    ev = {
        "type": "model_call",
        "v": EVENT_SCHEMA_VERSION,
        "episode_id": ctx.episode_id,
        "call_id": ctx.call_id,
        "role": ctx.role,
        "request": ctx.request,
        "response": resp,
        "usage": parsed.usage if parsed else None,
        "cost_usd": parsed.cost_usd if parsed else None,
        "status": status,
        "started_at": ctx.started_at,
        "ended_at": ended,
        "op_ref": ctx.op_ref,
        "model": parsed.model if parsed and parsed.model else model if isinstance(model, str) else None,
    }
    return {k: v for k, v in ev.items() if v is not None}
