"""kill -9 at named points of `memuse ingest` / `memuse build`, then reruns.

Each kill stops the real CLI at a crash point (`MEMUSE_FAULT`, memuse_core.crash; see
`killing.py`), kills it with SIGKILL, and checks that none of its children (parse workers, build
workers, the multiprocessing resource tracker) outlives it. The kills are chained: each rerun is
itself killed at the next point, and only the last runs to the end; the store must then be
identical, table by table, to one imported without interruption, and complete (no build marker,
every episode built). Reruns over an interrupted build must say so. `benchmarks/kill.py` kills
at every point separately (the reliability figures); this test keeps the suite short.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from killing import checksums, corpus, kill_at, memuse, survivors

from memuse_core.store import connect
from memuse_core.store.build_state import build_state


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    d = tmp_path_factory.mktemp("kill")
    src = corpus(d / "corpus")
    db = d / "reference.duckdb"
    r = memuse("ingest", str(src), "--db", str(db))
    assert r.returncode == 0, r.stderr
    sums = checksums(db)
    assert sums["episodes"].startswith("110:") and not sums["spans"].startswith("0:")
    return src, sums


def _kill(point: str, args: list[str], tmp: Path, *, workers: bool = False) -> None:
    kids = kill_at(point, args, tmp / "stopped.pid")
    if workers:
        assert len(kids) >= 2, f"no worker processes at {point}: {kids}"
    assert survivors(kids) == [], f"children of memuse survived kill -9 at {point}"


def _complete(db: Path) -> bool:
    con = connect(db, read_only=True)
    try:
        return build_state(con).complete
    finally:
        con.close()


def test_sequential_ingest_killed_at_every_point(reference, tmp_path: Path) -> None:
    src, want = reference
    db = tmp_path / "store.duckdb"
    ingest = ["ingest", str(src), "--db", str(db)]
    _kill("ingest.parse:2", ingest, tmp_path)  # a.jsonl committed, b.jsonl being parsed
    _kill("ingest.write:1", ingest, tmp_path)  # b.jsonl written, not committed
    _kill("ingest.commit:1", ingest, tmp_path)  # b.jsonl committed, c.jsonl not started
    _kill("build.start", ingest, tmp_path)  # every file committed, build marker set
    _kill("build.batch:1", ingest, tmp_path)  # 100 of 110 episodes built
    r = memuse(*ingest, "--no-build")  # does not build, but does not hide it either
    assert r.returncode == 0, r.stderr
    assert "imported 0 episodes from 0 files; 3 already imported" in r.stdout
    assert "did not finish; 10 episodes are not built: run `memuse build`" in r.stderr
    assert not _complete(db)
    r = memuse(*ingest)
    assert r.returncode == 0, r.stderr
    assert "finished an interrupted build" in r.stdout and ": 10 episodes built" in r.stdout
    assert checksums(db) == want
    assert _complete(db)


def test_parallel_ingest_killed_while_workers_parse(reference, tmp_path: Path) -> None:
    src, want = reference
    db = tmp_path / "store.duckdb"
    ingest = ["ingest", str(src), "--db", str(db), "--workers", "2"]
    _kill("ingest.parse:2", ingest, tmp_path, workers=True)
    _kill("ingest.write:2", ingest, tmp_path, workers=True)
    r = memuse(*ingest)
    assert r.returncode == 0, r.stderr
    assert checksums(db) == want and _complete(db)


def test_build_with_workers_killed_between_batches(reference, tmp_path: Path) -> None:
    src, want = reference
    db = tmp_path / "store.duckdb"
    assert memuse("ingest", str(src), "--db", str(db), "--no-build").returncode == 0
    _kill("build.batch:1", ["build", "--db", str(db), "--workers", "2"], tmp_path, workers=True)
    r = memuse("build", "--db", str(db))
    assert r.returncode == 0, r.stderr
    assert "did not finish: finishing it" in r.stdout and "built 10 episodes" in r.stdout
    assert checksums(db) == want and _complete(db)
