"""`memuse demo`: generate the deterministic demo corpus and ingest it (MemUse 4.1, A.5.2)."""

from __future__ import annotations

from pathlib import Path

import typer

from ..wording import plural
from .common import NewDbOption, fail, user_errors


@user_errors
def demo(
    episodes: int = typer.Option(
        120, "--episodes", "-n", help="Total episodes over all runs and configurations."
    ),
    seed: int = typer.Option(7, "--seed", help="Seed; the same seed gives byte-identical files."),
    db: Path | None = NewDbOption,
    out: Path | None = typer.Option(
        None, "--out", help="Keep the event logs and planted truth in this folder."
    ),
    runs: int = typer.Option(2, "--runs", help="Runs per configuration."),
    steps: int = typer.Option(40, "--steps", help="Mean steps per episode (the scale benchmark uses 60)."),
    build: bool = typer.Option(True, "--build/--no-build", help="Build the evaluation context afterwards."),
    workers: int | None = typer.Option(
        None,
        "--workers",
        help="Processes that parse the event logs while importing (default: one per core "
        "for corpora over 32 MB; 0 parses in this process).",
    ),
) -> None:
    """Generate realistic coding-agent episodes in four memory configurations, with planted truth."""
    from ..demo import DemoPlan, build_demo
    from ..progress import progress_bar

    if episodes < 1 or runs < 1 or steps < 10:
        fail("--episodes and --runs must be at least 1 and --steps at least 10")
    if out is not None and out.exists() and not out.is_dir():
        fail(f"--out {out}: exists and is not a folder")
    plan = DemoPlan(episodes=episodes, seed=seed, runs=runs, mean_steps=steps)
    total = plan.tasks_per_run * len(plan.configs) * plan.runs
    with progress_bar(total=total, desc="demo", unit="episode") as bar:

        def tick(stage: str, n: int) -> None:
            if stage == "generate":
                bar.update(n)

        res = build_demo(db, plan, out=out, progress=tick, build_context=build, workers=workers)
    typer.echo(
        f"demo: {plural(res.episodes, 'episode')}, {res.events:,} events, {res.truth_rows:,} planted-truth rows "
        f"in {res.db} ({sum(res.seconds.values()):.1f} s)"
    )
    if out is not None:
        typer.echo(f"event logs in {Path(out) / 'events'}, truth in {res.files.truth_file}")
