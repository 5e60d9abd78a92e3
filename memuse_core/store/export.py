"""The store as a whole: every event in recorded order (the inverse of ingest) and summaries of
what it holds."""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterator
from typing import Any

import duckdb

from ..events import Event, MemoryChange, MemorySearch, SearchResult
from .decode import texts_of
from .reader import episode_events, run_events


def export_events(con: duckdb.DuckDBPyConnection, *, batch: int = 200) -> Iterator[Event]:
    """Every stored event in recorded order (file, then line): the inverse of ingest.

    Episode-less memory changes and searches (a shared corpus) are included. Requests come back
    delta-encoded against the previous call, which resolves to the same full inputs.
    """
    streams: list[list[tuple[tuple[int, int], Event]]] = [run_events(con, None)]
    eids = [r[0] for r in con.execute("SELECT episode_id FROM episodes ORDER BY file_id, seq").fetchall()]
    for i in range(0, len(eids), batch):
        streams.append(episode_events(con, eids[i : i + batch]))
    # episode-less events
    rows = con.execute(
        "SELECT namespace, item_id, version, op, value_hash, episode_id, run_id, op_ref, changed_at, file_id, "
        "seq FROM item_events WHERE episode_id IS NULL"
    ).fetchall()
    texts = texts_of(con, [r[4] for r in rows])
    streams.append(
        [
            (
                (r[9], r[10]),
                MemoryChange(
                    namespace=r[0],
                    item_id=r[1],
                    version=r[2],
                    op=r[3],
                    value=texts.get(r[4]) if r[4] is not None else None,
                    episode_id=None,
                    run_id=r[6],
                    op_ref=r[7],
                    at=r[8],
                ),
            )
            for r in rows
        ]
    )
    srows = con.execute(
        "SELECT search_id, episode_id, run_id, route, query_hash, scope, results, file_id, seq "
        "FROM searches WHERE episode_id IS NULL"
    ).fetchall()
    texts = texts_of(con, [r[4] for r in srows])
    streams.append(
        [
            (
                (r[7], r[8]),
                MemorySearch(
                    search_id=r[0],
                    episode_id=None,
                    run_id=r[2],
                    route=r[3],
                    query=texts.get(r[4]) if r[4] is not None else None,
                    scope=r[5],
                    results=[SearchResult.model_validate(x) for x in json.loads(r[6])],
                ),
            )
            for r in srows
        ]
    )
    for s in streams:
        s.sort(key=lambda x: x[0])
    for _, ev in heapq.merge(*streams, key=lambda x: x[0]):
        yield ev


def store_info(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """Counts and sizes of what the store holds."""

    def one(sql: str) -> Any:
        return con.execute(sql).fetchone()[0]  # type: ignore[index]

    info: dict[str, Any] = {
        "runs": one("SELECT count(*) FROM runs"),
        "configs": one("SELECT count(DISTINCT config) FROM runs"),
        "episodes": one("SELECT count(*) FROM episodes"),
        "steps": one("SELECT count(*) FROM steps"),
        "model_calls": one("SELECT count(*) FROM calls"),
        "tool_results": one("SELECT count(*) FROM tool_results"),
        "deliveries": one("SELECT count(*) FROM deliveries"),
        "delivery_entries": one("SELECT count(*) FROM delivery_entries"),
        "items": one(
            "SELECT count(*) FROM (SELECT DISTINCT namespace, item_id FROM item_events "
            "UNION SELECT DISTINCT namespace, item_id FROM delivery_entries WHERE item_id IS NOT NULL)"
        ),
        "memory_changes": one("SELECT count(*) FROM item_events"),
        "searches": one("SELECT count(*) FROM searches"),
        "files": one("SELECT count(*) FROM files"),
        "blobs": one("SELECT count(*) FROM blobs"),
        "unique_text_chars": one("SELECT coalesce(sum(length(text)), 0) FROM blobs"),
        "spans": one("SELECT count(*) FROM spans"),
        "judgments": one("SELECT count(*) FROM judgments"),
    }
    return info


def run_summary(con: duckdb.DuckDBPyConnection) -> list[tuple[Any, ...]]:
    """(config, run_id, episodes, resolve rate or None, episodes without outcome) per run, by
    configuration then run; the rate is over the episodes with an outcome (None: none has one)."""
    return con.execute(
        "SELECT r.config, r.run_id, count(e.episode_id), avg(CAST(e.resolved AS INT)), "
        "count(e.episode_id) FILTER (WHERE e.resolved IS NULL) "
        "FROM runs r LEFT JOIN episodes e USING (run_id) GROUP BY 1, 2 ORDER BY 1, 2"
    ).fetchall()
