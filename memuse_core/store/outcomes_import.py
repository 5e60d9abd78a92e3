"""Task outcomes from harness reports, written onto stored episodes (MemUse A.5.4).

`episodes.resolved` is the outcome every aggregate reads (NULL: no outcome, never counted as
unresolved). A harness report sets it for the episodes of one run by task id, and the row in
`episode_outcomes` keeps where it came from: the harness status (`vocab.HarnessStatus`), the report
file and its kind. Episodes whose task the report does not list keep what they had.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from ..vocab import HARNESS_RESOLVED


@dataclass
class OutcomeSummary:
    """What applying a report to a run did, and the run's outcomes afterwards."""

    run_id: str
    applied: int = 0
    """Episodes whose outcome the report set."""
    by_status: dict[str, int] = field(default_factory=dict)
    """Episodes of the run per harness status (all reports applied so far)."""
    resolved: int = 0
    not_resolved: int = 0
    no_outcome: int = 0
    """Episodes of the run without any outcome (shown as "—", never as unresolved)."""
    unmatched_tasks: list[str] = field(default_factory=list)
    """Tasks of the report with no episode in the run."""


def run_exists(con: duckdb.DuckDBPyConnection, run_id: str) -> bool:
    return con.execute("SELECT count(*) FROM runs WHERE run_id = ?", [run_id]).fetchall()[0][0] > 0


def apply_outcomes(
    con: duckdb.DuckDBPyConnection,
    run_id: str,
    statuses: Mapping[str, tuple[str, str, str]],
) -> OutcomeSummary:
    """Set the outcome of the run's episodes from `statuses` (task id -> (harness status, source
    file, report kind)) in one transaction; returns the run's outcomes afterwards."""
    rows = [(t, s, HARNESS_RESOLVED[s], src, kind) for t, (s, src, kind) in statuses.items()]
    tbl = pa.table(
        {
            "task_id": pa.array([r[0] for r in rows], pa.string()),
            "status": pa.array([r[1] for r in rows], pa.string()),
            "resolved": pa.array([r[2] for r in rows], pa.bool_()),
            "source": pa.array([r[3] for r in rows], pa.string()),
            "source_kind": pa.array([r[4] for r in rows], pa.string()),
        }
    )
    con.execute("BEGIN TRANSACTION")
    try:
        con.register("_harness_rows", tbl)
        applied = con.execute(
            """SELECT count(*) FROM episodes e JOIN _harness_rows r USING (task_id) WHERE e.run_id = ?""",
            [run_id],
        ).fetchall()[0][0]
        con.execute(
            """INSERT OR REPLACE INTO episode_outcomes
               SELECT e.episode_id, e.run_id, e.task_id, r.status, r.resolved, r.source, r.source_kind,
                      current_localtimestamp()
               FROM episodes e JOIN _harness_rows r USING (task_id) WHERE e.run_id = ?""",
            [run_id],
        )
        con.execute(
            """UPDATE episodes SET resolved = r.resolved FROM _harness_rows r
               WHERE episodes.run_id = ? AND episodes.task_id = r.task_id""",
            [run_id],
        )
        unmatched = [
            r[0]
            for r in con.execute(
                """SELECT task_id FROM _harness_rows
                   WHERE task_id NOT IN (SELECT task_id FROM episodes WHERE run_id = ?) ORDER BY 1""",
                [run_id],
            ).fetchall()
        ]
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    finally:
        con.unregister("_harness_rows")
    out = run_outcomes(con, run_id)
    out.applied, out.unmatched_tasks = int(applied), unmatched
    return out


def run_outcomes(con: duckdb.DuckDBPyConnection, run_id: str) -> OutcomeSummary:
    """The outcomes of a run's episodes: resolved, not resolved, none, and per harness status."""
    row = con.execute(
        """SELECT count(*) FILTER (WHERE resolved), count(*) FILTER (WHERE NOT resolved),
                  count(*) FILTER (WHERE resolved IS NULL)
           FROM episodes WHERE run_id = ?""",
        [run_id],
    ).fetchall()[0]
    by = dict(
        con.execute(
            """SELECT o.status, count(*) FROM episode_outcomes o JOIN episodes e USING (episode_id)
               WHERE e.run_id = ? GROUP BY 1 ORDER BY 1""",
            [run_id],
        ).fetchall()
    )
    return OutcomeSummary(
        run_id=run_id, resolved=int(row[0]), not_resolved=int(row[1]), no_outcome=int(row[2]), by_status=by
    )
