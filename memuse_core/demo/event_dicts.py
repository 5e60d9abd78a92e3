"""Event dicts of the demo corpus, built as a recorder would write them (MemUse A.1.1): delivered
entries, memory deliveries with their placement proofs, and the memory system's own model calls.
`demo.emit` streams them in episode order."""

from __future__ import annotations

from typing import Any

from ..events import EVENT_SCHEMA_VERSION, text_digest

V = EVENT_SCHEMA_VERSION


def entry_dict(
    namespace: str,
    item_id: str,
    value: str,
    *,
    version: str = "1",
    scheme: str,
    display_key: str | None = None,
    **labels: Any,
) -> dict[str, Any]:
    """A delivered entry as an event dict (digest precomputed, as a recorder would)."""
    d: dict[str, Any] = {
        "namespace": namespace,
        "item_id": item_id,
        "id_scheme": scheme,
        "version": version,
        "digest": text_digest(value),
        "value": value,
    }
    if display_key:
        d["display_key"] = display_key
    if labels:
        d["labels"] = labels
    return d


def delivery_event(
    episode_id: str,
    delivery_id: str,
    route: str,
    form: str,
    call_id: str,
    entries: list[dict[str, Any]],
    text: str,
    digest: str,
    index: int,
    host_digest: str,
    start: int,
    search_id: str | None,
    proof: bool,
) -> dict[str, Any]:
    """A memory delivery with one placement (a host block in the system message, or a tool
    result), proven by message index, host digest and offset when `proof`."""
    pl: dict[str, Any] = {
        "slot": "system_suffix" if route == "host" else "tool_result",
        "kind": "block" if route == "host" else "tool_output",
        "text": text,
        "digest": digest,
    }
    if proof:
        pl["proof"] = {"message_index": index, "message_digest": host_digest, "start": start}
    ev: dict[str, Any] = {
        "type": "memory_delivery",
        "v": V,
        "episode_id": episode_id,
        "delivery_id": delivery_id,
        "route": route,
        "form": form,
        "consuming_call_id": call_id,
        "entries": entries,
        "placements": [pl],
    }
    if search_id:
        ev["search_id"] = search_id
    return ev


def memory_call_event(
    episode_id: str,
    call_id: str,
    prompt: str,
    answer: str,
    inp: int,
    out: int,
    cost: float,
    t: float,
    op_ref: str,
    model: str,
) -> dict[str, Any]:
    """A memory-system model call (extraction after the episode) as an event dict."""
    return {
        "type": "model_call",
        "v": V,
        "episode_id": episode_id,
        "call_id": call_id,
        "role": "memory",
        "request": {
            "messages": [
                {"role": "system", "content": "Extract durable facts from this coding session."},
                {"role": "user", "content": prompt},
            ]
        },
        "response": {"content": answer},
        "usage": {"input_tokens": inp, "output_tokens": out},
        "cost_usd": round(cost, 7),
        "status": "ok",
        "started_at": t,
        "ended_at": t + 2.0,
        "op_ref": op_ref,
        "model": model,
    }


def embedding_call_event(
    episode_id: str, call_id: str, text: str, inp: int, cost: float, t: float, op_ref: str
) -> dict[str, Any]:
    """The memory system embedding a query or memory, as an event dict."""
    return {
        "type": "model_call",
        "v": V,
        "episode_id": episode_id,
        "call_id": call_id,
        "role": "embedding",
        "request": {"messages": [{"role": "user", "content": text}]},
        "response": {"content": "[384 floats]"},
        "usage": {"input_tokens": inp, "output_tokens": 0},
        "cost_usd": round(cost, 9),
        "status": "ok",
        "started_at": t,
        "ended_at": t + 0.05,
        "op_ref": op_ref,
        "model": "all-MiniLM-L6-v2",
    }
