"""Re-import: identical content is skipped; another file of the same task is
another episode under a distinct id, never a refusal; a recorder restarted on the same output file
leaves a file that imports.

Invariants: a renamed episode keeps every call, tool result and step (ids derived from it follow
the new prefix); native logs still refuse an id another file stored; the parallel import stores
exactly what the sequential loop stores.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from realruns_helpers import mini_traj, write_json

from memuse_core.events import EpisodeStart, RunEvent, dump_event
from memuse_core.ingest import IngestError, ingest_path
from memuse_core.ingest.ids import IdRewriter, free_id
from memuse_core.ingest.parallel import ingest_files
from memuse_core.record import Recorder
from memuse_core.record.wire import CHAT, ParsedResponse
from memuse_core.store import connect


def _ids(con) -> tuple[list[str], list[str]]:
    eps = [r[0] for r in con.execute("SELECT episode_id FROM episodes ORDER BY 1").fetchall()]
    runs = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY 1").fetchall()]
    return eps, runs


def test_free_id_takes_the_first_free_number() -> None:
    taken = {"a", "a~2"}
    assert free_id("b", taken.__contains__) == "b"
    assert free_id("a", taken.__contains__) == "a~3"


def test_rewriter_moves_derived_ids_with_the_longest_prefix() -> None:
    rw = IdRewriter()
    rw.rename_episode("e1", "e1~2")
    rw.rename_episode("e10", "e10~2")
    rw.rename_run("r", "r~2")
    assert rw.derived("e10-c3") == "e10~2-c3"
    assert rw.derived("e1-c3") == "e1~2-c3"
    assert rw.derived("r-s1") == "r~2-s1"
    assert rw.derived("other") == "other"


def test_same_file_is_skipped_and_another_file_of_the_task_is_a_new_episode(
    tmp_path: Path, db_file: Path
) -> None:
    a = write_json(tmp_path / "a" / "run__django__django-1.traj.json", mini_traj("django__django-1", steps=2))
    b = write_json(
        tmp_path / "b" / "run__django__django-1.traj.json",
        mini_traj("django__django-1", steps=3, note="retry"),
    )
    con = connect(db_file)
    try:
        assert ingest_path(con, a).status == "imported"
        assert ingest_path(con, a).status == "skipped"
        res = ingest_path(con, b)
        assert res.status == "imported" and res.episodes == 1
        eps, runs = _ids(con)
        assert runs == ["run:django__django-1", "run:django__django-1~2"]
        assert eps == ["run:django__django-1/ep", "run:django__django-1~2/ep"]
        steps = dict(con.execute("SELECT episode_id, n_steps FROM episodes").fetchall())
        assert steps == {"run:django__django-1/ep": 3, "run:django__django-1~2/ep": 4}
        calls = [
            r[0]
            for r in con.execute(
                "SELECT call_id FROM calls WHERE episode_id LIKE '%~2%' ORDER BY 1"
            ).fetchall()
        ]
        assert calls == [f"run:django__django-1~2/ep/c00{i}" for i in range(1, 5)]
        # a third file: the next free number
        c = write_json(
            tmp_path / "c" / "run__django__django-1.traj.json", mini_traj("django__django-1", steps=1)
        )
        ingest_path(con, c)
        assert _ids(con)[1][-1] == "run:django__django-1~3"
    finally:
        con.close()


def test_native_log_still_refuses_an_id_stored_by_another_file(tmp_path: Path, db_file: Path) -> None:
    def log(path: Path, task: str) -> Path:
        evs = [RunEvent(run_id="r"), EpisodeStart(episode_id="e1", run_id="r", task_id=task)]
        path.write_text("".join(dump_event(e) + "\n" for e in evs))
        return path

    con = connect(db_file)
    try:
        ingest_path(con, log(tmp_path / "a.jsonl", "t1"))
        with pytest.raises(IngestError, match="run_id 'r' is already stored"):
            ingest_path(con, log(tmp_path / "b.jsonl", "t2"))
    finally:
        con.close()


def _session(out: Path, answer: str) -> None:
    """One recorder session that is killed before it ends its episode."""
    rec = Recorder(out, run_id="r1")
    rec.start_episode(task_id="t1", task="fix it")
    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "fix it"}]}).encode()
    ctx = rec.begin_call(role="agent", kind=CHAT, body=body)
    rec.end_call(ctx, status="ok", parsed=ParsedResponse(response={"content": answer}))
    rec.close()


def test_recorder_restarted_on_the_same_file_imports(tmp_path: Path, db_file: Path) -> None:
    out = tmp_path / "run.jsonl"
    _session(out, "first try")
    with open(out, "ab") as f:  # killed mid-write: a torn last line, repaired by the next session
        f.write(b'{"type":"model_call","episode_id":"r1-e1","call_id":"r1-e1-c2","requ')
    _session(out, "second try")
    lines = out.read_text().splitlines()
    assert sum('"type":"run"' in x for x in lines) == 2  # the restart wrote its run event again
    con = connect(db_file)
    try:
        res = ingest_path(con, out)
        assert res.status == "imported" and res.episodes == 2
        eps, runs = _ids(con)
        assert runs == ["r1"] and eps == ["r1-e1", "r1-e1~2"]
        calls = con.execute("SELECT episode_id, call_id FROM calls ORDER BY 2").fetchall()
        assert calls == [("r1-e1", "r1-e1-c1"), ("r1-e1~2", "r1-e1~2-c1")]
    finally:
        con.close()


def test_parallel_import_renames_like_the_sequential_loop(tmp_path: Path) -> None:
    files = [
        write_json(
            tmp_path / d / "run__django__django-1.traj.json", mini_traj("django__django-1", steps=s, note=d)
        )
        for d, s in (("a", 1), ("b", 2), ("c", 3))
    ]
    stores = {}
    for workers in (0, 2):
        con = connect(tmp_path / f"w{workers}.duckdb")
        try:
            res = [r.status for _, r in ingest_files(con, files, workers=workers, min_bytes=0)]  # type: ignore[union-attr]
            assert res == ["imported"] * 3
            stores[workers] = (
                _ids(con),
                con.execute("SELECT call_id, episode_id, n_messages FROM calls ORDER BY 1").fetchall(),
            )
        finally:
            con.close()
    assert stores[0] == stores[2]
    assert stores[0][0][1] == ["run:django__django-1", "run:django__django-1~2", "run:django__django-1~3"]


def test_recording_imported_then_grown_imports_only_its_new_lines(tmp_path: Path) -> None:
    """Imported after the first session, then the recorder restarted on the same file: the second
    import adds the new episode (renamed, its id reused the first session's), and nothing twice."""
    out = tmp_path / "run.jsonl"
    _session(out, "first try")
    db = tmp_path / "m.duckdb"
    con = connect(db)
    try:
        assert ingest_path(con, out).status == "imported"
        _session(out, "second try")
        res = ingest_path(con, out)
        assert res.status == "imported" and res.episodes == 1
        eps, runs = _ids(con)
        assert runs == ["r1"] and eps == ["r1-e1", "r1-e1~2"]
        seqs = con.execute("SELECT episode_id, seq FROM episodes ORDER BY 1").fetchall()
        assert seqs[1][1] > seqs[0][1]  # line numbers of the whole file
        assert ingest_path(con, out).status == "skipped"  # the grown file is known now
        assert con.execute("SELECT count(*) FROM calls").fetchall() == [(2,)]
    finally:
        con.close()


def test_grown_recording_through_the_parallel_import(tmp_path: Path) -> None:
    out = tmp_path / "run.jsonl"
    _session(out, "first try")
    stores = {}
    for workers in (0, 2):
        db = tmp_path / f"w{workers}.duckdb"
        first = tmp_path / f"first{workers}.jsonl"
        first.write_bytes(out.read_bytes())
        con = connect(db)
        try:
            ingest_path(con, first)
            _session(first, "second try")
            got = [r.status for _, r in ingest_files(con, [first], workers=workers, min_bytes=0)]  # type: ignore[union-attr]
            assert got == ["imported"]
            stores[workers] = _ids(con)
        finally:
            con.close()
    assert stores[0] == stores[2] == (["r1-e1", "r1-e1~2"], ["r1"])
