"""CONSISTENCY CHECK, not validity: the rules judge against the demo corpus's planted truth. On a
small demo corpus, influence agrees with the planted acted_on / none labels on at least 90% of
those entries, and planted acted_on entries the judge finds are anchored at their planted step.
The generator plants the cues the rules judge reads and misleading ones beside them, so
agreement here shows the two are consistent, not that the judge is right; the gold set (tests/gold/)
measures that."""

from __future__ import annotations

from memuse_core import demo
from memuse_core.judge.agreement import planted_agreement
from memuse_core.judge.result import JudgeSettings
from memuse_core.judge.runner import run_batch


def test_rules_judge_agrees_with_planted_influence(tmp_path):
    db = tmp_path / "demo.duckdb"
    demo.build_demo(db, demo.DemoPlan(episodes=16, seed=3, mean_steps=20), build_context=True)
    summary = run_batch(db, JudgeSettings(judge="rules"))
    assert summary.judged > 10 and summary.accepted == summary.judged
    agree = {a.signal: a for a in planted_agreement(db, "rules")}
    key = agree["influence (planted acted_on vs none)"]
    assert key.n >= 20 and key.rate >= 0.9, key
    if "anchor hit (planted acted_on)" in agree:
        assert agree["anchor hit (planted acted_on)"].rate >= 0.8
