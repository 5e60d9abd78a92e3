"""Checksums of the store's tables: what "the store ends identical" means in the crash and
hostile-input tests, and a quick way to compare two stores.

Each table's checksum is the md5 of its rows, rendered as text and sorted, so row order and
physical layout do not matter. Wall-clock columns (TIMESTAMP: when a file was imported, when an
episode was built) are left out: they differ between any two runs.
"""

from __future__ import annotations

import duckdb


def compared_columns(con: duckdb.DuckDBPyConnection) -> dict[str, list[str]]:
    """base table -> its columns that two runs of the same work must agree on, in table order.

    The store writes wall-clock times (imported, built, decided, judged, annotated) as TIMESTAMP and
    recorded times (a call's start and end, an item's change) as DOUBLE seconds, so the type alone
    tells which columns to leave out; one rule for the checksums and the tests' row dumps."""
    cols: dict[str, list[str]] = {}
    for table, column, dtype in con.execute(
        "SELECT table_name, column_name, data_type FROM information_schema.columns "
        "WHERE table_schema = 'main' AND table_name IN (SELECT table_name FROM information_schema.tables "
        "WHERE table_schema = 'main' AND table_type = 'BASE TABLE') ORDER BY table_name, ordinal_position"
    ).fetchall():
        lst = cols.setdefault(table, [])
        if not str(dtype).startswith("TIMESTAMP"):
            lst.append(column)
    return cols


def table_checksums(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """table name -> checksum of its rows (without TIMESTAMP columns), for every base table."""
    cols = compared_columns(con)
    parts = []
    for table, columns in cols.items():
        sel = ", ".join(f'"{c}"' for c in columns) or "1"
        parts.append(
            f"SELECT '{table}' AS name, count(*) AS n, md5(coalesce(string_agg(r, chr(10) ORDER BY r), '')) AS h "
            f'FROM (SELECT CAST(t AS VARCHAR) AS r FROM (SELECT {sel} FROM "{table}") t)'
        )
    if not parts:
        return {}
    rows = con.execute(" UNION ALL ".join(parts)).fetchall()  # one statement: cheap on many tables
    return {name: f"{n}:{h}" for name, n, h in sorted(rows)}
