"""Which ids and item versions the store already holds: the store side of the referential checks
that ingest runs before it commits a file (`ingest.checks`). Results are read with fetchall (a
half-read result would block a later `register` on the same connection)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb


VersionKey = tuple[str | None, str, str, str]
"""(run_id, namespace, item_id, version) of a memory item version; run_id None: shared corpus."""


def missing_ids(con: duckdb.DuckDBPyConnection, table: str, ids: list[str]) -> set[str]:
    """The ids among `ids` that `table` (`runs` or `searches`) does not hold."""
    col = {"runs": "run_id", "searches": "search_id"}[table]
    if not ids:
        return set()
    found = con.execute(
        f"SELECT {col} FROM {table} WHERE {col} IN (SELECT unnest(?::VARCHAR[]))", [ids]
    ).fetchall()
    return set(ids) - {r[0] for r in found}


def stored_versions(
    con: duckdb.DuckDBPyConnection, keys: list[VersionKey], *, other_than_file: int | None
) -> dict[VersionKey, tuple[int | None, str | None, int]]:
    """(value hash, source path, line) of the first stored change of each version in `keys`, from
    files other than `other_than_file` (the file being imported: the open transaction sees its rows)."""
    if not keys:
        return {}
    rows = con.execute(
        "SELECT i.run_id, i.namespace, i.item_id, i.version, i.value_hash, f.path, i.seq "
        "FROM item_events i LEFT JOIN files f USING (file_id) "
        "WHERE i.version IS NOT NULL AND i.item_id IN (SELECT unnest(?::VARCHAR[])) "
        "AND i.file_id IS DISTINCT FROM ? ORDER BY i.file_id, i.seq",
        [sorted({k[2] for k in keys}), other_than_file],
    ).fetchall()
    want = set(keys)
    out: dict[VersionKey, tuple[int | None, str | None, int]] = {}
    for run_id, ns, item, version, h, path, seq in rows:
        key = (run_id, ns, item, version)
        if key in want and key not in out:
            out[key] = (h, path, seq)
    return out
