"""Aggregate statistics on the hand-built corpus of test_metrics_corpus.py (MemUse 3.5, A.4.1-A.4.2,
A.6.3, A.6.5, A.6.6, A.4.4). Every expected value is worked out by hand from the corpus listing;
every statistic with an empty denominator must be None, never 0.
"""

from __future__ import annotations

import duckdb
import pytest
from test_metrics_corpus import corpus_con, corpus_db  # noqa: F401  (fixtures)

from memuse_core.metrics import build_report, group_stats, overview_frame
from memuse_core.store import connect

approx = pytest.approx


@pytest.fixture(scope="module")
def report(corpus_db):  # noqa: F811
    con = connect(corpus_db, read_only=True)
    try:
        return build_report(con, baseline="base")
    finally:
        con.close()


def test_profile_means_weight_each_profiled_span_equally(report) -> None:
    """Profiled spans S1, S3, S8, S9. Relevance 0.5, 0.5, 0, 1 -> 0.5; harm 0, 0.5, 0, 1 -> 0.375."""
    m = report.configs["mem"]
    assert m.profiled_spans == 4
    p = m.profile
    assert p.relevance == approx((0.5 + 0.5 + 0 + 1) / 4)
    assert p.corroboration == approx((0.25 + 0.5 + 0 + 1) / 4)
    assert p.information_gain == approx((0.25 + 0.5 + 0 + 1) / 4)
    assert p.acted_on == approx((0.25 + 1 + 0 + 1) / 4)
    assert p.benefit == approx(0.25 / 4)
    assert p.harm == approx(1.5 / 4)
    u = m.uncertainty
    assert u.uncontradicted == approx(0.25 / 4)  # S1's c2
    assert u.novelty_undetermined == approx(0.0)  # c5 is irrelevant, so not counted
    assert u.influence_undetermined == approx(0.25 / 4)  # S1's c4
    assert u.effect_undetermined == approx(0.5 / 4)  # S3's c5
    c = m.counts
    assert (c.entries, c.relevance, c.acted_on, c.benefit, c.harm) == (8, 4, 4, 1, 2)


def test_yields_and_token_efficiency(report) -> None:
    """1 beneficial and 2 harmful entries over 4 profiled spans; efficiency divides by all 540
    estimated tokens of the config, including the auto-neutral copy and error/unjudged spans."""
    m = report.configs["mem"]
    assert m.yields.benefit == approx(100 * 1 / 4)
    assert m.yields.harm == approx(100 * 2 / 4)
    assert m.est_tokens == 540
    assert m.token_efficiency == approx(1e6 * 1 / 540)
    assert m.est_tokens_by_class["neutral"] == 300 + 15
    assert m.est_tokens_by_class["error"] == 20
    assert m.est_tokens_by_class["unjudged"] == 10


def test_triage_counts_and_rates(report) -> None:
    """N_triage = 1 positive + 2 negative + 2 neutral (S8 and the auto-neutral S2) + 0 unresolved;
    error (S4), unjudged (S5), empty (S6) and unassessable (S7) stay outside it."""
    m = report.configs["mem"]
    t = m.triage
    assert (t.positive, t.negative, t.neutral, t.unresolved) == (1, 2, 2, 0)
    assert (t.error, t.unjudged, t.empty, t.unassessable) == (1, 1, 1, 1)
    assert m.auto_neutral == 1
    assert m.n_triage == 5
    assert m.triage_rates.negative == approx(2 / 5)
    assert m.triage_rates.neutral == approx(2 / 5)
    assert m.triage_rates.unresolved == approx(0.0)


def test_episode_coverage_counts_episodes_without_deliveries(report) -> None:
    """E = 8 (m1 and m2 episodes, six of them without a profiled span): relevant m1e1, m1e2, m2e1;
    beneficial m1e1; harmful m1e2, m2e1."""
    c = report.configs["mem"].coverage
    assert c.episodes == 8
    assert c.with_deliveries == 4
    assert c.profiled == approx(4 / 8)
    assert c.relevant == approx(3 / 8)
    assert c.beneficial == approx(1 / 8)
    assert c.harmful == approx(2 / 8)


def test_recurring_items_are_decided_within_each_run(report) -> None:
    """E = 4 per run, so the threshold is max(2, 0.4) = 2 episodes. c1 reaches m1e1 and m1e2 in m1
    (recurring) but only m2e1 in m2. Relevant entries: c1, c2 (S1), c1 (S3), c1 (S9): 2 of 4 from
    recurring items; without them only m1e1 (c2) and m2e1 (c1, not recurring in m2) remain."""
    r = report.configs["mem"].recurring
    assert r.recurring_items == 1
    assert (r.relevant_entries, r.relevant_from_recurring) == (4, 2)
    assert r.share_from_recurring == approx(0.5)
    assert r.relevance_coverage_without == approx(2 / 8)
    m1 = report.configs["mem"].runs["m1"].recurring
    assert m1.share_from_recurring == approx(2 / 3)
    assert m1.relevance_coverage_without == approx(1 / 4)


def test_delivery_forms_allocate_span_tokens_by_exposed_characters(report) -> None:
    """S3 (50 tokens) splits 30:10 between c1 (search_preview) and c5 (per-entry form persona):
    37.5 and 12.5 tokens. The auto-neutral S2 is the copy row with tokens and no judged entries."""
    forms = {(f.form, f.route): f for f in report.configs["mem"].forms}
    assert forms[("search_preview", "agent")].tokens == approx(37.5 + 20)
    assert forms[("persona", "agent")].tokens == approx(12.5)
    assert forms[("full_card", "agent")].tokens == approx(100 + 10 + 0 + 15 + 40)
    copy = forms[("copy of visible entries", "host")]
    assert copy.token_share == approx(300 / 540)
    assert copy.judged == 0 and copy.relevant_rate is None and copy.beneficial_share == 0.0
    full = forms[("full_card", "agent")]
    assert full.judged == 6
    assert full.relevant_rate == approx(3 / 6)
    assert full.acted_on_rate == approx(2 / 6)
    assert full.harmful_rate == approx(1 / 6)
    assert full.beneficial_share == approx(1.0)
    assert sum(f.token_share for f in forms.values()) == approx(1.0)


def test_use_effects_delays_and_unused_entries(report) -> None:
    """Acted on: c1 (S1 improved), c1 (S3 harmed), c5 (S3 undetermined), c1 (S9 harmed).
    Delays: S1 anchor 3 vs first step 2 (later), S3 c1 anchor 10 vs 4 (6 later, >= 5)."""
    u = report.configs["mem"].use
    assert (u.acted_on, u.improved, u.harmed, u.no_effect, u.effect_undetermined) == (4, 1, 2, 0, 1)
    assert u.harmed_share == approx(0.5)
    assert u.effect_undetermined_share == approx(0.25)
    assert (u.anchored, u.delayed, u.delayed_5) == (4, 2, 1)
    assert u.delayed_share == approx(0.5) and u.delayed_5_share == approx(0.25)
    assert (u.ignored, u.ignored_irrelevant, u.unused_relevant, u.unused_redundant) == (3, 2, 1, 1)
    assert u.unused_relevant_share == approx(1 / 4)
    assert u.unused_novel_share == approx(0.0)
    assert u.influence_undetermined == 1
    assert (u.episodes_beneficial_resolved, u.episodes_beneficial_failed) == (1, 0)
    assert (u.episodes_harmful_resolved, u.episodes_harmful_failed) == (1, 1)


def test_memory_histories_trace_origins(report) -> None:
    """c1 helped in S1 (v1, created with no origin episode: unobserved); harmed in S3 (v2, written
    in m1e1 of repo A, used in m1e2 of repo B: gap 1, source resolved) and in S9 (run m2 has no
    record: unobserved). c1 harmed in both runs."""
    h = report.configs["mem"].histories
    assert (h.benefit.entries, h.benefit.unobserved, h.benefit.earlier_same_run) == (1, 1, 0)
    assert (h.harm.entries, h.harm.earlier_same_run, h.harm.unobserved) == (2, 1, 1)
    assert (h.harm.other_repo, h.harm.same_repo) == (1, 0)
    assert h.harm.gap_median == 1 and h.harm.gap_min == 1
    assert (h.harm.source_resolved, h.harm.source_failed) == (1, 0)
    assert h.harm.source_failed_share == approx(0.0)
    assert h.benefit.gap_median is None and h.benefit.source_failed_share is None
    assert h.items_harmed_several_runs == ["cards/c1"]
    (item,) = report.configs["mem"].harmful_items
    assert (item.item_id, item.harmful, item.beneficial, item.runs_harmful) == ("c1", 2, 1, 2)
    assert item.harmed_tasks == ["t1", "t2"]


def test_cost_agent_and_memory_calls(report) -> None:
    """Agent: 3 calls, input 1000+2000+500, cost 0.01+0.02 (+ one unknown); memory and embedding:
    input 300+50, cost 0.001 (+ one unknown). Per episode over all E = 8. Judge: 6 attempts on 5
    spans cost 0.05+0.02+0.03+0.01+0+0.04 = 0.15."""
    c = report.configs["mem"].cost
    assert (c.agent_calls, c.agent_input, c.agent_cached, c.agent_output, c.agent_reasoning) == (
        3,
        3500,
        1400,
        350,
        50,
    )
    assert c.agent_cost == approx(0.03) and c.agent_cost_unknown == 1
    assert (c.memory_calls, c.memory_input, c.memory_output) == (2, 350, 30)
    assert c.memory_cost == approx(0.001) and c.memory_cost_unknown == 1
    assert c.agent_cost_per_episode == approx(0.03 / 8)
    assert c.memory_cost_per_episode == approx(0.001 / 8)
    assert (c.judged_spans, c.judge_attempts) == (5, 6)
    assert c.judge_cost_per_span == approx(0.15 / 5)
    assert c.judges == "rules"


def test_empty_denominators_are_undefined(report) -> None:
    """The baseline config has episodes but no spans: shares, yields, efficiency, triage rates and
    judge cost per span are undefined; coverage (E = 8) is a defined 0."""
    b = report.configs["base"]
    assert b.profiled_spans == 0
    assert all(v is None for v in b.profile.model_dump().values())
    assert all(v is None for v in b.uncertainty.model_dump().values())
    assert b.yields.benefit is None and b.yields.harm is None
    assert b.token_efficiency is None
    assert all(v is None for v in b.triage_rates.model_dump().values())
    assert b.use.improved_share is None and b.use.delayed_share is None
    assert b.cost.judge_cost_per_span is None
    assert b.coverage.relevant == 0.0
    assert b.recurring.share_from_recurring is None


def test_run_selection_and_per_run_level(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    """Scope m2 only: one profiled span (S9), relevance 1, harm 1; E = 4."""
    stats = group_stats(corpus_con, ["m2"], "run", details=False)
    assert list(stats) == [("mem", "m2")]
    g = stats[("mem", "m2")]
    assert g.profiled_spans == 1 and g.profile.harm == approx(1.0) and g.coverage.episodes == 4
    assert g.token_efficiency == approx(0.0)


def test_overview_frame_rows(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    df = overview_frame(corpus_con)
    assert list(df.config) == ["base", "mem"]
    row = df[df.config == "mem"].iloc[0]
    assert row.relevance == approx(0.5) and row.n_triage == 5
    assert df[df.config == "base"].iloc[0].relevance is None or df[df.config == "base"].relevance.isna().all()


def test_both_levels_in_one_pass_equal_separate_levels(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    """Grouping sets give the same per-config and per-run statistics as two separate passes, and
    the temp tables of the shared building blocks are gone afterwards."""
    both = group_stats(corpus_con, None, "both")
    sep = group_stats(corpus_con, None, "config") | group_stats(corpus_con, None, "run")
    assert (
        set(both)
        == set(sep)
        == {("mem", None), ("base", None), ("mem", "m1"), ("mem", "m2"), ("base", "b1"), ("base", "b2")}
    )
    for k in both:
        assert both[k].model_dump() == sep[k].model_dump(), k
    temps = corpus_con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name LIKE 'mu_%'"
    ).fetchone()[0]
    assert temps == 0


def test_row_level_frames_for_drill_downs(corpus_con: duckdb.DuckDBPyConnection) -> None:  # noqa: F811
    """episode_costs: one row per selected episode (zeros without calls); recurring_items: c1 in
    run m1 only (2 of 4 episodes >= max(2, 0.4)); effect_origins: the three effect entries."""
    from memuse_core.metrics import effect_origins, episode_costs, recurring_items

    ec = episode_costs(corpus_con, ["m1"])
    assert len(ec) == 4
    row = ec[ec.episode_id == "m1e1"].iloc[0]
    assert (row.agent_calls, row.agent_input, row.memory_calls, row.memory_cost_unknown) == (2, 3000, 2, 1)
    assert int(ec[ec.episode_id == "m1e3"].iloc[0].agent_calls) == 0
    rec = recurring_items(corpus_con)
    assert list(zip(rec.run_id, rec.item_id, rec.episodes)) == [("m1", "c1", 2)]
    eo = effect_origins(corpus_con)
    assert sorted(zip(eo.span_id, eo.effect, eo.origin)) == [
        ("S1", "benefit", "unobserved"),
        ("S3", "harm", "earlier_same_run"),
        ("S9", "harm", "unobserved"),
    ]
