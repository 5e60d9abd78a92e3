"""Opening the DuckDB store: path resolution, lock-conflict retries, schema creation and migration.

DuckDB lets one process hold a file read-write, and then no other process can open it at all
(notes/STACK.md). Every MemUse process therefore opens the store per unit of work and closes it,
retrying a lock conflict with backoff and naming the holder after a timeout (DESIGN.md
"Concurrency").
"""

from __future__ import annotations

import hashlib
import os
import re
import shlex
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from ..vocab import RULE_JUDGE
from .outcomes import backfill_outcomes
from .schema import SCHEMA_VERSION, all_ddl

DEFAULT_DB = Path("data") / "memuse.duckdb"

Connection = duckdb.DuckDBPyConnection
"""An open store; the packages above the store pass it around without importing duckdb."""
DatabaseError = duckdb.Error
"""Any error DuckDB raises (a corrupt or foreign file, a failed statement)."""


class StoreError(RuntimeError):
    """A user-facing store problem (one clear sentence)."""


class StoreLocked(StoreError):
    """Another process holds the database file."""


def db_path(path: str | os.PathLike[str] | None = None) -> Path:
    """Resolve the database path: explicit argument, then `MEMUSE_DB`, then data/memuse.duckdb."""
    if path:
        return Path(path)
    env = os.environ.get("MEMUSE_DB")
    return Path(env) if env else DEFAULT_DB


def missing_store(path: str | os.PathLike[str] | None = None) -> str | None:
    """Why the store at `path` cannot be opened without creating it (one sentence), or None when
    the file exists. Only `memuse ingest` and `memuse demo` create a store; every other command
    checks this first, so a mistyped `--db` never leaves an empty database and folders behind."""
    p = db_path(path)
    if p.is_file():
        return None
    if p.exists():
        return f"database {p} is not a file"
    return f"database {p} does not exist (create it with `memuse ingest` or `memuse demo`)"


LOCK_TIMEOUT_ENV = "MEMUSE_LOCK_TIMEOUT"
"""Seconds to wait for another process's lock before giving up (default 30)."""

# DuckDB: 'Could not set lock on file "<file>": Conflicting lock is held in <program> (PID <n>)
# [by user <u>]. See also ...'. Paths may hold dots, spaces, quotes and any unicode, so the file is
# everything up to the last '": Conflicting lock' and the program everything up to the last
# ' (PID n)' (a pattern that stopped at the first dot named only '/root/' as holder).
_LOCK_RE = re.compile(r'lock on file "(.*)": Conflicting lock is held in (.*)', re.S)
_HOLDER_RE = re.compile(r"Conflicting lock is held in (.*)", re.S)
_PID_RE = re.compile(r"(.*) \(PID (\d+)\)", re.S)


def _command_line(pid: int, limit: int = 300) -> str | None:
    """The holder's command line from /proc (Linux), shell-quoted; None when unreadable."""
    try:
        raw = Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return None
    args = [a.decode("utf-8", "replace") for a in raw.split(b"\0") if a]
    if not args:
        return None
    cmd = shlex.join(args)
    return cmd if len(cmd) <= limit else cmd[: limit - 3] + "..."


def lock_conflict(msg: str, path: Path) -> str:
    """One sentence naming the locked file and the process holding it (DuckDB's message parsed)."""
    m = _LOCK_RE.search(msg)
    locked, holder = (m.group(1), m.group(2)) if m else (str(path), "")
    if not m and (h := _HOLDER_RE.search(msg)):
        holder = h.group(1)
    holder = re.sub(r"\. See also .*\Z", "", holder, flags=re.S).strip()
    if p := _PID_RE.match(holder):
        program, pid = p.group(1).strip(), int(p.group(2))
        cmd = _command_line(pid)
        who = f"process {pid} ({program}" + (f"; command: {cmd})" if cmd else ")")
    else:
        who = f"another process ({holder})" if holder else "another process"
    return f'database "{locked}" is locked by {who}; wait for it to finish or stop it, then retry'


OPENED = [False]
"""True once this process has opened a DuckDB database (`connect`): from then on it holds DuckDB's
threads and is never forked (`ingest.parallel.start_workers` spawns instead)."""


def _lock_timeout() -> float:
    v = os.environ.get(LOCK_TIMEOUT_ENV)
    if not v:
        return 30.0
    try:
        return max(0.0, float(v))
    except ValueError:
        raise StoreError(f"${LOCK_TIMEOUT_ENV}={v!r} is not a number of seconds") from None


def connect(
    path: str | os.PathLike[str] | None = None,
    *,
    read_only: bool = False,
    timeout: float | None = None,
    create: bool = True,
) -> duckdb.DuckDBPyConnection:
    """Open the store, retrying lock conflicts for up to `timeout` seconds with backoff
    (default: `$MEMUSE_LOCK_TIMEOUT`, else 30).

    A new read-write store gets the full schema; an older one is migrated forward. With
    `create=False` (and always when read-only) a missing file raises StoreError instead of being
    created.
    """
    if timeout is None:
        timeout = _lock_timeout()
    p = db_path(path)
    if (read_only or not create) and (why := missing_store(p)) is not None:
        raise StoreError(why)
    if not read_only:
        p.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + timeout
    delay = 0.02
    while True:
        try:
            con = duckdb.connect(str(p), read_only=read_only)
            OPENED[0] = True
            break
        except duckdb.IOException as e:
            msg = str(e)
            if "lock" not in msg.lower():
                raise StoreError(f"cannot open database {p}: {msg.splitlines()[0]}") from e
            if time.monotonic() >= deadline:
                raise StoreLocked(lock_conflict(msg, p)) from e
            time.sleep(delay)
            delay = min(delay * 2, 0.5)
        except duckdb.ConnectionException as e:
            # Another thread of this process (an app session, the judge's loader) has the file
            # open in the other mode: DuckDB refuses a read-only and a read-write connection to
            # one file in one process. Those connections are short; wait for them as for a lock.
            if "different configuration" not in str(e):
                raise StoreError(f"cannot open database {p}: {str(e).splitlines()[0]}") from e
            if time.monotonic() >= deadline:
                raise StoreLocked(
                    f"database {p} is held {'read-write' if read_only else 'read-only'} by another thread of "
                    "this process; retry in a moment"
                ) from e
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
        except duckdb.Error as e:
            raise StoreError(f"cannot open database {p}: {str(e).splitlines()[0]}") from e
    if (why := foreign_store(con, p, read_only=read_only)) is not None:
        con.close()
        raise StoreError(why)
    if not read_only:
        ensure_schema(con)
    return con


def foreign_store(con: duckdb.DuckDBPyConnection, p: Path, *, read_only: bool) -> str | None:
    """Why the open DuckDB file at `p` is not a MemUse store (one sentence), or None when it is one
    (or is an empty file a writer may turn into one). A store always has its `meta` schema version;
    a file with other tables and none is someone else's database, never written into or read as
    ours."""
    if schema_version(con) is not None:
        return None
    tables = [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() ORDER BY 1"
        ).fetchall()
    ]
    if "meta" in tables:  # ours, even if an interrupted first open left it without a version
        return None
    if not tables:
        if read_only:
            return f"database {p} is an empty DuckDB file, not a MemUse store (create one with `memuse ingest` or `memuse demo`)"
        return None
    shown = ", ".join(tables[:5]) + (f" and {len(tables) - 5} more" if len(tables) > 5 else "")
    return f"database {p} is a DuckDB database but not a MemUse store (tables {shown}; no MemUse schema): pass another --db"


@contextmanager
def open_store(
    path: str | os.PathLike[str] | None = None, *, read_only: bool = False, timeout: float | None = None
) -> Iterator[duckdb.DuckDBPyConnection]:
    """Context manager: one unit of work on the store, closed afterwards."""
    con = connect(path, read_only=read_only, timeout=timeout)
    try:
        yield con
    finally:
        con.close()


# --------------------------------------------------------------------------------------------
# Schema version and forward migration
# --------------------------------------------------------------------------------------------


MIGRATIONS: dict[int, list[str] | Callable[[duckdb.DuckDBPyConnection], None]] = {
    # 2: delivery entries stored once per distinct entry list
    # (docs/decisions.md#delivery-entries-stored-once-per-distinct-list); the old table's rows
    # move to `delivery_entry_rows` as they are (no sharing), a view replaces it.
    2: [
        "ALTER TABLE deliveries ADD COLUMN entries_of VARCHAR",
        """CREATE TABLE delivery_entry_rows AS SELECT delivery_id, pos, namespace, item_id, id_scheme,
               version, version_portable, digest, value_hash, display_key, labels FROM delivery_entries""",
        "DROP TABLE delivery_entries",
    ],
    # 3: verdicts and outcome classes per judge kind (one row per span and judge): the
    # rule verdicts are kept, every judge's current verdict is rebuilt from its latest accepted
    # judgment, and `span_outcomes` is refilled per judge.
    3: lambda con: _per_judge_verdicts(con),
}
"""Steps from version v-1 to v. Add one (and bump SCHEMA_VERSION) for every change to an
existing table; new tables appear by themselves through CREATE TABLE IF NOT EXISTS."""


def _per_judge_verdicts(con: duckdb.DuckDBPyConnection) -> None:
    from .area_tables import VERDICTS_DDL
    from .verdict_rows import rebuild_verdicts

    con.execute("CREATE TEMP TABLE _verdicts_v2 AS SELECT * FROM verdicts")
    con.execute("DROP TABLE verdicts")
    con.execute(VERDICTS_DDL)
    con.execute("INSERT INTO verdicts SELECT * FROM _verdicts_v2 WHERE judge = ?", [RULE_JUDGE])
    con.execute("DROP TABLE _verdicts_v2")
    rebuild_verdicts(con)
    con.execute("DELETE FROM span_outcomes")  # refilled per judge right after the migration


def schema_version(con: duckdb.DuckDBPyConnection) -> int | None:
    try:
        row = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except duckdb.CatalogException:
        return None
    return int(row[0]) if row else None


def _ddl_hash() -> str:
    return hashlib.sha256("\n".join(all_ddl()).encode()).hexdigest()[:16]


def ensure_schema(con: duckdb.DuckDBPyConnection) -> None:
    """Create missing tables and migrate an older store forward to SCHEMA_VERSION.

    A store already at this version whose recorded DDL fingerprint matches this code's is left
    alone (one query instead of re-running every CREATE ... IF NOT EXISTS on each open)."""
    try:
        meta = dict(
            con.execute("SELECT key, value FROM meta WHERE key IN ('schema_version', 'ddl_hash')").fetchall()
        )
    except duckdb.CatalogException:
        meta = {}
    if meta.get("schema_version") == str(SCHEMA_VERSION) and meta.get("ddl_hash") == _DDL_HASH:
        return
    current = schema_version(con)
    if current is not None and current > SCHEMA_VERSION:
        raise StoreError(
            f"database schema version {current} is newer than this MemUse ({SCHEMA_VERSION}); upgrade MemUse"
        )
    if current is not None and current < SCHEMA_VERSION:
        for v in range(current + 1, SCHEMA_VERSION + 1):
            step = MIGRATIONS.get(v)
            if step is None:
                continue
            con.execute("BEGIN")
            if callable(step):
                step(con)
            else:
                for sql in step:
                    con.execute(sql)
            con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(v)])
            con.execute("COMMIT")
    for sql in all_ddl():
        con.execute(sql)
    # A store built before `span_outcomes` existed gets it filled from its spans, verdicts and
    # judgments (the outcome class is stored, never recomputed by readers; MemUse A.4.1).
    backfill_outcomes(con)
    if current is None:
        con.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
    con.execute("INSERT OR REPLACE INTO meta VALUES ('ddl_hash', ?)", [_DDL_HASH])


_DDL_HASH = _ddl_hash()
