"""How consecutive requests of an episode relate: history changes and delta encoding (MemUse A.1.3).

"The recorder also logs when the harness removes or rewrites earlier messages, which shows when
memory text leaves the input of the agent" (3.2). Comparing the raw messages of an agent request
with the previous agent request of its episode gives one of three answers:

* the previous messages are a prefix: the history only grew, nothing to record;
* the new input is the previous one with some messages dropped (then possibly new ones appended):
  a `retraction` of those positions;
* anything else (a summary replacing the tail, an edited earlier message): a `history_rewrite`
  keeping the longest common prefix and replacing the rest.

The same prefix test makes a delta-encoded request (`base_call_id` + `base_len`,
docs/decisions.md#delta-encoded-requests).
"""

from __future__ import annotations

from typing import Any

from ..events import EVENT_SCHEMA_VERSION
from .wire import MessageMap


def history_events(
    prev: list[Any] | None, mm: MessageMap, *, episode_id: str, call_id: str
) -> list[dict[str, Any]]:
    """Retraction or history-rewrite events before `call_id` (raw previous messages vs this request)."""
    new = mm.raw
    if prev is None or new[: len(prev)] == prev:
        return []
    removed, j = [], 0
    for i, m in enumerate(prev):
        if j < len(new) and new[j] == m:
            j += 1
        else:
            removed.append(i)
    gone = set(removed)
    kept = [m for i, m in enumerate(prev) if i not in gone]
    # Dropping the whole tail and sending other messages in its place is a rewrite (a summary).
    tail_replaced = bool(removed) and removed == list(range(removed[0], len(prev))) and len(new) > len(kept)
    if removed and new[: len(kept)] == kept and not tail_replaced:
        return [
            {
                "type": "retraction",
                "v": EVENT_SCHEMA_VERSION,
                "episode_id": episode_id,
                "before_call_id": call_id,
                "removed": removed,
            }
        ]
    k = 0
    while k < min(len(prev), len(new)) and prev[k] == new[k]:
        k += 1
    return [
        {
            "type": "history_rewrite",
            "v": EVENT_SCHEMA_VERSION,
            "episode_id": episode_id,
            "before_call_id": call_id,
            "kept_prefix": k,
            "replacement": mm.messages[k:],
        }
    ]


def delta_request(
    request: dict[str, Any], raw: list[Any], base: tuple[str, list[Any]] | None
) -> dict[str, Any]:
    """The request delta-encoded against `base` = (call id, raw messages) when those are a prefix."""
    if base is None:
        return request
    base_id, base_raw = base
    k = len(base_raw)
    if k == 0 or raw[:k] != base_raw:
        return request
    out = dict(request)
    out["base_call_id"], out["base_len"] = base_id, k
    out["messages"] = request["messages"][k:]
    return out
