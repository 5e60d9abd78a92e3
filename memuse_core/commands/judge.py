"""`memuse judge`: judge eligible spans with the rules judge (offline) or an LLM judge."""

from __future__ import annotations

import time
from pathlib import Path

import typer

from .common import DbOption, fail, user_errors


@user_errors
def judge(
    db: Path | None = DbOption,
    judge_kind: str | None = typer.Option(
        None, "--judge", help="rules (offline, default without an endpoint) or llm."
    ),
    model: str | None = typer.Option(None, "--model", help="Model name for the LLM judge."),
    base_url: str | None = typer.Option(
        None, "--base-url", help="OpenAI-compatible endpoint (DeepSeek, vLLM, Ollama...)."
    ),
    api_key_env: str = typer.Option(
        "OPENAI_API_KEY", "--api-key-env", help="Environment variable holding the API key."
    ),
    reference: bool = typer.Option(False, "--reference", help="Give the judge the reference solution."),
    concurrency: int = typer.Option(4, "--concurrency", min=1, help="Spans judged in parallel (LLM judge)."),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Judge at most this many spans."),
    spans: str | None = typer.Option(None, "--spans", help="Comma-separated span ids to (re-)judge."),
    max_cost: float | None = typer.Option(
        None, "--max-cost", help="Stop starting spans once this many USD are spent."
    ),
    max_calls: int = typer.Option(
        8, "--max-calls", min=2, help="Model calls per span, forced answer included."
    ),
    price_input: float | None = typer.Option(None, "--price-input", help="USD per 1M uncached input tokens."),
    price_cached: float | None = typer.Option(None, "--price-cached", help="USD per 1M cached input tokens."),
    price_output: float | None = typer.Option(None, "--price-output", help="USD per 1M output tokens."),
    timeout: float = typer.Option(120.0, "--timeout", help="Seconds before one model request times out."),
    workers: int | None = typer.Option(
        None,
        "--workers",
        min=1,
        help="Processes for the batch, whole episodes each (default: one per core for "
        "a rules batch of 100 spans or more, else one; one is enough for the LLM judge).",
    ),
    rank_by_rules: bool = typer.Option(
        False,
        "--rank-by-rules",
        help="Judge first the spans the rules judge flagged (misused, used, unclear).",
    ),
    retry_errors: bool = typer.Option(
        False,
        "--retry-errors",
        help="Also judge again the spans whose earlier judgment failed validation or its budget "
        "(spans that failed for a transport failure are always judged again).",
    ),
) -> None:
    """Judge eligible spans; interrupt any time and run again to resume (nothing is judged twice)."""
    from ..judge.result import JudgeConfigError, JudgeSettings
    from ..judge.runner import run_batch
    from ..progress import progress_bar
    from ..vocab import JUDGE_KINDS, JudgeKind

    kind = judge_kind or ("llm" if (model or base_url) else "rules")
    if kind not in JUDGE_KINDS:
        fail(f"--judge must be rules or llm, not {kind!r}")
    judge: JudgeKind = "llm" if kind == "llm" else "rules"
    try:
        settings = JudgeSettings(
            judge=judge,
            model=model,
            base_url=base_url,
            api_key_env=api_key_env,
            reference=reference,
            max_calls=max_calls,
            price_input=price_input,
            price_cached=price_cached,
            price_output=price_output,
            timeout=timeout,
        )
    except ValueError as e:
        fail(f"bad judge setting: {str(e).splitlines()[0]}")
    ids = [s.strip() for s in spans.split(",") if s.strip()] if spans else None
    if kind == "llm" and max_cost is not None and price_input is None and price_output is None:
        typer.echo("note: no --price-* given; --max-cost uses provider-reported cost only", err=True)
    with progress_bar(total=None, desc=f"judge ({kind})", unit="span") as bar:
        last = [0.0]

        def on_progress(s) -> None:  # type: ignore[no-untyped-def]
            if bar.total is None:
                bar.total = s.planned
            bar.n = s.judged + s.interrupted
            now = time.monotonic()
            if now - last[0] < 0.2 and bar.n < (bar.total or 0):
                return  # redrawn at most five times a second (the rules judge finishes hundreds)
            last[0] = now
            bar.set_postfix_str(
                f"accepted {s.accepted} errors {sum(s.errors.values())} cost {s.cost_text()}", refresh=False
            )
            bar.refresh()

        try:
            summary = run_batch(
                db,
                settings,
                span_ids=ids,
                limit=limit,
                concurrency=concurrency,
                max_cost=max_cost,
                progress=on_progress,
                rank_by_rules=rank_by_rules,
                workers=workers,
                retry_errors=retry_errors,
            )
        except JudgeConfigError as e:  # a missing key or model, or an endpoint the preflight cannot use
            fail(str(e))
            return
    for line in summary.lines():
        typer.echo(line)
    if summary.stopped and summary.stopped.startswith("interrupted"):  # also with none in flight
        raise typer.Exit(130)
    if summary.broken:
        typer.echo(f"error: {summary.stopped}", err=True)
        raise typer.Exit(1)
