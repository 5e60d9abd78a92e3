"""Re-judging from the span inspector refreshes the history and never hides a failure.

Invariants: after a rules re-judge the history lists the new judgment and marks it current
(the verdict moved to it); a re-judge against an unreachable endpoint is an error box that
names the sidebar's Endpoint base URL and Model, never a success box, and writes nothing (the
preflight call fails first); a judgment that fails after the preflight joins the history
without becoming current; a span header without
consuming steps says so instead of "steps None–None"; a re-judge asked for while another
process holds the database waits and says so instead of failing.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from lock_holder import held
from streamlit.testing.v1 import AppTest
from test_app_corpus import episode_id, make_db

from memuse_core.store import connect
from memuse_core.store.app import spans as store_spans
from memuse_core.views import judgment as jv
from memuse_core.views.span import SpanHeader

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def base_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("rejudge"))


@pytest.fixture
def db(base_db: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "app.duckdb"
    shutil.copy(base_db, copy)
    return copy


def _span(db: Path) -> str:
    con = connect(db, read_only=True)
    try:
        row = con.execute(
            "SELECT s.span_id FROM spans s JOIN verdicts v USING (span_id) WHERE s.episode_id = ? "
            "ORDER BY s.span_id LIMIT 1",
            [episode_id("rB1", "t1")],
        ).fetchone()
    finally:
        con.close()
    assert row
    return str(row[0])


def _page(db: Path, monkeypatch: pytest.MonkeyPatch, span: str, **state: str) -> AppTest:
    monkeypatch.setenv("MEMUSE_DB", str(db))
    monkeypatch.setenv("MEMUSE_APP_LOCK_TIMEOUT", "0.3")
    monkeypatch.setenv("MEMUSE_APP_WRITE_TIMEOUT", "0.3")
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=90)
    at.query_params["span"] = span  # app.py applies deep links (AppTest runs it on the first run)
    at.run()
    for k, v in state.items():
        at.session_state[k] = v
    at.switch_page("pages/4_span.py")
    at.query_params["span"] = span
    at.run()
    at.run()  # as a user who has been on the page: its reads are cached
    assert not at.exception, [e.value for e in at.exception]
    return at


def _history(at: AppTest):
    return next(d.value for d in at.dataframe if "judgment_id" in d.value.columns)


def test_rules_rejudge_refreshes_the_history_and_marks_the_new_judgment_current(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = _span(db)
    at = _page(db, monkeypatch, sid)
    before = _history(at)
    assert list(before["current"]).count(True) == 1 and before.columns[0] == "current"
    assert (before["model"] == "—").all()  # the rules judge calls no model
    at.button(key="sp_rejudge").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    assert any("accepted" in s.value for s in at.success)
    after = _history(at)
    assert len(after) == len(before) + 1
    newest = after.iloc[0]
    assert bool(newest["current"]) and list(after["current"]).count(True) == 1
    assert at.selectbox(key="sp_judgment").value == newest["judgment_id"]


def test_unreachable_endpoint_is_an_error_naming_the_sidebar_fields(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-stored")
    sid = _span(db)
    url = "http://127.0.0.1:9/v1"  # nothing listens on the discard port
    at = _page(db, monkeypatch, sid, judge_kind="llm", judge_model="some-model", judge_base_url=url)
    before = _history(at)
    current_before = before[before["current"]]["judgment_id"].tolist()
    at.button(key="sp_rejudge").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [s.value for s in at.success if "accepted" in s.value]
    errors = " ".join(e.value for e in at.error)
    assert "failed" in errors and "Endpoint base URL" in errors and "Model" in errors
    assert url in errors and "some-model" in errors
    after = _history(at)  # the preflight call failed: nothing was written
    assert after["judgment_id"].tolist() == before["judgment_id"].tolist()
    assert after[after["current"]]["judgment_id"].tolist() == current_before


def test_failed_judgment_is_an_error_and_joins_the_history_not_current(
    db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An endpoint that answers the preflight call but fails the span's calls (503): the judgment
    is stored as a failure, the history lists it, the verdict stays where it was."""
    from memuse_core.judge.endpoint import PREFLIGHT_PROMPT
    from memuse_core.judge.scripted_server import ScriptedReply, ScriptedServer

    def policy(body, idx):  # type: ignore[no-untyped-def]
        if body["messages"][0]["content"] == PREFLIGHT_PROMPT:
            return ScriptedReply(content="OK")
        return ScriptedReply(status=503, error="overloaded", retry_after=0)

    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-stored")
    sid = _span(db)
    with ScriptedServer(policy) as srv:
        at = _page(db, monkeypatch, sid, judge_kind="llm", judge_model="m1", judge_base_url=srv.base_url)
        before = _history(at)
        current_before = before[before["current"]]["judgment_id"].tolist()
        at.button(key="sp_rejudge").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert not [s.value for s in at.success if "accepted" in s.value]
    errors = " ".join(e.value for e in at.error)
    assert "failed" in errors and srv.base_url in errors and "m1" in errors
    after = _history(at)
    assert len(after) == len(before) + 1
    assert after.iloc[0]["judge"] == "llm" and after.iloc[0]["status"] != "accepted"
    assert after[after["current"]]["judgment_id"].tolist() == current_before


def test_rejudge_waits_while_the_database_is_busy(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sid = _span(db)
    at = _page(db, monkeypatch, sid)
    with held(db, tmp_path) as holder:
        at.button(key="sp_rejudge").click().run()
        assert not at.exception, [e.value for e in at.exception]
        waiting = " ".join(w.value for w in at.warning)
        assert "Re-judge queued" in waiting and f"process {holder.pid}" in waiting
        assert not at.error
    con = connect(db, read_only=True)
    try:
        n = len(store_spans.span_judgments(con, sid))
    finally:
        con.close()
    at.run()  # the queued request runs now that the database is free
    assert not at.exception, [e.value for e in at.exception]
    assert any("accepted" in s.value for s in at.success)
    assert len(_history(at)) == n + 1


def test_failure_message_and_steps_text() -> None:
    req = jv.RejudgeRequest(span_id="s", judge="llm", model=None, base_url="http://x/v1")
    msg = jv.failure_message(req, "the LLM judge needs --model")
    assert "the Model field" in msg and "--model" not in msg and "http://x/v1" in msg
    assert "Endpoint base URL" not in jv.failure_message(req.model_copy(update={"judge": "rules"}), "boom")
    head = SpanHeader(span_id="e/d", episode_id="e", status="eligible", outcome="neutral")
    assert head.steps == "no consuming step recorded"
    assert head.model_copy(update={"first_step": 3, "last_step": 3}).steps == "step 3"
    assert head.model_copy(update={"first_step": 3, "last_step": 5}).steps == "steps 3–5"
