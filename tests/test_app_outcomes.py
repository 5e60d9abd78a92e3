"""A judge error on an eligible span is the outcome class `error` on every page (MemUse A.4.1).

Invariant: the span's class is decided in one place, so the Overview counts it as `error`, the
Overview's `error` link lists it (non-empty), the Episodes filter by span class finds its episode,
the span inspector shows it, and Judge runs counts it as done (not pending). The corpus goes
through the real importer and context build; the error comes from the real LLM judge talking to
the scripted OpenAI-compatible server, which answers 400.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest
from test_app_corpus import episode_id, make_db
from test_app_pages import open_page

from memuse_core.judge.endpoint import PREFLIGHT_PROMPT
from memuse_core.judge.runner import judge_span
from memuse_core.judge.scripted_server import ScriptedReply, ScriptedServer
from memuse_core.store import connect
from memuse_core.store.app import episodes as store_episodes

ROOT = Path(__file__).resolve().parents[1]
EPISODE = episode_id("rB1", "t1")


@pytest.fixture(scope="module")
def errored(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A built, unjudged corpus in which one eligible span's only judgment is an API error."""
    db = make_db(tmp_path_factory.mktemp("outcomes"), judge=False)
    con = connect(db, read_only=True)
    try:
        spans = store_episodes.episode_spans(con, EPISODE)
    finally:
        con.close()
    span_id = str(spans[spans["status"] == "eligible"].iloc[0]["span_id"])
    mp = pytest.MonkeyPatch()
    mp.setenv("OPENAI_API_KEY", "test-key-not-stored")
    try:

        def script(body, idx):  # the preflight call succeeds; the judge's own call gets a 400
            if body["messages"][0]["content"] == PREFLIGHT_PROMPT:
                return ScriptedReply(content="OK")
            return ScriptedReply(status=400, error="bad request")

        with ScriptedServer(script) as srv:
            res = judge_span(db, span_id, judge="llm", model="scripted-model", base_url=srv.base_url)
    finally:
        mp.undo()
    assert res.status == "error"
    return db, span_id


@pytest.fixture
def app(errored: tuple[Path, str], monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMUSE_DB", str(errored[0]))
    monkeypatch.chdir(ROOT)
    return open_page


def _table(at: AppTest, column: str):
    """The first table on the page with this column."""
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_overview_counts_the_error_and_its_link_lists_the_span(app, errored) -> None:
    _, span_id = errored
    at = app()
    triage = _table(at, "N triage").set_index("group")
    assert triage.loc["memB", "error"].endswith("n=1") and triage.loc["memA", "error"].endswith("n=0")
    assert triage.loc["memB", "unjudged"].endswith("n=5")
    # The count links to ?drill_outcome=error&drill_config=memB: the same span, class `error`.
    link = triage.loc["memB", "error"].rsplit("&n=", 1)[0]
    assert "drill_outcome=error" in link and "drill_config=memB" in link
    at = app(None, drill_outcome="error", drill_config="memB")
    drill = _table(at, "span_id")
    assert list(drill["span_id"]) == [span_id] and list(drill["outcome"]) == ["error"]


def test_episodes_and_span_inspector_show_error(app, errored) -> None:
    _, span_id = errored
    at = app("pages/2_episodes.py")
    at.multiselect(key="ep_flags").select("error").run()
    rows = at.dataframe[0].value
    assert list(rows["episode_id"]) == [EPISODE] and "error" in list(rows.iloc[0]["span_classes"])
    at = app("pages/4_span.py", span=span_id)
    assert any("outcome **error**" in m.value for m in at.markdown)


def test_judge_runs_counts_the_error_as_done(app) -> None:
    at = app("pages/8_judge_runs.py")
    classes = _table(at, "outcome class").set_index("outcome class")["spans"]
    assert classes["error"] == 1 and classes["unjudged"] == 17
    errors = _table(at, "example_span")
    assert errors.iloc[0]["judgments"] == 1 and "400" in errors.iloc[0]["reason"]


@pytest.fixture(scope="module")
def unrecorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A built store of one episode whose delivery lost its proof (A.1.3 "proof_missing"): its
    nonempty attributed spans are `error` spans that no judge ever saw."""
    from test_app_corpus import store_of
    from test_context_checks import episode, finish, first

    from memuse_core.events import RunEvent

    events = finish(episode())
    first(events).placements[0].proof = None
    run = RunEvent(run_id="run-1", config="memA", label="memA run-1")
    return store_of(tmp_path_factory.mktemp("unrecorded"), "chk", [run, *events])


def test_judge_runs_tells_recording_errors_from_judge_errors(unrecorded: Path, monkeypatch) -> None:
    """A recording-check failure is outcome class `error` (A.4.1) but never reached a judge: Judge
    runs says so beside the class table and keeps those spans out of the judgeable count."""
    from memuse_core.views.judge_runs import judge_runs

    con = connect(unrecorded, read_only=True)
    try:
        jr = judge_runs(con)
    finally:
        con.close()
    assert jr.classes["error"] == jr.recording_errors > 0 and jr.judge_errors == 0
    assert jr.judgeable == 0 and jr.done == 0
    monkeypatch.setenv("MEMUSE_DB", str(unrecorded))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/8_judge_runs.py").run()
    assert not at.exception, [e.value for e in at.exception]
    note = " ".join(c.value for c in at.caption)
    assert f"{jr.recording_errors:,} spans of episodes that failed a recording check" in note
    assert "0 spans whose judge failed" in note


def test_judge_runs_judge_error_is_not_a_recording_error(app) -> None:
    at = app("pages/8_judge_runs.py")
    assert not any("failed a recording check" in c.value for c in at.caption)
