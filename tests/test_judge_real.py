"""The rules judge on real public recordings (../shared/data/real; skipped only when absent): every
eligible span gets an accepted answer that passed the same checks as an LLM answer."""

from __future__ import annotations

from memuse_core.build import build_store
from memuse_core.judge.result import JudgeSettings
from memuse_core.judge.runner import run_batch
from memuse_core.store import connect


def test_rules_judge_on_real_recordings(tmp_path, import_real):
    db = tmp_path / "real.duckdb"
    con = connect(db)
    try:
        assert import_real(con, "openhands", "letta")  # an importer crash fails; absent data skips
    finally:
        con.close()
    build_store(db)
    summary = run_batch(db, JudgeSettings(judge="rules"))
    assert summary.planned > 0  # the OpenHands recalls and Letta blocks give eligible spans
    assert summary.accepted == summary.judged == summary.planned
    con = connect(db, read_only=True)
    try:
        n_entries = con.execute("SELECT sum(n_entries) FROM spans WHERE status = 'eligible'").fetchone()[0]
        assert con.execute("SELECT count(*) FROM assessments").fetchone()[0] == n_entries
        assert (
            con.execute("SELECT count(*) FROM judgments WHERE judge = 'rules' AND calls = 0").fetchone()[0]
            == summary.judged
        )
    finally:
        con.close()
