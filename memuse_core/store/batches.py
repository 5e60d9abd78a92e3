"""What a batch-folder import (`ingest.batch`) asks the store: which runs earlier imports of the
folder's files went into, and a run's configuration."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import duckdb


def runs_of_files(con: duckdb.DuckDBPyConnection, shas: Sequence[str]) -> dict[str, set[str]]:
    """Content digest of an imported file -> the runs its episodes (or its run event) went into."""
    if not shas:
        return {}
    rows = con.execute(
        """WITH f AS (SELECT file_id, sha256 FROM files WHERE sha256 IN (SELECT unnest(?::VARCHAR[])))
           SELECT f.sha256, e.run_id FROM f JOIN episodes e USING (file_id)
           UNION SELECT f.sha256, r.run_id FROM f JOIN runs r USING (file_id)""",
        [list(shas)],
    ).fetchall()
    out: dict[str, set[str]] = {}
    for sha, run in rows:
        out.setdefault(sha, set()).add(run)
    return out


def run_config(con: duckdb.DuckDBPyConnection, run_id: str) -> str | None:
    """The configuration of a stored run, or None when the run is not stored."""
    rows = con.execute("SELECT config FROM runs WHERE run_id = ?", [run_id]).fetchall()
    return rows[0][0] if rows else None


def run_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    """Every stored run id, sorted."""
    return [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY 1").fetchall()]


def imports_of_path(con: duckdb.DuckDBPyConnection, name: str) -> list[tuple[int, str, str, int]]:
    """(file id, path, content digest, size) of the imported files whose file name is `name`."""
    return [
        (int(r[0]), r[1], r[2], int(r[3] or 0))
        for r in con.execute(
            "SELECT file_id, path, sha256, size FROM files WHERE path = ? OR path LIKE ? ORDER BY file_id",
            [name, "%/" + name.replace("%", "\\%").replace("_", "\\_")],
        ).fetchall()
    ]


def file_ids_stored(
    con: duckdb.DuckDBPyConnection, file_id: int
) -> tuple[set[str], list[tuple[object, ...]]]:
    """(episode ids, run rows (run_id, config, label, agent, model, meta)) an imported file stored."""
    eps = {
        r[0] for r in con.execute("SELECT episode_id FROM episodes WHERE file_id = ?", [file_id]).fetchall()
    }
    runs = con.execute(
        "SELECT run_id, config, label, agent, model, meta FROM runs WHERE file_id = ? ORDER BY seq", [file_id]
    ).fetchall()
    return eps, runs
