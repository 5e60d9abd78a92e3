"""Foundation commands: schema, ingest, info."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..cli import DbOption, app, say, user_errors


@app.command()
def schema() -> None:
    """Print the JSON Schema of one event-log line."""
    from ..events import event_json_schema

    typer.echo(json.dumps(event_json_schema(), indent=2))


@app.command()
@user_errors
def ingest(
    paths: list[Path] = typer.Argument(..., help="Files or folders (formats are detected)."),
    db: Path | None = DbOption,
    build: bool = typer.Option(True, "--build/--no-build", help="Build the evaluation context afterwards."),
    observers: list[Path] = typer.Option(
        [], "--observers", help="TOML/JSON file of extra observers (memory wrappers to find in prompts)."
    ),
    observe: bool = typer.Option(
        True, "--observe/--no-observe", help="Run the built-in observers on trajectories."
    ),
    config: str | None = typer.Option(
        None, "--config", help="Memory-system/configuration name for imported trajectories' runs."
    ),
    workers: int | None = typer.Option(
        None,
        "--workers",
        help="Processes that parse files (default: one per core, for inputs over 32 MB; "
        "0 parses in this process).",
    ),
) -> None:
    """Import recorded runs; each file is all-or-nothing, bad files are reported and skipped."""
    from ..ingest import IngestError, expand_paths
    from ..ingest.common import using_run_config
    from ..ingest.observers import load_observers, using_observers
    from ..ingest.parallel import ingest_files
    from ..progress import progress_bar
    from ..store import connect

    extra = [o for f in observers for o in load_observers(f)]
    files = expand_paths(paths)
    if not files:
        raise typer.BadParameter("no files found")
    failed = 0
    imported_eps = 0
    con = connect(db)
    try:
        with (
            using_observers(extra, enabled=observe),
            using_run_config(config),
            progress_bar(total=len(files), desc="ingest", unit="file") as bar,
        ):
            # large inputs are parsed in worker processes (--workers); each file is still its
            # own transaction, committed in the order given
            for f, res in ingest_files(con, files, workers=workers):
                if isinstance(res, IngestError):
                    failed += 1
                    say(f"error: {res}", err=True)
                else:
                    imported_eps += res.episodes
                    if res.status == "skipped":
                        say(f"skipped {f}: {res.error}", err=True)
                bar.update(1)
    finally:
        con.close()
    typer.echo(f"imported {imported_eps} episodes from {len(files) - failed} of {len(files)} files")
    if build and imported_eps:
        _maybe_build(db)
    if failed:
        raise typer.Exit(1)


def _maybe_build(db: Path | None) -> None:
    """Run the evaluation-context build."""
    from ..build import build_store

    build_store(db)


@app.command()
@user_errors
def info(db: Path | None = DbOption, as_json: bool = typer.Option(False, "--json")) -> None:
    """Summarise what the store holds: runs, episodes, steps, deliveries, items, sizes."""
    from ..store import connect, db_path, store_info
    from ..store.export import run_summary

    con = connect(db, read_only=True)
    try:
        data = store_info(con)
        runs = run_summary(con)
    finally:
        con.close()
    p = db_path(db)
    data["db_bytes"] = p.stat().st_size if p.exists() else 0
    if as_json:
        typer.echo(json.dumps({**data, "by_run": [list(r) for r in runs]}, default=str))
        return
    say(f"database {p} ({data['db_bytes'] / 1e6:.1f} MB)")
    for k, v in data.items():
        if k != "db_bytes":
            say(f"  {k:<18} {v:,}" if isinstance(v, int) else f"  {k:<18} {v}")
    if runs:
        say("  runs:")
        for config, run_id, n, rate in runs:
            rr = "-" if rate is None else f"{rate:.1%}"
            say(f"    {config:<16} {run_id:<24} {n:>6} episodes  resolved {rr}")
