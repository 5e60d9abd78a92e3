"""Wrap any memory system's search results with MemTrim (MemTrim 3.1: a plug-and-play layer).

The base memory system keeps storing and retrieving as before; MemTrim only sees what it
returned. A search result is anything with an id and a text: Mem0's result dicts
(`{"id", "memory", "metadata", "updated_at", ...}` or the whole `{"results": [...]}` reply),
plain `(id, text)` pairs, or objects with `id` and `memory`/`text`/`value` attributes.

    flt = SearchResultFilter(MemTrim())
    result = flt(query, mem0.search(query, filters={"user_id": "u"}, top_k=5))
    prompt = result.context + "\\n\\n" + query

A result seen for the first time is written (parsed once, A.1); a known id whose text changed is
written again. The stored answer is taken from `metadata[answer_field]` when present.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from datetime import datetime
from typing import Any

from .core import MemTrim, TrimResult

_TEXT_FIELDS = ("memory", "text", "value", "content")


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


def normalize_results(
    results: Any, *, answer_field: str = "answer"
) -> list[tuple[Hashable, str, str | None, float | None]]:
    """(id, text, answer, timestamp) for every search result, in retrieval order."""
    if isinstance(results, dict) and "results" in results:
        results = results["results"]
    out: list[tuple[Hashable, str, str | None, float | None]] = []
    for i, r in enumerate(results or []):
        if isinstance(r, (tuple, list)) and len(r) >= 2:
            out.append((r[0], str(r[1]), r[2] if len(r) > 2 else None, None))
            continue
        rid = _get(r, "id")
        text = next((t for f in _TEXT_FIELDS if isinstance(t := _get(r, f), str)), None)
        if text is None:
            raise ValueError(f"search result {i}: no text field (expected one of {', '.join(_TEXT_FIELDS)})")
        if rid is None:
            raise ValueError(f"search result {i}: no `id`")
        meta = _get(r, "metadata") or {}
        answer = meta.get(answer_field) if isinstance(meta, dict) else None
        ts = _timestamp(_get(r, "updated_at") or _get(r, "created_at"))
        out.append((rid, text, answer, ts))
    return out


def trim_search_results(
    trimmer: MemTrim, query: str, results: Any, *, answer_field: str = "answer"
) -> TrimResult:
    """Write unseen results, then trim them for `query` (restricted to these ids, A.1)."""
    rows = normalize_results(results, answer_field=answer_field)
    for rid, text, answer, ts in rows:
        known = trimmer.memories.get(rid)
        if known is None or known.text != text or known.answer != answer:
            trimmer.write(rid, text, answer, timestamp=ts)
    return trimmer.read(query, [r[0] for r in rows])


class SearchResultFilter:
    """A callable filter: `filter(query, results) -> TrimResult` around one MemTrim index."""

    def __init__(self, trimmer: MemTrim | None = None, *, answer_field: str = "answer") -> None:
        self.trimmer = trimmer or MemTrim()
        self.answer_field = answer_field

    def __call__(self, query: str, results: Iterable[Any] | dict[str, Any]) -> TrimResult:
        return trim_search_results(self.trimmer, query, results, answer_field=self.answer_field)
