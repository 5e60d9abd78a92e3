"""SQL of the aggregates, memory histories and cost (MemUse 3.5-3.6, A.4, A.5.4, A.6.3-A.6.6).

Every query here is DuckDB SQL over the store; nothing loops over rows in Python. Each function
takes an open connection and a scope (`runs`: run ids, or None for every run) and returns a pandas
DataFrame. Aggregates come at one of two levels: `level="config"` pools the runs of each
configuration (`run_id` is NULL in the result) and `level="run"` gives one row per run.

The columns read from the derived and judged tables are gathered in the CTEs of `_span_sql` and
`_judged_sql`, so a change of those tables needs an edit in one place only.

Conventions taken from the other areas' tables (re-read `area_tables.py` when they change):
- `spans.status` in {eligible, empty, unassessable, error, auto_neutral}; `spans.est_tokens` is
  floor(chars / 4) over every delivery of the span, restatements included (A.4.4).
- `verdicts` holds one row per span; `triage` in {positive, negative, neutral, unresolved} (an
  `error` triage is accepted too); `profiled` marks spans with an entry-share profile, whose six
  shares and four uncertainty shares divide by `n_entries` (A.4.2).
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

Level = Literal["config", "run", "both"]
"""Grouping of an aggregate: per configuration (run_id NULL), per run, or both in one result."""

TRIAGE_LABELS = ("positive", "negative", "neutral", "unresolved")
"""Span triage labels that enter N_triage (A.4.1, Eq. 4)."""
OTHER_CLASSES = ("error", "unjudged", "empty", "unassessable")
"""Span outcome classes kept out of the triage denominator and reported separately (A.4.1)."""
ERROR_JUDGMENT_STATUSES = ("error", "failed")
"""`judgments.status` values of a judge attempt that ended without an accepted answer."""
COPY_FORM = "copy of visible entries"
"""Delivery-form label given to automatic neutral spans in the delivery-form table (Table 11)."""
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


def _q(con: duckdb.DuckDBPyConnection, sql: str, runs: Sequence[str] | None,
       extra: dict[str, object] | None = None) -> pd.DataFrame:
    params: dict[str, object] = dict(extra or {})
    if "$runs" in sql:
        params["runs"] = list(runs) if runs is not None else None
    return con.execute(sql, params).df()


_CALL_SUMS = ("calls", "input", "cached", "output", "reasoning", "cost", "cost_unknown", "usage_unknown")


def _call_cols(prefix: str, roles: tuple[str, ...]) -> str:
    cond = "role IN ('" + "', '".join(roles) + "')"
    return ",\n".join([
        f"count(call_id) FILTER (WHERE {cond}) AS {prefix}_calls",
        f"coalesce(sum(input_tokens) FILTER (WHERE {cond}), 0)::BIGINT AS {prefix}_input",
        f"coalesce(sum(cached_tokens) FILTER (WHERE {cond}), 0)::BIGINT AS {prefix}_cached",
        f"coalesce(sum(output_tokens) FILTER (WHERE {cond}), 0)::BIGINT AS {prefix}_output",
        f"coalesce(sum(reasoning_tokens) FILTER (WHERE {cond}), 0)::BIGINT AS {prefix}_reasoning",
        f"coalesce(sum(cost_usd) FILTER (WHERE {cond}), 0)::DOUBLE AS {prefix}_cost",
        f"count(call_id) FILTER (WHERE {cond} AND cost_usd IS NULL) AS {prefix}_cost_unknown",
        f"count(call_id) FILTER (WHERE {cond} AND input_tokens IS NULL AND output_tokens IS NULL)"
        f" AS {prefix}_usage_unknown",
    ])


def _ep_calls_sql() -> str:
    cols = [f"{p}_{k}" for p in ("agent", "memory") for k in _CALL_SUMS]
    outer = ", ".join(f"coalesce(c.{c}, 0) AS {c}" for c in cols)
    return f"""
        SELECT se.config, se.run_id, se.episode_id, se.task_id, {outer}
        FROM sel_eps se LEFT JOIN (
            SELECT episode_id, {_call_cols('agent', AGENT_ROLES)}, {_call_cols('memory', MEMORY_ROLES)}
            FROM calls WHERE episode_id IN (SELECT episode_id FROM sel_eps) GROUP BY episode_id
        ) c USING (episode_id)"""


# ---- Building blocks (CTEs), materialised once per unit of work by `facts` -------------------
_DEFS: dict[str, tuple[tuple[str, ...], str]] = {
    # selected runs and episodes
    "sel_runs": ((), """
        SELECT run_id, coalesce(config, run_id) AS config FROM runs
        WHERE $runs::VARCHAR[] IS NULL OR list_contains($runs::VARCHAR[], run_id)"""),
    "sel_eps": (("sel_runs",), """
        SELECT e.episode_id, e.run_id, s.config, e.task_id, e.position, e.repo, e.resolved
        FROM episodes e JOIN sel_runs s USING (run_id)"""),
    # spans of the selected episodes with their outcome class (A.4.1)
    "err_judged": ((), """
        SELECT DISTINCT span_id FROM judgments
        WHERE status IN ('""" + "', '".join(ERROR_JUDGMENT_STATUSES) + """')"""),
    "span_cls": (("sel_eps", "err_judged"), """
        SELECT sp.span_id, sp.episode_id, se.run_id, se.config, se.resolved, sp.status,
               sp.first_step, sp.first_delivery_id, sp.form, coalesce(sp.route, '(unknown)') AS route,
               coalesce(sp.est_tokens, floor(coalesce(sp.chars, 0) / 4))::BIGINT AS est_tokens,
               sp.status = 'auto_neutral' AS auto_neutral,
               v.judgment_id, v.n_entries,
               CASE
                   WHEN sp.status = 'error' OR v.triage = 'error' THEN 'error'
                   WHEN sp.status = 'empty' THEN 'empty'
                   WHEN sp.status = 'unassessable' THEN 'unassessable'
                   WHEN sp.status = 'auto_neutral' THEN 'neutral'
                   WHEN v.triage IN ('positive', 'negative', 'neutral', 'unresolved') THEN v.triage
                   WHEN ej.span_id IS NOT NULL THEN 'error'
                   ELSE 'unjudged'
               END AS triage,
               coalesce(v.profiled, false) AND coalesce(v.n_entries, 0) > 0
                   AND sp.status NOT IN ('error', 'empty', 'unassessable', 'auto_neutral')
                   AND coalesce(v.triage, '') <> 'error' AS profiled,
               v.relevance, v.corroboration, v.information_gain, v.acted_on, v.benefit, v.harm,
               v.u_accuracy, v.u_novelty, v.u_influence, v.u_effect
        FROM spans sp
        JOIN sel_eps se USING (episode_id)
        LEFT JOIN verdicts v USING (span_id)
        LEFT JOIN err_judged ej USING (span_id)"""),
    # per-entry form labels of first deliveries (a delivery may mix forms, A.6.5)
    "entry_forms": (("span_cls",), """
        SELECT sc.span_id, de.pos, json_extract_string(de.labels, '$.form') AS form
        FROM delivery_entries de JOIN span_cls sc ON de.delivery_id = sc.first_delivery_id
        WHERE de.labels IS NOT NULL AND json_extract_string(de.labels, '$.form') IS NOT NULL"""),
    # accepted entry assessments of profiled spans, with entry identity, window and form
    "judged": (("span_cls", "entry_forms"), """
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
        WHERE sc.profiled"""),
    # items delivered per run and the recurring ones: >= max(2, 0.1 E_run) episodes (A.4.2, A.5.4)
    "ep_count": (("sel_eps",), "SELECT run_id, count(*) AS n_eps FROM sel_eps GROUP BY run_id"),
    "item_eps": (("sel_eps",), """
        SELECT se.run_id, e.namespace, e.item_id, count(DISTINCT e.episode_id) AS episodes
        FROM span_entries e JOIN sel_eps se USING (episode_id) GROUP BY ALL"""),
    "recurring": (("item_eps", "ep_count"), """
        SELECT i.run_id, i.namespace, i.item_id, i.episodes, c.n_eps AS run_episodes,
               greatest(2, 0.1 * c.n_eps) AS threshold
        FROM item_eps i JOIN ep_count c USING (run_id)
        WHERE i.episodes >= greatest(2, 0.1 * c.n_eps)"""),
    # recorded usage per selected episode (A.4.4)
    "ep_calls": (("sel_eps",), _ep_calls_sql()),
}

_MATERIALIZE = ("sel_runs", "sel_eps", "span_cls", "entry_forms", "judged", "recurring", "ep_calls")


class Facts:
    """Temp tables of one unit of work: each building block is computed at most once and then
    read by every aggregate (see `facts`)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, runs: Sequence[str] | None):
        self.con = con
        self.runs = list(runs) if runs is not None else None
        self.prefix = f"mu_{uuid.uuid4().hex[:12]}"
        self.tables: dict[str, str] = {}

    def ensure(self, name: str) -> str:
        if name not in self.tables:
            table = f"{self.prefix}_{name}"
            sql = f"CREATE TEMP TABLE {table} AS {_with(self, name, define=name)} SELECT * FROM {name}"
            params = {"runs": self.runs} if "$runs" in sql else {}
            self.con.execute(sql, params)
            self.tables[name] = table
        return self.tables[name]

    def drop(self) -> None:
        for t in self.tables.values():
            self.con.execute(f"DROP TABLE IF EXISTS temp.{t}")
        self.tables.clear()


@contextmanager
def facts(con: duckdb.DuckDBPyConnection, runs: Sequence[str] | None = None) -> Iterator[Facts]:
    """Share the scope, span classes and judged entries among several aggregate queries; the temp
    tables are dropped afterwards. Pass the result as `facts=` to the query functions."""
    f = Facts(con, runs)
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


_AXES = ("relevance", "corroboration", "information_gain", "acted_on", "benefit", "harm")
_UNCERTAINTY = ("u_accuracy", "u_novelty", "u_influence", "u_effect")
Con = duckdb.DuckDBPyConnection
Runs = Sequence[str] | None


def span_profiles(con: Con, runs: Runs = None, level: Level = "config", *,
                  facts: Facts | None = None) -> pd.DataFrame:
    """Per group: profiled spans, mean shares (equal weight per profiled span), summed counts,
    triage counts per outcome class, automatic neutral spans and estimated delivered tokens over
    every span in scope, also per outcome class (3.5, A.4.1-A.4.2, A.4.4)."""
    sql = f"""{_with(facts, *_PROFILES_NEEDS)}
    SELECT * FROM ({_profiles_inner(level)}) ORDER BY ALL"""
    return _q(con, sql, runs)


_PROFILES_NEEDS = ("span_cls",)


def _profiles_inner(level: Level) -> str:
    means = ",\n".join(f"avg({a}) FILTER (WHERE profiled) AS {a}" for a in _AXES + _UNCERTAINTY)
    counts = ",\n".join(_axis_count(a) for a in _AXES + _UNCERTAINTY)
    classes = ",\n".join(
        f"count(*) FILTER (WHERE triage = '{c}') AS t_{c}" for c in TRIAGE_LABELS + OTHER_CLASSES)
    volume = ",\n".join(
        f"coalesce(sum(est_tokens) FILTER (WHERE triage = '{c}'), 0)::BIGINT AS tok_{c}"
        for c in TRIAGE_LABELS + OTHER_CLASSES)
    return f"""
    SELECT config, {_run_col(level)} AS run_id,
        count(*) AS spans,
        count(*) FILTER (WHERE profiled) AS profiled_spans,
        coalesce(sum(n_entries) FILTER (WHERE profiled), 0)::BIGINT AS n_entries_total,
        {means},
        {counts},
        {classes},
        count(*) FILTER (WHERE auto_neutral) AS auto_neutral,
        count(*) FILTER (WHERE profiled AND triage = 'neutral') AS profiled_neutral,
        coalesce(sum(est_tokens), 0)::BIGINT AS est_tokens,
        {volume}
    FROM span_cls {_grp(level)}"""


def episode_coverage(con: Con, runs: Runs = None, level: Level = "config", *,
                     facts: Facts | None = None) -> pd.DataFrame:
    """Per group: E selected episodes (with or without deliveries) and the episodes that have a
    span, a profiled span, and a profiled span with a relevant, beneficial or harmful entry
    (A.4.2 "Episode coverage")."""
    sql = f"""{_with(facts, *_COVERAGE_NEEDS)}
    SELECT * FROM ({_coverage_inner(level)}) ORDER BY ALL"""
    return _q(con, sql, runs)


_COVERAGE_NEEDS = ("sel_eps", "span_cls")


def _coverage_inner(level: Level) -> str:
    return f"""WITH ep_flags AS (
        SELECT episode_id,
               true AS delivered,
               bool_or(profiled) AS profiled,
               bool_or(profiled AND relevance > 0) AS relevant,
               bool_or(profiled AND benefit > 0) AS beneficial,
               bool_or(profiled AND harm > 0) AS harmful
        FROM span_cls GROUP BY episode_id)
    SELECT se.config, {_run_col(level, 'se.')} AS run_id,
        count(*) AS episodes,
        count(*) FILTER (WHERE f.delivered) AS with_spans,
        count(*) FILTER (WHERE f.profiled) AS profiled,
        count(*) FILTER (WHERE f.relevant) AS relevant,
        count(*) FILTER (WHERE f.beneficial) AS beneficial,
        count(*) FILTER (WHERE f.harmful) AS harmful
    FROM sel_eps se LEFT JOIN ep_flags f USING (episode_id)
    {_grp(level, 'se.')}"""


def recurring_items(con: Con, runs: Runs = None, *, facts: Facts | None = None) -> pd.DataFrame:
    """Items (namespace, item_id) delivered in at least max(2, 0.1 E) distinct episodes of a run,
    E being the selected episodes of that run (A.4.2, A.5.4 "Memory statistics")."""
    sql = f"""{_with(facts, "sel_runs", "recurring")}
    SELECT s.config, r.run_id, r.namespace, r.item_id, r.episodes, r.run_episodes, r.threshold
    FROM recurring r JOIN sel_runs s USING (run_id)
    ORDER BY s.config, r.run_id, r.episodes DESC, r.namespace, r.item_id"""
    return _q(con, sql, runs)


def recurring_diagnostic(con: Con, runs: Runs = None, level: Level = "config", *,
                         facts: Facts | None = None) -> pd.DataFrame:
    """Per group: recurring items, relevant judged entries and those from recurring items, and the
    episodes with a relevant entry from a non-recurring item (A.4.2). Recurrence is decided within
    each run, as in A.5.4."""
    sql = f"""{_with(facts, *_RECURRING_NEEDS)}
    SELECT * FROM ({_recurring_inner(level)}) ORDER BY ALL"""
    return _q(con, sql, runs)


_RECURRING_NEEDS = ("sel_runs", "sel_eps", "judged", "recurring")


def _recurring_inner(level: Level) -> str:
    return f"""WITH rel AS (
        SELECT j.config, j.run_id, j.episode_id, r.item_id IS NOT NULL AS recurring
        FROM judged j LEFT JOIN recurring r
             ON r.run_id = j.run_id AND r.namespace = j.namespace AND r.item_id = j.item_id
        WHERE j.relevant),
    n_rec AS (
        SELECT config, {_run_col(level)} AS run_id, count(*) AS recurring_items
        FROM recurring JOIN sel_runs USING (run_id) {_grp(level)}),
    agg AS (
        SELECT config, {_run_col(level)} AS run_id,
               count(*) AS relevant_entries,
               count(*) FILTER (WHERE recurring) AS relevant_from_recurring,
               count(DISTINCT episode_id) FILTER (WHERE NOT recurring) AS episodes_relevant_wo_recurring
        FROM rel {_grp(level)}),
    eps AS (SELECT config, {_run_col(level)} AS run_id, count(*) AS episodes FROM sel_eps {_grp(level)})
    SELECT eps.config, eps.run_id, eps.episodes,
           coalesce(n_rec.recurring_items, 0) AS recurring_items,
           coalesce(agg.relevant_entries, 0) AS relevant_entries,
           coalesce(agg.relevant_from_recurring, 0) AS relevant_from_recurring,
           coalesce(agg.episodes_relevant_wo_recurring, 0) AS episodes_relevant_wo_recurring
    FROM eps
    LEFT JOIN agg ON agg.config = eps.config AND agg.run_id IS NOT DISTINCT FROM eps.run_id
    LEFT JOIN n_rec ON n_rec.config = eps.config AND n_rec.run_id IS NOT DISTINCT FROM eps.run_id"""


def overview(con: Con, runs: Runs = None, level: Level = "config", *,
             facts: Facts | None = None) -> pd.DataFrame:
    """`episode_coverage`, `span_profiles` and `recurring_diagnostic` in one statement (one row
    per group, their columns side by side): what the app's overview page needs."""
    needs = dict.fromkeys(_COVERAGE_NEEDS + _PROFILES_NEEDS + _RECURRING_NEEDS)
    sql = f"""{_with(facts, *needs)},
    c AS ({_coverage_inner(level)}),
    p AS ({_profiles_inner(level)}),
    r AS ({_recurring_inner(level)})
    SELECT c.*, p.* EXCLUDE (config, run_id), r.* EXCLUDE (config, run_id, episodes)
    FROM c
    LEFT JOIN p ON p.config = c.config AND p.run_id IS NOT DISTINCT FROM c.run_id
    LEFT JOIN r ON r.config = c.config AND r.run_id IS NOT DISTINCT FROM c.run_id
    ORDER BY c.config, c.run_id NULLS FIRST"""
    return _q(con, sql, runs)


def delivery_forms(con: Con, runs: Runs = None, level: Level = "config", *,
                   facts: Facts | None = None) -> pd.DataFrame:
    """Per group, form and route: estimated delivered tokens (each span's estimate allocated among
    its entries in proportion to exposed characters; equally when none are recorded), judged
    entries and their relevant, acted-on, selected, beneficial and harmful counts (A.6.5, Table 11).
    Automatic neutral spans appear under the form `COPY_FORM` with their tokens only."""
    sql = f"""{_with(facts, "span_cls", "entry_forms", "judged")},
    ents AS (
        SELECT sc.span_id, sc.config, sc.run_id, sc.est_tokens, sc.route,
               CASE WHEN sc.auto_neutral THEN '{COPY_FORM}'
                    ELSE coalesce(ef.form, sc.form, '(unknown)') END AS form,
               coalesce(se.exposed_chars, 0) AS xc,
               count(se.pos) OVER (PARTITION BY sc.span_id) AS n_ent,
               sum(coalesce(se.exposed_chars, 0)) OVER (PARTITION BY sc.span_id) AS tot_xc
        FROM span_cls sc
        LEFT JOIN span_entries se ON se.span_id = sc.span_id
        LEFT JOIN entry_forms ef ON ef.span_id = sc.span_id AND ef.pos = se.pos),
    tok AS (
        SELECT config, {_run_col(level)} AS run_id, form, route,
               sum(CASE WHEN n_ent = 0 THEN est_tokens
                        WHEN tot_xc > 0 THEN est_tokens * xc / tot_xc
                        ELSE est_tokens / n_ent END) AS tokens
        FROM ents {_grp(level, extra='form, route')}),
    jf AS (
        SELECT config, {_run_col(level)} AS run_id, form, route,
               count(*) AS judged,
               count(*) FILTER (WHERE relevant) AS relevant,
               count(*) FILTER (WHERE influence = 'acted_on') AS acted_on,
               count(*) FILTER (WHERE influence = 'selected') AS selected,
               count(*) FILTER (WHERE influence = 'acted_on' AND effect = 'improved') AS beneficial,
               count(*) FILTER (WHERE influence = 'acted_on' AND effect = 'harmed') AS harmful
        FROM judged {_grp(level, extra='form, route')})
    SELECT coalesce(tok.config, jf.config) AS config, coalesce(tok.run_id, jf.run_id) AS run_id,
           coalesce(tok.form, jf.form) AS form, coalesce(tok.route, jf.route) AS route,
           coalesce(tok.tokens, 0)::DOUBLE AS tokens,
           coalesce(jf.judged, 0) AS judged, coalesce(jf.relevant, 0) AS relevant,
           coalesce(jf.acted_on, 0) AS acted_on, coalesce(jf.selected, 0) AS selected,
           coalesce(jf.beneficial, 0) AS beneficial, coalesce(jf.harmful, 0) AS harmful
    FROM tok FULL JOIN jf
        ON tok.config = jf.config AND tok.run_id IS NOT DISTINCT FROM jf.run_id
       AND tok.form = jf.form AND tok.route = jf.route
    ORDER BY 1, 2, 5 DESC, 3, 4"""
    return _q(con, sql, runs)


def use_effects(con: Con, runs: Runs = None, level: Level = "config", *,
                facts: Facts | None = None) -> pd.DataFrame:
    """Per group: acted-on entries by observed effect, delayed use (first anchor after the span's
    first consuming step; at least 5 steps later), unused entries (influence none) grouped as
    irrelevant or by novelty, and episodes with a beneficial / harmful entry by task outcome
    (A.4.1, A.6.3, Table 9)."""
    sql = f"""{_with(facts, "sel_eps", "judged")},
    ent AS (
        SELECT config, {_run_col(level)} AS run_id,
            count(*) AS judged,
            count(*) FILTER (WHERE relevant) AS relevant,
            count(*) FILTER (WHERE influence = 'acted_on') AS acted_on,
            count(*) FILTER (WHERE influence = 'acted_on' AND effect = 'improved') AS improved,
            count(*) FILTER (WHERE influence = 'acted_on' AND effect = 'no_effect') AS no_effect,
            count(*) FILTER (WHERE influence = 'acted_on' AND effect = 'harmed') AS harmed,
            count(*) FILTER (WHERE influence = 'acted_on' AND effect IS NULL) AS effect_undetermined,
            count(*) FILTER (WHERE influence = 'acted_on' AND len(coalesce(anchors, [])) > 0) AS anchored,
            count(*) FILTER (WHERE influence = 'acted_on' AND list_min(anchors) > first_step) AS delayed,
            count(*) FILTER (WHERE influence = 'acted_on' AND list_min(anchors) - first_step >= 5)
                AS delayed_5,
            count(*) FILTER (WHERE influence = 'selected') AS selected,
            count(*) FILTER (WHERE influence = 'referenced') AS referenced,
            count(*) FILTER (WHERE influence IS NULL) AS influence_undetermined,
            count(*) FILTER (WHERE influence = 'none') AS ignored,
            count(*) FILTER (WHERE influence = 'none' AND NOT relevant) AS ignored_irrelevant,
            count(*) FILTER (WHERE influence = 'none' AND relevant) AS unused_relevant,
            count(*) FILTER (WHERE influence = 'none' AND relevant AND novelty = 'novel') AS unused_novel,
            count(*) FILTER (WHERE influence = 'none' AND relevant AND novelty = 'confirming')
                AS unused_confirming,
            count(*) FILTER (WHERE influence = 'none' AND relevant AND novelty = 'redundant')
                AS unused_redundant,
            count(*) FILTER (WHERE influence = 'none' AND relevant AND novelty IS NULL)
                AS unused_novelty_undetermined
        FROM judged {_grp(level)}),
    ep AS (
        SELECT episode_id, any_value(config) AS config, any_value(run_id) AS run_id,
               any_value(resolved) AS resolved,
               bool_or(influence = 'acted_on' AND effect = 'improved') AS ben,
               bool_or(influence = 'acted_on' AND effect = 'harmed') AS harm,
               bool_or(influence = 'acted_on') AS acted
        FROM judged GROUP BY episode_id),
    eps AS (
        SELECT config, {_run_col(level)} AS run_id,
            count(*) FILTER (WHERE acted) AS ep_acted,
            count(*) FILTER (WHERE ben) AS ep_beneficial,
            count(*) FILTER (WHERE ben AND resolved) AS ep_beneficial_resolved,
            count(*) FILTER (WHERE ben AND NOT resolved) AS ep_beneficial_failed,
            count(*) FILTER (WHERE harm) AS ep_harmful,
            count(*) FILTER (WHERE harm AND resolved) AS ep_harmful_resolved,
            count(*) FILTER (WHERE harm AND NOT resolved) AS ep_harmful_failed
        FROM ep {_grp(level)}),
    grp AS (SELECT DISTINCT config, {_run_col(level)} AS run_id FROM sel_eps
            {'' if level != 'both' else 'UNION SELECT DISTINCT config, NULL::VARCHAR FROM sel_eps'})
    SELECT grp.config, grp.run_id, ent.* EXCLUDE (config, run_id), eps.* EXCLUDE (config, run_id)
    FROM grp
    LEFT JOIN ent ON ent.config = grp.config AND ent.run_id IS NOT DISTINCT FROM grp.run_id
    LEFT JOIN eps ON eps.config = grp.config AND eps.run_id IS NOT DISTINCT FROM grp.run_id
    ORDER BY ALL"""
    df = _q(con, sql, runs)
    cnt = [c for c in df.columns if c not in ("config", "run_id")]
    df[cnt] = df[cnt].fillna(0).astype("int64")
    return df


def effect_origins(con: Con, runs: Runs = None, *, facts: Facts | None = None) -> pd.DataFrame:
    """Every beneficial or harmful entry with the recorded write that produced its item's delivered
    version, and the origin class (A.4.3, A.6.6, Table 12):

    - `earlier_same_run`: an episode earlier in the same run (`same_repo` tells the repository);
    - `same_episode`: written during the episode that used it;
    - `other`: an episode of another run, or a later one;
    - `unobserved`: no recorded write, or a write without an origin episode in the store.

    The write chosen is, in order of preference: one whose version equals the delivered version,
    one from an earlier episode of the same run, the closest earlier such episode, the latest.
    `gap` counts task positions from the origin episode to the use (earlier_same_run only)."""
    sql = f"""{_with(facts, "sel_eps", "judged")},
    eff AS (
        SELECT j.span_id, j.pos, j.episode_id, j.run_id, j.config, j.namespace, j.item_id, j.version,
               j.effect, j.resolved, se.task_id, se.position, se.repo
        FROM judged j JOIN sel_eps se USING (episode_id)
        WHERE j.influence = 'acted_on' AND j.effect IN ('improved', 'harmed')),
    cand AS (
        SELECT eff.span_id, eff.pos, ie.episode_id AS origin_episode, ie.version AS origin_version,
               ie.op AS origin_op, oe.run_id AS origin_run, oe.position AS origin_position,
               oe.repo AS origin_repo, oe.resolved AS origin_resolved, oe.task_id AS origin_task,
               row_number() OVER (PARTITION BY eff.span_id, eff.pos ORDER BY
                   (eff.version IS NOT NULL AND ie.version = eff.version) DESC,
                   (oe.run_id = eff.run_id AND oe.position < eff.position) DESC,
                   oe.position DESC NULLS LAST, ie.file_id DESC, ie.seq DESC) AS rk
        FROM eff
        JOIN item_events ie ON ie.namespace = eff.namespace AND ie.item_id = eff.item_id
             AND ie.op IN ('create', 'update') AND (ie.run_id IS NULL OR ie.run_id = eff.run_id)
        LEFT JOIN episodes oe ON oe.episode_id = ie.episode_id),
    created AS (
        SELECT DISTINCT namespace, item_id, run_id FROM item_events WHERE op = 'create')
    SELECT eff.config, eff.run_id, eff.episode_id, eff.task_id, eff.position, eff.repo, eff.resolved,
           eff.span_id, eff.pos, eff.namespace, eff.item_id, eff.version,
           CASE WHEN eff.effect = 'improved' THEN 'benefit' ELSE 'harm' END AS effect,
           c.origin_episode, c.origin_op, c.origin_version, c.origin_run, c.origin_position,
           c.origin_repo, c.origin_task, c.origin_resolved,
           CASE
               WHEN c.origin_episode IS NULL OR c.origin_run IS NULL THEN 'unobserved'
               WHEN c.origin_episode = eff.episode_id THEN 'same_episode'
               WHEN c.origin_run = eff.run_id AND c.origin_position < eff.position THEN 'earlier_same_run'
               ELSE 'other'
           END AS origin,
           CASE WHEN c.origin_run = eff.run_id AND c.origin_position < eff.position
                THEN eff.position - c.origin_position END AS gap,
           c.origin_repo IS NOT DISTINCT FROM eff.repo AS same_repo,
           EXISTS (SELECT 1 FROM created cr WHERE cr.namespace = eff.namespace
                   AND cr.item_id = eff.item_id AND (cr.run_id IS NULL OR cr.run_id = eff.run_id))
               AS creation_recorded
    FROM eff LEFT JOIN cand c ON c.span_id = eff.span_id AND c.pos = eff.pos AND c.rk = 1
    ORDER BY eff.config, eff.run_id, eff.position, eff.span_id, eff.pos"""
    return _q(con, sql, runs)


def item_effects(con: Con, runs: Runs = None, *, facts: Facts | None = None) -> pd.DataFrame:
    """Per configuration and item: acted-on, beneficial and harmful entries, the number of distinct
    runs in which the item helped or harmed, and the tasks it harmed (A.6.6: items that harmed in
    several runs are direct targets for revision)."""
    sql = f"""{_with(facts, "sel_eps", "judged")}
    SELECT j.config, j.namespace, j.item_id,
        count(*) FILTER (WHERE influence = 'acted_on') AS acted_on,
        count(*) FILTER (WHERE influence = 'acted_on' AND effect = 'improved') AS beneficial,
        count(*) FILTER (WHERE influence = 'acted_on' AND effect = 'harmed') AS harmful,
        count(DISTINCT j.run_id) FILTER (WHERE influence = 'acted_on' AND effect = 'improved') AS runs_beneficial,
        count(DISTINCT j.run_id) FILTER (WHERE influence = 'acted_on' AND effect = 'harmed') AS runs_harmful,
        list_sort(list(DISTINCT se.task_id) FILTER (WHERE influence = 'acted_on' AND effect = 'harmed'))
            AS harmed_tasks
    FROM judged j JOIN sel_eps se USING (episode_id)
    WHERE j.influence = 'acted_on'
    GROUP BY ALL
    ORDER BY config, harmful DESC, beneficial DESC, namespace, item_id"""
    return _q(con, sql, runs)


# ---- Task outcomes (A.5.4) --------------------------------------------------------------------
def task_outcomes(con: Con, runs: Runs = None, *, facts: Facts | None = None) -> pd.DataFrame:
    """One row per selected episode: config, run, task and harness outcome (NULL when unknown)."""
    sql = f"""{_with(facts, "sel_eps")}
    SELECT config, run_id, task_id, episode_id, resolved FROM sel_eps ORDER BY config, run_id, task_id"""
    return _q(con, sql, runs)


def run_outcomes(con: Con, runs: Runs = None, *, facts: Facts | None = None) -> pd.DataFrame:
    """Per run: episodes, resolved episodes and episodes without a harness result."""
    sql = f"""{_with(facts, "sel_eps")}
    SELECT config, run_id, count(*) AS episodes,
           count(*) FILTER (WHERE resolved) AS resolved,
           count(*) FILTER (WHERE resolved IS NULL) AS no_result
    FROM sel_eps GROUP BY ALL ORDER BY ALL"""
    return _q(con, sql, runs)


def run_pair_changes(con: Con, runs: Runs = None, *, facts: Facts | None = None) -> pd.DataFrame:
    """For every ordered pair of distinct selected runs (a, b): tasks resolved in a but not in b
    (gains of a over b) and the reverse (losses), over tasks that both runs attempted (A.5.4)."""
    sql = f"""{_with(facts, "sel_eps")}
    SELECT a.config AS config_a, a.run_id AS run_a, b.config AS config_b, b.run_id AS run_b,
           count(*) AS common_tasks,
           count(*) FILTER (WHERE coalesce(a.resolved, false) AND NOT coalesce(b.resolved, false)) AS gains,
           count(*) FILTER (WHERE coalesce(b.resolved, false) AND NOT coalesce(a.resolved, false)) AS losses
    FROM sel_eps a JOIN sel_eps b ON a.task_id = b.task_id AND a.run_id <> b.run_id
    GROUP BY ALL ORDER BY ALL"""
    return _q(con, sql, runs)


# ---- Cost (A.4.4) -----------------------------------------------------------------------------
def episode_costs(con: Con, runs: Runs = None, *, facts: Facts | None = None) -> pd.DataFrame:
    """Per selected episode: recorded calls, tokens (input, cached, output, reasoning; cached and
    reasoning are subsets, never added again) and cost, for agent and memory-system calls, with
    the number of calls whose cost or usage was not recorded (A.4.4). Episodes without calls get
    zeros."""
    sql = f"""{_with(facts, "ep_calls")}
    SELECT * FROM ep_calls ORDER BY config, run_id, episode_id"""
    return _q(con, sql, runs)


def group_costs(con: Con, runs: Runs = None, level: Level = "config", *,
                facts: Facts | None = None) -> pd.DataFrame:
    """Per group: episodes and summed recorded usage and cost of agent and memory-system calls."""
    cols = [f"{p}_{k}" for p in ("agent", "memory") for k in _CALL_SUMS]
    sums = ",\n".join(f"sum({c}) AS {c}" for c in cols)
    sql = f"""{_with(facts, "ep_calls")}
    SELECT config, {_run_col(level)} AS run_id, count(*) AS episodes, {sums}
    FROM ep_calls {_grp(level)} ORDER BY ALL"""
    return _q(con, sql, runs)


def judge_costs(con: Con, runs: Runs = None, level: Level = "config", *,
                facts: Facts | None = None) -> pd.DataFrame:
    """Per group: judged spans (spans with at least one judge attempt), attempts, judge calls,
    tokens and cost summed over every attempt, including rejected and failed ones (A.4.4)."""
    sql = f"""{_with(facts, "span_cls")}
    SELECT sc.config, {_run_col(level, 'sc.')} AS run_id,
        count(DISTINCT j.span_id) AS judged_spans,
        count(j.judgment_id) AS attempts,
        coalesce(sum(j.calls), 0)::BIGINT AS judge_calls,
        coalesce(sum(j.input_tokens), 0)::BIGINT AS judge_input,
        coalesce(sum(j.cached_tokens), 0)::BIGINT AS judge_cached,
        coalesce(sum(j.output_tokens), 0)::BIGINT AS judge_output,
        coalesce(sum(j.cost_usd), 0)::DOUBLE AS judge_cost,
        count(j.judgment_id) FILTER (WHERE j.cost_usd IS NULL) AS judge_cost_unknown,
        string_agg(DISTINCT j.judge, ', ' ORDER BY j.judge) AS judges
    FROM span_cls sc JOIN judgments j USING (span_id)
    {_grp(level, 'sc.')} ORDER BY ALL"""
    return _q(con, sql, runs)


def list_runs(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Runs with their configuration and episode counts (for scope pickers)."""
    return con.execute(
        """SELECT r.run_id, coalesce(r.config, r.run_id) AS config, r.label,
                  count(e.episode_id) AS episodes
           FROM runs r LEFT JOIN episodes e USING (run_id) GROUP BY ALL ORDER BY 2, 1""").df()


# ---- Memory graph (A.4.3): item histories, deliveries, spans and verdicts ----------------------
_KEYS = """keys AS (SELECT DISTINCT unnest($ns::VARCHAR[]) AS namespace, unnest($ids::VARCHAR[]) AS item_id)"""


def lineage_items(con: duckdb.DuckDBPyConnection, *, item_id: str | None = None,
                  namespace: str | None = None, episode_id: str | None = None,
                  effect: str | None = None, runs: Sequence[str] | None = None) -> pd.DataFrame:
    """The (namespace, item_id) pairs of a graph: one item (any namespace when `namespace` is
    None), the items delivered in or written by one episode, or the items with a judged entry of
    `effect` in {harmful, beneficial, acted_on} in the selected runs."""
    if item_id is not None:
        sql = """SELECT DISTINCT namespace, item_id FROM (
            SELECT namespace, item_id FROM item_events UNION ALL
            SELECT namespace, item_id FROM delivery_entries)
        WHERE item_id = $item AND ($ns::VARCHAR IS NULL OR namespace = $ns::VARCHAR)
        ORDER BY ALL"""
        return con.execute(sql, {"item": item_id, "ns": namespace}).df()
    if episode_id is not None:
        sql = """SELECT DISTINCT namespace, item_id FROM (
            SELECT namespace, item_id FROM delivery_entries WHERE episode_id = $ep UNION ALL
            SELECT namespace, item_id FROM item_events WHERE episode_id = $ep)
        ORDER BY ALL"""
        return con.execute(sql, {"ep": episode_id}).df()
    cond = {"harmful": "influence = 'acted_on' AND effect = 'harmed'",
            "beneficial": "influence = 'acted_on' AND effect = 'improved'",
            "acted_on": "influence = 'acted_on'"}.get(effect or "")
    if cond is None:
        raise ValueError(f"effect must be harmful, beneficial or acted_on, not {effect!r}")
    sql = f"""{_with(None, "judged")}
    SELECT DISTINCT namespace, item_id FROM judged WHERE {cond} ORDER BY ALL"""
    return _q(con, sql, runs)


def _key_params(keys: pd.DataFrame, runs: Sequence[str] | None) -> dict[str, object]:
    return {"ns": [str(x) for x in keys.namespace], "ids": [str(x) for x in keys.item_id],
            "runs": list(runs) if runs is not None else None}


def lineage_events(con: duckdb.DuckDBPyConnection, keys: pd.DataFrame,
                   runs: Sequence[str] | None = None) -> pd.DataFrame:
    """Recorded writes (create/update/delete) of the given items in recorded order, with their
    origin episode when it is in the store (`origin_known`). Writes of runs outside the selection
    are left out; writes without a run (shared corpora) are kept."""
    sql = f"""{_with(None, "sel_eps")}, {_KEYS}
    SELECT ie.namespace, ie.item_id, ie.version, ie.op, ie.episode_id, ie.run_id, ie.changed_at,
           ie.file_id, ie.seq, e.run_id AS origin_run, e.task_id AS origin_task,
           e.position AS origin_position, e.repo AS origin_repo, e.resolved AS origin_resolved,
           e.episode_id IS NOT NULL AS origin_known
    FROM item_events ie JOIN keys USING (namespace, item_id)
    LEFT JOIN episodes e ON e.episode_id = ie.episode_id
    WHERE ie.run_id IS NULL OR $runs::VARCHAR[] IS NULL OR list_contains($runs::VARCHAR[], ie.run_id)
    ORDER BY ie.namespace, ie.item_id, ie.file_id, ie.seq"""
    return con.execute(sql, _key_params(keys, runs)).df()


def lineage_uses(con: duckdb.DuckDBPyConnection, keys: pd.DataFrame,
                 runs: Sequence[str] | None = None) -> pd.DataFrame:
    """Every span entry of the given items in the selected runs: its span (outcome class, first
    step, form, route, deliveries), episode (task, position, outcome) and, when judged, the entry's
    accepted assessment and usage label."""
    sql = f"""{_with(None, "span_cls")}, {_KEYS}
    SELECT se.namespace, se.item_id, se.version, se.exposure, se.pos, sc.span_id, sc.episode_id,
           sc.run_id, sc.config, ep.task_id, ep.position, ep.repo, ep.resolved, sc.status, sc.triage,
           sc.profiled, sc.first_step, sc.first_delivery_id, sp.n_deliveries, sc.form, sc.route,
           sc.est_tokens, a.relevance, a.accuracy, a.novelty, a.influence, a.effect, a.usage_label
    FROM span_entries se JOIN keys USING (namespace, item_id)
    JOIN span_cls sc ON sc.span_id = se.span_id
    JOIN spans sp ON sp.span_id = se.span_id
    JOIN episodes ep ON ep.episode_id = sc.episode_id
    LEFT JOIN assessments a ON a.judgment_id = sc.judgment_id AND a.span_id = sc.span_id
         AND a.pos = se.pos
    ORDER BY se.namespace, se.item_id, sc.run_id, ep.position, sc.first_step, sc.span_id"""
    return con.execute(sql, _key_params(keys, runs)).df()
