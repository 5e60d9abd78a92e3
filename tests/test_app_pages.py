"""AppTest smoke and interaction tests of every page, on a small corpus that went through the real
importer, context build and rules judge.

Invariants: no page raises; deep links (?episode=…&span=…&step=…&item=…) reproduce the view;
filters and search narrow the episode table; the timeline draws one credit-window band per entry
with a window; re-judging with the rules judge adds a judgment and shows old vs new; an
annotation made in the UI comes back in its case study, its export and the agreement table; an
XSS / markdown-link payload in recorded text reaches the page only inside code blocks or
escaped; a lock held by another process gives a clear message instead of a crash.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from app_text import (
    lineage_drawings,
    profile_blocks,
    profile_texts,
    radar_vertices,
    timeline_drawings,
    verbatim,
)
from streamlit.testing.v1 import AppTest
from test_app_corpus import episode_id, make_db

from memuse_core.charts import profile as P
from memuse_core.store import connect
from memuse_core.store.app import case_studies as store_cs
from memuse_core.store.app import episodes as store_episodes
from memuse_core.store.app import judge_runs as store_judge
from memuse_core.store.app import outcomes as store_outcomes
from memuse_core.store.app import spans as store_spans
from memuse_core.views import overview
from memuse_core.vocab import TRIAGE_PRECEDENCE

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    "pages/1_overview.py",
    "pages/2_episodes.py",
    "pages/3_timeline.py",
    "pages/4_span.py",
    "pages/5_lineage.py",
    "pages/6_case_studies.py",
    "pages/7_compare.py",
    "pages/8_judge_runs.py",
    "pages/9_memtrim.py",
]
XSS_EP = episode_id("rA1", "t1")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("app"))


@pytest.fixture
def app(db: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMUSE_DB", str(db))
    monkeypatch.setenv("MEMUSE_APP_LOCK_TIMEOUT", "0.3")
    monkeypatch.chdir(ROOT)

    return open_page


def open_page(page: str | None = None, **params: str) -> AppTest:
    """The app (on $MEMUSE_DB) opened at `page` with `params` in the URL, as a link would."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    if page:
        at.switch_page(page)
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _span_of(db: Path, ep: str, *, judged: bool = True) -> str:
    con = connect(db, read_only=True)
    try:
        spans = store_episodes.episode_spans(con, ep)
    finally:
        con.close()
    rows = spans[spans["status"] == "eligible"]
    if judged:
        rows = rows[rows["outcome"].isin(TRIAGE_PRECEDENCE)]
    assert len(rows), spans
    return str(rows.iloc[0]["span_id"])


def m_allows_html(at: AppTest) -> bool:
    return any(m.proto.allow_html for m in at.markdown)


def _all_markdown(at: AppTest) -> list[str]:
    return [m.value for m in at.markdown] + [c.value for c in at.caption]


def test_every_page_renders(app) -> None:
    at = app()
    for page in PAGES:
        at.switch_page(page)
        at.run()
        assert not at.exception, (page, [e.value for e in at.exception])
        assert at.title, page


def test_overview_profiles_on_log_scale_and_drilldown(app, db: Path) -> None:
    at = app()
    (radar,) = profile_blocks(at)
    (heat,) = profile_blocks(at, "memuse-heatmap")
    assert {"0.001%", "100%", "memA", "memB"} <= set(profile_texts(radar))
    # Each group's vertex sits at its mean share on the log scale (0.001% centre, 100% outer ring),
    # and the table shows the same share.
    con = connect(db, read_only=True)
    try:
        ov = overview.overview(con)
    finally:
        con.close()
    for g, prof in ov.profiles.items():
        for axis, share in prof.items():
            shown = "—" if share is None else f"{100 * share:.3g}%"
            x, y = radar_vertices(radar)[f"{g} · {overview.AXIS_TITLES[axis]}: {shown}"]
            want = 0.0 if not share or share < 1e-5 else P.RADIUS * (math.log10(100 * share) + 3) / 5
            got = math.hypot(x - P.CENTRE[0], y - P.CENTRE[1])
            assert math.isclose(got, want, abs_tol=0.15), (g, axis, share)
            assert f"{g} · {overview.AXIS_TITLES[axis]}: {shown}" in profile_texts(heat)
    # A drill-down link reproduces the span list behind a triage count (of an outcome class that
    # memA has under the judge the Overview shows).
    con = connect(db, read_only=True)
    try:
        counts = store_outcomes.outcome_counts(con)
    finally:
        con.close()
    cls = next(c for c in TRIAGE_PRECEDENCE if ((counts.config == "memA") & (counts.outcome == c)).any())
    at = app(None, drill_outcome=cls, drill_config="memA")
    tables = [d.value for d in at.dataframe]
    drill = next(t for t in tables if "span_id" in t.columns)
    assert len(drill) and set(drill["outcome"]) == {cls} and set(drill["config"]) == {"memA"}


def test_overview_report_section_is_drawn_only_when_opened(app) -> None:
    """The Overview's report section (resolve rates, delivery forms, cost) is sent to the browser
    only while its expander is open; opening it, a link with ?report=1 or one with a baseline
    shows it, and the URL keeps it open; closing it leaves a URL that keeps it closed."""

    def report_parts(at: AppTest) -> list[str]:
        tables = [d for d in at.dataframe if "diff vs baseline (pp)" in d.value.columns]
        charts = [c for c in at.main if getattr(c, "type", "") == "plotly_chart"]
        bars = [c for c in charts if json.loads(c.proto.spec)["data"][0]["type"] == "bar"]
        return ["outcomes"] * len(tables) + ["bars"] * len(bars)

    at = app()
    assert report_parts(at) == [] and "report" not in at.query_params
    assert "Task outcomes, delivery forms and cost" in [e.label for e in at.expander]
    at.session_state["ov_report"] = True
    at.run()
    assert report_parts(at) == ["outcomes", "bars"] and at.query_params["report"] == "1"
    at.session_state["ov_report"] = False
    at.run()
    assert report_parts(at) == [] and "report" not in at.query_params
    assert report_parts(app(None, report="1")) == ["outcomes", "bars"]
    linked = app(None, baseline="memA")
    assert report_parts(linked) == ["outcomes", "bars"]
    assert linked.selectbox(key="ov_baseline").value == "memA" and linked.query_params["baseline"] == "memA"
    # Closing the section leaves a URL that keeps it closed (a baseline in a link opens it), and
    # reopening it in the same session brings the baseline back.
    linked.session_state["ov_report"] = False
    linked.run()
    closed = {k: linked.query_params[k] for k in linked.query_params}
    assert report_parts(linked) == [] and "report" not in closed and "baseline" not in closed
    assert report_parts(app(None, **closed)) == []
    linked.session_state["ov_report"] = True
    linked.run()
    assert report_parts(linked) == ["outcomes", "bars"] and linked.query_params["baseline"] == "memA"


def test_episode_filters_and_search(app) -> None:
    at = app("pages/2_episodes.py")
    assert len(at.dataframe[0].value) == 9
    at.text_input(key="ep_search").input("ONERROR=alert").run()
    assert list(at.dataframe[0].value["episode_id"]) == [XSS_EP]
    assert at.query_params["q"] == "ONERROR=alert"
    at.text_input(key="ep_search").input("").run()
    at.multiselect(key="ep_outcome").select("failed").run()
    failed = at.dataframe[0].value
    assert set(failed["outcome"]) == {"not resolved"} and len(failed) == 4
    # Every chosen span outcome class must be present: the class every failed episode has (as
    # the rules judge sees this corpus), then also one that none has.
    present = set.intersection(*(set(c) for c in failed["span_classes"]))
    have = next(c for c in TRIAGE_PRECEDENCE if c in present)
    absent = next(c for c in TRIAGE_PRECEDENCE if not any(c in list(x) for x in failed["span_classes"]))
    at.multiselect(key="ep_flags").select(have).run()
    chosen = at.dataframe[0].value
    assert len(chosen) == 4 and all(have in list(c) for c in chosen["span_classes"])
    at.multiselect(key="ep_flags").select(absent).run()
    assert len(at.dataframe[0].value) == 0


def test_timeline_deep_link_windows_and_lazy_step(app, db: Path) -> None:
    ep = episode_id("rB1", "t3")
    at = app("pages/3_timeline.py", episode=ep, step="4")
    assert at.selectbox(key="tl_episode").value == ep
    assert at.number_input(key="tl_step").value == 4
    assert any("1 failed" in t for t in verbatim(at))
    (chart,) = timeline_drawings(at)
    spec = chart["drawing"]
    assert chart["step"] == 4
    windows = [y for t in spec["traces"] if t["kind"] == "bar" for y in t["y"]]
    con = connect(db, read_only=True)
    try:
        ents = store_episodes.episode_entries(con, ep)
    finally:
        con.close()
    assert len(windows) == int(ents["window_start"].notna().sum()) > 0
    assert spec["traces"][0]["x"] == spec["traces"][0]["step"] == [1, 2, 3, 4, 5, 6]
    # Only the picked step's text is loaded: another step's output is absent.
    at.number_input(key="tl_step").set_value(5).run()
    assert at.query_params["step"] == "5"
    assert not any("1 failed" == t for t in verbatim(at))


def test_span_deep_link_citation_and_rejudge(app, db: Path) -> None:
    sid = _span_of(db, XSS_EP)
    at = app("pages/4_span.py", span=sid, step="2")
    assert at.text_input(key="sp_span").value == sid
    assert at.pills(key="sp_cite").value == "S2"
    assert any("Search memory." in t for t in verbatim(at))  # the cited step's response
    con = connect(db, read_only=True)
    before = len(store_spans.span_judgments(con, sid))
    con.close()
    at.button(key="sp_rejudge").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert any("New judgment" in s.value for s in at.success)
    con = connect(db, read_only=True)
    after = store_spans.span_judgments(con, sid)
    con.close()
    assert len(after) == before + 1 and after.iloc[0]["judge"] == "rules"
    old_new = [
        d.value
        for d in at.dataframe
        if list(d.value.columns)[:2] == ["pos", "relevance"]
        and "usage_label" in d.value.columns
        and "notes" not in d.value.columns
    ]
    assert len(old_new) == 2 and len(old_new[1]) == len(old_new[0]) > 0


def test_lineage_item_deep_link(app) -> None:
    at = app("pages/5_lineage.py", item="default::card-1")
    assert at.selectbox(key="lin_item").value == "default::card-1"
    dels = next(d.value for d in at.dataframe if "delivery_id" in d.value.columns)
    assert len(dels) == 9 and set(dels["form"]) == {"search_preview"}
    # The history graph is the SVG component's drawing (no Plotly chart on the page): every
    # span of the item, each node that opens something with its target.
    assert not [c for c in at.main if getattr(c, "type", "") == "plotly_chart"]
    (graph,) = lineage_drawings(at)
    kinds = [n["target"][0] for n in graph["nodes"] if n["target"]]
    assert kinds.count("span") == 9 and kinds.count("item") == 1
    assert "memory item" in [x["name"] for x in graph["legend"]]


def test_compare_paired_tasks_and_two_timelines(app) -> None:
    at = app("pages/7_compare.py", a="memA", b="memB")
    pairs = next(d.value for d in at.dataframe if "task_id" in d.value.columns)
    assert list(pairs["task_id"]) == ["t2"] and pairs.iloc[0]["change"] == "lost"
    at.selectbox(key="cmp_task").select("t2").run()
    charts = timeline_drawings(at)
    assert [c["drawing"]["traces"][0]["name"] for c in charts] == ["steps", "steps"]
    assert [c["step"] for c in charts] == [None, None]  # no Step box on this page: no cursor


def test_annotation_round_trip_and_agreement(app, db: Path) -> None:
    sid = _span_of(db, episode_id("rA2", "t2"))
    at = app("pages/6_case_studies.py")
    at.text_input(key="cs_new_name").input("Harmful detours")
    at.button(key="FormSubmitter:cs_new-Create case study").click().run()
    assert not at.exception
    cases = at.selectbox(key="cs_pick")
    assert cases.value is not None
    at.radio(key="cs_target_kind").set_value("span").run()
    at.text_input(key="cs_target_span").input(f"{sid}#0").run()
    at.text_area(key="ann_note_cs_span").input(
        "Followed the tip <b>blindly</b> ![t](http://evil.example/p.png)"
    )
    at.text_input(key="ann_tags_cs_span").input("detour, tip")
    at.selectbox(key="ann_relevance_cs_span").select("true")
    at.selectbox(key="ann_influence_cs_span").select("none")
    at.selectbox(key="ann_case_cs_span").set_value(cases.value)
    at.button(key="FormSubmitter:ann_form_cs_span-Save annotation").click().run()
    assert not at.exception, [e.value for e in at.exception]
    at.run()
    anns = at.dataframe(key="cs_anns").value
    assert list(anns["target_id"]) == [f"{sid}#0"] and "detour" in list(anns["tags"].iloc[0])
    notes = [m.value for m in at.markdown if "Followed the tip" in m.value]
    assert notes and all("\\![t]" in n and not m_allows_html(at) for n in notes)
    agreement = next(d.value for d in at.dataframe if "kappa" in d.value.columns).set_index("signal")
    assert agreement.loc["relevance", "pairs"] == 1 and agreement.loc["influence", "pairs"] == 1
    at.button(key="cs_prepare").click().run()
    exp = at.session_state["cs_export"]
    assert "Followed the tip &lt;b&gt;blindly&lt;/b&gt;" in exp.html
    # Import the Markdown export back as a copy under a new id.
    from memuse_core import casestudy as CS

    doc = CS.import_case_study(exp.markdown)
    doc.case_study_id, doc.name = "imported01", "Imported copy"
    for a in doc.annotations:
        a.annotation_id = "imp-" + a.annotation_id
    at.file_uploader(key="cs_upload").upload(
        "copy.md", CS.export_markdown(doc).encode(), "text/markdown"
    ).run()
    assert not at.exception, [e.value for e in at.exception]
    con = connect(db, read_only=True)
    try:
        assert len(store_cs.list_annotations(con, case_study_id="imported01")) == 1
    finally:
        con.close()


def test_recorded_xss_payload_renders_inert(app, db: Path) -> None:
    sid = _span_of(db, XSS_EP)
    views = [
        app("pages/3_timeline.py", episode=XSS_EP, step="3"),
        app("pages/4_span.py", span=sid),
        app("pages/2_episodes.py"),
    ]
    views[2].text_input(key="ep_search").input("onerror").run()
    seen_in_code = False
    for at in views:
        for m in at.markdown:
            assert not m.proto.allow_html, m.value
        for text in _all_markdown(at):
            assert "<script" not in text and "<img" not in text, text
            assert "](http://evil.example" not in text, text
        seen_in_code |= any("<script>alert('xss')</script>" in t for t in verbatim(at))
    assert seen_in_code


def test_lock_held_by_another_process_gives_a_message(app, db: Path, tmp_path: Path) -> None:
    flag = tmp_path / "locked"
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            (
                "import duckdb, pathlib, sys, time; con = duckdb.connect(sys.argv[1]); "
                "pathlib.Path(sys.argv[2]).write_text('1'); time.sleep(30)"
            ),
            str(db),
            str(flag),
        ]
    )
    try:
        for _ in range(200):
            if flag.exists():
                break
            time.sleep(0.05)
        os.utime(db)  # a fresh cache key, as a writer would cause
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        assert any("busy" in w.value and "locked" in w.value for w in at.warning)
    finally:
        holder.terminate()
        holder.wait()


def test_first_run_builds_the_demo_database(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "data" / "fresh.duckdb"
    monkeypatch.setenv("MEMUSE_DB", str(db))
    monkeypatch.setenv("MEMUSE_DEMO_EPISODES", "8")
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert db.exists()
    con = connect(db, read_only=True)
    try:
        count = {
            t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
            for t in ("episodes", "spans", "judgments")
        }
        assert count["episodes"] == 8 and count["spans"] > 0 and count["judgments"] > 0
    finally:
        con.close()
    assert at.title[0].value == "Overview"


def test_rejudge_with_llm_against_a_local_scripted_endpoint(
    app, db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memuse_core.judge.scripted_server import Script, ScriptedReply, ScriptedServer

    monkeypatch.setenv("OPENAI_API_KEY", "test-key-not-stored")
    sid = _span_of(db, episode_id("rB1", "t1"))
    with ScriptedServer(Script(replies=[ScriptedReply(answer="auto")])) as srv:
        at = app("pages/4_span.py", span=sid)
        # The judge settings live in the sidebar that app.py draws (AppTest lists only the first
        # run's app.py sidebar), kept in session state across pages.
        at.session_state["judge_kind"] = "llm"
        at.session_state["judge_model"] = "scripted-model"
        at.session_state["judge_base_url"] = srv.base_url
        at.run()
        at.button(key="sp_rejudge").click().run()
        assert not at.exception, [e.value for e in at.exception]
        assert any("New judgment" in s.value for s in at.success), [e.value for e in at.error]
    con = connect(db, read_only=True)
    try:
        latest = store_spans.span_judgments(con, sid).iloc[0]
        detail = store_spans.judgment_detail(con, latest["judgment_id"])
    finally:
        con.close()
    assert latest["judge"] == "llm" and latest["model"] == "scripted-model"
    assert "test-key-not-stored" not in json.dumps(detail, default=str)


def test_judge_runs_batch_deep_link(app, db: Path) -> None:
    con = connect(db, read_only=True)
    try:
        batches = store_judge.judge_batches(con)
    finally:
        con.close()
    bid = next(b for b in batches["batch_id"] if b != "(single)")
    at = app("pages/8_judge_runs.py", batch=bid)
    assert at.selectbox(key="jr_batch").value == bid
    table = next(d.value for d in at.dataframe if "batch_id" in d.value.columns)
    assert int(table.set_index("batch_id").loc[bid, "judgments"]) > 0
    at.selectbox(key="jr_batch").set_value(None).run()
    assert "batch" not in at.query_params


def test_lineage_harmful_entries_are_drawn_only_while_their_expander_is_open(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harmful-entries grid sits in a lazy expander: open on a first visit without an item,
    closed and not drawn (a closed grid still costs the browser on every run) once a link names
    the item, drawn again when the reader opens it. Corpus: journey (b)'s two hand-made episodes,
    whose reader misuses a note (a harmful entry)."""
    from test_browser_lineage import lineage_db

    monkeypatch.setenv("MEMUSE_DB", str(lineage_db(tmp_path)))
    monkeypatch.chdir(ROOT)

    def harm_grids(at: AppTest) -> list:
        return [d for d in at.dataframe if "drill" in d.value.columns]

    at = open_page("pages/5_lineage.py")
    assert len(harm_grids(at)) == 1 and list(harm_grids(at)[0].value["item_id"]) == ["dates-tip"]
    at = open_page("pages/5_lineage.py", item="notes::dates-tip")
    assert any(e.label.startswith("Harmful entries (1)") for e in at.expander)
    assert harm_grids(at) == []
    at.session_state["lin_harm_open"] = True
    at.run()
    assert not at.exception and len(harm_grids(at)) == 1


def test_judge_settings_are_drawn_only_while_their_expander_is_open(app) -> None:
    """The sidebar's judge settings sit in a lazy expander (issue 17: a closed expander's radio,
    text boxes and help icons still cost every new tab of every page): closed, none of its
    widgets is drawn; open, they show the settings kept in session state, which re-judges read
    (`judge_kind`, `judge_model`, `judge_base_url`) whether or not the widgets are drawn. (AppTest
    lists app.py's sidebar of the first run only, so each state is a first run.)"""
    at = app(None)
    assert "Judge settings (re-judging)" in [e.label for e in at.expander]
    assert [r.label for r in at.radio if r.label == "Judge"] == []
    assert [t.label for t in at.text_input if t.label in ("Model", "Endpoint base URL")] == []

    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["judge_settings_open"] = True
    at.session_state["judge_kind"] = "llm"
    at.session_state["judge_model"] = "some-model"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert next(r for r in at.radio if r.label == "Judge").value == "llm"
    assert next(t for t in at.text_input if t.label == "Model").value == "some-model"
    assert next(t for t in at.text_input if t.label == "Endpoint base URL").value == ""
