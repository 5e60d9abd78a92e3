"""Memory histories of effect entries, per-item effects, task outcomes and recorded cost
(MemUse A.4.3-A.4.4, A.5.4, A.6.6)."""

from __future__ import annotations

import duckdb
import pandas as pd

from .blocks import (
    _CALL_SUMS,
    Con,
    Facts,
    Level,
    Runs,
    _grp,
    _q,
    _run_col,
    _with,
)


def effect_origins(
    con: Con, runs: Runs = None, *, facts: Facts | None = None, judge: str | None = None
) -> pd.DataFrame:
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
    return _q(con, sql, runs, judge=judge)


def item_effects(
    con: Con, runs: Runs = None, *, facts: Facts | None = None, judge: str | None = None
) -> pd.DataFrame:
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
    return _q(con, sql, runs, judge=judge)


# ---- Task outcomes (A.5.4) --------------------------------------------------------------------
_RUN_TASKS = """run_tasks AS (
        SELECT config, run_id, task_id, count(*) AS n_episodes, bool_or(resolved) AS resolved
        FROM sel_eps GROUP BY ALL)"""
"""One row per (run, task): a run attempts a task once however many episodes it recorded for it
(a retry, a second file of the task); the task counts as resolved when one of its episodes is,
as not resolved when one has an outcome and none is, and as unknown when none has one. Task
outcomes are per task (the harness judges one patch per task, A.5.4), so rates and comparisons
read this, never the episodes."""


def task_outcomes(
    con: Con, runs: Runs = None, *, facts: Facts | None = None, judge: str | None = None
) -> pd.DataFrame:
    """One row per selected run and task (`_RUN_TASKS`): config, run, task and outcome (NULL when
    unknown)."""
    sql = f"""{_with(facts, "sel_eps")}, {_RUN_TASKS}
    SELECT config, run_id, task_id, resolved FROM run_tasks ORDER BY config, run_id, task_id"""
    return _q(con, sql, runs, judge=judge)


def run_outcomes(
    con: Con, runs: Runs = None, *, facts: Facts | None = None, judge: str | None = None
) -> pd.DataFrame:
    """Per run: episodes, resolved episodes and episodes without a harness result; and the same per
    task (`_RUN_TASKS`: what the resolve rate divides), with the tasks recorded more than once."""
    sql = f"""{_with(facts, "sel_eps")}, {_RUN_TASKS},
    per_task AS (
        SELECT config, run_id, count(*) AS tasks,
               count(*) FILTER (WHERE resolved) AS tasks_resolved,
               count(*) FILTER (WHERE resolved IS NULL) AS tasks_no_result,
               count(*) FILTER (WHERE n_episodes > 1) AS repeated_tasks
        FROM run_tasks GROUP BY ALL)
    SELECT config, run_id, count(*) AS episodes,
           count(*) FILTER (WHERE resolved) AS resolved,
           count(*) FILTER (WHERE resolved IS NULL) AS no_result,
           any_value(p.tasks) AS tasks, any_value(p.tasks_resolved) AS tasks_resolved,
           any_value(p.tasks_no_result) AS tasks_no_result, any_value(p.repeated_tasks) AS repeated_tasks
    FROM sel_eps JOIN per_task p USING (config, run_id) GROUP BY ALL ORDER BY ALL"""
    return _q(con, sql, runs, judge=judge)


def run_pair_changes(
    con: Con, runs: Runs = None, *, facts: Facts | None = None, judge: str | None = None
) -> pd.DataFrame:
    """For every ordered pair of distinct selected runs (a, b) that share a task with an outcome in
    both: tasks resolved in a but not in b (gains of a over b) and the reverse (losses) (A.5.4).
    A task without an outcome in either run is neither, and a pair with no such task is no pair
    (its gains and losses are unknown, not zero). Tasks, not episodes (`_RUN_TASKS`)."""
    sql = f"""{_with(facts, "sel_eps")}, {_RUN_TASKS}
    SELECT a.config AS config_a, a.run_id AS run_a, b.config AS config_b, b.run_id AS run_b,
           count(*) AS common_tasks,
           count(*) FILTER (WHERE a.resolved AND NOT b.resolved) AS gains,
           count(*) FILTER (WHERE b.resolved AND NOT a.resolved) AS losses
    FROM run_tasks a JOIN run_tasks b ON a.task_id = b.task_id AND a.run_id <> b.run_id
    WHERE a.resolved IS NOT NULL AND b.resolved IS NOT NULL
    GROUP BY ALL ORDER BY ALL"""
    return _q(con, sql, runs, judge=judge)


# ---- Cost (A.4.4) -----------------------------------------------------------------------------
def episode_costs(
    con: Con, runs: Runs = None, *, facts: Facts | None = None, judge: str | None = None
) -> pd.DataFrame:
    """Per selected episode: recorded calls, tokens (input, cached, output, reasoning; cached and
    reasoning are subsets, never added again) and cost, for agent and memory-system calls, with
    the number of calls whose cost or usage was not recorded (A.4.4). Episodes without calls get
    zeros."""
    sql = f"""{_with(facts, "ep_calls")}
    SELECT * FROM ep_calls ORDER BY config, run_id, episode_id"""
    return _q(con, sql, runs, judge=judge)


def group_costs(
    con: Con,
    runs: Runs = None,
    level: Level = "config",
    *,
    facts: Facts | None = None,
    judge: str | None = None,
) -> pd.DataFrame:
    """Per group: episodes and summed recorded usage and cost of agent and memory-system calls."""
    cols = [f"{p}_{k}" for p in ("agent", "memory") for k in _CALL_SUMS]
    sums = ",\n".join(f"sum({c}) AS {c}" for c in cols)
    sql = f"""{_with(facts, "ep_calls")}
    SELECT config, {_run_col(level)} AS run_id, count(*) AS episodes, {sums}
    FROM ep_calls {_grp(level)} ORDER BY ALL"""
    return _q(con, sql, runs, judge=judge)


def judge_costs(
    con: Con,
    runs: Runs = None,
    level: Level = "config",
    *,
    facts: Facts | None = None,
    judge: str | None = None,
) -> pd.DataFrame:
    """Per group: judged spans (spans with at least one judge attempt), attempts, judge calls,
    tokens and cost summed over every attempt, including rejected and failed ones (A.4.4)."""
    sql = f"""{_with(facts, "span_cls")}
    SELECT sc.config, {_run_col(level, "sc.")} AS run_id,
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
    {_grp(level, "sc.")} ORDER BY ALL"""
    return _q(con, sql, runs, judge=judge)


def list_runs(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    """Runs with their configuration and episode counts (for scope pickers)."""
    return con.execute(
        """SELECT r.run_id, coalesce(r.config, r.run_id) AS config, r.label,
                  count(e.episode_id) AS episodes
           FROM runs r LEFT JOIN episodes e USING (run_id) GROUP BY ALL ORDER BY 2, 1"""
    ).df()
