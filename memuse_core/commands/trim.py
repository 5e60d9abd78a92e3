"""MemTrim commands: `memuse trim` (what-if over recorded deliveries) and `memuse trim-eval`
(raw memory vs MemTrim on CLADDER premise-change pairs)."""

from __future__ import annotations

import json
from pathlib import Path

import typer

from .common import DbOption, fail, user_errors

PROJECT_ROOT = Path(__file__).resolve().parents[2]


def default_cladder_dir() -> Path:
    """../shared/data/real/cladder next to the project root (also tried from the working dir)."""
    for base in (PROJECT_ROOT, Path.cwd()):
        p = (base / ".." / "shared" / "data" / "real" / "cladder").resolve()
        if p.is_dir():
            return p
    return (PROJECT_ROOT / ".." / "shared" / "data" / "real" / "cladder").resolve()


@user_errors
def trim_cmd(
    db: Path | None = DbOption,
    limit: int | None = typer.Option(None, help="Only the first N episodes (for a quick look)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
    workers: int | None = typer.Option(
        None, "--workers", min=1, help="Worker processes (default: the cores, at most 4)."
    ),
) -> None:
    """What MemTrim would remove from every recorded delivery, given the agent's prior context."""
    from ..progress import progress_bar
    from ..store import connect, db_path
    from ..trim.whatif import run_store

    if not db_path(db).exists():
        fail(f"database {db_path(db)} does not exist (build it with `memuse demo` or `memuse ingest`)")
    con = connect(db)
    try:
        n_eps = con.execute("SELECT count(*) FROM episodes").fetchone()[0]  # type: ignore[index]
        if n_eps == 0:
            fail("the store has no episodes (import runs with `memuse ingest` or build the demo)")
        total = min(n_eps, limit) if limit else n_eps
        with progress_bar(total=total, desc="trim", unit="episode") as bar:
            summary = run_store(con, limit=limit, workers=workers, progress=bar.update)
    finally:
        con.close()
    if as_json:
        typer.echo(json.dumps(summary, indent=2))
        return
    typer.echo(
        f"deliveries {summary['deliveries']}  entries {summary['entries']}  "
        f"(prior context from: {', '.join(f'{k} {v}' for k, v in summary['prior_from'].items())})"
    )
    typer.echo(
        f"units: shared {summary['shared']}  conflicting {summary['conflicting']}  "
        f"memory-only {summary['memory_only']}"
    )
    typer.echo(
        f"characters {summary['chars_before']} -> {summary['chars_after']}  "
        f"saved {summary['chars_saved']} (~{summary['tokens_saved']} tokens, "
        f"{summary['saved_share']:.1%})"
    )
    typer.echo(f"outcomes: {summary['outcomes']}")


@user_errors
def trim_eval_cmd(
    data: Path | None = typer.Option(
        None, "--data", help="CLADDER folder (default ../shared/data/real/cladder)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    model: str | None = typer.Option(None, "--model", help="Also ask this model (OpenAI-compatible)."),
    base_url: str | None = typer.Option(None, "--base-url", help="Endpoint of the model."),
    limit: int = typer.Option(500, help="At most N pairs per condition (C.3)."),
    seed: int = typer.Option(42, help="Sampling seed (C.3)."),
    llm_parser: bool = typer.Option(
        False,
        "--llm-parser",
        help="Parse memories and queries with the model (A.1) instead of the deterministic parser.",
    ),
) -> None:
    """Raw memory vs MemTrim on CLADDER premise-change pairs (TA and TD-Dup, Appendix C.3)."""
    from ..progress import progress_bar
    from ..trim.cladder import CladderError, build_pairs, load_questions
    from ..trim.evaluate import CONDITIONS, ask_model, measure, summarize

    folder = (data or default_cladder_dir()).resolve()
    if (model is None) != (base_url is None) and model is None:
        fail("--base-url needs --model")
    try:
        questions = load_questions(folder)
    except CladderError as e:
        fail(str(e))
    pairs = build_pairs(questions, limit=limit, seed=seed)
    if not pairs:
        fail(f"{folder}: no TA or TD-Dup pair passes the construction checks")
    trimmer = None
    if llm_parser:
        if model is None:
            fail("--llm-parser needs --model (and usually --base-url)")
        from ..trim import MemTrim
        from ..trim.parse_llm import LLMParser

        trimmer = MemTrim(parser=LLMParser(model, base_url=base_url))
    outcomes = measure(pairs, trimmer)
    result = summarize(outcomes)
    result["settings"] = {
        "data": str(folder),
        "questions": len(questions),
        "limit": limit,
        "seed": seed,
        "parser": "llm" if llm_parser else "deterministic",
    }
    if trimmer is not None:
        lp = trimmer.parser
        result["settings"]["parser_calls"] = getattr(lp, "calls", None)
        result["settings"]["parser_failures"] = len(getattr(lp, "failures", []))
    if model:
        try:
            with progress_bar(total=len(outcomes), desc="ask", unit="pair") as bar:
                asked = ask_model(outcomes, model, base_url, progress=lambda i: bar.update(1))
        except Exception as e:  # the endpoint is the user's: report it in one line
            fail(f"model {model} at {base_url}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        for cond in CONDITIONS:
            result[cond]["model"] = asked[cond]
        result["settings"]["model"] = model
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    typer.echo(f"CLADDER pairs from {folder}: TA {result['TA']['pairs']}, TD-Dup {result['TD-Dup']['pairs']}")
    head = f"{'condition':<8} {'method':<8} {'stale_exp':>9} {'ans_kept':>8} {'mem_only':>8} {'conflicts':>9} {'chars':>8}"
    typer.echo(head)

    def f(x: float | None, pct: bool = False) -> str:
        if x is None:
            return "-"
        return f"{x:.0%}" if pct else f"{x:.1f}"

    for cond in CONDITIONS:
        for m in ("raw", "memtrim"):
            r = result[cond][m]
            typer.echo(
                f"{cond:<8} {m:<8} {f(r['stale_answer_exposure'], True):>9} {f(r['answer_retained'], True):>8} "
                f"{f(r['memory_only_units']):>8} {f(r['conflicts_removed']):>9} {f(r['chars']):>8}"
            )
    if model:
        typer.echo(f"\nmodel {model}: accuracy (TD-Dup: correct->wrong / wrong->correct vs no memory)")
        for cond in CONDITIONS:
            for m, r in result[cond]["model"].items():
                extra = (
                    f"  ✓→✗ {r['correct_to_wrong']}  ✗→✓ {r['wrong_to_correct']}"
                    if "correct_to_wrong" in r
                    else ""
                )
                typer.echo(f"{cond:<8} {m:<10} {f(r['accuracy'], True):>6}{extra}")
