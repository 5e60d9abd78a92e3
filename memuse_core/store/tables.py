"""Appending the event tables' Arrow batches to the store, and the errors of their primary keys
(the column layout and the batches themselves: `store.arrow_rows`, re-exported here)."""

from __future__ import annotations

import re
from typing import Any

import duckdb
import pyarrow as pa

from .arrow_rows import TABLE_COLUMNS, rows_to_arrow

__all__ = [
    "PRIMARY_KEYS",
    "TABLE_COLUMNS",
    "DuplicateKey",
    "append_rows",
    "duplicate_key",
    "existing_ids",
    "insert_arrow",
    "rows_to_arrow",
]

PRIMARY_KEYS: dict[str, str] = {
    "runs": "run_id",
    "episodes": "episode_id",
    "calls": "call_id",
    "searches": "search_id",
    "deliveries": "delivery_id",
}
"""The single-column primary key of each event table that has one (see `schema.CORE_DDL`)."""

_DUPLICATE = re.compile(r'[Dd]uplicate key "(.*)"')


class DuplicateKey(duckdb.ConstraintException):
    """An insert met a primary key already stored (or twice in one batch): the table, key column
    and value, instead of DuckDB's message (and not the "transaction is aborted" that follows)."""

    def __init__(self, table: str, column: str | None, value: str | None, message: str) -> None:
        self.table, self.column, self.value = table, column, value
        super().__init__(message)


def duplicate_key(table: str, err: duckdb.ConstraintException) -> DuplicateKey:
    """The DuplicateKey of a constraint error raised by inserting into `table`."""
    msg = str(err).splitlines()[0]
    col = PRIMARY_KEYS.get(table)
    m = _DUPLICATE.search(msg)
    value = m.group(1) if m else None
    if value is not None and col is not None and value.startswith(f"{col}: "):
        value = value[len(col) + 2 :]
    return DuplicateKey(table, col, value, msg)


def insert_arrow(
    con: duckdb.DuckDBPyConnection,
    table: str,
    tbl: pa.Table,
    *,
    or_ignore: bool = False,
    file_id: int | None = None,
) -> None:
    """Append an Arrow table to a store table; `file_id` replaces that column's values (rows
    built in a worker process before the file had its id)."""
    con.register("_memuse_rows", tbl)
    try:
        verb = "INSERT OR IGNORE INTO" if or_ignore else "INSERT INTO"
        sel = "*"
        if file_id is not None and "file_id" in tbl.column_names:
            sel = f"* REPLACE (CAST({int(file_id)} AS INTEGER) AS file_id)"
        con.execute(f"{verb} {table} SELECT {sel} FROM _memuse_rows")
    except BaseException as e:
        # The failed insert aborted the transaction, so `unregister` fails too; raising that
        # would hide the real error (e.g. which key is duplicated).
        try:
            con.unregister("_memuse_rows")
        except duckdb.Error:
            pass
        if isinstance(e, duckdb.ConstraintException):
            raise duplicate_key(table, e) from None
        raise
    con.unregister("_memuse_rows")


def append_rows(
    con: duckdb.DuckDBPyConnection, table: str, rows: list[tuple[Any, ...]], *, or_ignore: bool = False
) -> None:
    """Append rows (tuples in TABLE_COLUMNS order) to a table through one Arrow batch."""
    if rows:
        insert_arrow(con, table, rows_to_arrow(table, rows), or_ignore=or_ignore)


def existing_ids(con: duckdb.DuckDBPyConnection) -> tuple[set[str], set[str]]:
    """(episode ids, run ids) already in the store."""
    return (
        {r[0] for r in con.execute("SELECT episode_id FROM episodes").fetchall()},
        {r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()},
    )
