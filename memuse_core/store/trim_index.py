"""SQL of the persisted MemTrim index (table `memtrim_memories`, DDL in `area_tables`).

Rows are plain tuples; `memuse_core.trim.index` turns them into parsed memories. The store knows
nothing of MemTrim's types (the layers point one way).
"""

from __future__ import annotations

from typing import Any

import duckdb

MEMORY_COLUMNS = ("scope", "memory_id", "text", "answer", "support", "ts", "parser", "parsed", "written_at")
"""Column order of the rows `upsert_trim_memories` takes."""


def upsert_trim_memories(con: duckdb.DuckDBPyConnection, rows: list[tuple[Any, ...]]) -> None:
    """Insert or replace memories (rows in MEMORY_COLUMNS order) in one transaction."""
    if not rows:
        return
    con.execute("BEGIN")
    try:
        con.executemany(
            "INSERT OR REPLACE INTO memtrim_memories (" + ", ".join(MEMORY_COLUMNS) + ") "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [list(r) for r in rows],
        )
        con.execute("COMMIT")
    except Exception:
        con.execute("ROLLBACK")
        raise


def delete_trim_memory(con: duckdb.DuckDBPyConnection, scope: str, memory_id: str) -> bool:
    """Remove one memory of a scope; False when it was not stored."""
    row = con.execute(
        "DELETE FROM memtrim_memories WHERE scope = ? AND memory_id = ? RETURNING memory_id",
        [scope, memory_id],
    ).fetchall()
    return bool(row)


def load_trim_memories(
    con: duckdb.DuckDBPyConnection, scope: str
) -> list[tuple[str, str, str | None, str | None, float | None, str | None]]:
    """(memory_id, text, answer, support JSON, ts, parsed JSON) of a scope in write order."""
    return con.execute(
        "SELECT memory_id, text, answer, support, ts, parsed FROM memtrim_memories WHERE scope = ? "
        "ORDER BY written_at, memory_id",
        [scope],
    ).fetchall()


def trim_scopes(con: duckdb.DuckDBPyConnection) -> list[tuple[str, int]]:
    """Stored scopes with their memory counts."""
    return con.execute(
        "SELECT scope, count(*) FROM memtrim_memories GROUP BY scope ORDER BY scope"
    ).fetchall()
