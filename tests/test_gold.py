"""The gold set (tests/gold/README.md): hand-written episodes, each from one sentence or rule of
the MemUse paper, with the expected signals, usage and triage labels.

(a) every case goes through the normal path (event log -> `memuse ingest` -> `memuse build`) into a
    real DuckDB file, and the span grouping, credit windows and eligibility the paper fixes are
    checked (3.3, A.1.4, A.1.5);
(b) the offline rules judge (`memuse judge --judge rules`) is compared with every expected signal,
    usage label and triage label;
(c) the LLM judge loop, against the scripted OpenAI-compatible server, must accept a correct answer:
    the scripted judge reads what Table 5 requires for its claims and submits the gold answer; the
    stored assessments must equal the expected ones, accepted without a follow-up.

Disagreements that exist today are recorded, exactly, in tests/gold/known_failures.json: such a
case is reported as xfail with its list; any new disagreement, or a recorded one that disappeared,
fails the test (update the record, never the expectation). Set MEMUSE_GOLD_STRICT=1 to make every
recorded disagreement fail outright.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from gold.harness import (
    Case,
    cli,
    expected_problems,
    ingest,
    judgment_log,
    known_failures,
    load_cases,
    loop_problems,
    rule_verdicts,
    run_scripted_llm,
    signal_mismatches,
    spans,
    stored_assessments,
    structure_mismatches,
    write_log,
)

CASES = load_cases()
BY_NAME = {c.name: c for c in CASES}
JUDGED = [c for c in CASES if c.judged()]


def _check(kind: str, case: Case, mismatches: list[str]) -> None:
    """Pass when there is no disagreement; xfail when it is exactly the recorded one; else fail."""
    known = known_failures(kind, case.name)
    if not mismatches and not known:
        return
    new = [m for m in mismatches if m not in known]
    gone = [k for k in known if k not in mismatches]
    if new or gone:
        pytest.fail(
            f"{kind} disagreements of {case.name} changed; update tests/gold/known_failures.json "
            f"(never the expectation).\n  new: {new}\n  no longer seen: {gone}"
        )
    if os.environ.get("MEMUSE_GOLD_STRICT") == "1":
        pytest.fail(f"{kind} disagrees with the gold set on {case.name}:\n  " + "\n  ".join(mismatches))
    pytest.xfail(f"recorded {kind} disagreement: " + "; ".join(mismatches))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """All cases ingested and built into one fresh DuckDB file (one episode per case)."""
    d = tmp_path_factory.mktemp("gold")
    db = d / "gold.duckdb"
    ingest(db, write_log(CASES, d / "gold.jsonl"))
    return db


def _copy(db: Path, name: str) -> Path:
    out = db.with_name(name)
    shutil.copy(db, out)
    return out


@pytest.fixture(scope="module")
def rules_judged(built: Path) -> tuple[dict, dict]:
    db = _copy(built, "rules.duckdb")
    cli("judge", "--db", str(db), "--judge", "rules")
    return stored_assessments(db, "rules"), rule_verdicts(db)


@pytest.fixture(scope="module")
def llm_judged(built: Path) -> tuple[dict, dict]:
    db = _copy(built, "llm.duckdb")
    run_scripted_llm(db, JUDGED)
    return stored_assessments(db, "llm"), judgment_log(db, "llm")


def test_the_gold_set_has_the_cases_the_paper_asks_for() -> None:
    """The cases the paper's rules need: Figure 2, Table 4 with its three prior records, each A.2.2 allocation
    rule, redundant / confirming / novel, a generic test pass, a revert for an unrelated cause,
    preview then full read, delayed use, harmful then repaired, and the misleading cues."""
    required = {
        "fig2_credit_windows",
        "table4_a_no_prior_record",
        "table4_b_prior_plan",
        "table4_c_open_hypothesis",
        "alloc1_other_item_competes",
        "alloc2_wider_takeover",
        "alloc3_anchor_outside_window",
        "novelty_redundant",
        "novelty_confirming",
        "novelty_novel",
        "effect_generic_test_pass",
        "effect_revert_unrelated_cause",
        "preview_then_full_read",
        "delayed_use",
        "effect_harmful_then_repaired",
        "same_step_copies",
        "unknown_exposure",
        "referenced_mention_without_use",
        "hint_in_task",
    }
    assert required <= set(BY_NAME), required - set(BY_NAME)
    assert len(CASES) >= 20
    episodes = [c.episode_id for c in CASES]
    assert len(set(episodes)) == len(episodes)


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_expected_file_is_consistent_with_the_paper_rules(name: str) -> None:
    """Usage labels follow 3.5 from influence and effect, triage follows Eq. (2), anchors follow
    3.5's evidence checks, every "any" names why and what the scripted judge submits."""
    assert expected_problems(BY_NAME[name]) == []


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_structure_follows_the_paper(built: Path, name: str) -> None:
    case = BY_NAME[name]
    _check("structure", case, structure_mismatches(case, spans(built, case.episode_id)))


@pytest.mark.parametrize("name", [c.name for c in JUDGED])
def test_rules_judge_matches_the_gold_set(rules_judged: tuple[dict, dict], name: str) -> None:
    got, rule = rules_judged
    case = BY_NAME[name]
    mismatches = signal_mismatches(case, got)
    for sid in case.expected.get("auto_neutral", []):
        if rule.get(sid) != "neutral":
            mismatches.append(f"{sid} automatic triage: expected neutral, got {rule.get(sid)}")
    _check("rules", case, mismatches)


@pytest.mark.parametrize("name", [c.name for c in JUDGED])
def test_llm_loop_accepts_the_gold_answer(llm_judged: tuple[dict, dict], name: str) -> None:
    got, log = llm_judged
    case = BY_NAME[name]
    mismatches = signal_mismatches(case, got, anchors=True) + loop_problems(case, log)
    _check("llm", case, mismatches)


def test_the_scripted_judge_must_read_before_its_answer_is_accepted(built: Path) -> None:
    """Guard against a vacuous (c): the same gold answers given without the reads Table 5 requires
    (prior sources for acted on, the window for none, window to episode end for an effect) are
    rejected with an incomplete-read violation first."""
    cases = [
        BY_NAME[n] for n in ("table4_a_no_prior_record", "novelty_novel", "referenced_mention_without_use")
    ]
    db = _copy(built, "llm-noread.duckdb")
    ids = [s["span"] for c in cases for s in c.judged()]
    run_scripted_llm(db, cases, read=False, span_ids=ids)
    log = judgment_log(db, "llm")
    for sid in ids:
        first = log[sid]["attempts"][0]
        assert not first["accepted"], sid
        kinds = {v.get("kind") for v in first["violations"]}
        assert kinds & {"incomplete_read", "unread_anchor"}, (sid, first["violations"])
