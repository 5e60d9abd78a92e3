"""`memuse outcomes` (harness reports onto a run's episodes, MemUse A.5.4) and `memuse export`
(the store as partitioned Parquet for other engines)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..wording import plural
from .common import DbOption, fail, user_errors


@user_errors
def outcomes(
    report: Path = typer.Argument(
        ...,
        help="SWE-bench harness report (`resolved_ids`, ...), a per-task `report.json`, or a folder of them.",
    ),
    run: str = typer.Option(..., "--run", help="Run whose episodes get the outcomes (by task id)."),
    db: Path | None = DbOption,
) -> None:
    """Set the outcome of a run's episodes from a SWE-bench harness report. Tasks the report does
    not list keep the outcome they have (none: shown as "—", never as unresolved)."""
    from ..ingest.batch import outcome_line
    from ..ingest.layouts import outcome_files_in
    from ..ingest.outcomes import merged, read_report
    from ..store import connect
    from ..store.batches import run_ids
    from ..store.outcomes_import import apply_outcomes, run_exists

    files = outcome_files_in(report) if report.is_dir() else [report]
    if not files:
        fail(f"{report}: no harness report in this folder")
    reports = [read_report(f) for f in files]
    con = connect(db, create=False)
    try:
        if not run_exists(con, run):
            known = run_ids(con)
            fail(
                f"--run: run `{run}` is not in the store (runs: {', '.join(known[:10]) or 'none'}"
                f"{', ...' if len(known) > 10 else ''})"
            )
        statuses = {t: (s, str(r.path), r.kind) for t, (s, r) in merged(reports).items()}
        summary = apply_outcomes(con, run, statuses)
    finally:
        con.close()
    typer.echo(f"set the outcome of {plural(summary.applied, 'episode')} of run {run}")
    typer.echo(outcome_line(summary, reports))
    if summary.unmatched_tasks:
        shown = ", ".join(summary.unmatched_tasks[:5])
        more = ", ..." if len(summary.unmatched_tasks) > 5 else ""
        typer.echo(
            f"no episode in run {run} for {plural(len(summary.unmatched_tasks), 'task')} of the report "
            f"({shown}{more})"
        )


@user_errors
def export(
    parquet: Path = typer.Option(..., "--parquet", help="Folder to write the Parquet export into."),
    db: Path | None = DbOption,
) -> None:
    """Write the store as Parquet for other engines (DuckDB, Polars, Spark, Trino): episodes,
    steps, deliveries, spans, verdicts and assessments partitioned by config and run, every other
    table beside them; `memuse ingest FOLDER` reads the export back."""
    from ..store import connect
    from ..store.parquet import export_parquet

    con = connect(db, read_only=True)
    try:
        written = export_parquet(con, parquet)
    finally:
        con.close()
    n = sum(written.values())
    typer.echo(f"wrote {n:,} rows of {len(written)} tables to {parquet}")
