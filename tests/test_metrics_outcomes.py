"""Task outcomes (MemUse A.5.4): resolve rate mean ± sample sd across runs, the paired bootstrap over
tasks (seeded, reproducible) and gains/losses averaged over run pairs, on the hand-built corpus.

Resolved tasks: m1 {t1, t4} (t3 has no harness result: no outcome, left out of every rate, the
bootstrap and gains/losses), m2 {t1, t2, t3}, b1 {t1, t4}, b2 {t1, t2}.
"""

from __future__ import annotations

import math
from pathlib import Path
from types import SimpleNamespace

import duckdb
import numpy as np
import pandas as pd
import pytest
from test_metrics_corpus import Corpus, corpus_con, corpus_db  # noqa: F401  (fixtures)

from memuse_core.metrics import build_report, paired_bootstrap
from memuse_core.metrics.render import render_markdown
from memuse_core.metrics.tables import outcomes_table
from memuse_core.store import connect

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


def _run_row(episodes: int, resolved: int, no_result: int) -> SimpleNamespace:
    """A `run_outcomes` row of a run that recorded each task once."""
    return SimpleNamespace(
        episodes=episodes,
        resolved=resolved,
        no_result=no_result,
        tasks=episodes,
        tasks_resolved=resolved,
        tasks_no_result=no_result,
        repeated_tasks=0,
    )


def test_run_without_any_outcome_has_no_rate() -> None:
    from memuse_core.metrics.outcomes import run_outcome

    o = run_outcome(_run_row(episodes=50, resolved=0, no_result=50))
    assert o.resolve_rate is None and o.no_result == 50
    assert run_outcome(_run_row(episodes=4, resolved=1, no_result=2)).resolve_rate == approx(0.5)


@pytest.fixture
def repeats_con(tmp_path: Path):
    """Run r (config mem) recorded task t1 twice (a retry: both episodes carry the harness outcome
    of the task, resolved) and t2 once (not resolved); run b (base) failed both; run n (config
    none) has no outcomes at all."""
    db = tmp_path / "repeats.duckdb"
    con = connect(db)
    c = Corpus(con)
    for run, cfg in (("r", "mem"), ("b", "base"), ("n", "none")):
        c.run(run, cfg)
    c.episode("r/t1", "r", "t1", 0, "A", True)
    c.episode("r/t1~2", "r", "t1", 0, "A", True)
    c.episode("r/t2", "r", "t2", 1, "A", False)
    c.episode("b/t1", "b", "t1", 0, "A", False)
    c.episode("b/t2", "b", "t2", 1, "A", False)
    c.episode("n/t1", "n", "t1", 0, "A", None)
    c.episode("n/t2", "n", "t2", 1, "A", None)
    con.close()
    con = connect(db, read_only=True)
    yield con
    con.close()


def test_a_task_recorded_twice_in_a_run_counts_once(repeats_con: duckdb.DuckDBPyConnection) -> None:
    """A.5.4 counts tasks: the resolve rate of r is 1 of 2 tasks (not 2 of 3 episodes), its gains
    over b are the one task t1 (the set difference of resolved-task lists), and the report says
    the task was recorded twice."""
    rep = build_report(repeats_con, baseline="base")
    m = rep.configs["mem"].outcome
    assert m.episodes == 3 and m.resolved == 2  # episode counts as recorded
    assert m.resolve_rate == approx(0.5)
    assert m.repeated_tasks == 1
    assert (m.gains, m.losses, m.run_pairs) == (approx(1.0), approx(0.0), 1)
    assert m.diff == approx(0.5)  # t1: 1 - 0, t2: 0 - 0
    assert "1 task was recorded in more than one episode of its run" in render_markdown(rep)
    # per run, the comparison is not repeated: the table says where it is
    assert "it is in the `--by config` table" in render_markdown(rep, "run")
    assert "it is in the `--by config` table" not in render_markdown(rep, "config")


def test_a_config_without_outcomes_has_no_comparison(repeats_con: duckdb.DuckDBPyConnection) -> None:
    """Run pairs need a task with an outcome in both runs: n shares t1 and t2 with b but knows no
    outcome, so its gains, losses and difference are unknown ("—"), never 0, and it has no pair."""
    rep = build_report(repeats_con, baseline="base")
    n = rep.configs["none"].outcome
    assert n.resolve_rate is None
    assert (n.gains, n.losses, n.run_pairs) == (None, None, 0)
    assert n.diff is None and n.paired_tasks == 0
    row = outcomes_table(rep).set_index("config").loc["none"]
    assert pd.isna(row["gains"]) and pd.isna(row["losses"]) and row["run pairs"] == 0


def test_unknown_baseline_is_a_clear_error(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    with pytest.raises(ValueError, match="baseline configuration 'nope'"):
        build_report(corpus_con, baseline="nope")
