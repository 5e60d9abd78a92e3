"""View functions, one section per view module, on a small real store: the hand-made corpus of
test_app_corpus (three runs of two configurations over three tasks) through the real importer,
context build and rules judge.

Invariants: every view returns its typed model from a read-only connection; filters narrow (and
only narrow) the episode list; the outcome class of a span is the same in the overview's counts,
the drill-down, the episode list, the span header and Judge runs (every span here is
`unresolved` under the rules judge: memory content is acted on, and no recorded check goes from
failing to passing after it, so the effect stays undetermined, A.2.2); a re-judge keeps history and
returns the assessments before and after; annotations written through the views come back in
their case study, its export and the agreement table.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_app_corpus import XSS, episode_id, make_db

from memuse_core.views import case_studies as cs_view
from memuse_core.views import (
    common,
    compare,
    episodes,
    judge_runs,
    judgment,
    lineage,
    overview,
    report,
    span,
    timeline,
)
from memuse_core.views.common import Connection, open_read, open_write
from memuse_core.vocab import OUTCOME_CLASSES

XSS_EP = episode_id("rA1", "t1")


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("views"))


@pytest.fixture
def con(db: Path) -> Iterator[Connection]:
    c = open_read(db, 5)
    yield c
    c.close()


@pytest.fixture
def copy(db: Path, tmp_path: Path) -> Path:
    """A private copy of the store for tests that write."""
    out = tmp_path / "copy.duckdb"
    shutil.copy(db, out)
    return out


# ---- common ----------------------------------------------------------------------------------


def test_runs_scope_and_item_keys(con: Connection) -> None:
    runs = common.runs(con)
    assert runs.configs == ["memA", "memB"] and runs.runs_of("memA") == ["rA1", "rA2"]
    assert runs.config_of("rB1") == "memB" and runs.config_of("nope") is None
    assert common.scope_choice(runs, [], []).effective is None
    by_config = common.scope_choice(runs, ["memA"], ["rB1"])
    assert (
        by_config.run_options == ["rA1", "rA2"]
        and by_config.runs == []
        and by_config.effective == ["rA1", "rA2"]
    )
    assert common.scope_choice(runs, ["memA"], ["rA2"]).effective == ["rA2"]
    assert common.split_item(common.item_key("ns", "a::b")) == ("ns", "a::b")
    assert common.split_item("bare") == ("default", "bare")


def test_episode_header_and_step_text(con: Connection) -> None:
    head = common.episode_header(con, episode_id("rB1", "t2"))
    assert head is not None and head.outcome == "failed" and head.n_steps == 6 and head.config == "memB"
    assert common.episode_header(con, "missing") is None
    step = common.step_text(con, XSS_EP, 3)
    assert step is not None and step.results[0].output == XSS and XSS in step.as_text()
    assert common.step_text(con, XSS_EP, 99) is None
    assert common.episode_choices(con, ["rA1"]) == [episode_id("rA1", t) for t in ("t1", "t2", "t3")]


# ---- episodes --------------------------------------------------------------------------------


def test_episode_filters_narrow(con: Connection) -> None:
    every = episodes.episode_list(con)
    assert len(every.rows) == 9 and not every.truncated
    assert episodes.repositories(con) == ["demo/repo"]

    def ids(**kw: object) -> list[str]:
        return list(episodes.episode_list(con, None, episodes.EpisodeFilters(**kw)).rows["episode_id"])

    assert ids(search="onerror=ALERT") == [XSS_EP]
    assert ids(outcomes=["failed"]) == ["rA1-t3", "rA2-t3", "rB1-t2", "rB1-t3"]
    assert ids(outcomes=["failed"], task="T2") == ["rB1-t2"]
    assert len(ids(span_classes=["unresolved"])) == 9 and ids(span_classes=["unresolved", "positive"]) == []
    assert ids(repos=["other/repo"]) == []
    assert list(episodes.episode_list(con, ["rB1"]).rows["run_id"].unique()) == ["rB1"]


# ---- timeline --------------------------------------------------------------------------------


def test_episode_view_and_timeline(con: Connection) -> None:
    ep = timeline.episode(con, XSS_EP)
    assert ep is not None and list(ep.spans["outcome"]) == ["unresolved", "unresolved"]
    tl = timeline.timeline(con, XSS_EP, 4)
    assert tl.figure is not None and tl.steps == 6 and tl.windows > 0
    bars = [t for t in tl.figure.data if t.type == "bar"]
    assert len(bars) == 1 and len(bars[0].y) == tl.windows
    assert len(tl.window_rows) == tl.windows and tl.window_rows["why_it_ends"].str.len().min() > 0
    one = timeline.timeline(con, XSS_EP, span_id=str(ep.spans.iloc[1]["span_id"]))
    assert one.windows < tl.windows
    assert timeline.timeline(con, "missing").figure is None
    # One judge labels the entries and is named: the store holds rules verdicts only, so that is
    # the default; asking for the LLM judge's verdicts shows none of the rules judge's outcome
    # classes or labels.
    assert tl.judge == "rules" and tl.judge_note.endswith("the rules judge's verdicts.")
    llm = timeline.timeline(con, XSS_EP, judge="llm")
    assert llm.judge == "llm" and "LLM judge" in llm.judge_note
    assert timeline.episode(con, XSS_EP, "llm").spans["outcome"].isin(["unresolved"]).sum() < 2


# ---- span ------------------------------------------------------------------------------------


def test_span_view(con: Connection) -> None:
    sid = f"{XSS_EP}/{XSS_EP}-d1"
    sv = span.span(con, sid)
    assert sv is not None and sv.header.outcome == "unresolved" and sv.header.judgeable and sv.judged
    assert sv.header.n_entries == 2 == len(sv.entries) == len(sv.entry_texts) == len(sv.rationales)
    assert {"relevance", "influence", "usage_label"} <= set(sv.entries.columns)
    assert sv.placements and all(p.lines for p in sv.placements)
    assert "".join(line.text for line in sv.placements[0].lines or []).startswith("Memories:")
    assert len(sv.judgments) == 1 and bool(sv.judgments.iloc[0]["current"])
    assert span.span(con, "missing") is None
    assert span.span_choices(con, XSS_EP)[0] == sid
    detail = judgment.detail(con, str(sv.judgments.iloc[0]["judgment_id"]))
    assert detail is not None and detail.judge == "rules" and detail.attempts[0].accepted


def test_citations_are_split_out() -> None:
    segs = span.segments("Read [S7] then [P3]; [X1] is not one.")
    assert [(s.kind, s.number) for s in segs if s.kind] == [("S", 7), ("P", 3)]
    assert "".join(s.text for s in segs) == "Read [S7] then [P3]; [X1] is not one."
    assert span.segments(None) == []


def test_rejudge_keeps_history_and_shows_before_and_after(copy: Path) -> None:
    sid = f"{XSS_EP}/{XSS_EP}-d1"
    done = judgment.rejudge(copy, sid, "rules")
    assert done.status == "accepted" and len(done.before) == len(done.after) == 2
    assert list(done.after.columns) == list(judgment.SIGNAL_COLUMNS)
    with open_read(copy, 5) as c:
        sv = span.span(c, sid)
    assert sv is not None and len(sv.judgments) == 2 and sv.header.verdict_judgment == done.judgment_id


# ---- lineage ---------------------------------------------------------------------------------


def test_item_lineage(con: Connection) -> None:
    keys = [c.key for c in lineage.item_choices(con, "card")]
    assert keys == ["default::card-1"]
    item = lineage.item(con, "default", "card-1")
    assert (item.deliveries, item.episodes, item.harmed) == (9, 9, 0)
    assert len(item.delivery_rows) == 9 and set(item.delivery_rows["outcome"]) == {"unresolved"}
    assert not item.truncated and item.changes == []
    html = lineage.item_graph_html(con, "default", "card-1")
    assert "new vis.Network" in html and "card-1" in html
    assert lineage.item_graph_html(con, "default", "no-such-item") == ""
    assert len(lineage.harmful_entries(con)) == 0
    graph = lineage.item_graph(con, "default", "card-1")
    assert graph.drawing is not None and graph.spans_shown == graph.spans_total == 9 and not graph.focused
    assert lineage.item_graph(con, "default", "no-such-item").drawing is None


# ---- overview and report -----------------------------------------------------------------------


def test_overview_counts_match_the_drill_down(con: Connection) -> None:
    ov = overview.overview(con)
    assert [g.label for g in ov.groups] == ["memA", "memB"] and ov.spans == 18
    table = ov.triage_table().set_index("group")
    assert list(table.columns[2 : 2 + len(OUTCOME_CLASSES)]) == list(OUTCOME_CLASSES)
    for g in ov.groups:
        for c in OUTCOME_CLASSES:
            drill = overview.drill_down(con, None, config=g.config, outcome=c)
            assert len(drill.rows) == table.loc[g.label, c], (g.label, c)
    assert set(ov.profiles) == {"memA", "memB"}
    assert all(f">{g}</span>" in ov.radar() and f">{g}</th>" in ov.heatmap() for g in ("memA", "memB"))
    runs = overview.overview(con, None, "run")
    assert [g.label for g in runs.groups] == ["memA · rA1", "memA · rA2", "memB · rB1"]
    one_run = overview.drill_down(con, None, run="rA2", outcome="unresolved")
    assert set(one_run.rows["run_id"]) == {"rA2"}
    assert len(ov.coverage_table()) == 2


def test_report_outcomes_and_baseline(con: Connection) -> None:
    rep = report.report(con, None, "memA")
    rates = {o.group: o.rate for o in rep.outcomes}
    assert rates == pytest.approx({"memA": 4 / 6, "memB": 1 / 3})
    memb = next(o for o in rep.outcomes if o.group == "memB")
    assert memb.diff_pp == pytest.approx(-100 / 3) and memb.losses == 1
    assert "diff vs baseline (pp)" in rep.outcome_table().columns and "low" not in rep.outcome_table().columns
    assert {f.form for f in rep.forms} == {"task_recall", "search_preview"}
    assert rep.resolve_chart().data and rep.forms_chart().data
    by_run = report.report(con, ["rA1", "rB1"], runs_as_groups=["rB1", "rA1"])
    assert [o.group for o in by_run.outcomes] == ["rB1", "rA1"]


# ---- compare ---------------------------------------------------------------------------------


def test_compare_pairs_tasks(con: Connection) -> None:
    assert compare.options(common.runs(con), "config") == ["memA", "memB"]
    assert compare.change(1.0, 0.0) == "lost" and compare.change(0.0, 0.5) == "gained"
    cmp = compare.compare(con, "config", "memA", "memB")
    assert (
        list(cmp.pairs["task_id"]) == ["t1", "t2", "t3"]
        and cmp.count("lost") == 1
        and cmp.count("gained") == 0
    )
    assert cmp.episodes_of("t2") == ("rA1-t2", "rB1-t2") and cmp.episodes_of("nope") is None
    metrics = cmp.metrics.set_index("metric")
    assert metrics.loc["spans", "memA"] == 12 and metrics.loc["spans", "B − A"] == -6
    assert {c.group for c in cmp.report.costs} == {"memA", "memB"} and len(cmp.form_pivot()) == 2
    by_run = compare.compare(con, "run", "rA1", "rB1")
    assert list(by_run.changed("lost")["task_id"]) == ["t2"] and set(by_run.profiles) == {"rA1", "rB1"}


# ---- judge runs ------------------------------------------------------------------------------


def test_judge_runs(con: Connection) -> None:
    jr = judge_runs.judge_runs(con)
    assert set(jr.classes) == set(OUTCOME_CLASSES) and jr.classes["unresolved"] == 18
    assert (jr.judgeable, jr.pending, jr.done) == (18, 0, 18)
    assert len(jr.batch_ids) == 1 and jr.total("judgments") == 18 and jr.total("errors") == 0
    detail = judge_runs.batch_detail(con, jr.batch_ids[0])
    assert len(detail.errors) == 0 and int(detail.followups["judgments"].sum()) == 18
    assert detail.followups_chart is not None and set(detail.cost["config"]) == {"memA", "memB"}
    assert judge_runs.judge_runs(con, ["rB1"]).classes["unresolved"] == 6


# ---- case studies ----------------------------------------------------------------------------


def test_annotations_case_study_export_and_agreement(copy: Path) -> None:
    sid = f"{XSS_EP}/{XSS_EP}-d1"
    study = cs_view.CaseStudy(name="Detours", description="*why*")
    note = cs_view.new_annotation(
        "span",
        f"{sid}#0",
        episode_id=cs_view.target_episode("span", sid),
        note="n <b>1</b>",
        labels={"relevance": "true", "novelty": None},
    )
    step = cs_view.new_annotation("step", f"{XSS_EP}#S3", episode_id=XSS_EP)
    item = cs_view.new_annotation("item", "default::card-1")
    with open_write(copy, 5) as w:
        cs_view.create_case_study(w, study)
        for a in (note, step, item):
            cs_view.save_annotation(w, a)
        cs_view.collect(w, [note.annotation_id, step.annotation_id, item.annotation_id], study.case_study_id)
    with open_read(copy, 5) as c:
        assert [s.annotations for s in cs_view.case_studies(c)] == [3]
        view = cs_view.case_study(c, study.case_study_id)
        assert view is not None
        links = {m.annotation.target_kind: m.link for m in view.members}
        assert links["span"] is not None and links["span"].params == {"span": sid}
        assert links["step"] is not None and links["step"].params == {"episode": XSS_EP, "step": "3"}
        assert links["item"] is not None and links["item"].page == "lineage"
        listed = cs_view.annotation_list(c)
        assert set(listed.table["case study"]) == {"Detours"} and "relevance=true" in set(
            listed.table["labels"]
        )
        exp = cs_view.export(c, study.case_study_id)
        assert exp is not None and "n &lt;b&gt;1&lt;/b&gt;" in exp.html and exp.filename == "Detours"
        assert "&lt;script&gt;alert" in exp.html  # the step's recorded output, escaped
        agreement = cs_view.agreement(c).table.set_index("signal")
        assert agreement.loc["relevance", "pairs"] == 1 and agreement.loc["influence", "pairs"] == 0
    again = cs_view.read_case_study_file(exp.markdown, "copy.md")
    again.case_study_id = "copy01"
    for a in again.annotations:
        a.annotation_id = "copy-" + a.annotation_id
    with open_write(copy, 5) as w:
        cs_view.delete(w, [item.annotation_id])
        cs_view.import_case_study(w, again)
    with open_read(copy, 5) as c:
        view = cs_view.case_study(c, "copy01")
        assert view is not None and len(view.members) == 3
        first = cs_view.case_study(c, study.case_study_id)
        assert first is not None and len(first.members) == 2
    with pytest.raises(cs_view.CaseStudyError):
        cs_view.read_case_study_file("not an export", "x.md")
