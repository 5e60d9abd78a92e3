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
    from ..store.trim import episode_ids
    from ..trim.whatif_batch import run_store

    if not db_path(db).exists():
        fail(f"database {db_path(db)} does not exist (build it with `memuse demo` or `memuse ingest`)")
    con = connect(db)
    try:
        n_eps = len(episode_ids(con))
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
        f"memory-only {summary['memory_only']} (of which {summary['duplicates']} already passed by an "
        f"earlier memory of the same delivery, {summary['withheld']} withheld because memories disagree)"
    )
    typer.echo(
        f"characters {summary['chars_before']} -> {summary['chars_after']}  "
        f"saved {summary['chars_saved']} (~{summary['tokens_saved']} tokens, "
        f"{summary['saved_share']:.1%})"
    )
    typer.echo(
        "stored answers: "
        + ", ".join(f"{k} {v}" for k, v in sorted(summary["outcomes"].items()))
        + " (MemTrim 3.3: kept, relabelled or suppressed; none when the memory stores no answer)"
    )


@user_errors
def trim_eval_cmd(
    data: Path | None = typer.Option(
        None, "--data", help="CLADDER folder (default ../shared/data/real/cladder)."
    ),
    sets: str | None = typer.Option(
        None, "--sets", help="Comma-separated sets (default: easy,hard,anti,det, those present)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the results as JSON."),
    model: str | None = typer.Option(None, "--model", help="Also ask this model (OpenAI-compatible)."),
    base_url: str | None = typer.Option(None, "--base-url", help="Endpoint of the model (and the parser)."),
    limit: int = typer.Option(500, help="At most N pairs per set and condition (C.3)."),
    seed: int = typer.Option(42, help="Sampling seed (C.3)."),
    llm_parser: bool = typer.Option(
        False,
        "--llm-parser",
        help="Parse memories and queries with an LLM (A.1) instead of the deterministic parser.",
    ),
    parser_model: str | None = typer.Option(
        None, "--parser-model", help="Model of the LLM parser (default: --model)."
    ),
) -> None:
    """No memory vs raw memory vs MemTrim on CLADDER premise-change pairs (TA and TD-Dup, C.3)."""
    from ..progress import progress_bar
    from ..trim.cladder import CladderError, build_pairs, candidate_pairs, load_questions
    from ..trim.evaluate import measure, summarize, table

    folder = (data or default_cladder_dir()).resolve()
    if base_url is not None and model is None and parser_model is None:
        fail("--base-url needs --model or --parser-model")
    wanted = tuple(s.strip() for s in sets.split(",") if s.strip()) if sets else None
    try:
        questions = load_questions(folder, wanted)
    except CladderError as e:
        fail(str(e))
    available: dict[tuple[str, str], int] = {}
    for p in candidate_pairs(questions):
        k = (p.memory.dataset, p.condition)
        available[k] = available.get(k, 0) + 1
    pairs = build_pairs(questions, limit=limit, seed=seed)
    if not pairs:
        fail(f"{folder}: no TA or TD-Dup pair passes the construction checks")
    trimmer = None
    if llm_parser:
        pm = parser_model or model
        if pm is None:
            fail("--llm-parser needs --parser-model or --model (and usually --base-url)")
        from ..trim import MemTrim
        from ..trim.parse_llm import LLMParser

        trimmer = MemTrim(parser=LLMParser(pm, base_url=base_url))
    with progress_bar(total=len(pairs), desc="trim", unit="pair") as bar:
        outcomes = measure(pairs, trimmer, progress=lambda n: bar.update(n))
    result = summarize(outcomes, available)
    result["settings"] = {
        "data": str(folder),
        "sets": list(result["sets"]),
        "questions": len(questions),
        "limit": limit,
        "seed": seed,
        "parser": "llm" if llm_parser else "deterministic",
    }
    if trimmer is not None:
        lp = trimmer.parser
        result["settings"]["parser_model"] = parser_model or model
        result["settings"]["parser_calls"] = getattr(lp, "calls", None)
        result["settings"]["parser_failures"] = len(getattr(lp, "failures", []))
    if model:
        from ..trim.eval_model import ask_model

        try:
            with progress_bar(total=len(outcomes), desc="ask", unit="pair") as bar:
                result["model"] = ask_model(outcomes, model, base_url, progress=lambda i: bar.update(1))
        except Exception as e:  # the endpoint is the user's: report it in one line
            fail(f"model {model} at {base_url}: {type(e).__name__}: {str(e).splitlines()[0][:200]}")
        result["settings"]["model"] = model
    if as_json:
        typer.echo(json.dumps(result, indent=2))
        return
    counts = ", ".join(
        f"{s} TA {b['TA']['pairs']}/{b['TA']['candidates']} TD-Dup {b['TD-Dup']['pairs']}/{b['TD-Dup']['candidates']}"
        for s, b in result["sets"].items()
    )
    typer.echo(f"CLADDER pairs from {folder} (used/available): {counts}")
    for line in table(result):
        typer.echo(line)
    typer.echo("\nFixed by construction:")
    for line in result["fixed_by_construction"]:
        typer.echo(f"- {line}")
    if model:
        typer.echo(f"\nmodel {model}: accuracy (TD-Dup: correct->wrong / wrong->correct vs no memory)")
        blocks = [(s, c, b) for s, per in result["model"]["sets"].items() for c, b in per.items()]
        blocks += [("all", c, b) for c, b in result["model"]["all"].items()]
        for s, c, b in blocks:
            for m, r in b.items():
                acc = "-" if r["accuracy"] is None else f"{r['accuracy']:.0%}"
                extra = (
                    f"  ✓→✗ {r['correct_to_wrong']}  ✗→✓ {r['wrong_to_correct']}"
                    if "correct_to_wrong" in r
                    else ""
                )
                typer.echo(f"{s:<6} {c:<7} {m:<10} {acc:>6}{extra}")
