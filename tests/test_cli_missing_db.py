"""Every command except `ingest` and `demo` refuses a missing database with one
line: nothing is created, not even the folder."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from memuse_core.cli import app
from memuse_core.store.connection import StoreError, connect, missing_store

RUNNER = CliRunner()

COMMANDS = [
    ["build"],
    ["info"],
    ["report"],
    ["judge"],
    ["spans", "--episode", "e1"],
    ["lineage", "--item", "x"],
    ["trim"],
    ["outcomes", "report.json", "--run", "r"],
    ["export", "--parquet", "out"],
]


@pytest.mark.parametrize("args", COMMANDS, ids=lambda a: a[0])
def test_command_refuses_a_missing_database(args: list[str], tmp_path: Path) -> None:
    db = tmp_path / "nowhere" / "x.duckdb"
    res = RUNNER.invoke(app, [*args, "--db", str(db)])
    assert res.exit_code == 1, res.output
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert lines == [f"error: database {db} does not exist (create it with `memuse ingest` or `memuse demo`)"]
    assert not (tmp_path / "nowhere").exists()


def test_default_database_from_the_environment_is_checked_too(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "env.duckdb"
    monkeypatch.setenv("MEMUSE_DB", str(db))
    res = RUNNER.invoke(app, ["build"])
    assert res.exit_code == 1 and str(db) in res.stderr and not db.exists()


def test_ingest_creates_the_database(tmp_path: Path) -> None:
    db = tmp_path / "new" / "x.duckdb"
    log = tmp_path / "run.jsonl"
    log.write_text(
        '{"type":"run","run_id":"r"}\n{"type":"episode_start","episode_id":"e","run_id":"r","task_id":"t"}\n'
    )
    res = RUNNER.invoke(app, ["ingest", str(log), "--db", str(db), "--no-build"])
    assert res.exit_code == 0, res.output
    assert db.is_file()
    res = RUNNER.invoke(app, ["build", "--db", str(db)])
    assert res.exit_code == 0, res.output


def test_connect_without_create_refuses(tmp_path: Path) -> None:
    db = tmp_path / "sub" / "x.duckdb"
    assert missing_store(db) is not None
    with pytest.raises(StoreError, match="does not exist"):
        connect(db, create=False)
    assert not db.parent.exists()
    connect(db).close()  # the default creates it
    assert missing_store(db) is None
    connect(db, create=False).close()


@pytest.mark.parametrize(
    "args", [["info"], ["report"], ["build"], ["spans", "--episode", "e1"]], ids=lambda a: a[0]
)
def test_a_duckdb_file_of_another_program_is_refused_and_left_unchanged(
    args: list[str], tmp_path: Path
) -> None:
    import duckdb

    db = tmp_path / "other.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE sales (id INTEGER)")
    con.close()
    res = RUNNER.invoke(app, [*args, "--db", str(db)])
    assert res.exit_code == 1, res.output
    lines = [x for x in res.stderr.splitlines() if x.strip()]
    assert lines == [
        f"error: database {db} is a DuckDB database but not a MemUse store (tables sales; no MemUse schema): "
        "pass another --db"
    ]
    con = duckdb.connect(str(db), read_only=True)
    try:
        tables = [r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
    finally:
        con.close()
    assert tables == ["sales"]


def test_an_empty_duckdb_file_is_no_store_to_read_but_ingest_may_fill_it(tmp_path: Path) -> None:
    import duckdb

    db = tmp_path / "empty.duckdb"
    duckdb.connect(str(db)).close()
    with pytest.raises(StoreError, match="empty DuckDB file, not a MemUse store"):
        connect(db, read_only=True)
    connect(db).close()  # a writer creates the schema in it
    connect(db, read_only=True).close()
