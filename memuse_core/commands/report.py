"""`memuse report` (aggregates, MemUse 3.5-3.6, A.4, A.5.4, A.6) and `memuse lineage` (memory
graph, A.4.3)."""

from __future__ import annotations

from pathlib import Path

import typer

from .common import DbOption, fail, say, user_errors


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    out = [v.strip() for item in values for v in item.split(",") if v.strip()]
    return out or None


@user_errors
def report(
    db: Path | None = DbOption,
    runs: list[str] | None = typer.Option(
        None, "--runs", help="Run ids to include (repeat or comma-separate; default: every run)."
    ),
    by: str = typer.Option(
        "config",
        "--by",
        help="Rows per `config` (its runs together: counts summed, resolve rate the mean of its runs' "
        "rates ± their sample SD, as the paper's Table 2) or per `run`.",
    ),
    baseline: str | None = typer.Option(
        None, "--baseline", help="Configuration to compare task outcomes against (paired bootstrap)."
    ),
    fmt: str = typer.Option("md", "--format", help="md, csv or json."),
    out: Path | None = typer.Option(None, "--out", help="Directory to write the report into."),
    seed: int = typer.Option(0, "--seed", help="Seed of the paired bootstrap."),
    replicates: int = typer.Option(5000, "--replicates", help="Bootstrap replicates."),
    judge: str | None = typer.Option(
        None,
        "--judge",
        help="Whose verdicts every table shows: rules or llm (default: llm where it has accepted "
        "verdicts, else rules). Tables never mix judges.",
    ),
) -> None:
    """Print or write the paper's tables: outcomes, profiles, triage, coverage, recurring items,
    delivery forms, use and effects, memory histories and cost, from one judge's verdicts."""
    from ..metrics import build_report, write_report
    from ..store import DatabaseError, connect
    from ..store.metrics import list_runs

    if by not in ("config", "run"):
        fail(f"--by: expected `config` or `run`, got `{by}`")
    if fmt not in ("md", "csv", "json"):
        fail(f"--format: expected md, csv or json, got `{fmt}`")
    if replicates < 1:
        fail("--replicates: must be at least 1")
    from ..vocab import JUDGE_KINDS

    if judge is not None and judge not in JUDGE_KINDS:
        fail(f"--judge: expected {' or '.join(JUDGE_KINDS)}, got `{judge}`")
    selected = _split(runs)
    con = connect(db, read_only=True)
    try:
        known = list_runs(con)
        if selected is not None:
            missing = [r for r in selected if r not in set(known.run_id)]
            if missing:
                fail(f"--runs: unknown run {', '.join(missing)} (known: {', '.join(known.run_id) or 'none'})")
        if baseline is not None:
            cfgs = set(known[known.run_id.isin(selected)].config if selected else known.config)
            if baseline not in cfgs:
                fail(
                    f"--baseline: configuration `{baseline}` is not among the selected runs "
                    f"(configurations: {', '.join(sorted(cfgs)) or 'none'})"
                )
        try:
            if judge is not None:
                from ..store.judging import judges_with_verdicts

                if not judges_with_verdicts(con).get(judge):
                    typer.echo(
                        f"note: no accepted {judge} verdicts in {db or 'the store'}; its tables are "
                        "empty (run `memuse judge --judge " + judge + "`)",
                        err=True,
                    )
            rep = build_report(con, selected, baseline, replicates=replicates, seed=seed, judge=judge)
        except DatabaseError as e:
            fail(
                f"cannot aggregate {db or 'the store'}: {str(e).splitlines()[0]} (rebuild it with `memuse build`)"
            )
    finally:
        con.close()
    result = write_report(rep, fmt, by, out)  # type: ignore[arg-type]
    if isinstance(result, str):
        say(result, nl=not result.endswith("\n"))
    else:
        for p in result:
            typer.echo(f"wrote {p}")


@user_errors
def lineage(
    db: Path | None = DbOption,
    item: str | None = typer.Option(None, "--item", help="One item: `namespace/item_id` or `item_id`."),
    episode: str | None = typer.Option(
        None, "--episode", help="Items delivered in or written by an episode."
    ),
    effect: str | None = typer.Option(
        None, "--effect", help="All items with a `harmful` (or `beneficial`, `acted_on`) entry."
    ),
    runs: list[str] | None = typer.Option(None, "--runs", help="Restrict to these runs."),
    out: Path = typer.Option(Path("lineage.html"), "--out", help="HTML file to write."),
) -> None:
    """Write the memory graph (item -> versions -> origin episode -> deliveries -> spans -> verdicts)
    as a self-contained HTML page that works offline."""
    from ..lineage import effect_graph, episode_graph, item_graph, render_html
    from ..store import connect

    chosen = [x for x in (item, episode, effect) if x]
    if len(chosen) != 1:
        fail("give exactly one of --item, --episode or --effect")
    con = connect(db, read_only=True)
    try:
        if item:
            ns, _, iid = item.rpartition("/")
            g = item_graph(con, iid, ns or None, runs=_split(runs))
        elif episode:
            g = episode_graph(con, episode)
        else:
            if effect not in ("harmful", "beneficial", "acted_on"):
                fail(f"--effect: expected harmful, beneficial or acted_on, got `{effect}`")
            g = effect_graph(con, effect, runs=_split(runs))  # type: ignore[arg-type]
    finally:
        con.close()
    if g.number_of_nodes() == 0:
        fail("nothing to draw: no matching item, episode or entry in the store")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(render_html(g), encoding="utf-8")
    typer.echo(f"wrote {out} ({g.number_of_nodes()} nodes, {g.number_of_edges()} edges)")
