"""The store as Parquet, and back.

`export_parquet` writes a folder other engines can query (DuckDB, Polars, Spark, Trino):

* `episodes`, `steps`, `deliveries`, `spans`, `verdicts` and `assessments` as hive-partitioned
  datasets, `<table>/config=<config>/run_id=<run>/data_0.parquet` (DuckDB `COPY ... PARTITION_BY`;
  values URL-encoded, NULL as `__HIVE_DEFAULT_PARTITION__`). Their rows are the store's rows; the
  partition columns come from the episode's run. Read them with hive partitioning and the two
  partition columns typed as strings;
* every other table of the store as `<table>.parquet` (text bodies in `blobs`, keyed by the
  64-bit hashes the other tables hold, so an engine can join them);
* `memuse-export.json`: format, store schema version, and per table its path, partition columns,
  the columns added for partitioning, and row count.

`import_parquet` reads such a folder into a store in one transaction. Files are the unit, as in
`memuse ingest`: an exported file whose content digest the store already holds is skipped with
everything it brought (its episodes, their derived and judged rows); the others land with new
file ids. An episode id the store holds from another file refuses the whole import.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb

from .connection import StoreError
from .schema import SCHEMA_VERSION

MANIFEST = "memuse-export.json"
FORMAT = "memuse-parquet-export"
FORMAT_VERSION = 1

PARTITIONED: dict[str, str] = {
    "episodes": "SELECT t.*, r.config FROM episodes t LEFT JOIN runs r USING (run_id)",
    "steps": """SELECT t.*, r.config, e.run_id FROM steps t JOIN episodes e USING (episode_id)
                LEFT JOIN runs r ON r.run_id = e.run_id""",
    "deliveries": """SELECT t.*, r.config, e.run_id FROM deliveries t JOIN episodes e USING (episode_id)
                     LEFT JOIN runs r ON r.run_id = e.run_id""",
    "spans": """SELECT t.*, r.config, e.run_id FROM spans t JOIN episodes e USING (episode_id)
                LEFT JOIN runs r ON r.run_id = e.run_id""",
    "verdicts": """SELECT t.*, r.config, e.run_id FROM verdicts t JOIN spans s USING (span_id)
                   JOIN episodes e ON e.episode_id = s.episode_id LEFT JOIN runs r ON r.run_id = e.run_id""",
    "assessments": """SELECT t.*, r.config, e.run_id FROM assessments t JOIN spans s USING (span_id)
                      JOIN episodes e ON e.episode_id = s.episode_id LEFT JOIN runs r ON r.run_id = e.run_id""",
}
"""The partitioned tables and the query that gives each row its configuration and run."""
PARTITION_BY = ("config", "run_id")


def _tables(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [
        r[0]
        for r in con.execute(
            "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND NOT temporary ORDER BY 1"
        ).fetchall()
    ]


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [
        r[0]
        for r in con.execute(
            "SELECT column_name FROM duckdb_columns() WHERE schema_name = 'main' AND table_name = ? "
            "ORDER BY column_index",
            [table],
        ).fetchall()
    ]


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _lit(path: Path) -> str:
    return "'" + str(path).replace("'", "''") + "'"


def export_parquet(con: duckdb.DuckDBPyConnection, out: str | Path) -> dict[str, int]:
    """Write the store to `out` (which must not exist or be empty); returns rows per table."""
    out = Path(out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise StoreError(f"{out}: the export folder must be new or empty")
    out.mkdir(parents=True, exist_ok=True)
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "schema_version": SCHEMA_VERSION,
        "tables": {},
    }
    counts: dict[str, int] = {}
    for t in _tables(con):
        if t == "meta":
            continue
        n = int(con.execute(f"SELECT count(*) FROM {_q(t)}").fetchall()[0][0])
        counts[t] = n
        entry: dict[str, Any] = {"rows": n}
        if t in PARTITIONED:
            added = [c for c in PARTITION_BY if c not in _columns(con, t)]
            entry.update(path=t, partitioned_by=list(PARTITION_BY), added_columns=added)
            if n:
                con.execute(
                    f"COPY ({PARTITIONED[t]}) TO {_lit(out / t)} "
                    f"(FORMAT parquet, PARTITION_BY ({', '.join(PARTITION_BY)}))"
                )
        else:
            entry.update(path=f"{t}.parquet", partitioned_by=[], added_columns=[])
            con.execute(f"COPY (SELECT * FROM {_q(t)}) TO {_lit(out / f'{t}.parquet')} (FORMAT parquet)")
        manifest["tables"][t] = entry
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return counts


def is_export(folder: str | Path) -> bool:
    """True when the folder holds a MemUse Parquet export."""
    return (Path(folder) / MANIFEST).is_file()


def read_manifest(folder: Path) -> dict[str, Any]:
    try:
        m = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise StoreError(f"{folder / MANIFEST}: not a readable export manifest ({e})") from None
    if not isinstance(m, dict) or m.get("format") != FORMAT or not isinstance(m.get("tables"), dict):
        raise StoreError(f"{folder / MANIFEST}: not a MemUse Parquet export manifest")
    if int(m.get("version", 0)) > FORMAT_VERSION or int(m.get("schema_version", 0)) > SCHEMA_VERSION:
        raise StoreError(f"{folder}: the export is newer than this MemUse; upgrade MemUse to read it")
    return m


def _source(folder: Path, entry: dict[str, Any]) -> str:
    path = folder / str(entry["path"])
    if entry.get("partitioned_by"):
        types = ", ".join(f"'{c}': 'VARCHAR'" for c in entry["partitioned_by"])
        glob = _lit(path / "**" / "*.parquet")
        return f"read_parquet({glob}, hive_partitioning = true, hive_types = {{{types}}})"
    return f"read_parquet({_lit(path)})"


def import_parquet(con: duckdb.DuckDBPyConnection, folder: str | Path) -> dict[str, int]:
    """Read an export into the store in one transaction (see module docstring). Returns the counts
    of `files` imported and `skipped` (already in the store), `episodes` and `runs` added."""
    folder = Path(folder)
    tables: dict[str, dict[str, Any]] = read_manifest(folder)["tables"]
    target = set(_tables(con))
    if "files" not in tables or "episodes" not in tables:
        raise StoreError(f"{folder}: the export has no `files` or `episodes` table")
    views: dict[str, str] = {}
    con.execute("BEGIN TRANSACTION")
    try:
        for t, entry in tables.items():
            if t == "meta" or t not in target or not entry.get("rows"):
                continue
            added = [c for c in entry.get("added_columns", []) if c]
            excl = f" EXCLUDE ({', '.join(_q(c) for c in added)})" if added else ""
            views[t] = f"_x_{t}"
            con.execute(
                f"CREATE OR REPLACE TEMP VIEW {_q(views[t])} AS SELECT *{excl} FROM {_source(folder, entry)}"
            )
        if "files" not in views:
            con.execute("COMMIT")
            return {"files": 0, "skipped": 0, "episodes": 0, "runs": 0}
        con.execute(
            """CREATE OR REPLACE TEMP TABLE _x_newfiles AS
               SELECT file_id AS old_id,
                      CAST((SELECT coalesce(max(file_id), 0) FROM files)
                           + row_number() OVER (ORDER BY file_id) AS INTEGER) AS new_id
               FROM _x_files WHERE sha256 NOT IN (SELECT sha256 FROM files WHERE sha256 IS NOT NULL)"""
        )
        con.execute(
            """CREATE OR REPLACE TEMP TABLE _x_eps AS SELECT episode_id FROM _x_episodes
               WHERE file_id IN (SELECT old_id FROM _x_newfiles)"""
            if "episodes" in views
            else "CREATE OR REPLACE TEMP TABLE _x_eps (episode_id VARCHAR)"
        )
        clash = con.execute(
            """SELECT episode_id FROM _x_eps WHERE episode_id IN (SELECT episode_id FROM episodes)
               UNION ALL SELECT run_id FROM _x_runs WHERE file_id IN (SELECT old_id FROM _x_newfiles)
                         AND run_id IN (SELECT run_id FROM runs) LIMIT 3"""
            if "runs" in views
            else "SELECT episode_id FROM _x_eps WHERE episode_id IN (SELECT episode_id FROM episodes) LIMIT 3"
        ).fetchall()
        if clash:
            raise StoreError(
                f"{folder}: ids {', '.join(repr(c[0]) for c in clash)} are stored from other files; "
                "import the export into a new database"
            )
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _x_span_ids AS "
            + (
                "SELECT span_id FROM _x_spans WHERE episode_id IN (SELECT episode_id FROM _x_eps)"
                if "spans" in views
                else "SELECT NULL::VARCHAR AS span_id WHERE false"
            )
        )
        con.execute(
            "CREATE OR REPLACE TEMP TABLE _x_del_ids AS "
            + (
                "SELECT delivery_id FROM _x_deliveries WHERE episode_id IN (SELECT episode_id FROM _x_eps)"
                if "deliveries" in views
                else "SELECT NULL::VARCHAR AS delivery_id WHERE false"
            )
        )
        for t in sorted(views, key=lambda x: (x != "files", x)):
            _copy_table(con, t, views[t])
        n_files = con.execute("SELECT count(*) FROM _x_newfiles").fetchall()[0][0]
        n_eps = con.execute("SELECT count(*) FROM _x_eps").fetchall()[0][0]
        n_runs = (
            con.execute(
                "SELECT count(*) FROM _x_runs WHERE file_id IN (SELECT old_id FROM _x_newfiles)"
            ).fetchall()[0][0]
            if "runs" in views
            else 0
        )
        n_all = con.execute("SELECT count(*) FROM _x_files").fetchall()[0][0]
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        for v in views.values():
            con.execute(f"DROP VIEW IF EXISTS {_q(v)}")
        for t in ("_x_newfiles", "_x_eps", "_x_span_ids", "_x_del_ids"):
            con.execute(f"DROP TABLE IF EXISTS {t}")
    return {
        "files": int(n_files),
        "skipped": int(n_all - n_files),
        "episodes": int(n_eps),
        "runs": int(n_runs),
    }


def _copy_table(con: duckdb.DuckDBPyConnection, table: str, view: str) -> None:
    """Insert the rows of one exported table that belong to the imported files (see
    `import_parquet`): by file id (renumbered), else by episode, span or delivery; tables of no
    episode (blobs, judge batches, case studies) keep the rows the store lacks."""
    cols = set(_columns(con, table))
    t, v = _q(table), _q(view)
    if "file_id" in cols:
        con.execute(
            f"""INSERT INTO {t} BY NAME SELECT x.* REPLACE (n.new_id AS file_id)
                FROM {v} x JOIN _x_newfiles n ON x.file_id = n.old_id"""
        )
    elif "episode_id" in cols:
        con.execute(
            f"INSERT INTO {t} BY NAME SELECT * FROM {v} WHERE episode_id IN (SELECT episode_id FROM _x_eps)"
        )
    elif "span_id" in cols:
        con.execute(
            f"INSERT INTO {t} BY NAME SELECT * FROM {v} WHERE span_id IN (SELECT span_id FROM _x_span_ids)"
        )
    elif "delivery_id" in cols:
        con.execute(
            f"INSERT INTO {t} BY NAME SELECT * FROM {v} WHERE delivery_id IN (SELECT delivery_id FROM _x_del_ids)"
        )
    else:
        con.execute(f"INSERT OR IGNORE INTO {t} BY NAME SELECT * FROM {v}")
