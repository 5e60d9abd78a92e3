"""Foundation commands: schema, ingest, info."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from ..wording import plural
from .common import DbOption, NewDbOption, fail, say, user_errors

if TYPE_CHECKING:
    from ..store.build_state import BuildState


def schema() -> None:
    """Print the JSON Schema of one event-log line."""
    from ..events import event_json_schema

    typer.echo(json.dumps(event_json_schema(), indent=2))


@user_errors
def ingest(
    paths: list[Path] = typer.Argument(..., help="Files or folders (formats are detected)."),
    db: Path | None = NewDbOption,
    build: bool = typer.Option(True, "--build/--no-build", help="Build the evaluation context afterwards."),
    observers: list[Path] = typer.Option(
        [], "--observers", help="TOML/JSON file of extra observers (memory wrappers to find in prompts)."
    ),
    observe: bool = typer.Option(
        True, "--observe/--no-observe", help="Run the built-in observers on trajectories."
    ),
    config: str | None = typer.Option(
        None,
        "--config",
        help="Memory-system/configuration name for imported trajectories' runs (a batch folder: "
        "default the folder name).",
    ),
    run: str | None = typer.Option(
        None, "--run", help="Run id of the batch folder being imported (default: the folder name)."
    ),
    workers: int | None = typer.Option(
        None,
        "--workers",
        help="Processes that parse files (default: one per core, for inputs over 32 MB; "
        "0 parses in this process).",
    ),
) -> None:
    """Import recorded runs; each file is all-or-nothing, bad files are reported and skipped.

    A batch folder (mini-swe-agent, SWE-agent or OpenHands output) is one run; the SWE-bench
    harness report found beside its trajectories sets the episodes' outcomes."""
    from ..ingest import IngestError, IngestResult
    from ..ingest.batch import batch_lines, ingest_batch
    from ..ingest.common import using_run_config
    from ..ingest.layouts import find_inputs, plan_folder
    from ..ingest.observers import load_observers, using_observers
    from ..ingest.parallel import ingest_files, start_workers
    from ..progress import progress_bar
    from ..store import connect
    from ..store.build_state import build_state
    from ..store.parquet import import_parquet

    extra = [o for f in observers for o in load_observers(f)]
    found = find_inputs(list(paths))
    files = found.files
    for d, what in found.left_out:
        say(f"left out {d}: {what}", err=True)
    if not files and not found.batches and not found.exports:
        if found.left_out:
            fail(f"no recordings found ({plural(len(found.left_out), 'file')} left out, named above)")
        raise typer.BadParameter("no files found")
    if run is not None and len(found.batches) != 1:
        fail(f"--run names the run of one batch folder; {len(found.batches)} batch folders were given")
    batches = [plan_folder(r) for r in found.batches]
    counts = {"imported": 0, "skipped": 0, "failed": 0}
    refused = 0  # batch folders refused whole (their run could not be chosen)
    imported_eps = 0
    n_files = len(files) + sum(len(b.members) for b in batches)

    def one(f: Path, res: IngestResult | IngestError, *, batch: bool = False) -> None:
        nonlocal imported_eps
        if isinstance(res, IngestError):
            counts["failed"] += 1
            say(f"error: {res}", err=True)
        else:
            imported_eps += res.episodes
            counts["skipped" if res.status == "skipped" else "imported"] += 1
            if res.status == "skipped" and not batch:
                say(f"skipped {f}: {res.error}", err=True)
        bar.update(1)

    # the parse workers (for large inputs) start before the store is opened: forked, they need
    # not import the parser again (`ingest.parallel.start_workers`)
    pool = start_workers(files, workers=workers)
    try:
        con = connect(db)
    except BaseException:
        if pool is not None:
            pool.close()
        raise
    try:
        with (
            using_observers(extra, enabled=observe),
            using_run_config(config),
            progress_bar(total=n_files, desc="ingest", unit="file") as bar,
        ):
            for e in found.exports:
                got = import_parquet(con, e)
                imported_eps += got["episodes"]
                counts["imported"] += got["files"]
                counts["skipped"] += got["skipped"]
                typer.echo(
                    f"export {e}: {plural(got['files'], 'file')} imported ({plural(got['episodes'], 'episode')}, {plural(got['runs'], 'run')}), "
                    f"{got['skipped']} already in the store"
                )
            for b in batches:
                try:
                    out = ingest_batch(
                        con,
                        b,
                        run=run,
                        config=config,
                        workers=workers,
                        on_file=lambda f, r: one(f, r, batch=True),
                    )
                except IngestError as e:
                    refused += 1
                    bar.update(len(b.members))
                    say(f"error: {e}", err=True)
                    continue
                for err in out.report_errors:
                    counts["failed"] += 1
                    say(f"error: {err}", err=True)
                for line in batch_lines(out):
                    say(line)
            # large inputs are parsed in worker processes (--workers), or without them in a
            # thread beside this one; each file is still its own transaction, committed in the
            # order given
            for f, res in ingest_files(con, files, workers=workers, pool=pool):
                one(f, res)
        state = build_state(con)
    finally:
        if pool is not None:
            pool.close()
        con.close()
    typer.echo(ingest_summary(imported_eps, counts, refused))
    _finish_build(db, build, state, imported=imported_eps)
    if counts["failed"] or refused:
        raise typer.Exit(1)


def ingest_summary(episodes: int, counts: dict[str, int], refused: int) -> str:
    """The last line of `memuse ingest`: episodes imported, then files imported, skipped (content
    already stored), failed (bad input, harness reports included) and batch folders refused."""
    parts = [f"imported {plural(episodes, 'episode')} from {plural(counts['imported'], 'file')}"]
    if counts["skipped"]:
        parts.append(f"{counts['skipped']:,} already imported")
    if counts["failed"]:
        parts.append(f"{counts['failed']:,} failed")
    if refused:
        parts.append(f"{plural(refused, 'batch folder')} refused")
    return "; ".join(parts)


def _finish_build(db: Path | None, build: bool, state: BuildState, *, imported: int = 0) -> None:
    """Build every episode not built yet, including those an interrupted build left (a rerun never
    reports success over a half-built store); with --no-build, say that the build is pending (an
    interrupted one always, unbuilt episodes when this command imported some)."""
    from ..build import build_store
    from ..store.build_state import describe

    if state.complete:
        return
    if not build:
        if state.interrupted is not None:
            typer.echo(
                f"note: the last build of this store ({describe(state.interrupted)}) did not finish; "
                f"{plural(state.unbuilt, 'episode')} are not built: run `memuse build`",
                err=True,
            )
        elif imported:  # part of the summary (stdout): what this import left to do
            typer.echo(
                f"note: {plural(state.unbuilt, 'episode')} not built yet (--no-build): run `memuse build` "
                "before judging or reporting"
            )
        return
    stats = build_store(db)
    if state.interrupted is not None:
        typer.echo(
            f"finished an interrupted build ({describe(state.interrupted)}): {plural(stats['episodes'], 'episode')} built"
        )


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
        wc = max(len(str(r[0])) for r in runs)  # columns as wide as the longest name (aligned)
        wr = max(len(str(r[1])) for r in runs)
        for config, run_id, n, rate, unknown in runs:
            rr = "—" if rate is None else f"{rate:.1%}"
            note = f" ({unknown} without outcome)" if unknown else ""
            say(f"    {str(config):<{wc}}  {str(run_id):<{wr}} {n:>6} episodes  resolved {rr}{note}")
