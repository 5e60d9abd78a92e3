"""`memuse trim`: what MemTrim would remove from recorded deliveries, given the prior context,
on a small hand-made episode in a real DuckDB file; the app-facing summaries; bad input."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memuse_core.build import build_store
from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.cli import app
from memuse_core.episode import EpisodeRecord
from memuse_core.events import RunEvent, dump_event
from memuse_core.ingest import ingest_path
from memuse_core.store import connect
from memuse_core.store.trim_views import novelty_agreement, overlap_by_usage, trim_entries, trim_summary
from memuse_core.trim.whatif import cut_placements, delivery_whatif, inputs_from_record, record_whatif

TASK = "The date parser is broken. parse_date raises ValueError on ISO week dates. Fix it in src/dates.py."
M_SHARED = "parse_date raises ValueError on ISO week dates."
M_CONFLICT = "python version: 3.11"
M_NOVEL = "Always run `pytest -x tests/test_dates.py` after editing."


def episode(eid: str = "e1") -> list:
    b = EpisodeBuilder(eid, run_id="r1", task=TASK, repo="acme/dates")
    block = "User Memories:\n- " + "\n- ".join([M_SHARED, M_CONFLICT, M_NOVEL])
    b.host_block("recall", block, [entry("m1", M_SHARED), entry("m2", M_CONFLICT), entry("m3", M_NOVEL)])
    b.step("look at the config", "cat setup.cfg", "python version: 3.12\n[tool:pytest]")
    b.step("run the tests", "pytest -x tests/test_dates.py", "1 failed")
    b.step("look again", "ls", "README")
    return b.finish(resolved=True)


def test_prior_context_excludes_the_delivery_itself() -> None:
    rec = EpisodeRecord.from_events(episode())
    first = inputs_from_record(rec)[0]
    prior = cut_placements(first)
    assert prior is not None and not any(M_NOVEL in t for t in prior)
    assert any(TASK in t for t in prior)


def test_record_whatif_classes() -> None:
    rec = EpisodeRecord.from_events(episode())
    ws = record_whatif(rec)
    assert len(ws) == 3  # the block is restated on every call
    first, second = ws[0], ws[1]
    e_shared, e_conf, e_novel = first.entries
    # the task already says it: every unit of m1 is shared, nothing of it remains
    assert e_shared.klass == "redundant" and e_shared.lines == [] and e_shared.chars_after == 0
    # before the tool output, the python version is memory-only; after it, it conflicts
    assert e_conf.klass == "novel" and e_conf.lines == ["python version: 3.11"]
    c2 = second.entries[1]
    assert [u.value for u in c2.decision.conflicting] == ["3.11"] and c2.lines == []
    assert e_novel.klass == "novel" and e_novel.lines == [M_NOVEL]
    assert {d.decision.outcome for w in ws for d in w.entries} == {"none"}
    # overlap (RQ2 view): the redundant entry overlaps the prior context more than the novel one
    assert e_shared.jaccard > e_novel.jaccard
    # the third call adds nothing that touches the entries: same decisions, recorded as such
    assert [e.same_as for e in ws[2].entries] == ["e1-d2"] * 3
    assert [e.decision for e in ws[2].entries] == [e.decision for e in ws[1].entries]


def test_memuse_trim_cli_and_summaries(tmp_path: Path) -> None:
    log = tmp_path / "run.jsonl"
    events = [RunEvent(run_id="r1", config="mem0-recall"), *episode()]
    log.write_text("".join(dump_event(e) + "\n" for e in events))
    db = tmp_path / "m.duckdb"
    con = connect(db)
    try:
        ingest_path(con, log)
    finally:
        con.close()
    build_store(db)
    runner = CliRunner()
    res = runner.invoke(app, ["trim", "--db", str(db), "--json"])
    assert res.exit_code == 0, res.output
    summary = json.loads(res.output)
    assert summary["deliveries"] == 3 and summary["entries"] == 9
    assert summary["conflicting"] == 2 and summary["chars_saved"] > 0
    # the span's first delivery uses the built prior context, the restatement the record
    assert summary["prior_from"] == {"span_context": 1, "episode_record": 2}
    assert summary["tokens_saved"] == summary["chars_saved"] // 4
    con = connect(db, read_only=True)
    try:
        n = con.execute("SELECT count(*) FROM trim_results").fetchone()[0]
        assert n == 9
        per_cfg = trim_summary(con)
        assert list(per_cfg["config"]) == ["mem0-recall"]
        assert int(per_cfg["tokens_saved"].iloc[0]) == summary["tokens_saved"]
        rows = trim_entries(con, "e1-d2")
        assert list(rows["memtrim_class"]) == ["redundant", "partial", "novel"]
        assert json.loads(rows["decision"].iloc[1])["conflicting"][0]["value"] == "3.11"
        # the restatement stores its decision once; reading it back resolves the reference
        again = trim_entries(con, "e1-d3")
        assert list(again["same_as"]) == ["e1-d2"] * 3 and list(again["decision"]) == list(rows["decision"])
        w = delivery_whatif(con, "e1-d2")
        assert [e.klass for e in w.entries] == ["redundant", "partial", "novel"]
        assert w.query_units and w.prior_texts
        # nothing judged yet: the agreement and overlap views are empty, not errors
        assert novelty_agreement(con)["n"] == 0
        assert overlap_by_usage(con).empty
    finally:
        con.close()
    # running again replaces, never duplicates
    assert runner.invoke(app, ["trim", "--db", str(db)]).exit_code == 0
    con = connect(db, read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM trim_results").fetchone()[0] == 9
    finally:
        con.close()
    # after the (offline rules) judge: MemTrim classes meet the judge's novelty and usage labels
    judged = runner.invoke(app, ["judge", "--db", str(db)])
    assert judged.exit_code == 0, judged.output
    con = connect(db, read_only=True)
    try:
        agree = novelty_agreement(con)
        labels = con.execute("SELECT count(*) FROM assessments WHERE novelty IS NOT NULL").fetchone()[0]
        assert labels > 0 and agree["n"] == labels == int(agree["table"]["n"].sum())
        assert set(agree["table"]["memtrim_class"]) <= {"redundant", "partial", "novel", "empty"}
        over = overlap_by_usage(con)
        assert set(over["group"]) <= {"used", "unused", "beneficial", "harmful"}
        assert ((over["jaccard"] >= 0) & (over["jaccard"] <= 1)).all()
    finally:
        con.close()


def test_memuse_trim_on_an_empty_or_missing_store_fails_cleanly(tmp_path: Path) -> None:
    missing = tmp_path / "missing.duckdb"
    res = CliRunner().invoke(app, ["trim", "--db", str(missing)])
    assert res.exit_code == 1 and "does not exist" in res.output and not missing.exists()
    empty = tmp_path / "empty.duckdb"
    connect(empty).close()
    res = CliRunner().invoke(app, ["trim", "--db", str(empty)])
    assert res.exit_code == 1 and "no episodes" in res.output


def test_worker_processes_give_the_same_rows(tmp_path: Path) -> None:
    """`run_store` with worker processes stores exactly what the single-process run stores."""
    from memuse_core.trim.whatif_batch import run_store

    log = tmp_path / "two.jsonl"
    log.write_text(
        "".join(dump_event(e) + "\n" for e in [RunEvent(run_id="r1"), *episode("e1"), *episode("e2")])
    )
    db = tmp_path / "w.duckdb"
    con = connect(db)
    try:
        ingest_path(con, log)
        q = "SELECT * EXCLUDE (jaccard), round(jaccard, 9) FROM trim_results ORDER BY delivery_id, pos"
        one = run_store(con, workers=1, batch=1)
        rows_one = con.execute(q).fetchall()
        two = run_store(con, workers=2, batch=1)
        rows_two = con.execute(q).fetchall()
    finally:
        con.close()
    assert one == two and one["episodes"] == 2 and one["entries"] == 18
    assert rows_one == rows_two and len(rows_one) == 18
