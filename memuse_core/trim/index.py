"""One MemTrim index per memory scope, optionally persisted in the DuckDB store (MemTrim 3.2, A.1).

Memory systems keep memories per user, agent or run (Mem0's `user_id` / `agent_id` / `run_id`,
Letta's agent). A memory of one scope must never trim another scope's memories, so every scope
has its own trie. With `db=` every write and delete is also stored (table `memtrim_memories`,
the parsed representation included), and a scope is restored from the store the first time it
is used, without parsing again (A.1 "parsed once ... cached with the trie index").

    index = ScopedIndex(db="data/memuse.duckdb")
    trimmer = index.trimmer(user_id="alice")       # MemTrim of that scope
    index.write("m1", "Lives in Oslo", user_id="alice")
    index.delete("m1", user_id="alice")

The library works without a store (then nothing is imported from `memuse_core.store`).
"""

from __future__ import annotations

import json
import time
from collections.abc import Hashable, Sequence
from pathlib import Path
from typing import Any

from .core import MemTrim
from .records import Parser, StoredMemory
from .serial import dump_parsed, load_parsed

_SCOPE_FIELDS = ("user_id", "agent_id", "run_id")


def scope_key(user_id: str | None = None, agent_id: str | None = None, run_id: str | None = None) -> str:
    """Canonical scope name: `user_id=alice&agent_id=a1` (fields in that order), `default`
    when none is given."""
    parts = [f"{k}={v}" for k, v in zip(_SCOPE_FIELDS, (user_id, agent_id, run_id)) if v not in (None, "")]
    return "&".join(parts) or "default"


class ScopedIndex:
    """MemTrim indexes by scope, with optional persistence (module docstring)."""

    def __init__(
        self,
        db: str | Path | None = None,
        *,
        parser: Parser | None = None,
        trust_timestamps: bool = False,
    ) -> None:
        self.db = Path(db) if db is not None else None
        self.parser = parser
        self.trust_timestamps = trust_timestamps
        self.scopes: dict[str, MemTrim] = {}

    # -- scopes ---------------------------------------------------------------------------------
    def trimmer(
        self,
        scope: str | None = None,
        *,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> MemTrim:
        """The MemTrim of a scope (`scope` as `scope_key` spells it, or the scope fields),
        restored from the store on first use."""
        name = scope or scope_key(user_id, agent_id, run_id)
        t = self.scopes.get(name)
        if t is None:
            t = self.scopes[name] = MemTrim(parser=self.parser, trust_timestamps=self.trust_timestamps)
            if self.db is not None and self.db.exists():
                self._restore(name, t)
        return t

    def _restore(self, name: str, t: MemTrim) -> None:
        from ..store.trim_index import load_trim_memories

        with _connection(self.db) as con:
            rows = load_trim_memories(con, name)
        for memory_id, text, answer, support, ts, parsed in rows:
            p = load_parsed(parsed) if parsed else None
            names = json.loads(support) if support else None
            if p is None:  # another stored format: parse again
                t.write(memory_id, text, answer, support=names, timestamp=ts)
            else:
                t.write_parsed(memory_id, text, answer, p, timestamp=ts, align=False)
                if names is not None:
                    t.memories[memory_id].support = tuple(names)

    # -- writes ---------------------------------------------------------------------------------
    def write(
        self,
        memory_id: Hashable,
        text: str,
        answer: str | None = None,
        *,
        support: Sequence[str] | None = None,
        timestamp: float | None = None,
        scope: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> StoredMemory:
        """Write (or update) one memory of a scope; persisted when the index has a store."""
        name = scope or scope_key(user_id, agent_id, run_id)
        return self.write_many([(memory_id, text, answer, support, timestamp)], scope=name)[0]

    def write_many(
        self,
        rows: Sequence[tuple[Hashable, str, str | None, Sequence[str] | None, float | None]],
        *,
        scope: str,
    ) -> list[StoredMemory]:
        """Write several memories of one scope; one store transaction for all of them."""
        t = self.trimmer(scope)
        out = [
            t.write(mid, text, answer, support=support, timestamp=ts)
            for mid, text, answer, support, ts in rows
        ]
        if self.db is not None and out:
            from ..store.trim_index import upsert_trim_memories

            now = time.time()
            stored = [
                (
                    scope,
                    str(m.memory_id),
                    m.text,
                    m.answer,
                    json.dumps(list(m.support)) if m.support is not None else None,
                    m.timestamp,
                    getattr(t.parser, "name", type(t.parser).__name__),
                    dump_parsed(m.parsed),
                    now,
                )
                for m in out
            ]
            with _connection(self.db) as con:
                upsert_trim_memories(con, stored)
        return out

    def delete(
        self,
        memory_id: Hashable,
        *,
        scope: str | None = None,
        user_id: str | None = None,
        agent_id: str | None = None,
        run_id: str | None = None,
    ) -> bool:
        """Forget a memory of a scope (deleted in the base store); also from the store."""
        name = scope or scope_key(user_id, agent_id, run_id)
        found = self.trimmer(name).delete(memory_id)
        if self.db is not None:
            from ..store.trim_index import delete_trim_memory

            with _connection(self.db) as con:
                found = delete_trim_memory(con, name, str(memory_id)) or found
        return found


class _connection:
    """A read-write store connection for one unit of work (closed on exit)."""

    def __init__(self, db: Path | None) -> None:
        self.db = db
        self.con: Any = None

    def __enter__(self) -> Any:
        from ..store import connect

        self.con = connect(self.db)
        return self.con

    def __exit__(self, *exc: object) -> None:
        self.con.close()
