"""Task outcomes (MemUse A.5.4): resolve rate mean ± sample sd across runs, the paired bootstrap over
tasks (seeded, reproducible) and gains/losses averaged over run pairs, on the hand-built corpus.

Resolved tasks: m1 {t1, t4} (t3 has no harness result: no outcome, left out of every rate, the
bootstrap and gains/losses), m2 {t1, t2, t3}, b1 {t1, t4}, b2 {t1, t2}.
"""

from __future__ import annotations

import math

import duckdb
import numpy as np
import pandas as pd
import pytest
from test_metrics_corpus import corpus_con, corpus_db  # noqa: F401  (fixtures)

from memuse_core.metrics import build_report, paired_bootstrap

approx = pytest.approx


def test_resolve_rate_mean_and_sample_sd(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    rep = build_report(corpus_con, baseline="base")
    o = rep.configs["mem"].outcome
    # m1: 2 resolved of the 3 episodes with an outcome (t3 is unknown, not unresolved); m2: 3 of 4
    m1, m2 = 2 / 3, 0.75
    mean = (m1 + m2) / 2
    assert rep.configs["mem"].runs["m1"].outcome.resolve_rate == approx(m1)
    assert o.resolve_rate == approx(mean)
    assert o.resolve_rate_sd == approx(math.sqrt(((m1 - mean) ** 2 + (m2 - mean) ** 2) / 1))
    assert o.no_result == 1
    assert rep.configs["mem"].runs["m1"].outcome.resolve_rate_sd is None  # one run: undefined


def test_paired_bootstrap_interval_by_hand(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    """Per-task differences (mean over the memory runs with an outcome - mean of 2 baseline runs):
    t1 0, t2 0, t3 1 (m1 has no outcome, m2 resolved; baseline 0), t4 0 -> difference 0.25. A
    replicate's mean is 0.25 x (copies of t3 among 4 draws): P(no t3) = 0.75^4 = 32% > 2.5%, so
    the low end is 0; P(>= 3 copies) = 5.1% > 2.5% while P(4 copies) = 0.4%, so the high end is
    3 x 0.25 = 0.75."""
    o = build_report(corpus_con, baseline="base").configs["mem"].outcome
    assert o.diff == approx(0.25)
    assert o.diff_ci_low == approx(0.0)
    assert o.diff_ci_high == approx(0.75)
    assert o.paired_tasks == 4


def test_gains_and_losses_average_over_run_pairs(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    """Pairs (m1,b1) 0/0, (m1,b2) 1/1, (m2,b1) 2/1, (m2,b2) 1/0 -> gains 1.0, losses 0.5.
    Baseline: ordered pairs (b1,b2) and (b2,b1), each 1 gain and 1 loss."""
    rep = build_report(corpus_con, baseline="base")
    m, b = rep.configs["mem"].outcome, rep.configs["base"].outcome
    assert (m.gains, m.losses, m.run_pairs) == (approx(1.0), approx(0.5), 4)
    assert (b.gains, b.losses, b.run_pairs) == (approx(1.0), approx(1.0), 2)
    assert b.diff is None  # the baseline is the reference


def _random_outcomes(n_tasks: int, rates: dict[str, float], seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for cfg, p in rates.items():
        for r in range(4):
            for t in range(n_tasks):
                rows.append((cfg, f"{cfg}{r}", f"t{t}", f"{cfg}{r}-{t}", bool(rng.random() < p)))
    return pd.DataFrame(rows, columns=["config", "run_id", "task_id", "episode_id", "resolved"])


def test_bootstrap_is_reproducible_with_a_seed() -> None:
    df = _random_outcomes(200, {"mem": 0.7, "base": 0.65}, seed=3)
    a = paired_bootstrap(df, "mem", "base", 5000, seed=11)
    b = paired_bootstrap(df, "mem", "base", 5000, seed=11)
    c = paired_bootstrap(df, "mem", "base", 5000, seed=12)
    assert a == b
    assert a[1:3] != c[1:3]
    assert a[1] < a[0] < a[2]
    # the point estimate is the plain difference of pooled resolve rates
    rates = df.groupby("config").resolved.mean()
    assert a[0] == approx(rates["mem"] - rates["base"])


def test_bootstrap_without_shared_tasks_is_undefined() -> None:
    df = pd.DataFrame(
        [("mem", "m", "t1", "e1", True), ("base", "b", "t2", "e2", False)],
        columns=["config", "run_id", "task_id", "episode_id", "resolved"],
    )
    assert paired_bootstrap(df, "mem", "base") == (None, None, None, 0)


def test_tasks_without_outcome_are_left_out_of_the_bootstrap() -> None:
    """A task whose outcome is unknown in one configuration is not a paired task; unknown is not
    "unresolved"."""
    df = pd.DataFrame(
        [
            ("mem", "m", "t1", "e1", True),
            ("mem", "m", "t2", "e2", None),
            ("base", "b", "t1", "e3", True),
            ("base", "b", "t2", "e4", True),
        ],
        columns=["config", "run_id", "task_id", "episode_id", "resolved"],
    )
    diff, lo, hi, n = paired_bootstrap(df, "mem", "base", 200, seed=1)
    assert (diff, lo, hi, n) == (0.0, 0.0, 0.0, 1)


def test_run_without_any_outcome_has_no_rate() -> None:
    from memuse_core.metrics.outcomes import run_outcome

    o = run_outcome(episodes=50, resolved=0, no_result=50)
    assert o.resolve_rate is None and o.no_result == 50
    assert run_outcome(episodes=4, resolved=1, no_result=2).resolve_rate == approx(0.5)


def test_unknown_baseline_is_a_clear_error(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    with pytest.raises(ValueError, match="baseline configuration 'nope'"):
        build_report(corpus_con, baseline="nope")
