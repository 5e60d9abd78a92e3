"""Whether the store's evaluation context is complete: the build marker.

A build writes its batches in separate transactions, so a build that is killed leaves some
episodes built and others not. Two facts in the store say so:

* `meta.build_state` is set (with when and how the build started) before the first batch and
  removed after the last one: while it is there, a build was started and did not finish;
* `episodes` that have no `context_built` row are not built (imported with `--no-build`, or not
  reached by an interrupted build).

`memuse ingest` and `memuse build` read both and finish the work; nothing reports a complete
store while either says otherwise.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any

import duckdb

KEY = "build_state"


@dataclass(frozen=True)
class BuildState:
    interrupted: dict[str, Any] | None
    """The marker of a build that started and did not finish (`started_at`, `pid`, `rebuild`),
    or None."""
    unbuilt: int
    """Stored episodes without a built context."""

    @property
    def complete(self) -> bool:
        return self.interrupted is None and self.unbuilt == 0


def build_state(con: duckdb.DuckDBPyConnection) -> BuildState:
    """The marker and the number of episodes not built."""
    rows = con.execute("SELECT value FROM meta WHERE key = ?", [KEY]).fetchall()
    marker: dict[str, Any] | None = None
    if rows:
        try:
            marker = json.loads(rows[0][0])
        except ValueError:
            marker = {"started_at": None}
    unbuilt = con.execute(
        "SELECT count(*) FROM episodes WHERE episode_id NOT IN (SELECT episode_id FROM context_built)"
    ).fetchall()[0][0]
    return BuildState(marker, int(unbuilt))


def mark_build_started(con: duckdb.DuckDBPyConnection, *, rebuild: bool) -> None:
    """Set the marker (committed at once: it must outlive a crash of the build)."""
    value = json.dumps({"started_at": round(time.time(), 3), "pid": os.getpid(), "rebuild": rebuild})
    con.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [KEY, value])


def mark_build_finished(con: duckdb.DuckDBPyConnection) -> None:
    """Remove the marker: every episode the build was asked for is built."""
    con.execute("DELETE FROM meta WHERE key = ?", [KEY])


def describe(marker: dict[str, Any]) -> str:
    """`started <time> by process <pid>` for messages."""
    at = marker.get("started_at")
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(at)) if isinstance(at, (int, float)) else "?"
    pid = marker.get("pid")
    return f"started {when}" + (f" by process {pid}" if pid else "")
