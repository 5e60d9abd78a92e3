"""The verdicts table's rows (MemUse 3.5 verdict assembly, A.4.1): its columns, one span verdict
as a row, the rule verdicts of automatic neutral spans, and the rebuild of every judge's current
verdict from its stored assessments. `store.judging` writes the verdicts of judgments through
`verdict_row`.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import duckdb

from ..rules.verdicts import EntrySignals, SpanVerdict, auto_neutral_verdict, span_verdict
from ..vocab import AXES, RULE_JUDGE, UNCERTAINTY
from .outcomes import refresh_outcomes
from .row_insert import insert_rows


def timestamp(x: float | None) -> datetime | None:
    """A result's epoch seconds as the naive UTC timestamp the tables store."""
    return datetime.fromtimestamp(x, tz=UTC).replace(tzinfo=None) if x is not None else None


VCOLS = [
    "span_id",
    "judgment_id",
    "triage",
    "profiled",
    "n_entries",
    *AXES,  # the profile's six axes and the uncertainty shares, named once in vocab
    *UNCERTAINTY,
    "effect_resets",
    "judge",
    "usage_labels",
    "counts",
    "decided_at",
]


def verdict_row(v: SpanVerdict, judge: str | None, at: float | None) -> list[Any]:
    p = v.profile or {}
    u = v.uncertainty or {}
    return [
        v.span_id,
        v.judgment_id,
        v.triage,
        v.profiled,
        v.n_entries,
        *(p.get(a) for a in AXES),
        *(u.get(k) for k in UNCERTAINTY),
        v.effect_resets,
        judge,
        json.dumps(v.usage_labels),
        json.dumps(v.counts),
        timestamp(at),
    ]


def write_auto_neutral_verdicts(con: duckdb.DuckDBPyConnection) -> int:
    """Rule-assigned verdicts for automatic neutral spans that have none yet (A.4.1): triage only."""
    # One INSERT ... SELECT: the rule verdict is the same for every such span but for its id and
    # entry count, so no row passes through Python.
    tmpl = verdict_row(auto_neutral_verdict("", 0), RULE_JUDGE, None)
    exprs: list[str] = []
    params: list[Any] = []
    for col, value in zip(VCOLS, tmpl, strict=True):
        if col == "span_id":
            exprs.append("s.span_id")
        elif col == "n_entries":
            exprs.append("coalesce(s.n_entries, 0)")
        elif value is None:
            exprs.append("NULL")
        else:
            exprs.append("?")
            params.append(value)
    con.execute("BEGIN")
    try:
        added = con.execute(
            f"INSERT INTO verdicts ({', '.join(VCOLS)}) SELECT {', '.join(exprs)} FROM spans s "
            "LEFT JOIN verdicts v ON v.span_id = s.span_id AND v.judge = ? "
            "WHERE s.status = 'auto_neutral' AND v.span_id IS NULL RETURNING span_id",
            [*params, RULE_JUDGE],
        ).fetchall()
        if added:
            refresh_outcomes(con, span_ids=[r[0] for r in added])
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return len(added)


def rebuild_verdicts(con: duckdb.DuckDBPyConnection) -> int:
    """Rebuild the current verdict of every (span, judge kind) from its latest accepted judgment's
    stored assessments (verdict assembly, 3.5; used when a store written before verdicts were kept
    per judge is opened). Rule verdicts are kept. Returns the number of verdicts written."""
    rows = con.execute(
        """WITH latest AS (
               SELECT span_id, judge, judgment_id, ended_at,
                      row_number() OVER (PARTITION BY span_id, judge ORDER BY ended_at DESC) AS k
               FROM judgments WHERE status = 'accepted')
           SELECT l.span_id, l.judge, l.judgment_id, l.ended_at, a.relevance, a.accuracy, a.novelty,
                  a.influence, coalesce(a.raw_effect, a.effect), a.window_read
           FROM latest l JOIN assessments a ON a.judgment_id = l.judgment_id
           WHERE l.k = 1 ORDER BY l.span_id, l.judge, a.pos"""
    ).fetchall()
    groups: dict[tuple[str, str], list[tuple]] = {}
    for r in rows:
        groups.setdefault((r[0], r[1]), []).append(r)
    out = []
    for (span_id, judge), rs in groups.items():
        sig = [
            EntrySignals(
                relevance=bool(rel),
                accuracy=acc or "uncontradicted",
                novelty=nov,
                influence=inf,
                effect=eff,
                window_read=bool(wr),
            )
            for _, _, _, _, rel, acc, nov, inf, eff, wr in rs
        ]
        v = span_verdict(span_id, sig, rs[0][2])
        ended = rs[0][3]
        at = ended.replace(tzinfo=UTC).timestamp() if ended is not None else None
        out.append(verdict_row(v, judge, at))
    con.execute("DELETE FROM verdicts WHERE judge <> ?", [RULE_JUDGE])
    insert_rows(con, "verdicts", VCOLS, out)
    return len(out)
