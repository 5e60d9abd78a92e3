"""The JSON Lines journal of judge results (DESIGN.md "Concurrency"; MemUse A.3.2 saved reports).

Order of writes: every result is appended to the journal next to the database and flushed; before
each short database transaction the journal is fsynced. On the next open the journal is replayed:
results whose `judgment_id` is not in `judgments` are inserted, so a crash or a lock loses nothing
and replay is idempotent. Once every record is in the database the journal is emptied, so it stays
small (appends and compaction take an exclusive `flock` on the journal file).
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import duckdb

from ..rules.judgment import JudgmentResult
from .connection import db_path
from .judging import known_judgments, write_results


def journal_path(db: str | os.PathLike[str] | None) -> Path:
    """The journal of a database: `<db>.journal.jsonl` beside it."""
    p = db_path(db)
    return p.with_name(p.name + ".journal.jsonl")


try:  # POSIX advisory locks keep appends and compaction of the journal apart across processes
    import fcntl
except ImportError:  # pragma: no cover - non-POSIX
    fcntl = None  # type: ignore[assignment]

_ID_RE = re.compile(r'"judgment_id": "([^"]+)"')


class Journal:
    """Append-only JSON Lines journal of judge results (thread-safe; appends lock across processes)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._fh = open(path, "a", encoding="utf-8")  # noqa: SIM115 - kept open for appends

    def append(self, res: JudgmentResult) -> None:
        # pydantic's serializer writes the result (a third of the cost of json.dumps over model_dump)
        line = (
            f'{{"kind": "judgment", "v": 1, "judgment_id": {json.dumps(res.judgment_id)}, '
            f'"result": {res.model_dump_json()}}}'
        )
        with self._lock:
            if fcntl is not None:
                fcntl.flock(self._fh.fileno(), fcntl.LOCK_EX)
            try:
                self._fh.write(line + "\n")
                self._fh.flush()
            finally:
                if fcntl is not None:
                    fcntl.flock(self._fh.fileno(), fcntl.LOCK_UN)

    def sync(self) -> None:
        with self._lock:
            self._fh.flush()
            os.fsync(self._fh.fileno())

    def close(self) -> None:
        with self._lock:
            if not self._fh.closed:
                self._fh.flush()
                os.fsync(self._fh.fileno())
                self._fh.close()


def _scan(fh: Any) -> list[tuple[str, str]]:
    """(judgment_id, line) of every complete record; a torn last line from a crash is skipped."""
    out = []
    for line in fh:
        if not line.endswith("\n"):
            continue
        m = _ID_RE.search(line, 0, 200)
        if m:
            out.append((m.group(1), line))
    return out


def _parse(line: str) -> JudgmentResult | None:
    try:
        obj = json.loads(line)
    except json.JSONDecodeError:
        return None
    if obj.get("kind") != "judgment":
        return None
    return JudgmentResult.model_validate(obj["result"])


def read_journal(path: Path) -> list[JudgmentResult]:
    """Every complete record of a journal."""
    if not path.exists():
        return []
    with open(path, encoding="utf-8") as fh:
        return [r for _, line in _scan(fh) if (r := _parse(line)) is not None]


def replay_journal(con: duckdb.DuckDBPyConnection, db: str | os.PathLike[str] | None) -> int:
    """Insert journal results missing from the database; returns how many were added.

    Only records whose id is missing are parsed. When every record is then in the database, the
    journal is emptied (under an exclusive lock, so no other process is appending meanwhile)."""
    path = journal_path(db)
    if not path.exists() or path.stat().st_size == 0:
        return 0
    with open(path, "r+", encoding="utf-8") as fh:
        if fcntl is not None:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX)
        try:
            recs = _scan(fh)
            known = known_judgments(con, [i for i, _ in recs])
            missing = [r for i, line in recs if i not in known and (r := _parse(line)) is not None]
            added = write_results(con, missing) if missing else 0
            if fcntl is not None and len(known) + added >= len({i for i, _ in recs}):
                # Everything is in the database; writers append under this lock, so an unterminated
                # tail can only be the torn last line of a crashed writer.
                fh.truncate(0)
            return added
        finally:
            if fcntl is not None:
                fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
