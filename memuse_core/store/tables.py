"""Column layout of the event tables and the Arrow batches that append rows to them."""

from __future__ import annotations

import re
from typing import Any

import duckdb
import pyarrow as pa

I64 = pa.int64()
I32 = pa.int32()
S = pa.string()
B = pa.bool_()
F = pa.float64()
LI = pa.list_(pa.int64())

TABLE_COLUMNS: dict[str, list[tuple[str, pa.DataType]]] = {
    "blobs": [("hash", I64), ("text", S)],
    "runs": [
        ("run_id", S),
        ("config", S),
        ("label", S),
        ("agent", S),
        ("model", S),
        ("meta", S),
        ("file_id", I32),
        ("seq", I32),
    ],
    "episodes": [
        ("episode_id", S),
        ("run_id", S),
        ("task_id", S),
        ("position", I32),
        ("repo", S),
        ("task_hash", I64),
        ("reference_hash", I64),
        ("resolved", B),
        ("exit_status", S),
        ("submission_hash", I64),
        ("ended", B),
        ("n_steps", I32),
        ("file_id", I32),
        ("seq", I32),
        ("end_seq", I32),
    ],
    "calls": [
        ("call_id", S),
        ("episode_id", S),
        ("call_seq", I32),
        ("role", S),
        ("status", S),
        ("base_call_id", S),
        ("base_len", I32),
        ("msg_hashes", LI),
        ("n_messages", I32),
        ("input_chars", I64),
        ("tools_hash", I64),
        ("request_extra", S),
        ("response_hash", I64),
        ("input_tokens", I64),
        ("output_tokens", I64),
        ("cached_tokens", I64),
        ("reasoning_tokens", I64),
        ("cost_usd", F),
        ("started_at", F),
        ("ended_at", F),
        ("op_ref", S),
        ("model", S),
        ("file_id", I32),
        ("seq", I32),
    ],
    "steps": [
        ("episode_id", S),
        ("step", I32),
        ("call_id", S),
        ("response_hash", I64),
        ("action", S),
        ("tools", S),
        ("exit_code", I32),
        ("obs_hashes", LI),
        ("obs_chars", I64),
    ],
    "tool_results": [
        ("episode_id", S),
        ("call_id", S),
        ("tool_call_id", S),
        ("name", S),
        ("arguments_hash", I64),
        ("output_hash", I64),
        ("exit_code", I32),
        ("file_id", I32),
        ("seq", I32),
    ],
    "context_events": [
        ("episode_id", S),
        ("type", S),
        ("before_call_id", S),
        ("payload", S),
        ("file_id", I32),
        ("seq", I32),
    ],
    "item_events": [
        ("namespace", S),
        ("item_id", S),
        ("version", S),
        ("op", S),
        ("value_hash", I64),
        ("episode_id", S),
        ("run_id", S),
        ("op_ref", S),
        ("changed_at", F),
        ("file_id", I32),
        ("seq", I32),
    ],
    "searches": [
        ("search_id", S),
        ("episode_id", S),
        ("run_id", S),
        ("route", S),
        ("query_hash", I64),
        ("scope", S),
        ("results", S),
        ("n_results", I32),
        ("file_id", I32),
        ("seq", I32),
    ],
    "deliveries": [
        ("delivery_id", S),
        ("episode_id", S),
        ("route", S),
        ("form", S),
        ("consuming_call_id", S),
        ("search_id", S),
        ("provisional_step", I32),
        ("n_entries", I32),
        ("chars", I64),
        ("file_id", I32),
        ("seq", I32),
        ("entries_of", S),
    ],
    "delivery_entry_rows": [
        ("delivery_id", S),
        ("pos", I32),
        ("namespace", S),
        ("item_id", S),
        ("id_scheme", S),
        ("version", S),
        ("version_portable", B),
        ("digest", S),
        ("value_hash", I64),
        ("display_key", S),
        ("labels", S),
    ],
    "placements": [
        ("delivery_id", S),
        ("pos", I32),
        ("episode_id", S),
        ("slot", S),
        ("kind", S),
        ("text_hash", I64),
        ("digest", S),
        ("size", I64),
        ("message_index", I32),
        ("json_pointer", S),
        ("message_digest", S),
        ("start", I32),
    ],
}


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


def rows_to_arrow(table: str, rows: list[tuple[Any, ...]]) -> pa.Table:
    """Rows (tuples in TABLE_COLUMNS order) as one Arrow table with the store's column types."""
    cols = TABLE_COLUMNS[table]
    try:
        arrays = [pa.array(list(col), type=t) for col, (_, t) in zip(zip(*rows), cols)]
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError) as e:
        bad = next(name for col, (name, t) in zip(zip(*rows), cols) if not _fits(col, t))
        raise ValueError(f"a value of `{bad}` does not fit the store's {table}.{bad} column ({e})") from None
    return pa.Table.from_arrays(arrays, names=[c for c, _ in cols])


def _fits(col: tuple[Any, ...], t: pa.DataType) -> bool:
    try:
        pa.array(list(col), type=t)
    except (pa.ArrowInvalid, pa.ArrowTypeError, OverflowError):
        return False
    return True


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
