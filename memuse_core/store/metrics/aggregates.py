"""Per-group aggregates: profiles, triage, token volume, coverage, recurring items, delivery forms,
use and effects (MemUse 3.5, A.4.1-A.4.2, A.6.3, A.6.5)."""

from __future__ import annotations

import pandas as pd

from ...vocab import AXES, COPY_FORM, DELAYED_USE_STEPS, OTHER_CLASSES, TRIAGE_PRECEDENCE, UNCERTAINTY
from .blocks import (
    Con,
    Facts,
    Level,
    Runs,
    _axis_count,
    _grp,
    _q,
    _run_col,
    _with,
)


def span_profiles(
    con: Con,
    runs: Runs = None,
    level: Level = "config",
    *,
    facts: Facts | None = None,
    judge: str | None = None,
) -> pd.DataFrame:
    """Per group: profiled spans, mean shares (equal weight per profiled span), summed counts,
    triage counts per outcome class, automatic neutral spans and estimated delivered tokens over
    every span in scope, also per outcome class (3.5, A.4.1-A.4.2, A.4.4)."""
    sql = f"""{_with(facts, *_PROFILES_NEEDS)}
    SELECT * FROM ({_profiles_inner(level)}) ORDER BY ALL"""
    return _q(con, sql, runs, judge=judge)


_PROFILES_NEEDS = ("span_cls",)


def _profiles_inner(level: Level) -> str:
    means = ",\n".join(f"avg({a}) FILTER (WHERE profiled) AS {a}" for a in AXES + UNCERTAINTY)
    counts = ",\n".join(_axis_count(a) for a in AXES + UNCERTAINTY)
    classes = ",\n".join(
        f"count(*) FILTER (WHERE triage = '{c}') AS t_{c}" for c in TRIAGE_PRECEDENCE + OTHER_CLASSES
    )
    volume = ",\n".join(
        f"coalesce(sum(est_tokens) FILTER (WHERE triage = '{c}'), 0)::BIGINT AS tok_{c}"
        for c in TRIAGE_PRECEDENCE + OTHER_CLASSES
    )
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


def episode_coverage(
    con: Con,
    runs: Runs = None,
    level: Level = "config",
    *,
    facts: Facts | None = None,
    judge: str | None = None,
) -> pd.DataFrame:
    """Per group: E selected episodes (with or without deliveries) and the episodes that have a
    span, a profiled span, and a profiled span with a relevant, beneficial or harmful entry
    (A.4.2 "Episode coverage")."""
    sql = f"""{_with(facts, *_COVERAGE_NEEDS)}
    SELECT * FROM ({_coverage_inner(level)}) ORDER BY ALL"""
    return _q(con, sql, runs, judge=judge)


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
    SELECT se.config, {_run_col(level, "se.")} AS run_id,
        count(*) AS episodes,
        count(*) FILTER (WHERE f.delivered) AS with_spans,
        count(*) FILTER (WHERE f.profiled) AS profiled,
        count(*) FILTER (WHERE f.relevant) AS relevant,
        count(*) FILTER (WHERE f.beneficial) AS beneficial,
        count(*) FILTER (WHERE f.harmful) AS harmful
    FROM sel_eps se LEFT JOIN ep_flags f USING (episode_id)
    {_grp(level, "se.")}"""


def recurring_items(
    con: Con, runs: Runs = None, *, facts: Facts | None = None, judge: str | None = None
) -> pd.DataFrame:
    """Items (namespace, item_id) delivered in at least max(2, 0.1 E) distinct episodes of a run,
    E being the selected episodes of that run (A.4.2, A.5.4 "Memory statistics")."""
    sql = f"""{_with(facts, "sel_runs", "recurring")}
    SELECT s.config, r.run_id, r.namespace, r.item_id, r.episodes, r.run_episodes, r.threshold
    FROM recurring r JOIN sel_runs s USING (run_id)
    ORDER BY s.config, r.run_id, r.episodes DESC, r.namespace, r.item_id"""
    return _q(con, sql, runs, judge=judge)


def recurring_diagnostic(
    con: Con,
    runs: Runs = None,
    level: Level = "config",
    *,
    facts: Facts | None = None,
    judge: str | None = None,
) -> pd.DataFrame:
    """Per group: recurring items, relevant judged entries and those from recurring items, and the
    episodes with a relevant entry from a non-recurring item (A.4.2). Recurrence is decided within
    each run, as in A.5.4."""
    sql = f"""{_with(facts, *_RECURRING_NEEDS)}
    SELECT * FROM ({_recurring_inner(level)}) ORDER BY ALL"""
    return _q(con, sql, runs, judge=judge)


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


def overview(
    con: Con,
    runs: Runs = None,
    level: Level = "config",
    *,
    facts: Facts | None = None,
    judge: str | None = None,
) -> pd.DataFrame:
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
    return _q(con, sql, runs, judge=judge)


def delivery_forms(
    con: Con,
    runs: Runs = None,
    level: Level = "config",
    *,
    facts: Facts | None = None,
    judge: str | None = None,
) -> pd.DataFrame:
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
        FROM ents {_grp(level, extra="form, route")}),
    jf AS (
        SELECT config, {_run_col(level)} AS run_id, form, route,
               count(*) AS judged,
               count(*) FILTER (WHERE relevant) AS relevant,
               count(*) FILTER (WHERE influence = 'acted_on') AS acted_on,
               count(*) FILTER (WHERE influence = 'selected') AS selected,
               count(*) FILTER (WHERE influence = 'acted_on' AND effect = 'improved') AS beneficial,
               count(*) FILTER (WHERE influence = 'acted_on' AND effect = 'harmed') AS harmful
        FROM judged {_grp(level, extra="form, route")})
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
    return _q(con, sql, runs, judge=judge)


def use_effects(
    con: Con,
    runs: Runs = None,
    level: Level = "config",
    *,
    facts: Facts | None = None,
    judge: str | None = None,
) -> pd.DataFrame:
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
            count(*) FILTER (WHERE influence = 'acted_on' AND list_min(anchors) - first_step >= {DELAYED_USE_STEPS})
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
            {"" if level != "both" else "UNION SELECT DISTINCT config, NULL::VARCHAR FROM sel_eps"})
    SELECT grp.config, grp.run_id, ent.* EXCLUDE (config, run_id), eps.* EXCLUDE (config, run_id)
    FROM grp
    LEFT JOIN ent ON ent.config = grp.config AND ent.run_id IS NOT DISTINCT FROM grp.run_id
    LEFT JOIN eps ON eps.config = grp.config AND eps.run_id IS NOT DISTINCT FROM grp.run_id
    ORDER BY ALL"""
    df = _q(con, sql, runs, judge=judge)
    cnt = [c for c in df.columns if c not in ("config", "run_id")]
    df[cnt] = df[cnt].fillna(0).astype("int64")
    return df
