"""`memuse export --parquet DIR` and `memuse ingest DIR`: the store as Parquet
that other engines can query, partitioned by configuration and run, and back.

Invariants: the six analysis tables are hive-partitioned `config=<c>/run_id=<r>` datasets whose
rows are the store's rows; a store rebuilt from the export holds exactly the rows of the original
(every table, file ids included); reading the export again changes nothing; an export whose ids
clash with another file's refuses as a whole and leaves the store unchanged.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from realruns_helpers import harness_report, write_json
from typer.testing import CliRunner

from memuse_core.cli import app
from memuse_core.demo import DemoPlan, build_demo
from memuse_core.judge.result import JudgeSettings
from memuse_core.judge.runner import run_batch
from memuse_core.store import connect
from memuse_core.store.connection import StoreError
from memuse_core.store.parquet import PARTITIONED, import_parquet

RUNNER = CliRunner()


def _dump(db: Path) -> dict[str, list[str]]:
    """Every row of every table (sorted reprs), `meta` aside."""
    con = connect(db, read_only=True)
    try:
        tables = [
            r[0]
            for r in con.execute(
                "SELECT table_name FROM duckdb_tables() WHERE schema_name = 'main' AND table_name <> 'meta'"
            ).fetchall()
        ]
        return {t: sorted(map(repr, con.execute(f'SELECT * FROM "{t}"').fetchall())) for t in tables}
    finally:
        con.close()


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A small demo store with built spans, rules-judge verdicts and harness outcomes."""
    d = tmp_path_factory.mktemp("src")
    db = d / "src.duckdb"
    build_demo(db, DemoPlan(episodes=8, runs=1, mean_steps=12, seed=3), build_context=True)
    run_batch(db, JudgeSettings(judge="rules"))
    con = connect(db)
    try:
        run = con.execute("SELECT run_id FROM runs ORDER BY 1 LIMIT 1").fetchall()[0][0]
        tasks = [r[0] for r in con.execute("SELECT task_id FROM episodes WHERE run_id = ?", [run]).fetchall()]
    finally:
        con.close()
    rep = write_json(d / "eval.json", harness_report(tasks[:1], tasks[1:]))
    assert RUNNER.invoke(app, ["outcomes", str(rep), "--run", run, "--db", str(db)]).exit_code == 0
    return db


def test_export_is_partitioned_by_config_and_run(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    res = RUNNER.invoke(app, ["export", "--parquet", str(out), "--db", str(source)])
    assert res.exit_code == 0, res.stderr
    manifest = json.loads((out / "memuse-export.json").read_text())
    assert manifest["tables"]["episodes"]["partitioned_by"] == ["config", "run_id"]
    con = connect(source, read_only=True)
    try:
        runs = dict(con.execute("SELECT run_id, config FROM runs").fetchall())
        want = {t: con.execute(f"SELECT count(*) FROM {t}").fetchall()[0][0] for t in PARTITIONED}
    finally:
        con.close()
    assert {p.name for p in (out / "episodes").iterdir()} == {f"config={c}" for c in runs.values()}
    for run, cfg in runs.items():
        assert (out / "episodes" / f"config={cfg}" / f"run_id={run}" / "data_0.parquet").is_file()
    # any engine: plain DuckDB reads each dataset back with its partition columns
    eng = duckdb.connect()
    for t, n in want.items():
        assert n > 0, t
        got = eng.execute(
            f"SELECT count(*), count(DISTINCT run_id) FROM read_parquet('{out / t}/**/*.parquet', hive_partitioning = true)"
        ).fetchall()[0]
        assert got[0] == n, t
    per_cfg = eng.execute(
        f"""SELECT config, count(*) FILTER (WHERE resolved), count(*) FILTER (WHERE resolved IS NULL)
            FROM read_parquet('{out}/episodes/**/*.parquet', hive_partitioning = true) GROUP BY 1 ORDER BY 1"""
    ).fetchall()
    assert sum(r[1] for r in per_cfg) >= 1 and len(per_cfg) == len(set(runs.values()))
    # the export folder must be new
    res = RUNNER.invoke(app, ["export", "--parquet", str(out), "--db", str(source)])
    assert res.exit_code == 1 and "must be new or empty" in res.stderr


def test_round_trip_restores_every_row(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    assert RUNNER.invoke(app, ["export", "--parquet", str(out), "--db", str(source)]).exit_code == 0
    back = tmp_path / "back.duckdb"
    res = RUNNER.invoke(app, ["ingest", str(out), "--db", str(back)])
    assert res.exit_code == 0, res.stderr
    assert "already in the store" in res.stdout
    a, b = _dump(source), _dump(back)
    assert a.keys() == b.keys()
    for t in a:
        assert a[t] == b[t], t
    # again: nothing new
    res = RUNNER.invoke(app, ["ingest", str(out), "--db", str(back), "--no-build"])
    assert res.exit_code == 0 and "0 files imported" in res.stdout
    assert _dump(back) == b


def test_export_clashing_with_other_files_is_refused_whole(source: Path, tmp_path: Path) -> None:
    out = tmp_path / "export"
    assert RUNNER.invoke(app, ["export", "--parquet", str(out), "--db", str(source)]).exit_code == 0
    other = tmp_path / "other.duckdb"
    back = tmp_path / "back.duckdb"
    con = connect(back)
    try:
        import_parquet(con, out)
        # make every file look new: the same ids now come from "other" files
        con.execute("UPDATE files SET sha256 = sha256 || '-x'")
        before = con.execute("SELECT count(*) FROM episodes").fetchall()
        with pytest.raises(StoreError, match="are stored from other files"):
            import_parquet(con, out)
        assert con.execute("SELECT count(*) FROM episodes").fetchall() == before
    finally:
        con.close()
    assert not other.exists()
