"""The outcome class of a span (MemUse A.4.1) is decided once and stored; every reader agrees.

A.4.1: "unjudged spans were pending ...; error spans failed recording checks, preflight, or judge
execution." A judge error on an eligible span is therefore an `error` span, outside N_triage, on
the aggregates, in the drill-down, in the outcome counts and on the span itself; an accepted
answer afterwards makes it the verdict's triage label everywhere.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from memuse_core.build import build_store
from memuse_core.judge.examples import acted_on_episode, write_store
from memuse_core.judge.runner import judge_span
from memuse_core.metrics import group_stats
from memuse_core.rules.judgment import JudgmentResult
from memuse_core.rules.outcome import is_profiled, outcome_class
from memuse_core.store import connect
from memuse_core.store.app import episodes as QE
from memuse_core.store.app import outcomes as QO
from memuse_core.store.app import spans as QS
from memuse_core.store.judging import eligible_span_ids, resolve_judge, write_results
from memuse_core.vocab import OUTCOME_CLASSES


@pytest.mark.parametrize(
    "status, triage, failed, expected",
    [
        ("eligible", None, False, "unjudged"),  # pending
        ("eligible", None, True, "error"),  # a judge attempt failed (A.4.1)
        ("eligible", "positive", True, "positive"),  # a later accepted answer wins
        ("eligible", "negative", False, "negative"),
        ("eligible", "unresolved", False, "unresolved"),
        ("eligible", "neutral", False, "neutral"),
        ("eligible", "error", False, "error"),
        ("error", None, False, "error"),  # failed recording checks (3.3)
        ("error", "positive", False, "error"),
        ("empty", None, False, "empty"),
        ("unassessable", None, True, "unassessable"),
        ("auto_neutral", None, False, "neutral"),  # automatic neutral label, in N_0 (A.4.1)
        ("auto_neutral", "neutral", False, "neutral"),
    ],
)
def test_outcome_class_rule(status: str, triage: str | None, failed: bool, expected: str) -> None:
    assert outcome_class(status, triage, failed) == expected
    assert expected in OUTCOME_CLASSES


def test_profiled_needs_an_assessed_nonempty_judged_span() -> None:
    """A.4.2 "Profiled spans": a profile requires a nonempty span and an accepted assessment of
    every entry; automatic neutral, error, empty and unassessable spans keep only their volume."""
    assert is_profiled("eligible", "positive", True, 3)
    assert not is_profiled("eligible", "positive", True, 0)
    assert not is_profiled("eligible", "positive", False, 3)
    assert not is_profiled("eligible", None, None, None)
    assert not is_profiled("auto_neutral", "neutral", True, 2)
    assert not is_profiled("error", "positive", True, 2)
    assert not is_profiled("eligible", "error", True, 2)


def _everywhere(db: Path, span_id: str, judge: str | None = None) -> dict[str, object]:
    """The outcome of one span as every reader sees it for one judge (None: the default judge)."""
    con = connect(db, read_only=True)
    try:
        stats = next(iter(group_stats(con, details=False, judge=judge).values()))
        counts = QO.outcome_counts(con, judge=judge)
        shown = resolve_judge(con, judge)
        return {
            "stored": con.execute(
                "SELECT outcome FROM span_outcomes WHERE span_id = ? AND judge = ?", [span_id, shown]
            ).fetchall()[0][0],
            "span_row": QS.span_row(con, span_id, judge)["outcome"],  # type: ignore[index]
            "episode_spans": QE.episode_spans(con, span_id.split("/")[0], judge)
            .set_index("span_id")
            .outcome[span_id],
            "drill_down": set(QO.outcome_spans(con, outcome="error", judge=judge).span_id),
            "counts": dict(zip(counts.outcome, counts.spans, strict=True)),
            "aggregate_error": stats.triage.error,
            "aggregate_unjudged": stats.triage.unjudged,
            "n_triage": stats.n_triage,
        }
    finally:
        con.close()


def test_a_judge_error_is_an_error_span_for_every_reader(tmp_path: Path) -> None:
    db = write_store(tmp_path, [acted_on_episode("e1")])
    con = connect(db)
    try:
        ((span_id, episode_id),) = eligible_span_ids(con)
        write_results(
            con,
            [
                JudgmentResult(
                    span_id=span_id,
                    episode_id=episode_id,
                    judge="llm",
                    status="error",
                    reason="judge_failure: scripted",
                    ended_at=time.time(),
                )
            ],
        )
    finally:
        con.close()
    seen = _everywhere(db, span_id, "llm")
    assert seen["stored"] == seen["span_row"] == seen["episode_spans"] == "error"
    assert seen["drill_down"] == {span_id}  # the Overview's "error" link finds it
    assert seen["counts"].get("error") == 1 and "unjudged" not in seen["counts"]
    assert seen["aggregate_error"] == 1 and seen["aggregate_unjudged"] == 0 and seen["n_triage"] == 0
    # verdicts and classes are kept per judge: the rules judge has not judged the span yet
    seen = _everywhere(db, span_id, "rules")
    assert seen["stored"] == seen["span_row"] == seen["episode_spans"] == "unjudged"
    assert seen["drill_down"] == set() and seen["aggregate_unjudged"] == 1

    # an accepted rules answer later: its triage label for every rules reader (and the default,
    # since no LLM verdict exists), it survives a rebuild; the LLM judge's view keeps its error
    res = judge_span(db, span_id, judge="rules")
    assert res.status == "accepted" and res.verdict is not None
    for _ in range(2):
        for judge in ("rules", None):
            seen = _everywhere(db, span_id, judge)
            assert seen["stored"] == seen["span_row"] == seen["episode_spans"] == res.verdict.triage
            assert seen["drill_down"] == set() and seen["aggregate_error"] == 0 and seen["n_triage"] == 1
        assert _everywhere(db, span_id, "llm")["span_row"] == "error"
        build_store(db, rebuild=True)
