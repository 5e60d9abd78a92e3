"""Rendering the report as Markdown, CSV and JSON, and writing it (`memuse report`).

Undefined values print as "—" in Markdown and stay empty in CSV. The JSON form is the `Report`
model itself: `{"configs": {<config>: {"profile": ..., "runs": {<run>: {...}}}}}` with shares as
fractions.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pandas as pd

from .models import Report
from .tables import TABLES, UNDEFINED, By, report_tables


def _cell(x: object) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return UNDEFINED
    if isinstance(x, bool):
        return str(x).lower()
    if isinstance(x, float):
        if abs(x) >= 1000:
            return f"{x:,.0f}"
        if x != 0 and abs(x) < 0.01:
            return f"{x:.2g}"
        return f"{x:.2f}"
    if isinstance(x, int):
        return f"{x:,}" if abs(x) >= 10000 else str(x)
    return str(x).replace("|", "\\|").replace("\n", " ")


def markdown_table(df: pd.DataFrame) -> str:
    """A DataFrame as a GitHub Markdown table, undefined values as "—"."""
    if df.empty:
        return "_(no rows)_"
    head = "| " + " | ".join(str(c) for c in df.columns) + " |"
    sep = "|" + "|".join("---" for _ in df.columns) + "|"
    body = [
        "| " + " | ".join(_cell(v) for v in row) + " |"
        for row in df.astype(object).where(df.notna(), None).itertuples(index=False)
    ]
    return "\n".join([head, sep, *body])


def render_markdown(rep: Report, by: By = "config") -> str:
    """The report as Markdown."""
    tables = report_tables(rep, by)
    scope = "all runs" if rep.runs is None else ", ".join(rep.runs)
    parts = [
        f"# MemUse report ({judge_label(rep.judge)})\n\nScope: {scope}. Verdicts: {judge_label(rep.judge)} "
        f"only (choose with --judge). Baseline: {rep.baseline or '—'}. "
        f"Paired bootstrap: {rep.bootstrap_replicates} replicates, seed {rep.seed}. "
        f"Undefined statistics (empty denominator) print as {UNDEFINED}."
    ]
    for name, (title, _) in TABLES.items():
        parts.append(f"## {title} — {judge_label(rep.judge)}\n\n{markdown_table(tables[name])}")
        if name == "outcomes":
            note = no_outcome_note(rep) + repeated_tasks_note(rep)
            if by == "run" and rep.baseline:
                note += (
                    f" The comparison with {rep.baseline} (Δ, its interval, gains and losses) pairs whole "
                    "configurations over their runs' tasks (A.5.4): it is in the `--by config` table."
                )
            parts.append(note)
        if name == "histories":
            parts.append("### Items with harmful entries\n\n" + markdown_table(tables["harmful_items"]))
    return "\n\n".join(parts) + "\n"


def judge_label(judge: str) -> str:
    """How a table title names the judge whose verdicts it shows."""
    return {"rules": "rules judge", "llm": "LLM judge"}.get(judge, f"{judge} judge")


def no_outcome_note(rep: Report) -> str:
    """How many episodes in scope have no outcome, said in words under the outcome table."""
    n = sum(c.outcome.no_result for c in rep.configs.values())
    total = sum(c.outcome.episodes for c in rep.configs.values())
    if n == 0:
        return f"Every one of the {total} episodes has a harness outcome."
    return (
        f"{n} of {total} episodes have no outcome (no harness result): they are left out of the "
        f"resolve rates and the comparison, never counted as unresolved; a rate with no outcome at "
        f"all prints as {UNDEFINED}. Set outcomes with `memuse outcomes REPORT.json --run RUN`."
    )


def repeated_tasks_note(rep: Report) -> str:
    """Tasks recorded in more than one episode of a run, said under the outcome table (empty when
    none): rates and comparisons count each such task once (`metrics.outcomes`)."""
    n = sum(c.outcome.repeated_tasks for c in rep.configs.values())
    if n == 0:
        return ""
    verb = "task was" if n == 1 else "tasks were"
    return (
        f" {n} {verb} recorded in more than one episode of its run: rates, gains and losses count "
        "each task once, resolved when one of its episodes is."
    )


def render_json(rep: Report) -> str:
    """The report as JSON (`Report` model; shares as fractions, undefined as null)."""
    return json.dumps(rep.model_dump(mode="json"), indent=2, ensure_ascii=False, allow_nan=False)


def render_csv(rep: Report, by: By = "config") -> dict[str, str]:
    """Each table as CSV text, keyed by file name (`<table>.csv`); undefined cells are empty."""
    out = {}
    for name, df in report_tables(rep, by).items():
        df = df.copy()
        df.insert(0, "verdict_judge", rep.judge)  # a CSV read on its own still names its judge
        # 12 significant digits: a share stored as 0.28 prints 28, not 28.000000000000004
        out[f"{name}.csv"] = df.to_csv(index=False, float_format="%.12g")
    return out


def write_report(rep: Report, fmt: str, by: By, out_dir: Path | None) -> str | list[Path]:
    """Render `rep` as `fmt` (md, csv, json). Without `out_dir` return the text to print; with it,
    write `report.md` / `report.json` / one CSV per table there and return the written paths."""
    if fmt == "md":
        files = {"report.md": render_markdown(rep, by)}
    elif fmt == "json":
        files = {"report.json": render_json(rep) + "\n"}
    elif fmt == "csv":
        files = render_csv(rep, by)
    else:
        raise ValueError(f"unknown format {fmt!r} (choose md, csv or json)")
    if out_dir is None:
        if fmt == "csv":
            return "\n".join(f"# {name}\n{text}" for name, text in files.items())
        return next(iter(files.values()))
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in files.items():
        p = out_dir / name
        p.write_text(text, encoding="utf-8")
        paths.append(p)
    return paths
