"""Task outcomes: resolve rates across runs, the paired bootstrap over tasks, and gains and losses
against a baseline configuration (MemUse A.5.4).

An episode without a harness result has no outcome: it is left out of every resolve rate (the
rate divides by the tasks with an outcome), of the paired bootstrap and of gains and losses,
and is reported as `no_result` (unknown stays unknown: "—" when no episode has an outcome,
never 0%). Rates and comparisons count tasks: a run that recorded a task twice (a retry, a
second file of the task) attempted it once (`store.metrics.records._RUN_TASKS`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from ..rules.aggregates import bootstrap_mean_interval, sample_sd
from .models import Outcome

BOOTSTRAP_REPLICATES = 5000
"""Replicates of the paired bootstrap (A.5.4)."""
DEFAULT_SEED = 0


def resolve_rate(resolved: int, attempted: int, no_result: int) -> float | None:
    """Resolved / attempted with an outcome (tasks of a run); None when none has one."""
    known = attempted - no_result
    return resolved / known if known > 0 else None


def run_outcome(row: Any) -> Outcome:
    """Outcome of one run from its `run_outcomes` row: episode counts as recorded, the resolve
    rate over its tasks."""
    return Outcome(
        runs=1,
        episodes=int(row.episodes),
        resolved=int(row.resolved),
        no_result=int(row.no_result),
        repeated_tasks=int(row.repeated_tasks),
        resolve_rate=_run_rate(row),
    )


def _run_rate(row: Any) -> float | None:
    return resolve_rate(int(row.tasks_resolved), int(row.tasks), int(row.tasks_no_result))


def config_outcome(run_rows: pd.DataFrame) -> Outcome:
    """Outcome of a configuration from its per-run rows (`run_outcomes`): the mean ± sample sd of
    the resolve rates of its runs that have outcomes (Table 2: runs weigh alike, whatever their
    sizes); episode counts summed."""
    rates = [x for r in run_rows.itertuples() if (x := _run_rate(r)) is not None]
    return Outcome(
        runs=len(run_rows),
        episodes=int(run_rows.episodes.sum()),
        resolved=int(run_rows.resolved.sum()),
        no_result=int(run_rows.no_result.sum()),
        repeated_tasks=int(run_rows.repeated_tasks.sum()),
        resolve_rate=float(np.mean(rates)) if rates else None,
        resolve_rate_sd=sample_sd(rates),
    )


def task_means(outcomes: pd.DataFrame, config: str) -> pd.Series:
    """Per task of one configuration: mean outcome over its runs that have one (`task_outcomes`:
    one row per run and task); a task without any outcome is left out."""
    sub = outcomes[(outcomes.config == config) & outcomes.resolved.notna()]
    val = sub.resolved.astype(bool).astype(float).to_numpy()
    return pd.Series(val, index=sub.task_id.astype(str).to_numpy()).groupby(level=0).mean()


def paired_bootstrap(
    outcomes: pd.DataFrame,
    config: str,
    baseline: str,
    replicates: int = BOOTSTRAP_REPLICATES,
    seed: int = DEFAULT_SEED,
) -> tuple[float | None, float | None, float | None, int]:
    """Resolve-rate difference `config - baseline` and its paired bootstrap 95% interval.

    Tasks attempted by both configurations are resampled with replacement; each sampled task keeps
    all its runs' outcomes in both configurations. Each replicate's difference is the mean over the
    sampled tasks of (mean outcome over the config's runs - mean over the baseline's runs); the
    interval takes the 2.5th and 97.5th percentiles. Returns (diff, low, high, n_tasks); all None
    when no task is shared."""
    m = task_means(outcomes, config)
    b = task_means(outcomes, baseline)
    tasks = m.index.intersection(b.index)
    if len(tasks) == 0:
        return None, None, None, 0
    d = m.loc[tasks].to_numpy() - b.loc[tasks].to_numpy()
    diff, lo, hi = bootstrap_mean_interval(d, replicates, seed)
    return diff, lo, hi, len(d)


def gains_losses(pairs: pd.DataFrame, config: str, baseline: str) -> tuple[float | None, float | None, int]:
    """Mean gains and losses of `config` runs over `baseline` runs across all run pairs; for the
    baseline itself, across ordered pairs of distinct baseline runs (A.5.4)."""
    sel = pairs[(pairs.config_a == config) & (pairs.config_b == baseline)]
    if len(sel) == 0:
        return None, None, 0
    return float(sel.gains.mean()), float(sel.losses.mean()), len(sel)


def fill_comparison(
    out: Outcome,
    outcomes: pd.DataFrame,
    pairs: pd.DataFrame,
    config: str,
    baseline: str | None,
    replicates: int,
    seed: int,
) -> Outcome:
    """Add the baseline comparison to a configuration's outcome."""
    if baseline is None:
        return out
    out.baseline = baseline
    g, lo_, n_pairs = gains_losses(pairs, config, baseline)
    out.gains, out.losses, out.run_pairs = g, lo_, n_pairs
    if config != baseline:
        diff, lo, hi, n = paired_bootstrap(outcomes, config, baseline, replicates, seed)
        out.diff, out.diff_ci_low, out.diff_ci_high, out.paired_tasks = diff, lo, hi, n
        if diff is not None and math.isnan(diff):
            out.diff = None
    return out
