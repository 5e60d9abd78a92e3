"""MemTrim around Mem0 and Letta search results, in their own shapes (MemTrim 3.1: a
plug-and-play layer; the base memory system keeps storing and retrieving as before).

    flt = MemoryFilter(ScopedIndex(db="data/memuse.duckdb"))
    hits = mem0.search(query, user_id="alice")          # {"results": [{"id", "memory", ...}]}
    trimmed = flt(query, hits, user_id="alice")         # same shape, each memory trimmed or dropped
    trimmed["memtrim"]["decisions"]                     # what happened to each memory, and why
    flt.follow(mem0.add(messages, user_id="alice"), user_id="alice")   # ADD / UPDATE / DELETE

Accepted shapes (each returned in the same shape):
- Mem0 `search()` / `get_all()`: `{"results": [{"id", "memory", "metadata", "created_at",
  "updated_at", ...}], ...}` (other top-level keys such as `relations` are passed through);
- Letta archival search (`agents.passages.search`): `{"count", "results": [{"content",
  "timestamp", "tags"}]}` (no ids: a result's id is its content hash);
- a list of such results, or of Letta passages (`{"id", "text", "created_at", ...}`).
For a dict the decisions are added under `"memtrim"`; for a list they are in `flt.last`.

A result is written to the index the first time it is seen (parsed once, A.1); a known id whose
text changed is written again (an update). The stored answer and its support names may come in
`metadata[answer_field]` and `metadata[support_field]`.
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Hashable, Sequence
from datetime import datetime
from typing import Any

from .index import ScopedIndex, scope_key
from .records import Decision, TrimResult

TEXT_FIELDS = ("memory", "content", "text", "value")
TIME_FIELDS = ("updated_at", "created_at", "timestamp")


def _get(obj: Any, name: str) -> Any:
    if isinstance(obj, dict):
        return obj.get(name)
    return getattr(obj, name, None)


def _timestamp(raw: Any) -> float | None:
    if raw is None:
        return None
    if isinstance(raw, (int, float)):
        return float(raw)
    try:
        return datetime.fromisoformat(str(raw).replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


class Item:
    """One search result as the filter reads it."""

    __slots__ = ("raw", "memory_id", "field", "text", "answer", "support", "ts")

    def __init__(self, raw: Any, i: int, answer_field: str, support_field: str) -> None:
        self.raw = raw
        self.field = next((f for f in TEXT_FIELDS if isinstance(_get(raw, f), str)), None)
        if self.field is None:
            raise ValueError(f"search result {i}: no text field (expected one of {', '.join(TEXT_FIELDS)})")
        self.text: str = _get(raw, self.field)
        rid = _get(raw, "id")
        self.memory_id: Hashable = (
            str(rid) if rid is not None else "sha:" + hashlib.sha256(self.text.encode()).hexdigest()[:16]
        )
        meta = _get(raw, "metadata")
        meta = meta if isinstance(meta, dict) else {}
        ans = meta.get(answer_field)
        self.answer: str | None = str(ans) if ans is not None else None
        sup = meta.get(support_field)
        self.support: list[str] | None = (
            [s.strip() for s in sup.split(",")]
            if isinstance(sup, str)
            else [str(s) for s in sup]
            if sup
            else None
        )
        self.ts = next((t for f in TIME_FIELDS if (t := _timestamp(_get(raw, f))) is not None), None)


def decision_summary(d: Decision, item: Item | None = None) -> dict[str, Any]:
    """A compact, JSON-ready account of one memory's decision."""
    action = (
        "dropped" if not d.lines else "unchanged" if item and d.lines == [item.text.strip()] else "trimmed"
    )
    return {
        "id": str(d.memory_id),
        "action": action,
        "outcome": d.outcome,
        "reason": d.reason,
        "explanation": d.explain(),
        "removed_shared": [u.key.label() for u in d.shared],
        "removed_conflicting": [u.key.label() for u in d.conflicting],
        "withheld": [u.key.label() for u in d.withheld],
        "lines": list(d.lines),
    }


class MemoryFilter:
    """A callable filter around a scoped MemTrim index (module docstring)."""

    def __init__(
        self,
        index: ScopedIndex | None = None,
        *,
        answer_field: str = "answer",
        support_field: str = "support",
    ) -> None:
        self.index = index or ScopedIndex()
        self.answer_field = answer_field
        self.support_field = support_field
        self.last: TrimResult | None = None
        """The last read, with every decision."""

    def __call__(
        self,
        query: str,
        response: Any,
        *,
        scope: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> Any:
        """Trim a search response for `query` in one scope; returns the same shape."""
        name = scope or scope_key(user_id, agent_id, run_id)
        results = response.get("results") if isinstance(response, dict) else response
        if not isinstance(results, Sequence) or isinstance(results, (str, bytes)):
            raise ValueError("search response: expected {'results': [...]} or a list of results")
        items = [Item(r, i, self.answer_field, self.support_field) for i, r in enumerate(results)]
        self._sync(items, name)
        res = self.index.trimmer(name).read(query, [it.memory_id for it in items])
        self.last = res
        out_items = []
        for it in items:
            d = res.decisions[it.memory_id]
            if not d.lines:
                continue
            new = copy.copy(it.raw) if isinstance(it.raw, dict) else it.raw
            if isinstance(new, dict):
                new[it.field] = "\n".join(d.lines)
            out_items.append(new)
        if not isinstance(response, dict):
            return out_items
        out = dict(response)
        out["results"] = out_items
        if "count" in out:
            out["count"] = len(out_items)
        seen: set[Hashable] = set()
        summaries = []
        for it in items:
            if it.memory_id not in seen:
                seen.add(it.memory_id)
                summaries.append(decision_summary(res.decisions[it.memory_id], it))
        out["memtrim"] = {
            "scope": name,
            "query_task": res.query.task,
            "query_parsed": res.query.ok,
            "context": res.context,
            "decisions": summaries,
        }
        return out

    def _sync(self, items: list[Item], scope: str) -> None:
        """Write the results not yet indexed (or changed since) in one batch."""
        t = self.index.trimmer(scope)
        todo = []
        for it in items:
            known = t.memories.get(it.memory_id)
            support = tuple(it.support) if it.support is not None else None
            if (
                known is None
                or known.text != it.text
                or known.answer != it.answer
                or known.support != support
            ):
                todo.append((it.memory_id, it.text, it.answer, it.support, it.ts))
        if todo:
            self.index.write_many(todo, scope=scope)

    def follow(
        self,
        add_response: Any,
        *,
        scope: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> int:
        """Apply Mem0 `add()` events to the index: ADD and UPDATE write, DELETE deletes; returns
        how many events were applied (the index follows the memory store)."""
        name = scope or scope_key(user_id, agent_id, run_id)
        results = add_response.get("results", []) if isinstance(add_response, dict) else add_response
        writes = []
        n = 0
        for i, r in enumerate(results or []):
            event = str(_get(r, "event") or "ADD").upper()
            if event == "DELETE":
                self.index.delete(str(_get(r, "id")), scope=name)
                n += 1
            elif event in ("ADD", "UPDATE"):
                it = Item(r, i, self.answer_field, self.support_field)
                writes.append((it.memory_id, it.text, it.answer, it.support, it.ts))
        if writes:
            self.index.write_many(writes, scope=name)
        return n + len(writes)

    def update(
        self,
        memory_id: str,
        text: str,
        *,
        scope: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> None:
        """Hook for the base store's update(memory_id, text)."""
        self.index.write(memory_id, text, scope=scope or scope_key(user_id, agent_id, run_id))

    def delete(
        self,
        memory_id: str,
        *,
        scope: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> bool:
        """Hook for the base store's delete(memory_id)."""
        return self.index.delete(memory_id, scope=scope or scope_key(user_id, agent_id, run_id))
