"""AppTest tests of the reading pages: the timeline's step cursor, J / K keys and caption; the
full transcript; search across and within episodes.

Invariants: moving the step (Step box, Next / Previous buttons that carry the J / K shortcuts)
draws the cursor at the new step in the same run (never one action behind); the timeline says
what its marks mean; the transcript shows a page of whole steps with deliveries and windows
marked and finds text within the episode; search lists every hit with its episode, step and place
and marks the match in escaped text; recorded markup never renders.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from app_text import step_blocks, step_headings, step_lines, timeline_drawings, verbatim
from streamlit.testing.v1 import AppTest
from test_app_corpus import XSS, episode_id, make_db

from memuse_core.timeline import CAPTION
from memuse_core.views import search as search_view
from memuse_core.views.common import open_read

ROOT = Path(__file__).resolve().parents[1]
XSS_EP = episode_id("rA1", "t1")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("reader"))


@pytest.fixture
def app(db: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMUSE_DB", str(db))
    monkeypatch.chdir(ROOT)

    def make(page: str, **params: str) -> AppTest:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
        at.switch_page(page)
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    return make


def _chart(at: AppTest) -> dict:
    """The timeline's drawing (the page's one timeline chart)."""
    (chart,) = timeline_drawings(at)
    return chart["drawing"]


def _cursor(at: AppTest) -> int | None:
    """The step the timeline's cursor marks."""
    (chart,) = timeline_drawings(at)
    return chart["step"]


def test_timeline_cursor_follows_the_step_in_the_same_run(app) -> None:
    at = app("pages/3_timeline.py", episode=episode_id("rB1", "t3"), step="2")
    assert _cursor(at) == 2
    chart = _chart(at)
    at.number_input(key="tl_step").set_value(5).run()
    assert _cursor(at) == 5 and at.query_params["step"] == "5"
    at.button(key="tl_step_next").click().run()
    assert at.number_input(key="tl_step").value == 6 and _cursor(at) == 6
    at.button(key="tl_step_next").click().run()  # stays on the last step
    assert at.number_input(key="tl_step").value == 6
    at.button(key="tl_step_prev").click().run()
    assert at.number_input(key="tl_step").value == 5 and _cursor(at) == 5
    # Moving the step sends the same drawing with another cursor step.
    assert _chart(at) == chart
    assert at.button(key="tl_step_next").proto.shortcut and at.button(key="tl_step_prev").proto.shortcut
    # The caption explains the marks and names the one judge whose verdicts label the entries.
    assert any(
        c.value.startswith(CAPTION) and c.value.endswith("the rules judge's verdicts.") for c in at.caption
    )
    # The table of credit windows is drawn once its expander is opened (a lazy expander).
    assert not any("why_it_ends" in d.value.columns for d in at.dataframe)
    at.session_state["tl_chart_windows_open"] = True
    at.run()
    windows = next(d.value for d in at.dataframe if "why_it_ends" in d.value.columns)
    assert len(windows) and windows["why_it_ends"].str.len().min() > 0
    # The spans table is drawn once its expander (which names the judge and counts the spans) is
    # opened; each row links to its span in the inspector.
    (label,) = [e.label for e in at.expander if e.label.startswith("Spans of this episode")]
    assert re.fullmatch(r"Spans of this episode \(rules judge\): \d+ spans?", label), label
    assert not any("inspect" in d.value.columns for d in at.dataframe)
    at.session_state["tl_spans_open"] = True
    at.run()
    spans = next(d.value for d in at.dataframe if "inspect" in d.value.columns)
    assert len(spans) == int(label.split(": ")[1].split()[0])
    assert all("span=" in u for u in spans["inspect"])
    # The step's annotation form is drawn once its expander is opened, for the selected step.
    assert not [t for t in at.text_area if t.key == "ann_note_tl"]
    at.session_state["tl_annotate_open"] = True
    at.run()
    assert [t for t in at.text_area if t.key == "ann_note_tl"]
    assert any(
        f"#S{at.number_input(key='tl_step').value}" in m.value for m in at.markdown if "Annotate" in m.value
    )


def test_transcript_shows_whole_steps_marks_memory_and_finds_text(app) -> None:
    at = app("pages/10_transcript.py", episode=XSS_EP, step="3")
    # One HTML block per step (pages/_reader.step_html), made only of the page's own tags.
    heads = step_headings(at)
    assert heads[:2] == ["S1 · grep · exit 0", "S2 · memory_search · exit 0"] and len(heads) == 6
    marks = step_lines(at)
    assert any("Memory delivered into this input" in m for m in marks)
    assert any("credit window" in m for m in marks)
    # Recorded markup stays in escaped blocks; nothing renders as HTML.
    assert any(XSS in t for t in verbatim(at))
    assert not any(m.proto.allow_html for m in at.markdown)
    assert all("<script" not in b and "<img" not in b for b in step_blocks(at))
    # The selected step (S3) has its tool calls and results open; the others closed.
    blocks = step_blocks(at)
    assert "<details" in blocks[2] and "<details" in blocks[0]
    assert " open>" in blocks[2] and " open>" not in blocks[0]
    at.text_input(key="tr_find").input("pytest").run()
    assert at.pills(key="tr_step_hits").options == ["S4", "S5"]
    at.button(key="tr_step_next").click().run()
    assert at.query_params["step"] == "4"


def test_search_lists_hits_with_locations_and_marks_escaped_text(app, db: Path) -> None:
    at = app("pages/11_search.py", q="onerror")
    hits = at.dataframe(key="srch_hits").value
    assert set(hits["episode_id"]) == {XSS_EP}
    assert {"task", "observation", "response"} <= set(hits["where"])
    assert list(hits[hits["where"] == "observation"]["step"]) == [3]
    body = at.get("html")[0].proto.body
    assert "<mark>onerror</mark>" in body and "&lt;script&gt;" in body
    assert "<script" not in body and "<img" not in body
    at.text_input(key="srch_q").input("pytest -q").run()
    assert len(at.dataframe(key="srch_hits").value["episode_id"].unique()) == 9
    assert at.query_params["q"] == "pytest -q"
    # Back from another page (sidebar links carry no ?q=): the session's query and hits return.
    at.switch_page("pages/1_overview.py").run()
    at.query_params.clear()
    at.switch_page("pages/11_search.py").run()
    assert at.text_input(key="srch_q").value == "pytest -q"
    assert len(at.dataframe(key="srch_hits").value["episode_id"].unique()) == 9


def test_search_within_one_episode_and_hit_targets(db: Path) -> None:
    con = open_read(db, 5)
    try:
        every = search_view.search(con, "PYTEST")
        one = search_view.search(con, "pytest", None, XSS_EP)
        scoped = search_view.search(con, "pytest", ["rB1"])
        short = search_view.search(con, "p")
    finally:
        con.close()
    assert set(one.hits["episode_id"]) == {XSS_EP} and one.steps == [4, 5]
    assert len(every.hits) > len(one.hits) and set(scoped.hits["run_id"]) == {"rB1"}
    assert one.target(0) == (XSS_EP, 4) and len(short.hits) == 0
    assert (
        search_view.highlight_html("a <b>x</b>\x1b[31m\u202e", 3, 1) == "a &lt;<mark>b</mark>&gt;x&lt;/b&gt;"
    )


def test_transcript_shows_the_reasoning_beside_the_response(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from realruns_helpers import openhands_batch

    from memuse_core.ingest.batch import ingest_batch
    from memuse_core.ingest.layouts import plan_folder
    from memuse_core.store import connect
    from memuse_core.views import transcript as tr_view

    folder = openhands_batch(tmp_path / "oh", ["django__django-5"])
    rdb = tmp_path / "r.duckdb"
    con = connect(rdb)
    try:
        ingest_batch(con, plan_folder(folder))
    finally:
        con.close()
    con = open_read(str(rdb), 5)
    try:
        tr = tr_view.transcript(con, "oh/django__django-5", 0)
    finally:
        con.close()
    assert tr is not None
    assert [s.reasoning for s in tr.steps][:2] == ["I should list the files first.", None]
    monkeypatch.setenv("MEMUSE_DB", str(rdb))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.query_params["episode"] = "oh/django__django-5"
    at.switch_page("pages/10_transcript.py").run()
    assert not at.exception, [e.value for e in at.exception]
    assert sum("<summary" in b and ">Reasoning</summary>" in b for b in step_blocks(at)) == 1
    assert "I should list the files first." in verbatim(at)
