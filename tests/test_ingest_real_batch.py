"""The two real mini-swe-agent batch folders (../shared/data/real/mini-swe-agent-batch; skipped
when absent) import as 2 runs x 50 episodes whose resolved counts equal their SWE-bench harness
reports; `memuse report --baseline nano-output` compares them with a paired bootstrap interval;
every recorded run in ../shared/data/real still imports.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from memuse_core.cli import app
from memuse_core.ingest.layouts import read_exit_statuses
from memuse_core.store import connect

RUNNER = CliRunner()
REAL = (Path(__file__).parents[1] / ".." / "shared" / "data" / "real").resolve()
BATCH = REAL / "mini-swe-agent-batch"
RUNS = ("nano-output", "nano-cam-output")


@pytest.fixture(scope="module")
def batch_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not BATCH.is_dir():
        pytest.skip(f"real batch folders not present under {BATCH}")
    db = tmp_path_factory.mktemp("batch") / "m.duckdb"
    res = RUNNER.invoke(app, ["ingest", str(BATCH), "--db", str(db)])
    assert res.exit_code == 0, res.stderr
    return db


def _report(run: str) -> dict:
    (path,) = (BATCH / run).glob("openai__gpt-5-nano.*_eval.json")
    return json.loads(path.read_text())


def test_two_runs_of_fifty_episodes_with_the_harness_outcomes(batch_db: Path) -> None:
    con = connect(batch_db, read_only=True)
    try:
        runs = con.execute("SELECT run_id, config FROM runs ORDER BY 1").fetchall()
        per_run = dict(
            (r, (n, res, unres, unknown))
            for r, n, res, unres, unknown in con.execute(
                """SELECT run_id, count(*), count(*) FILTER (WHERE resolved),
                          count(*) FILTER (WHERE NOT resolved), count(*) FILTER (WHERE resolved IS NULL)
                   FROM episodes GROUP BY 1"""
            ).fetchall()
        )
        positions = con.execute(
            "SELECT run_id, list(task_id ORDER BY position), list(position ORDER BY position) FROM episodes GROUP BY 1"
        ).fetchall()
        exits = dict(
            ((r, t), s)
            for r, t, s in con.execute("SELECT run_id, task_id, exit_status FROM episodes").fetchall()
        )
    finally:
        con.close()
    assert runs == [("nano-cam-output", "nano-cam-output"), ("nano-output", "nano-output")]
    for run in RUNS:
        rep = _report(run)
        n, resolved, unresolved, unknown = per_run[run]
        assert n == 50 == rep["submitted_instances"]
        assert resolved == rep["resolved_instances"] == len(rep["resolved_ids"])
        assert unresolved == len(rep["unresolved_ids"]) + len(rep["error_ids"]) + len(rep["empty_patch_ids"])
        assert unknown == 0
        (status_file,) = (BATCH / run).glob("exit_statuses_*.yaml")
        assert {t: exits[(run, t)] for t in read_exit_statuses(status_file)} == read_exit_statuses(
            status_file
        )
    for _, tasks, pos in positions:
        assert tasks == sorted(tasks) and pos == list(range(50))


def test_report_compares_against_the_baseline_with_a_bootstrap_interval(batch_db: Path) -> None:
    res = RUNNER.invoke(
        app, ["report", "--db", str(batch_db), "--baseline", "nano-output", "--format", "json"]
    )
    assert res.exit_code == 0, res.stderr
    cam = json.loads(res.stdout)["configs"]["nano-cam-output"]["outcome"]
    base, camr = _report("nano-output"), _report("nano-cam-output")
    assert cam["resolve_rate"] == pytest.approx(camr["resolved_instances"] / 50)
    assert cam["diff"] == pytest.approx((camr["resolved_instances"] - base["resolved_instances"]) / 50)
    assert cam["diff_ci_low"] < cam["diff"] < cam["diff_ci_high"]
    assert cam["paired_tasks"] == 50


def test_importing_the_folders_again_changes_nothing(batch_db: Path) -> None:
    con = connect(batch_db, read_only=True)
    try:
        before = con.execute("SELECT count(*), sum(n_steps) FROM episodes").fetchall()
    finally:
        con.close()
    res = RUNNER.invoke(app, ["ingest", str(BATCH), "--db", str(batch_db), "--no-build"])
    assert res.exit_code == 0 and "50 already imported" in res.stdout
    con = connect(batch_db, read_only=True)
    try:
        assert con.execute("SELECT count(*), sum(n_steps) FROM episodes").fetchall() == before
    finally:
        con.close()


RECORDED = ["mini-swe-agent", "mini-swe-agent-batch", "swe-agent", "openhands", "letta", "reflexion"]
"""Every folder of recorded runs (cladder holds MemTrim question data, not runs)."""


def test_every_recorded_run_still_imports(tmp_path: Path) -> None:
    if not REAL.is_dir():
        pytest.skip(f"real data not present under {REAL}")
    folders = [str(REAL / d) for d in RECORDED if (REAL / d).is_dir()]
    res = RUNNER.invoke(app, ["ingest", *folders, "--db", str(tmp_path / "all.duckdb"), "--no-build"])
    assert res.exit_code == 0, res.stderr
    assert "error" not in res.stderr
