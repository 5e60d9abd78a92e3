"""Mem0 provider adapter (MemUse A.1.1 "Recording interface", 4.1 host-scheduled task recall).

Wraps a `mem0.Memory` so that every operation is annotated through the bridge:

* `search` -> `memory_search` (query, scope, ranked results with item id, version and score);
* `add` / `update` / `delete` -> `memory_change` (create / update / delete);
* `remember_episode` -> the after-episode extraction into the repository scope (Mem0's own LLM
  extraction with `infer=True`, or the agent's closing message stored verbatim with `infer=False`).

Portable item references: namespace `mem0:<scope>`, item id = Mem0's UUID (`id_scheme="mem0-uuid"`),
version = Mem0's content hash (the same text gives the same version in every operation). Rendered
recall lines carry the display key `mem0:<first 8 chars of the id>`, as Mem0's coding-agent plugins
show it (MEMORY-FORMATS.md).
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..bridge import Bridge

RECALL_HEADER = "### Relevant memories"


@dataclass
class Mem0Item:
    """One Mem0 memory as returned by a search."""

    item_id: str
    value: str
    version: str | None
    score: float | None = None
    kind: str = "fact"
    metadata: dict[str, Any] = field(default_factory=dict)

    @property
    def display_key(self) -> str:
        return f"mem0:{self.item_id[:8]}"


def _version(value: str, given: Any) -> str:
    # Mem0 stores the md5 of the text as `hash`; recompute it when a result omits it.
    return given if isinstance(given, str) and given else hashlib.md5(value.encode("utf-8")).hexdigest()


class Mem0Provider:
    """A Mem0 memory whose operations are recorded (see module docstring)."""

    def __init__(self, memory: Any, bridge: Bridge, *, max_chars: int = 4000, threshold: float | None = None):
        self.memory = memory
        self.bridge = bridge
        self.max_chars = max_chars
        """Budget of a rendered recall block including its frame (Mem0 task recall uses ~4,000)."""
        self.threshold = threshold
        """Minimum search score; None keeps Mem0's default (0.1 in mem0ai 2.2)."""

    @staticmethod
    def namespace(scope: str) -> str:
        return f"mem0:{scope}"

    # -- search ------------------------------------------------------------------------------
    def search(
        self, query: str, scope: str, *, route: str = "host", top_k: int = 5
    ) -> tuple[str, list[Mem0Item]]:
        """Search a scope; records the search and returns (search id, items in rank order)."""
        kw: dict[str, Any] = {} if self.threshold is None else {"threshold": self.threshold}
        op = f"search-{uuid.uuid4().hex[:12]}"
        with self.bridge.operation(op):  # embedding calls of the search carry its id
            res = self.memory.search(query, filters={"user_id": scope}, top_k=top_k, **kw)
        items = []
        for r in (res or {}).get("results", []):
            meta = r.get("metadata") or {}
            items.append(
                Mem0Item(
                    item_id=str(r["id"]),
                    value=str(r.get("memory", "")),
                    version=_version(str(r.get("memory", "")), r.get("hash")),
                    score=r.get("score"),
                    kind=str(meta.get("type", "fact")),
                    metadata=meta,
                )
            )
        sid = self.bridge.memory_search(
            query,
            [
                {
                    "namespace": self.namespace(scope),
                    "item_id": it.item_id,
                    "version": it.version,
                    "value": it.value,
                    "score": it.score,
                }
                for it in items
            ],
            route=route,
            scope=scope,
            search_id=op,
        )
        return sid, items

    def entries(self, items: list[Mem0Item], scope: str) -> list[dict[str, Any]]:
        """Delivered entries with portable references (A.1.4 identity fields)."""
        return [
            {
                "namespace": self.namespace(scope),
                "item_id": it.item_id,
                "id_scheme": "mem0-uuid",
                "version": it.version,
                "value": it.value,
                "display_key": it.display_key,
                "labels": {"score": it.score, "type": it.kind},
            }
            for it in items
        ]

    def render(self, items: list[Mem0Item]) -> tuple[str, list[Mem0Item]]:
        """The recall block and the items it holds (items past the character budget are left out)."""
        lines = [RECALL_HEADER]
        used: list[Mem0Item] = []
        for it in items:
            line = f"- [{it.kind}] {it.value} [{it.display_key}]"
            if len("\n".join(lines + [line])) > self.max_chars:
                break
            lines.append(line)
            used.append(it)
        return ("\n".join(lines) if used else ""), used

    # -- changes -----------------------------------------------------------------------------
    def add(
        self,
        text: str | list[dict[str, Any]],
        scope: str,
        *,
        metadata: dict[str, Any] | None = None,
        infer: bool = False,
        op_ref: str | None = None,
    ) -> list[str]:
        """Store text (or, with infer, a conversation) in a scope; records each resulting change.

        The generation's model calls (Mem0's LLM with `infer=True`, a remote embedder) carry the
        operation reference that its changes carry (A.1.1)."""
        op = op_ref or f"gen-{uuid.uuid4().hex[:12]}"
        with self.bridge.operation(op):
            res = self.memory.add(text, user_id=scope, metadata=metadata or {}, infer=infer)
        return self._record_results(res, scope, op)

    def _record_results(self, res: Any, scope: str, op_ref: str | None) -> list[str]:
        ids = []
        for r in (res or {}).get("results", []):
            iid = str(r.get("id"))
            event = str(r.get("event", "ADD")).upper()
            op = {"ADD": "create", "UPDATE": "update", "DELETE": "delete"}.get(event)
            if op is None:
                continue
            value = None if op == "delete" else str(r.get("memory", ""))
            version = None
            if op != "delete":
                got = self.memory.get(iid) or {}
                value = str(got.get("memory", value))
                version = _version(value, got.get("hash"))
            self.bridge.memory_change(
                iid, op, value=value, namespace=self.namespace(scope), version=version, op_ref=op_ref
            )
            ids.append(iid)
        return ids

    def update(self, item_id: str, text: str, scope: str) -> None:
        """Replace an item's text."""
        op = f"gen-{uuid.uuid4().hex[:12]}"
        with self.bridge.operation(op):  # re-embedding calls carry the operation id
            self.memory.update(item_id, text)
        got = self.memory.get(item_id) or {}
        value = str(got.get("memory", text))
        self.bridge.memory_change(
            item_id,
            "update",
            value=value,
            namespace=self.namespace(scope),
            version=_version(value, got.get("hash")),
            op_ref=op,
        )

    def delete(self, item_id: str, scope: str) -> None:
        """Delete an item."""
        self.memory.delete(item_id)
        self.bridge.memory_change(item_id, "delete", namespace=self.namespace(scope))

    def remember_episode(
        self, messages: list[dict[str, Any]], scope: str, *, infer: bool = False
    ) -> list[str]:
        """After-episode extraction from the conversation (never from tool outputs).

        With `infer=True` Mem0's own LLM extracts facts from the user/assistant turns (its model
        calls go wherever its `llm` config points, e.g. the proxy's /memory/v1). With
        `infer=False` the agent's closing message (its last assistant turn) is stored verbatim
        when it has text.
        """
        turns = [
            {"role": m["role"], "content": m["content"]}
            for m in messages
            if m.get("role") in ("user", "assistant")
            and isinstance(m.get("content"), str)
            and m["content"].strip()
        ]
        if infer:
            return self.add(turns, scope, infer=True)
        closing = next((m for m in reversed(messages) if m.get("role") == "assistant"), None)
        text = closing.get("content") if closing else None
        if not isinstance(text, str) or not text.strip():
            return []
        return self.add(text.strip(), scope, metadata={"type": "lesson"})
