"""Parallel ingest (worker processes parse, this process writes) leaves the store exactly as the
sequential `ingest_path` loop does, with the same per-file results and errors
(DESIGN.md "Bad input")."""

from __future__ import annotations

import multiprocessing
import os
import shutil
import signal
import sys
import threading
from pathlib import Path

import pytest
from store_dump import dump_store

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import RunEvent, dump_event
from memuse_core.ingest.base import IngestError
from memuse_core.ingest.parallel import PIPELINE_MIN_BYTES, ParseThread, _thread_helps, ingest_files
from memuse_core.store import connect

REAL = Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "real"


def _episode(run: str, eid: str, n: int = 6):
    b = EpisodeBuilder(eid, run_id=run, task="Fix `parse_date` for ISO weeks", repo="acme/dates")
    b.host_block(
        "recall",
        "User Memories:\n- parse_date lives in src/dates.py",
        [entry("m1", "parse_date lives in src/dates.py")],
    )
    for i in range(n):
        b.step(f"step {i}", f"grep -n parse_date src/dates.py # {i}", f"src/dates.py:{i}:def parse_date(s):")
    b.step(
        "search",
        "mem0 search iso week",
        "1. [m2] ISO weeks start on Monday",
        tool_memory=([entry("m2", "ISO weeks start on Monday")], "search_result"),
    )
    b.final("Submitted.")
    return b.finish(resolved=True, exit_status="Submitted")


def _run_file(folder: Path, name: str, run: str, eids: list[str]) -> Path:
    events = [RunEvent(run_id=run, config="mem0")] + [e for eid in eids for e in _episode(run, eid)]
    p = folder / name
    p.write_text("".join(dump_event(e) + "\n" for e in events))
    return p


def _corpus(folder: Path) -> list[Path]:
    folder.mkdir()
    files = [_run_file(folder, f"{k}-run.jsonl", f"r{k}", [f"r{k}-e{i}" for i in range(4)]) for k in range(4)]
    bad = folder / "4-bad.jsonl"
    lines = files[0].read_text().splitlines()
    bad.write_text(
        "\n".join(
            [lines[0].replace('"r0"', '"rbad"')]
            + [x.replace("r0-e0", "bad-e0") for x in lines[1:12]]
            + ['{"type": "model_call"']
        )
    )
    again = folder / "5-again.jsonl"
    shutil.copy(files[1], again)  # same content as an earlier file of the same call
    dup = _run_file(folder, "6-dup.jsonl", "r6", ["r6-e0", "r2-e1"])  # r2-e1 is stored by file 2
    out = [*files, bad, again, dup]
    if REAL.exists():  # real trajectories: formats and observers run in the workers too
        out += sorted(p for p in (REAL / "mini-swe-agent").rglob("*.json"))[:3]
        out += sorted(p for p in (REAL / "openhands").rglob("*.jsonl"))[:1]
    return out


def _dumped(db: Path) -> dict[str, list[tuple]]:
    """Every base table plus the delivery_entries view."""
    out = dump_store(db)
    out.update(dump_store(db, ["delivery_entries"]))
    return out


def _ingest(db: Path, files: list[Path], workers: int, thread: bool | None = False) -> list[tuple[str, str]]:
    con = connect(db)
    try:
        return [
            (
                p.name,
                str(r) if isinstance(r, IngestError) else f"{r.status} {r.episodes} {r.events} {r.error}",
            )
            for p, r in ingest_files(con, files, workers=workers, min_bytes=0, thread=thread)
        ]
    finally:
        con.close()


def test_parallel_ingest_stores_exactly_what_the_sequential_loop_stores(tmp_path):
    files = _corpus(tmp_path / "in")
    seq = _ingest(tmp_path / "seq.duckdb", files, workers=0)
    par = _ingest(tmp_path / "par.duckdb", files, workers=2)
    assert par == seq, (par, seq)
    outcome = dict(seq)
    assert "4-bad.jsonl:13: invalid JSON" in outcome["4-bad.jsonl"]
    assert outcome["5-again.jsonl"].startswith("skipped") and "1-run.jsonl" in outcome["5-again.jsonl"]
    assert (
        "6-dup.jsonl:" in outcome["6-dup.jsonl"]
        and "episode_id 'r2-e1' is already stored" in outcome["6-dup.jsonl"]
    )
    assert sum(o.startswith("imported") for o in outcome.values()) >= 4
    a, b = _dumped(tmp_path / "seq.duckdb"), _dumped(tmp_path / "par.duckdb")
    assert a.keys() == b.keys()
    for t in a:
        assert a[t] == b[t], t
    assert len(a["episodes"]) >= 16 and len(a["delivery_entries"]) > len(a["delivery_entry_rows"])
    # importing everything again skips every good file and changes nothing
    again = _ingest(tmp_path / "par.duckdb", files, workers=2)
    assert all(o.startswith("skipped") or "error" in o or ".jsonl:" in o for _, o in again)
    assert _dumped(tmp_path / "par.duckdb") == b


def test_a_parse_thread_stores_exactly_what_the_plain_loop_stores(tmp_path):
    """Without worker processes, the files parsed by one thread while this one writes
    (`ParseThread`) leave the same store, results and errors as the plain `ingest_path` loop."""
    files = _corpus(tmp_path / "in")
    before = sys.getswitchinterval()
    seq = _ingest(tmp_path / "seq.duckdb", files, workers=0, thread=False)
    thr = _ingest(tmp_path / "thr.duckdb", files, workers=0, thread=True)
    assert thr == seq, (thr, seq)
    outcome = dict(thr)
    assert "4-bad.jsonl:13: invalid JSON" in outcome["4-bad.jsonl"]
    assert outcome["5-again.jsonl"].startswith("skipped") and "1-run.jsonl" in outcome["5-again.jsonl"]
    assert "episode_id 'r2-e1' is already stored" in outcome["6-dup.jsonl"]
    assert _dumped(tmp_path / "thr.duckdb") == _dumped(tmp_path / "seq.duckdb")
    assert not [t for t in threading.enumerate() if t.name == "memuse-parse"]
    assert sys.getswitchinterval() == before  # restored


def test_an_import_abandoned_after_its_first_file_stops_its_parse_thread(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    files = [_run_file(folder, f"{k}.jsonl", f"r{k}", [f"r{k}-e{i}" for i in range(40)]) for k in range(3)]
    con = connect(tmp_path / "s.duckdb")
    before = sys.getswitchinterval()
    try:
        it = ingest_files(con, files, workers=0, thread=True)
        path, first = next(it)
        assert path == files[0] and first.status == "imported"
        assert [t for t in threading.enumerate() if t.name == "memuse-parse"]  # file 1 is being parsed
        assert sys.getswitchinterval() == pytest.approx(ParseThread.SWITCH_INTERVAL)
        it.close()
        assert not [t for t in threading.enumerate() if t.name == "memuse-parse"]
        assert sys.getswitchinterval() == before
        # only the file that was yielded is stored, and the connection is usable (no open transaction)
        assert con.execute("SELECT count(*) FROM files").fetchone()[0] == 1
        assert con.execute("SELECT count(DISTINCT run_id) FROM episodes").fetchone()[0] == 1
        con.execute("BEGIN TRANSACTION")
        con.execute("ROLLBACK")
    finally:
        con.close()


def test_the_parse_thread_is_used_for_two_or_more_files_of_enough_input(tmp_path):
    small, big = tmp_path / "small.jsonl", tmp_path / "big.jsonl"
    small.write_text("{}\n")
    with open(big, "wb") as f:
        f.truncate(PIPELINE_MIN_BYTES)  # sparse: only the size counts
    assert _thread_helps([small, big])
    assert not _thread_helps([big])  # one file: nothing to overlap
    assert not _thread_helps([small, small])


def test_a_dead_worker_stops_the_import_without_hanging_or_half_a_file(tmp_path):
    folder = tmp_path / "in"
    folder.mkdir()
    files = [_run_file(folder, f"{k}.jsonl", f"r{k}", [f"r{k}-e{i}" for i in range(60)]) for k in range(3)]
    db = tmp_path / "s.duckdb"
    con = connect(db)
    killed = []

    def kill_workers(_n: int) -> None:
        if not killed:
            for child in multiprocessing.active_children():
                os.kill(child.pid, signal.SIGKILL)
                killed.append(child.pid)

    try:
        with pytest.raises(RuntimeError, match="worker process died"):
            for _ in ingest_files(con, files, workers=2, min_bytes=0, on_event=kill_workers):
                pass
        # every stored episode belongs to a committed file: nothing half-written
        assert (
            con.execute(
                "SELECT count(*) FROM episodes WHERE file_id NOT IN (SELECT file_id FROM files)"
            ).fetchone()[0]
            == 0
        )
        assert (
            con.execute(
                "SELECT count(*) FROM calls c LEFT JOIN episodes e USING (episode_id) "
                "WHERE e.episode_id IS NULL"
            ).fetchone()[0]
            == 0
        )
    finally:
        con.close()
    assert killed


_FORKED = """
import json, sys, threading
from pathlib import Path
from memuse_core.ingest.base import IngestError
from memuse_core.ingest.parallel import ingest_files, start_workers
from memuse_core.store import connect

if __name__ == "__main__":
    files = [Path(f) for f in json.loads(sys.argv[2])]
    pool = start_workers(files, workers=2, min_bytes=0)  # before the store is opened: forked
    con = connect(sys.argv[1])
    out = [
        (p.name, str(r) if isinstance(r, IngestError) else f"{r.status} {r.episodes} {r.events} {r.error}")
        for p, r in ingest_files(con, files, workers=2, min_bytes=0, pool=pool)
    ]
    late = start_workers(files, workers=2, min_bytes=0)  # this process now holds DuckDB: spawned
    late.close()
    con.close()
    codes = [p.exitcode for p in pool.procs + late.procs]
    print(json.dumps({"out": out, "methods": [pool.method, late.method], "codes": codes}))
"""


def test_workers_started_before_the_store_is_opened_are_forked_and_store_the_same(tmp_path):
    """`start_workers` forks the workers in a process that never opened DuckDB (as `memuse ingest`
    and the benchmark call it) and spawns them once it has; either way the same store results."""
    import json
    import subprocess
    import sys

    files = _corpus(tmp_path / "in")
    seq = _ingest(tmp_path / "seq.duckdb", files, workers=0)
    script = tmp_path / "forked.py"
    script.write_text(_FORKED)
    db = tmp_path / "forked.duckdb"
    run = subprocess.run(
        [sys.executable, str(script), str(db), json.dumps([str(p) for p in files])],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout.strip().splitlines()[-1])
    assert got["methods"] == ["fork", "spawn"]
    assert got["codes"] == [0, 0, 0, 0]  # used and unused workers alike end cleanly
    assert [tuple(x) for x in got["out"]] == seq
    assert _dumped(db) == _dumped(tmp_path / "seq.duckdb")
