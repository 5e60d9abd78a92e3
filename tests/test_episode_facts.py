"""Episode view data: reasoning text beside each response, exit status and outcome
per episode, and "no memory was delivered" told apart from "not built".

Invariants: every reasoning shape (DeepSeek `reasoning_content`, LiteLLM `thinking_blocks`,
Anthropic thinking content blocks, Responses-API reasoning summaries) is stored with the response
and comes back for its step; an episode without any delivery is `none_delivered` whether or not
the context was built; one with deliveries is `not_built` until `memuse build`, then `built`.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest
from realruns_helpers import harness_report, mini_batch, mini_traj, openhands_batch, write_json

from memuse_core.build import build_store
from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import RunEvent, dump_event
from memuse_core.ingest import ingest_path
from memuse_core.ingest.batch import ingest_batch
from memuse_core.ingest.layouts import plan_folder
from memuse_core.store import connect
from memuse_core.views.common import step_text as step_response
from memuse_core.views.episode_facts import episode_facts, episode_list_facts, reasoning_steps

REAL_V2 = (Path(__file__).parents[1] / ".." / "shared" / "data" / "real" / "mini-swe-agent" / "v2").resolve()


def _import(db: Path, path: Path) -> None:
    con = connect(db)
    try:
        ingest_path(con, path)
    finally:
        con.close()


def _reasoning(db: Path, episode_id: str) -> dict[int, str]:
    con = connect(db, read_only=True)
    try:
        return reasoning_steps(con, episode_id)
    finally:
        con.close()


def test_v1_chat_reasoning_and_thinking_blocks(tmp_path: Path) -> None:
    doc = mini_traj("django__django-2", steps=1)
    first = next(m for m in doc["messages"] if m["role"] == "assistant")
    first["extra"] = {
        "response": {
            "choices": [
                {
                    "message": {
                        "content": first["content"],
                        "reasoning_content": "The listing shows the layout.",
                        "thinking_blocks": [
                            {"type": "thinking", "thinking": "The listing shows the layout."}
                        ],
                    }
                }
            ]
        }
    }
    db = tmp_path / "m.duckdb"
    _import(db, write_json(tmp_path / "r__django__django-2.traj.json", doc))
    assert _reasoning(db, "r:django__django-2/ep") == {1: "The listing shows the layout."}  # said once


def test_responses_api_summary_and_anthropic_blocks(tmp_path: Path) -> None:
    doc = mini_traj("django__django-3", steps=1)
    a, b = [m for m in doc["messages"] if m["role"] == "assistant"]
    a["extra"] = {
        "response": {
            "output": [
                {
                    "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": "Check the tests first."}],
                },
                {"type": "message", "content": [{"type": "output_text", "text": a["content"]}]},
            ]
        }
    }
    b["content"] = [
        {"type": "thinking", "thinking": "Now submit.", "signature": "sig"},
        {"type": "redacted_thinking", "data": "xxxx"},
        {"type": "text", "text": b["content"]},
    ]
    db = tmp_path / "m.duckdb"
    _import(db, write_json(tmp_path / "r__django__django-3.traj.json", doc))
    assert _reasoning(db, "r:django__django-3/ep") == {1: "Check the tests first.", 2: "Now submit."}
    con = connect(db, read_only=True)
    try:
        r = step_response(con, "r:django__django-3/ep", 2)
    finally:
        con.close()
    assert r is not None and r.reasoning == "Now submit." and "COMPLETE_TASK_AND_SUBMIT" in r.response


def test_openhands_reasoning_content(tmp_path: Path) -> None:
    folder = openhands_batch(tmp_path / "oh", ["django__django-5"])
    db = tmp_path / "m.duckdb"
    con = connect(db)
    try:
        ingest_batch(con, plan_folder(folder))
    finally:
        con.close()
    assert _reasoning(db, "oh/django__django-5") == {1: "I should list the files first."}


def test_real_deepseek_reasoner_reasoning_is_kept(tmp_path: Path) -> None:
    src = REAL_V2 / "pr816__deepseek_reasoner_dev__pvlib__pvlib-python-1606.traj.json"
    if not src.is_file():
        pytest.skip(f"real data not present under {REAL_V2}")
    doc = json.loads(src.read_text())
    want = [m["reasoning_content"] for m in doc["messages"] if m.get("role") == "assistant"]
    db = tmp_path / "m.duckdb"
    _import(db, src)
    con = connect(db, read_only=True)
    try:
        (eid,) = [r[0] for r in con.execute("SELECT episode_id FROM episodes").fetchall()]
        got = [step_response(con, eid, k + 1) for k in range(len(want))]
    finally:
        con.close()
    assert [g.reasoning if g else None for g in got] == want


def _memory_log(path: Path) -> Path:
    b = EpisodeBuilder("mem-e1", run_id="r")
    b.host_block(
        "recall",
        "User Memories:\n- parse dates with fromisoformat",
        [entry("d1", "parse dates with fromisoformat")],
    )
    b.step("look", "grep -rn parse_date .", "src/dates.py:3:def parse_date(s):")
    path.write_text("".join(dump_event(e) + "\n" for e in [RunEvent(run_id="r"), *b.finish(resolved=True)]))
    return path


def test_memory_state_tells_no_delivery_from_not_built(tmp_path: Path) -> None:
    db = tmp_path / "m.duckdb"
    folder = mini_batch(
        tmp_path / "nano",
        {"django__django-2": "Submitted", "django__django-3": "LimitsExceeded"},
        report=harness_report(["django__django-2"], []),
    )
    con = connect(db)
    try:
        ingest_batch(con, plan_folder(folder))
        ingest_path(con, _memory_log(tmp_path / "mem.jsonl"))
        before = episode_list_facts(con).set_index("episode_id")
    finally:
        con.close()
    assert before.loc["nano/django__django-2", "memory_state"] == "none_delivered"
    assert before.loc["mem-e1", "memory_state"] == "not_built"
    build_store(db)
    con = connect(db, read_only=True)
    try:
        after = episode_list_facts(con).set_index("episode_id")
        f2 = episode_facts(con, "nano/django__django-2")
        f3 = episode_facts(con, "nano/django__django-3")
        fm = episode_facts(con, "mem-e1")
        assert episode_facts(con, "nope") is None
    finally:
        con.close()
    assert after.loc["nano/django__django-2", "memory_state"] == "none_delivered"  # building changes nothing
    assert after.loc["mem-e1", "memory_state"] == "built"
    assert f2 is not None and (f2.exit_status, f2.resolved, f2.harness_status) == (
        "Submitted",
        True,
        "resolved",
    )
    assert f2.outcome_source is not None and f2.outcome_source.endswith("_eval.json")
    assert f3 is not None and (f3.exit_status, f3.resolved, f3.harness_status) == (
        "LimitsExceeded",
        None,
        None,
    )
    assert fm is not None and fm.deliveries == 1 and fm.resolved is True and fm.harness_status is None


def test_compare_keeps_unknown_outcomes_unknown(tmp_path: Path) -> None:
    """Paired tasks: a side without any outcome for a task is `unknown`, never a loss."""
    from memuse_core.store.app.compare import paired_outcomes
    from memuse_core.views.compare import change

    db = tmp_path / "m.duckdb"
    a = mini_batch(tmp_path / "a", {"django__django-2": "Submitted", "django__django-3": "Submitted"})
    b = mini_batch(
        tmp_path / "b",
        {"django__django-2": "Submitted", "django__django-3": "Submitted"},
        report=harness_report(["django__django-2"], ["django__django-3"]),
        steps=3,
    )
    con = connect(db)
    try:
        ingest_batch(con, plan_folder(a))
        ingest_batch(con, plan_folder(b))
        pairs = paired_outcomes(con, ["a"], ["b"]).set_index("task_id")
    finally:
        con.close()
    assert pairs["resolved_a"].isna().all()
    assert list(pairs["resolved_b"]) == [1.0, 0.0]
    assert [change(x, y) for x, y in zip(pairs["resolved_a"], pairs["resolved_b"])] == ["unknown", "unknown"]
    assert (change(0.0, 1.0), change(1.0, 0.0), change(1.0, 1.0)) == ("gained", "lost", "same")


def test_resolve_rate_chart_draws_no_bar_for_a_group_without_outcome() -> None:
    from memuse_core.charts import resolve_rate_chart

    fig = resolve_rate_chart(
        [
            {"group": "base", "rate": 0.34, "low": 0.3, "high": 0.4},
            {"group": "cam", "rate": None, "low": None, "high": None},
            {"group": "one-run", "rate": 0.5, "low": None, "high": None},
            {"group": "none2", "rate": None, "low": None, "high": None},
        ]
    )
    bar = fig.data[0]
    assert bar.orientation == "h" and list(bar.y) == ["base", "cam", "one-run", "none2"]
    assert list(bar.x) == [34.0, None, 50.0, None]
    # a whisker only where the interval is defined (one run: no SD, no whisker)
    plus = [None if math.isnan(v) else round(v, 6) for v in bar.error_x.array]
    assert plus == [6.0, None, None, None]
    # each unknown rate is labelled on its own row, never stacked on one spot
    assert [(a.text, a.y) for a in fig.layout.annotations] == [("no outcome", "cam"), ("no outcome", "none2")]
