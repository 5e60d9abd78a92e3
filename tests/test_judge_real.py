"""The rules judge on real public recordings (../shared/data/real, skipped when absent): every
eligible span gets an accepted answer that passed the same checks as an LLM answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from memuse_core.judge.result import JudgeSettings
from memuse_core.judge.runner import run_batch
from memuse_core.store import connect

REAL = (Path(__file__).parents[1] / ".." / "shared" / "data" / "real").resolve()


def test_rules_judge_on_real_recordings(tmp_path):
    folders = [REAL / "openhands", REAL / "letta"]
    if not all(f.is_dir() for f in folders):
        pytest.skip("real recordings not available")
    from memuse_core.build import build_store
    from memuse_core.ingest import expand_paths, ingest_path

    db = tmp_path / "real.duckdb"
    con = connect(db)
    try:
        for f in expand_paths(folders):
            try:
                ingest_path(con, f)
            except Exception:  # formats that another area does not import are not this test's subject
                continue
    finally:
        con.close()
    build_store(db)
    summary = run_batch(db, JudgeSettings(judge="rules"))
    if summary.planned == 0:
        pytest.skip("no eligible span in the real recordings")
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
