"""Evaluation-context commands: `memuse build` and `memuse spans` (MemUse 3.3, A.1)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from ..wording import plural
from .common import DbOption, fail, say, user_errors


@user_errors
def build(
    db: Path | None = DbOption,
    rebuild: bool = typer.Option(
        False, "--rebuild", help="Recompute every derived context table from the events."
    ),
    workers: int = typer.Option(0, "--workers", help="Processes that load and build (0: automatic)."),
) -> None:
    """Build exposure, prior context, recording checks, injection spans, credit windows and
    eligibility for stored episodes (only episodes not built yet, unless --rebuild).
    Judgments, annotations and verdicts are never touched."""
    from ..build import build_store
    from ..progress import progress_bar
    from ..store import connect
    from ..store.build_state import build_state, describe

    con = connect(db)
    try:
        marker = build_state(con).interrupted
    finally:
        con.close()
    if marker is not None:  # the build below finishes it: it builds what the other did not reach
        typer.echo(f"an earlier build of this store ({describe(marker)}) did not finish: finishing it")
    with progress_bar(total=None, desc="build", unit="episode") as bar:

        def progress(done: int, total: int) -> None:
            bar.total = total
            bar.n = done
            bar.refresh()

        stats = build_store(db, rebuild=rebuild, progress=progress, workers=workers)
    typer.echo(
        f"built {plural(stats['episodes'], 'episode')}, {plural(stats['spans'], 'span')} "
        f"({plural(stats['errors'], 'episode')} failed recording checks)"
    )


def _window(w: tuple[int, int] | None) -> str:
    return "-" if w is None else f"{w[0]}-{w[1]}"


@user_errors
def spans(
    episode: str = typer.Option(..., "--episode", help="Episode id."),
    db: Path | None = DbOption,
    as_json: bool = typer.Option(False, "--json", help="Print JSON for other tools."),
) -> None:
    """Show an episode's injection spans with entries, exposure, credit windows and status; with
    --json also each judge's verdict (triage, judge, judgment id) and its entries' five signals
    and usage labels, one judge beside the other."""
    from ..store import connect
    from ..store.judging import episode_verdicts
    from ..store.spans import load_episode_context

    con = connect(db, read_only=True)
    try:
        try:
            ctx = load_episode_context(con, episode)
        except KeyError as e:
            fail(str(e.args[0]))
            return
        judged = episode_verdicts(con, episode) if as_json else {}
    finally:
        con.close()
    if as_json:
        typer.echo(
            json.dumps(
                {
                    "episode_id": ctx.episode_id,
                    "spans": [
                        {
                            "span_id": s.span_id,
                            "status": s.status,
                            "first_step": s.first_step,
                            "last_step": s.last_step,
                            "deliveries": s.delivery_ids,
                            "restatements": s.restatements,
                            "chars": s.chars,
                            "entries": [
                                {
                                    "item_id": e.item_id,
                                    "exposure": e.exposure,
                                    "window": list(e.window) if e.window is not None else None,
                                }
                                for e in s.entries
                            ],
                            "outcomes": judged.get(s.span_id, {}).get("outcomes", {}),
                            "verdicts": judged.get(s.span_id, {}).get("verdicts", {}),
                        }
                        for s in ctx.spans
                    ],
                }
            )
        )
        return
    bad = [c for c in ctx.checks if not c.ok]
    say(
        f"episode {ctx.episode_id}: {plural(len(ctx.spans), 'span')}, {plural(len(ctx.deliveries), 'delivery')}, "
        f"recording checks {'passed' if not bad else 'FAILED'}"
    )
    for c in bad:
        say(f"  check {c.rule}: {c.detail}")
    say(
        f"  {'span':<34} {'status':<13} {'steps':<9} {'deliv':>5} {'chars':>7}  entries (item exposure window)"
    )
    for s in ctx.spans:
        steps = "-" if s.first_step is None else f"{s.first_step}-{s.last_step}"
        ents = ", ".join(f"{e.item_id} {e.exposure} {_window(e.window)}" for e in s.entries) or "(none)"
        say(f"  {s.span_id:<34} {s.status:<13} {steps:<9} {len(s.delivery_ids):>5} {s.chars:>7}  {ents}")
        if s.reason and s.status != "eligible":
            say(f"  {'':<34} reason: {s.reason}")
