"""Judge results in the store: judgments and assessments with the span's current verdict, batches,
the queries the batch runner needs, and which judge's verdicts a table shows (MemUse 3.5, A.3.2,
A.4.1). Every write also refreshes the stored outcome class of the spans it touches
(`store.outcomes`). The verdicts table's rows, the rule verdicts of automatic neutral spans and
the rebuild of verdicts are `store.verdict_rows`; the journal that precedes these writes is
`store.journal`.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb
from pydantic_core import to_json

from ..rules.judgment import JudgmentResult, scrub_result
from ..rules.verdicts import SpanVerdict
from ..vocab import DEFAULT_JUDGE_ORDER, JUDGE_KINDS, RULE_JUDGE, TRANSPORT_REASON, JudgeKind
from .outcomes import refresh_outcomes
from .row_insert import insert_rows
from .verdict_rows import VCOLS, timestamp, verdict_row


def known_judgments(con: duckdb.DuckDBPyConnection, ids: list[str]) -> set[str]:
    if not ids:
        return set()
    rows = con.execute(
        "SELECT judgment_id FROM judgments WHERE judgment_id IN (SELECT unnest(?::VARCHAR[]))", [ids]
    ).fetchall()
    return {r[0] for r in rows}


def _json(obj: Any) -> str:
    """JSON text of plain data (pydantic-core's serializer: UTF-8 kept, a third of json.dumps's cost)."""
    return to_json(obj).decode()


def write_results(con: duckdb.DuckDBPyConnection, results: list[JudgmentResult]) -> int:
    """Insert judgments (and, for accepted ones, assessments and the span's current verdict) in one
    short transaction; already-known judgment ids are skipped. Returns the number inserted."""
    known = known_judgments(con, [r.judgment_id for r in results])
    new = [r for r in results if r.judgment_id not in known]
    seen: set[str] = set()
    new = [r for r in new if not (r.judgment_id in seen or seen.add(r.judgment_id))]  # type: ignore[func-returns-value]
    if not new:
        return 0
    jrows, arows = [], []
    verdicts: dict[str, tuple[JudgmentResult, SpanVerdict]] = {}
    for r in new:
        scrub_result(r)  # secret-shaped text never reaches the tables (the writers scrub the key)
    for r in new:
        jrows.append(
            (
                r.judgment_id,
                r.span_id,
                r.batch_id,
                r.judge,
                r.model,
                json.dumps(r.settings),
                r.prompt_hash,
                r.status,
                r.reason,
                r.calls,
                r.followups,
                r.forced,
                r.input_tokens,
                r.cached_tokens,
                r.output_tokens,
                r.cost_usd,
                timestamp(r.started_at),
                timestamp(r.ended_at),
                r.answer.summary if r.answer else None,
                r.answer.confidence if r.answer else None,
                _json(r.transcript),
                _json([a.model_dump() for a in r.attempts]),
                r.rollbacks,
                r.retries,
                r.tool_calls,
                r.episode_id,
            )
        )
        if r.status == "accepted" and r.answer is not None and r.verdict is not None:
            labels = r.verdict.usage_labels
            for i, a in enumerate(sorted(r.answer.assessments, key=lambda a: a.entry)):
                arows.append(
                    (
                        r.judgment_id,
                        r.span_id,
                        a.entry,
                        a.item_id,
                        a.relevance,
                        a.accuracy,
                        a.novelty,
                        a.influence,
                        a.effect if a.influence == "acted_on" else None,
                        a.anchors,
                        a.evidence,
                        a.notes,
                        labels[i] if i < len(labels) else None,
                        r.window_read.get(a.entry, False),
                        a.effect,
                    )
                )
            key = f"{r.span_id}\x00{r.judge}"  # one current verdict per span and judge kind
            prev = verdicts.get(key)
            if prev is None or (r.ended_at or 0) >= (prev[0].ended_at or 0):
                verdicts[key] = (r, r.verdict)
    jcols = [
        "judgment_id",
        "span_id",
        "batch_id",
        "judge",
        "model",
        "settings",
        "prompt_hash",
        "status",
        "reason",
        "calls",
        "followups",
        "forced",
        "input_tokens",
        "cached_tokens",
        "output_tokens",
        "cost_usd",
        "started_at",
        "ended_at",
        "summary",
        "confidence",
        "transcript",
        "attempts",
        "rollbacks",
        "retries",
        "tool_calls",
        "episode_id",
    ]
    acols = [
        "judgment_id",
        "span_id",
        "pos",
        "item_id",
        "relevance",
        "accuracy",
        "novelty",
        "influence",
        "effect",
        "anchors",
        "evidence",
        "notes",
        "usage_label",
        "window_read",
        "raw_effect",
    ]
    vrows = [verdict_row(v, r.judge, r.ended_at) for r, v in verdicts.values()]
    con.execute("BEGIN")
    try:
        insert_rows(con, "judgments", jcols, jrows)
        insert_rows(con, "assessments", acols, arows)
        if verdicts:
            con.execute(
                "DELETE FROM verdicts WHERE (span_id, judge) IN "
                "(SELECT (s, j) FROM (SELECT unnest($s::VARCHAR[]) AS s, unnest($j::VARCHAR[]) AS j))",
                {"s": [r[0] for r in vrows], "j": [r[VCOLS.index("judge")] for r in vrows]},
            )
            insert_rows(con, "verdicts", VCOLS, vrows)
        refresh_outcomes(con, span_ids=sorted({r.span_id for r in new}))
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return len(new)


def done_spans(con: duckdb.DuckDBPyConnection, judge: str, *, retry_errors: bool = False) -> set[str]:
    """Spans that already have a final judgment from this judge kind: an accepted one, or (unless
    `retry_errors`) an error of the judge itself. A transport failure (`vocab.TRANSPORT_REASON`)
    is not final: the span is judged again by the next batch."""
    rows = con.execute(
        """SELECT DISTINCT span_id FROM judgments WHERE judge = $judge AND (status = 'accepted'
               OR (NOT $retry AND status = 'error' AND coalesce(reason, '') NOT LIKE $transport))""",
        {"judge": judge, "retry": retry_errors, "transport": TRANSPORT_REASON + ":%"},
    ).fetchall()
    return {r[0] for r in rows}


def eligible_span_ids(con: duckdb.DuckDBPyConnection) -> list[tuple[str, str]]:
    """(span_id, episode_id) of eligible spans in episode order."""
    return [
        (r[0], r[1])
        for r in con.execute(
            "SELECT span_id, episode_id FROM spans WHERE status = 'eligible' ORDER BY episode_id, seq"
        ).fetchall()
    ]


def start_batch(
    con: duckdb.DuckDBPyConnection, batch_id: str, judge: str, model: str | None, settings: dict[str, Any]
) -> None:
    con.execute(
        "INSERT OR REPLACE INTO judge_batches VALUES (?, ?, ?, ?, now(), NULL, 'running')",
        [batch_id, judge, model, json.dumps(settings)],
    )


def end_batch(con: duckdb.DuckDBPyConnection, batch_id: str, status: str) -> None:
    con.execute(
        "UPDATE judge_batches SET ended_at = now(), status = ? WHERE batch_id = ?", [status, batch_id]
    )


def planted_agreement_rows(con: duckdb.DuckDBPyConnection, judge: str = "rules") -> list[tuple[Any, ...]]:
    """(planted relevance, novelty, influence, effect, judged relevance, novelty, influence, effect,
    planted anchor, judged anchors) per planted entry whose span has a current verdict from `judge`."""
    return con.execute(
        """SELECT p.relevance, p.novelty, p.influence, p.effect, a.relevance, a.novelty, a.influence, a.effect,
                  p.anchor_step, a.anchors
           FROM planted_truth p
           JOIN spans s ON s.first_delivery_id = p.delivery_id AND s.episode_id = p.episode_id
           JOIN verdicts v ON v.span_id = s.span_id AND v.judge = ?
           JOIN assessments a ON a.judgment_id = v.judgment_id AND a.pos = p.pos
           WHERE s.status = 'eligible'""",
        [judge],
    ).fetchall()


def rules_ranks(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Pre-triage rank of each span from its latest accepted rules judgment: 0 misused, 1 used,
    2 unclear, 3 anything else (DESIGN.md: the rules judge ranks spans for the LLM judge)."""
    rows = con.execute(
        """WITH r AS (
               SELECT span_id, judgment_id,
                      row_number() OVER (PARTITION BY span_id ORDER BY ended_at DESC) AS rn
               FROM judgments WHERE judge = 'rules' AND status = 'accepted')
           SELECT r.span_id, min(CASE a.usage_label WHEN 'misused' THEN 0 WHEN 'used' THEN 1
                                     WHEN 'unclear' THEN 2 ELSE 3 END)
           FROM r JOIN assessments a USING (judgment_id) WHERE r.rn = 1 GROUP BY 1"""
    ).fetchall()
    return {r[0]: int(r[1]) for r in rows}


# ---- One judge per table ---------------------------------------------------------------------


def verdicts_of(judge: str, spans: str = "s") -> str:
    """The join condition of the verdict a table shows for judge kind `judge` (validated): that
    judge's current verdict, or the rule verdict of an automatic neutral span. Use as
    `LEFT JOIN verdicts v ON {verdicts_of(judge)}` with the spans aliased `spans`."""
    if judge not in JUDGE_KINDS:
        raise ValueError(f"judge must be one of {', '.join(JUDGE_KINDS)}, not {judge!r}")
    return (
        f"v.span_id = {spans}.span_id AND v.judge = CASE WHEN {spans}.status = 'auto_neutral' "
        f"THEN '{RULE_JUDGE}' ELSE '{judge}' END"
    )


def judges_with_verdicts(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Judge kind -> number of spans with an accepted verdict of that judge."""
    rows = con.execute(
        "SELECT judge, count(*) FROM verdicts WHERE judge IN (SELECT unnest(?::VARCHAR[])) GROUP BY 1",
        [list(JUDGE_KINDS)],
    ).fetchall()
    return {j: int(n) for j, n in rows}


def resolve_judge(con: duckdb.DuckDBPyConnection, judge: str | None = None) -> JudgeKind:
    """The judge a table shows: `judge` when given (validated), else the LLM judge when the store
    holds accepted LLM verdicts, else the rules judge (`vocab.DEFAULT_JUDGE_ORDER`) unless only the
    LLM judge has tried any span (its failures are then what there is to show). Every table shows
    one judge; its title names it."""
    if judge is not None:
        if judge not in JUDGE_KINDS:
            raise ValueError(f"judge must be one of {', '.join(JUDGE_KINDS)}, not {judge!r}")
        return judge  # type: ignore[return-value]
    have = judges_with_verdicts(con)
    for j in DEFAULT_JUDGE_ORDER:
        if have.get(j):
            return j
    tried = {
        r[0]
        for r in con.execute(
            "SELECT DISTINCT judge FROM judgments WHERE judge IN (SELECT unnest(?::VARCHAR[]))",
            [list(JUDGE_KINDS)],
        ).fetchall()
    }
    if tried == {"llm"}:
        return "llm"
    return DEFAULT_JUDGE_ORDER[-1]


def episode_verdicts(con: duckdb.DuckDBPyConnection, episode_id: str) -> dict[str, dict[str, Any]]:
    """span id -> {"outcomes": {judge kind: outcome class}, "verdicts": {judge: verdict}} of one
    episode, every judge side by side (never merged): each verdict with its triage, judge,
    judgment id and, for a judged span, per entry the five signals and the usage label."""
    out: dict[str, dict[str, Any]] = {}
    for sid, judge, outcome in con.execute(
        """SELECT o.span_id, o.judge, o.outcome FROM span_outcomes o JOIN spans s USING (span_id)
           WHERE s.episode_id = ? ORDER BY 1, 2""",
        [episode_id],
    ).fetchall():
        out.setdefault(sid, {"outcomes": {}, "verdicts": {}})["outcomes"][judge] = outcome
    rows = con.execute(
        """SELECT v.span_id, v.judge, v.triage, v.judgment_id, a.pos, a.item_id, a.relevance,
                  a.accuracy, a.novelty, a.influence, a.effect, a.usage_label
           FROM verdicts v JOIN spans s USING (span_id)
           LEFT JOIN assessments a ON a.judgment_id = v.judgment_id AND a.span_id = v.span_id
           WHERE s.episode_id = ? ORDER BY v.span_id, v.judge, a.pos""",
        [episode_id],
    ).fetchall()
    for sid, judge, triage, jid, pos, item, rel, acc, nov, inf, eff, usage in rows:
        span = out.setdefault(sid, {"outcomes": {}, "verdicts": {}})
        v = span["verdicts"].setdefault(
            judge, {"judge": judge, "triage": triage, "judgment_id": jid, "entries": []}
        )
        if pos is not None:
            v["entries"].append(
                {
                    "pos": pos,
                    "item_id": item,
                    "relevance": rel,
                    "accuracy": acc,
                    "novelty": nov,
                    "influence": inf,
                    "effect": eff,
                    "usage": usage,
                }
            )
    return out
