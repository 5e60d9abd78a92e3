"""The JSON Lines journal of the app's writes that met a busy database (annotations, case studies).

DuckDB lets one process hold a file read-write; while `memuse ingest` or a judge batch holds it
the app can neither read nor write (notes/STACK.md). A write the app cannot make within its
short lock wait is appended here, beside the database (`<db>.pending.jsonl`), flushed and
fsynced, and the user sees it as pending. Before every later write, and every few seconds while
anything is pending, the journal is replayed in order in one transaction and then emptied, so a
write made after a queued one can never be overtaken by it. Every operation is idempotent
(upserts and deletes by id), so a crash between the commit and the truncation only replays
them again. This is the judge journal's design (`store.journal`) applied to the app's writes.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb

from ..connection import db_path

try:  # POSIX advisory locks keep appends and replays of the journal apart across processes
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None  # type: ignore[assignment]

PENDING_VERSION = 1
"""Version of a journal record; bump and migrate on change."""


def pending_path(db: str | os.PathLike[str] | None) -> Path:
    """The app-write journal of a database: `<db>.pending.jsonl` beside it."""
    p = db_path(db)
    return p.with_name(p.name + ".pending.jsonl")


@contextmanager
def _locked(path: Path, mode: str) -> Any:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode, encoding="utf-8") as fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            yield fh
        finally:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)


def append(db: str | os.PathLike[str] | None, record: dict[str, Any]) -> None:
    """Append one write (a JSON-serialisable dict) to the journal, durably."""
    line = json.dumps({"v": PENDING_VERSION, **record}, ensure_ascii=True, default=str)
    with _locked(pending_path(db), "a") as fh:
        fh.write(line + "\n")
        fh.flush()
        os.fsync(fh.fileno())


def _records(lines: list[str]) -> list[dict[str, Any]]:
    out = []
    for line in lines:
        if not line.endswith("\n"):  # the torn last line of a crashed writer
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(rec, dict) and rec.get("v") == PENDING_VERSION:
            out.append(rec)
    return out


def read_pending(db: str | os.PathLike[str] | None) -> list[dict[str, Any]]:
    """Every complete record of the journal, oldest first."""
    path = pending_path(db)
    if not path.exists() or path.stat().st_size == 0:
        return []
    with _locked(path, "r") as fh:
        return _records(fh.readlines())


def replay(
    con: duckdb.DuckDBPyConnection,
    db: str | os.PathLike[str] | None,
    apply: Callable[[duckdb.DuckDBPyConnection, dict[str, Any]], None],
) -> int:
    """Apply every pending record in order in one transaction, then empty the journal; returns
    how many were applied. On an error nothing is applied and the journal is kept."""
    path = pending_path(db)
    if not path.exists() or path.stat().st_size == 0:
        return 0
    with _locked(path, "r+") as fh:
        recs = _records(fh.readlines())
        if recs:
            con.execute("BEGIN")
            try:
                for rec in recs:
                    apply(con, rec)
            except BaseException:
                con.execute("ROLLBACK")
                raise
            con.execute("COMMIT")
        fh.seek(0)
        fh.truncate(0)
        fh.flush()
        os.fsync(fh.fileno())
    return len(recs)
