"""Imported files and the per-file import transaction (DESIGN.md "Bad input": a file lands whole
or not at all). The importers (`ingest`) call these; they hold no SQL themselves."""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb


def imported_from(con: duckdb.DuckDBPyConnection, sha256: str) -> str | None:
    """The path a file with this content was imported from, or None when it is new."""
    rows = con.execute(
        "SELECT path FROM files WHERE sha256 = ?", [sha256]
    ).fetchall()  # fetchall: see begin_file
    return rows[0][0] if rows else None


def known_files(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """sha256 -> path of every imported file."""
    return dict(con.execute("SELECT sha256, path FROM files").fetchall())


def stored_run_ids(con: duckdb.DuckDBPyConnection) -> set[str]:
    """Run ids already in the store."""
    return {r[0] for r in con.execute("SELECT run_id FROM runs").fetchall()}


def begin_file(con: duckdb.DuckDBPyConnection) -> int:
    """Open the transaction of one imported file and return the file id it will get. Results are
    read with fetchall: a half-read result would block a later `register` on this connection."""
    con.execute("BEGIN TRANSACTION")
    return next_file_id(con)


def next_file_id(con: duckdb.DuckDBPyConnection) -> int:
    """The file id the next imported file gets (what `begin_file` returns)."""
    return int(con.execute("SELECT coalesce(max(file_id), 0) + 1 FROM files").fetchall()[0][0])


def add_file_row(
    con: duckdb.DuckDBPyConnection, file_id: int, path: str, sha256: str, size: int, fmt: str, n_events: int
) -> None:
    """Record an imported file (inside the open transaction)."""
    con.execute(
        "INSERT INTO files VALUES (?, ?, ?, ?, ?, ?, ?)",
        [file_id, path, sha256, size, fmt, n_events, dt.datetime.now()],
    )


def commit_file(
    con: duckdb.DuckDBPyConnection, file_id: int, path: str, sha256: str, size: int, fmt: str, n_events: int
) -> None:
    """Record the imported file and commit its transaction."""
    add_file_row(con, file_id, path, sha256, size, fmt, n_events)
    con.execute("COMMIT")


def commit(con: duckdb.DuckDBPyConnection) -> None:
    """Commit the open transaction (files recorded with `add_file_row`)."""
    con.execute("COMMIT")


def rollback(con: duckdb.DuckDBPyConnection) -> None:
    """Abandon the open transaction (the file's rows disappear)."""
    con.execute("ROLLBACK")
