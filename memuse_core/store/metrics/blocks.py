"""Building blocks of the aggregate SQL: scope, span outcome classes, judged entries, recurring
items and per-episode usage, as CTEs that `facts` materialises once per unit of work
(MemUse 3.5-3.6, A.4, A.5.4, A.6.3-A.6.6).

Every query here is DuckDB SQL over the store; nothing loops over rows in Python. Each function
takes an open connection and a scope (`runs`: run ids, or None for every run) and returns a pandas
DataFrame. Aggregates come at a level: `level="config"` pools the runs of each
configuration (`run_id` is NULL in the result), `level="run"` gives one row per run and
`level="both"` both (grouping sets).

The columns read from the derived and judged tables are gathered in the building blocks of `_DEFS`
(`span_cls`, `judged`), so a change of those tables needs an edit in one place only.

Conventions taken from the other areas' tables (re-read `area_tables.py` when they change):
- `spans.status` is a `vocab.SpanStatus`; `spans.est_tokens` is `vocab.estimate_tokens` of the
  placement characters over every delivery of the span, restatements included (A.4.4).
- `span_outcomes` holds each span's outcome class and whether it is profiled, decided once by
  `rules.outcome` (A.4.1, A.4.2); the `span_cls` block reads it, never decides it.
- `verdicts` holds one row per span and judge kind (plus the rule verdict of an automatic neutral
  span); `span_cls` reads the one judge of the scope (`$judge`); a profiled span's six shares and
  four uncertainty shares divide by `n_entries` (A.4.2).
- `assessments` rows of the verdict's `judgment_id` are the accepted entry assessments; influence
  in {acted_on, selected, referenced, none, NULL}; effect in {improved, no_effect, harmed, NULL};
  novelty in {novel, confirming, redundant, NULL}.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Literal

import duckdb
import pandas as pd

from ...vocab import CHARS_PER_TOKEN, RECURRING_EPISODE_SHARE, RECURRING_MIN_EPISODES, RULE_JUDGE
from ..judging import resolve_judge

Level = Literal["config", "run", "both"]
"""Grouping of an aggregate: per configuration (run_id NULL), per run, or both in one result."""

AGENT_ROLES = ("agent",)
MEMORY_ROLES = ("memory", "embedding")


def _check(level: str) -> None:
    if level not in ("config", "run", "both"):
        raise ValueError(f"level must be 'config', 'run' or 'both', not {level!r}")


def _run_col(level: Level, alias: str = "") -> str:
    _check(level)
    return "NULL::VARCHAR" if level == "config" else f"{alias}run_id"


def _grp(level: Level, alias: str = "", extra: str = "") -> str:
    """GROUP BY clause of a level; `both` uses grouping sets (config rows have run_id NULL)."""
    _check(level)
    x = f", {extra}" if extra else ""
    if level == "config":
        return f"GROUP BY {alias}config{x}"
    if level == "run":
        return f"GROUP BY {alias}config, {alias}run_id{x}"
    return f"GROUP BY GROUPING SETS (({alias}config{x}), ({alias}config, {alias}run_id{x}))"


def _q(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    runs: Sequence[str] | None,
    extra: dict[str, object] | None = None,
    judge: str | None = None,
) -> pd.DataFrame:
    """Run an aggregate query of a scope: its runs and the one judge whose verdicts it reads (the
    default judge of the store when none is given, `store.judging.resolve_judge`)."""
    params: dict[str, object] = dict(extra or {})
    if "$runs" in sql:
        params["runs"] = list(runs) if runs is not None else None
    if "$judge" in sql:
        params["judge"] = resolve_judge(con, judge)
    return con.execute(sql, params).df()


_CALL_SUMS = ("calls", "input", "cached", "output", "reasoning", "cost", "cost_unknown", "usage_unknown")


def _call_cols(prefix: str, roles: tuple[str, ...]) -> str:
    cond = "role IN ('" + "', '".join(roles) + "')"
    return ",\n".join(
        [
            f"count(call_id) FILTER (WHERE {cond}) AS {prefix}_calls",
            f"coalesce(sum(input_tokens) FILTER (WHERE {cond}), 0)::BIGINT AS {prefix}_input",
            f"coalesce(sum(cached_tokens) FILTER (WHERE {cond}), 0)::BIGINT AS {prefix}_cached",
            f"coalesce(sum(output_tokens) FILTER (WHERE {cond}), 0)::BIGINT AS {prefix}_output",
            f"coalesce(sum(reasoning_tokens) FILTER (WHERE {cond}), 0)::BIGINT AS {prefix}_reasoning",
            f"coalesce(sum(cost_usd) FILTER (WHERE {cond}), 0)::DOUBLE AS {prefix}_cost",
            f"count(call_id) FILTER (WHERE {cond} AND cost_usd IS NULL) AS {prefix}_cost_unknown",
            f"count(call_id) FILTER (WHERE {cond} AND input_tokens IS NULL AND output_tokens IS NULL)"
            f" AS {prefix}_usage_unknown",
        ]
    )


def _ep_calls_sql() -> str:
    cols = [f"{p}_{k}" for p in ("agent", "memory") for k in _CALL_SUMS]
    outer = ", ".join(f"coalesce(c.{c}, 0) AS {c}" for c in cols)
    return f"""
        SELECT se.config, se.run_id, se.episode_id, se.task_id, {outer}
        FROM sel_eps se LEFT JOIN (
            SELECT episode_id, {_call_cols("agent", AGENT_ROLES)}, {_call_cols("memory", MEMORY_ROLES)}
            FROM calls WHERE episode_id IN (SELECT episode_id FROM sel_eps) GROUP BY episode_id
        ) c USING (episode_id)"""


_RECURRING_THRESHOLD = f"greatest({RECURRING_MIN_EPISODES}, {RECURRING_EPISODE_SHARE} * c.n_eps)"
"""max(2, 0.1 E) of the recurring-item diagnostic (A.4.2), E = selected episodes of the run."""

# ---- Building blocks (CTEs), materialised once per unit of work by `facts` -------------------
_DEFS: dict[str, tuple[tuple[str, ...], str]] = {
    # selected runs and episodes
    "sel_runs": (
        (),
        """
        SELECT run_id, coalesce(config, run_id) AS config FROM runs
        WHERE $runs::VARCHAR[] IS NULL OR list_contains($runs::VARCHAR[], run_id)""",
    ),
    "sel_eps": (
        ("sel_runs",),
        """
        SELECT e.episode_id, e.run_id, s.config, e.task_id, e.position, e.repo, e.resolved
        FROM episodes e JOIN sel_runs s USING (run_id)""",
    ),
    # spans of the selected episodes with their stored outcome class (A.4.1) as `triage`
    "span_cls": (
        ("sel_eps",),
        f"""
        SELECT sp.span_id, sp.episode_id, se.run_id, se.config, se.resolved, sp.status,
               sp.first_step, sp.first_delivery_id, sp.form, coalesce(sp.route, '(unknown)') AS route,
               coalesce(sp.est_tokens, floor(coalesce(sp.chars, 0) / {CHARS_PER_TOKEN}))::BIGINT AS est_tokens,
               sp.status = 'auto_neutral' AS auto_neutral,
               v.judgment_id, v.n_entries,
               so.outcome AS triage,
               coalesce(so.profiled, false) AS profiled,
               v.relevance, v.corroboration, v.information_gain, v.acted_on, v.benefit, v.harm,
               v.u_accuracy, v.u_novelty, v.u_influence, v.u_effect
        FROM spans sp
        JOIN sel_eps se USING (episode_id)
        LEFT JOIN span_outcomes so ON so.span_id = sp.span_id AND so.judge = $judge
        LEFT JOIN verdicts v ON v.span_id = sp.span_id
             AND v.judge = CASE WHEN sp.status = 'auto_neutral' THEN '{RULE_JUDGE}' ELSE $judge END""",
    ),
    # per-entry form labels of first deliveries (a delivery may mix forms, A.6.5)
    "entry_forms": (
        ("span_cls",),
        """
        SELECT sc.span_id, de.pos, json_extract_string(de.labels, '$.form') AS form
        FROM delivery_entries de JOIN span_cls sc ON de.delivery_id = sc.first_delivery_id
        WHERE de.labels IS NOT NULL AND json_extract_string(de.labels, '$.form') IS NOT NULL""",
    ),
    # accepted entry assessments of profiled spans, with entry identity, window and form
    "judged": (
        ("span_cls", "entry_forms"),
        """
        SELECT sc.span_id, sc.episode_id, sc.run_id, sc.config, sc.resolved, sc.first_step,
               coalesce(ef.form, sc.form, '(unknown)') AS form, sc.route, a.pos,
               coalesce(e.namespace, 'default') AS namespace, coalesce(e.item_id, a.item_id) AS item_id,
               e.version, e.exposure, e.exposed_chars, e.window_start, e.window_end,
               coalesce(a.relevance, false) AS relevant, a.accuracy, a.novelty, a.influence, a.effect,
               a.anchors, a.usage_label
        FROM span_cls sc
        JOIN assessments a ON a.judgment_id = sc.judgment_id AND a.span_id = sc.span_id
        LEFT JOIN span_entries e ON e.span_id = sc.span_id AND e.pos = a.pos
        LEFT JOIN entry_forms ef ON ef.span_id = sc.span_id AND ef.pos = a.pos
        WHERE sc.profiled""",
    ),
    # items delivered per run and the recurring ones: >= max(2, 0.1 E_run) episodes (A.4.2, A.5.4)
    "ep_count": (("sel_eps",), "SELECT run_id, count(*) AS n_eps FROM sel_eps GROUP BY run_id"),
    "item_eps": (
        ("sel_eps",),
        """
        SELECT se.run_id, e.namespace, e.item_id, count(DISTINCT e.episode_id) AS episodes
        FROM span_entries e JOIN sel_eps se USING (episode_id) GROUP BY ALL""",
    ),
    "recurring": (
        ("item_eps", "ep_count"),
        f"""
        SELECT i.run_id, i.namespace, i.item_id, i.episodes, c.n_eps AS run_episodes,
               {_RECURRING_THRESHOLD} AS threshold
        FROM item_eps i JOIN ep_count c USING (run_id)
        WHERE i.episodes >= {_RECURRING_THRESHOLD}""",
    ),
    # recorded usage per selected episode (A.4.4)
    "ep_calls": (("sel_eps",), _ep_calls_sql()),
}

_MATERIALIZE = ("sel_runs", "sel_eps", "span_cls", "entry_forms", "judged", "recurring", "ep_calls")


class Facts:
    """Temp tables of one unit of work: each building block is computed at most once and then
    read by every aggregate (see `facts`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, runs: Sequence[str] | None, judge: str | None = None):
        self.con = con
        self.runs = list(runs) if runs is not None else None
        self.judge = resolve_judge(con, judge)
        """The one judge whose verdicts every aggregate of this unit reads."""
        self.prefix = f"mu_{uuid.uuid4().hex[:12]}"
        self.tables: dict[str, str] = {}

    def ensure(self, name: str) -> str:
        if name not in self.tables:
            table = f"{self.prefix}_{name}"
            sql = f"CREATE TEMP TABLE {table} AS {_with(self, name, define=name)} SELECT * FROM {name}"
            params: dict[str, object] = {"runs": self.runs} if "$runs" in sql else {}
            if "$judge" in sql:
                params["judge"] = self.judge
            self.con.execute(sql, params)
            self.tables[name] = table
        return self.tables[name]

    def drop(self) -> None:
        for t in self.tables.values():
            self.con.execute(f"DROP TABLE IF EXISTS temp.{t}")
        self.tables.clear()


@contextmanager
def facts(
    con: duckdb.DuckDBPyConnection, runs: Sequence[str] | None = None, judge: str | None = None
) -> Iterator[Facts]:
    """Share the scope, span classes and judged entries among several aggregate queries; the temp
    tables are dropped afterwards. Pass the result as `facts=` to the query functions. `judge`
    chooses the verdicts read (default: `store.judging.resolve_judge`); `Facts.judge` names it."""
    f = Facts(con, runs, judge)
    try:
        yield f
    finally:
        f.drop()


def _with(facts: Facts | None, *names: str, define: str | None = None) -> str:
    """A WITH clause defining `names` and what they depend on. With `facts`, every building
    block except `define` is read from its temp table (created on first use)."""
    parts: list[str] = []
    seen: set[str] = set()

    def add(n: str) -> None:
        if n in seen:
            return
        seen.add(n)
        if facts is not None and n in _MATERIALIZE and n != define:
            parts.append(f"{n} AS (FROM {facts.ensure(n)})")
            return
        deps, sql = _DEFS[n]
        for d in deps:
            add(d)
        parts.append(f"{n} AS ({sql})")

    for n in names:
        add(n)
    return "WITH " + ",\n".join(parts)


def _axis_count(axis: str) -> str:
    return f"sum(round({axis} * n_entries)) FILTER (WHERE profiled)::BIGINT AS n_{axis}"


Con = duckdb.DuckDBPyConnection
Runs = Sequence[str] | None
