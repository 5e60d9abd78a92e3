"""Storing the evaluation context: `build_store`, the loaders the judge uses, `memuse build` /
`memuse spans`, rebuild idempotence, and kept tables that a rebuild never touches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from store_dump import dump_store
from typer.testing import CliRunner

from memuse_core.build import build_store
from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.cli import app
from memuse_core.events import EpisodeStart, RunEvent, dump_event
from memuse_core.ingest import ingest_path
from memuse_core.rules.context import build_episode_context
from memuse_core.store import connect, load_episode
from memuse_core.store.context import CONTEXT_TABLES
from memuse_core.store.spans import list_spans, load_episode_context, load_span_context

A = "Use dateutil.parser.isoparse for timestamps with a trailing Z; fromisoformat rejects it before 3.11."


def episode(eid: str, n: int = 3) -> list:
    b = EpisodeBuilder(eid, run_id=f"run-{eid}")
    b.host_block("recall", "Memories:\n- " + A, [entry("A", A)])
    b.step("search", "memory search", "No results.", tool_memory=([], "search_result"))
    for k in range(n):
        b.step(f"s{k}", f"cmd {k}", f"out {k}")
    return b.finish(resolved=True)


def write(path: Path, events) -> Path:
    # each episode's run gets its `run` event (ingest refuses an episode of an unknown run)
    runs = dict.fromkeys(e.run_id for e in events if isinstance(e, EpisodeStart))
    events = [*(RunEvent(run_id=r) for r in runs), *events]
    path.write_text("".join(dump_event(e) + "\n" for e in events))
    return path


def store(tmp_path: Path, *eps: str) -> Path:
    db = tmp_path / "ctx.duckdb"
    con = connect(db)
    try:
        for e in eps:
            ingest_path(con, write(tmp_path / f"{e}.jsonl", episode(e)))
    finally:
        con.close()
    return db


def test_store_build_matches_pure_build_and_loaders(tmp_path: Path) -> None:
    db = store(tmp_path, "e1", "e2")
    assert build_store(db) == {"episodes": 2, "spans": 4, "errors": 0}
    con = connect(db, read_only=True)
    try:
        for eid in ("e1", "e2"):
            pure = build_episode_context(load_episode(con, eid))
            loaded = load_episode_context(con, eid)
            assert loaded.model_dump() == pure.model_dump()
            for s in pure.spans:
                assert load_span_context(con, s.span_id).model_dump() == s.model_dump()
        df = list_spans(con, status="eligible")
        assert list(df.span_id) == ["e1/e1-d1", "e2/e2-d1"]
        assert len(list_spans(con, episode_id="e2")) == 2
        try:
            load_span_context(con, "nope/nope")
        except KeyError as e:
            assert "not in the store" in str(e)
        else:
            raise AssertionError("unknown span loaded")
    finally:
        con.close()


def test_store_incremental_build_and_rebuild_keeps_judgments(tmp_path: Path) -> None:
    db = store(tmp_path, "e1")
    assert build_store(db)["episodes"] == 1
    assert build_store(db)["episodes"] == 0  # nothing new
    con = connect(db)
    try:
        ingest_path(con, write(tmp_path / "e3.jsonl", episode("e3")))
        con.execute(
            "INSERT INTO judgments (judgment_id, span_id, status) VALUES ('j1', 'e1/e1-d1', 'accepted')"
        )
        con.execute(
            "INSERT INTO annotations (annotation_id, target_id, note) VALUES ('a1', 'e1/e1-d1', 'look')"
        )
        con.execute("INSERT INTO verdicts (span_id, judge, triage) VALUES ('e1/e1-d1', 'rules', 'positive')")
        con.execute("INSERT INTO planted_truth (episode_id, item_id) VALUES ('e1', 'A')")
    finally:
        con.close()
    assert build_store(db)["episodes"] == 1  # only the new episode
    first = dump_store(db, CONTEXT_TABLES)
    assert build_store(db, rebuild=True)["episodes"] == 2
    assert dump_store(db, CONTEXT_TABLES) == first  # rebuilding gives identical tables
    assert build_store(db, rebuild=True)["episodes"] == 2
    assert dump_store(db, CONTEXT_TABLES) == first
    con = connect(db, read_only=True)
    try:
        for t in ("judgments", "annotations", "verdicts", "planted_truth"):
            assert con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] == 1, t
    finally:
        con.close()


def test_store_recreates_context_tables_with_old_columns(tmp_path: Path) -> None:
    db = store(tmp_path, "e1")
    con = connect(db)
    try:
        con.execute("DROP TABLE span_entries")
        con.execute("CREATE TABLE span_entries (span_id VARCHAR, pos INTEGER)")
    finally:
        con.close()
    build_store(db, rebuild=True)
    con = connect(db, read_only=True)
    try:
        assert load_span_context(con, "e1/e1-d1").entries[0].window == (1, 4)
    finally:
        con.close()


def test_cli_build_and_spans_json(tmp_path: Path) -> None:
    db = store(tmp_path, "e1")
    runner = CliRunner()
    r = runner.invoke(app, ["build", "--db", str(db)])
    assert r.exit_code == 0, r.output
    assert "built 1 episode, 2 spans" in r.output
    r = runner.invoke(app, ["spans", "--db", str(db), "--episode", "e1", "--json"])
    assert r.exit_code == 0, r.output
    data = json.loads(r.output)
    assert data == {
        "episode_id": "e1",
        "spans": [
            {
                "span_id": "e1/e1-d1",
                "status": "eligible",
                "first_step": 1,
                "last_step": 4,
                "deliveries": ["e1-d1", "e1-d2", "e1-d4", "e1-d5"],
                "restatements": 3,
                "chars": 4 * len("Memories:\n- " + A),
                "entries": [{"item_id": "A", "exposure": "full", "window": [1, 4]}],
                # per judge: the span's outcome class, and its verdict once judged
                "outcomes": {"llm": "unjudged", "rules": "unjudged"},
                "verdicts": {},
            },
            {
                "span_id": "e1/e1-d3",
                "status": "empty",
                "first_step": 2,
                "last_step": 2,
                "deliveries": ["e1-d3"],
                "restatements": 0,
                "chars": len("No results."),
                "entries": [],
                "outcomes": {"llm": "empty", "rules": "empty"},
                "verdicts": {},
            },
        ],
    }
    r = runner.invoke(app, ["spans", "--db", str(db), "--episode", "e1"])
    assert r.exit_code == 0 and "e1/e1-d1" in r.output and "eligible" in r.output and "1-4" in r.output
    r = runner.invoke(app, ["spans", "--db", str(db), "--episode", "missing"])
    assert r.exit_code == 1 and "episode 'missing' is not in the store" in r.output
    r = runner.invoke(app, ["spans", "--db", str(db), "--episode", "e"])
    assert r.exit_code == 1 and "did you mean 'e1'?" in r.output
    f2 = write(tmp_path / "e2.jsonl", episode("e2"))
    assert runner.invoke(app, ["ingest", str(f2), "--db", str(db), "--no-build"]).exit_code == 0
    r = runner.invoke(app, ["spans", "--db", str(db), "--episode", "e2"])
    assert r.exit_code == 1 and "no built context (run `memuse build`)" in r.output


def test_cli_ingest_builds_automatically(tmp_path: Path) -> None:
    db = tmp_path / "auto.duckdb"
    f = write(tmp_path / "e9.jsonl", episode("e9"))
    r = CliRunner().invoke(app, ["ingest", str(f), "--db", str(db)])
    assert r.exit_code == 0, r.output
    con = connect(db, read_only=True)
    try:
        assert list(list_spans(con).span_id) == ["e9/e9-d1", "e9/e9-d3"]
    finally:
        con.close()


@pytest.mark.slow
def test_store_build_with_worker_processes_equals_single_process(tmp_path: Path) -> None:
    db = store(tmp_path, "e1", "e2", "e3")
    assert build_store(db, workers=1)["episodes"] == 3
    single = dump_store(db, CONTEXT_TABLES)
    stats = build_store(db, rebuild=True, workers=2, batch=1)
    assert stats == {"episodes": 3, "spans": 6, "errors": 0}
    assert dump_store(db, CONTEXT_TABLES) == single


def test_store_build_stops_with_an_error_when_a_worker_dies(tmp_path: Path) -> None:
    import multiprocessing
    import os
    import signal

    db = store(tmp_path, *(f"e{i}" for i in range(10)))
    killed: list[int] = []

    def kill_workers(done: int, total: int) -> None:
        if done and not killed:  # after the first round is written
            for child in multiprocessing.active_children():
                os.kill(child.pid, signal.SIGKILL)
                killed.append(child.pid)

    with pytest.raises(RuntimeError, match="build worker process died after 4 of 10"):
        build_store(db, workers=2, batch=1, progress=kill_workers)
    assert killed
    assert build_store(db, workers=1)["episodes"] == 6  # the rest, on the next run
