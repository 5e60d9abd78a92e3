"""Verdicts per judge (MemUse 3.5 verdicts, A.4.1 outcome classes).

Invariants: a span keeps one current verdict per judge kind, never overwritten by the other
judge's; `memuse spans --json` shows every judge's verdict side by side (triage, judge, judgment
id, and per entry the five signals and the usage label); a store written when verdicts were kept
per span only is migrated: every judge's verdict is rebuilt from its stored assessments.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from memuse_core.cli import app
from memuse_core.judge.examples import acted_on_episode, resident_copy_episode, write_store
from memuse_core.judge.result import JudgeSettings
from memuse_core.judge.runner import judge_span, run_batch
from memuse_core.judge.scripted_server import Script, ScriptedServer
from memuse_core.store import connect
from memuse_core.store.area_tables import VERDICTS_DDL

SIGNALS = ("relevance", "accuracy", "novelty", "influence", "effect")


def _spans_json(db: Path, episode: str) -> dict:
    r = CliRunner().invoke(app, ["spans", "--db", str(db), "--episode", episode, "--json"])
    assert r.exit_code == 0, r.output
    return json.loads(r.stdout)


def _verdict_rows(db: Path) -> list[tuple]:
    con = connect(db, read_only=True)
    try:
        return con.execute(
            "SELECT span_id, judge, judgment_id, triage, relevance, acted_on, usage_labels::VARCHAR "
            "FROM verdicts ORDER BY 1, 2"
        ).fetchall()
    finally:
        con.close()


def _both_judges(tmp_path: Path) -> tuple[Path, str]:
    db = write_store(tmp_path, [acted_on_episode("a1"), resident_copy_episode("res")])
    run_batch(db, JudgeSettings(judge="rules"))
    con = connect(db, read_only=True)
    try:
        span_id = con.execute("SELECT span_id FROM spans WHERE episode_id = 'a1'").fetchone()[0]
    finally:
        con.close()
    override = {"relevance": True, "influence": "none", "novelty": "novel"}
    # the scripted LLM judge reads every file the brief does not show, then answers
    with ScriptedServer(Script(read_unshown_first=True, answer_overrides=override)) as srv:
        res = judge_span(db, span_id, judge="llm", model="m1", base_url=srv.base_url)
    assert res.status == "accepted", res.reason
    return db, span_id


def test_each_judge_keeps_its_verdict_and_spans_json_shows_them_side_by_side(tmp_path: Path) -> None:
    db, span_id = _both_judges(tmp_path)
    out = _spans_json(db, "a1")
    (span,) = [s for s in out["spans"] if s["span_id"] == span_id]
    assert set(span["verdicts"]) == {"rules", "llm"}
    rules, llm = span["verdicts"]["rules"], span["verdicts"]["llm"]
    assert rules["judge"] == "rules" and llm["judge"] == "llm" and rules["judgment_id"] != llm["judgment_id"]
    assert rules["triage"] == "positive" and llm["triage"] == "neutral"  # the LLM's answer did not replace it
    for v in (rules, llm):
        (e,) = v["entries"]
        assert set(SIGNALS) | {"usage", "pos", "item_id"} <= set(e) and e["item_id"] == "m-clamp"
    assert rules["entries"][0]["usage"] == "used" and llm["entries"][0]["usage"] == "ignored"
    assert span["outcomes"] == {"rules": "positive", "llm": "neutral"}
    # an automatic neutral span has the rule's triage-only verdict, counted in every judge's view
    res = _spans_json(db, "res")
    autos = [s for s in res["spans"] if s["status"] == "auto_neutral"]
    assert autos
    for auto in autos:
        rule = {"judge": "rule", "triage": "neutral", "judgment_id": None, "entries": []}
        assert auto["verdicts"] == {"rule": rule}
        assert auto["outcomes"] == {"rules": "neutral", "llm": "neutral"}


def test_a_store_with_one_verdict_per_span_is_migrated_per_judge(tmp_path: Path) -> None:
    """Schema 2 kept one verdict per span (the latest of any judge): opening such a store rebuilds
    each judge's current verdict from its stored assessments, equal to what the writer stores."""
    db, _ = _both_judges(tmp_path)
    want = _verdict_rows(db)
    assert {j for _, j, *_ in want} == {"rules", "llm", "rule"}
    con = connect(db)
    try:  # turn the file back into a schema-2 store: one row per span, the latest judgment's
        con.execute(
            """CREATE TEMP TABLE v2 AS SELECT * FROM verdicts
               QUALIFY row_number() OVER (PARTITION BY span_id ORDER BY judge = 'llm' DESC) = 1"""
        )
        con.execute("DROP TABLE verdicts")
        con.execute(VERDICTS_DDL.replace(", PRIMARY KEY (span_id, judge)", ", PRIMARY KEY (span_id)"))
        con.execute("INSERT INTO verdicts SELECT * FROM v2")
        con.execute("DELETE FROM span_outcomes")
        con.execute(
            "INSERT INTO span_outcomes SELECT span_id, 'any', episode_id, 'neutral', false FROM spans"
        )
        con.execute("UPDATE meta SET value = '2' WHERE key = 'schema_version'")
        con.execute("DELETE FROM meta WHERE key = 'ddl_hash'")
    finally:
        con.close()
    assert len(_verdict_rows(db)) < len(want)
    con = connect(db)  # migrates
    try:
        version = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0]
        judges = {r[0] for r in con.execute("SELECT DISTINCT judge FROM span_outcomes").fetchall()}
    finally:
        con.close()
    assert version == "3" and judges == {"rules", "llm"}
    assert _verdict_rows(db) == want
