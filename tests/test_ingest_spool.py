"""The parallel ingest hands rows from its parse workers to the writing process through spool
files (`ingest.spool`): the tables arrive unchanged, and no file or folder is left behind, whether
the import succeeds, meets bad files, or is abandoned part way."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from test_ingest_parallel import _corpus, _ingest

from memuse_core.ingest import spool as spool_mod
from memuse_core.ingest.parallel import ingest_files
from memuse_core.ingest.spool import make_spool, remove_spool, spool
from memuse_core.store import connect
from memuse_core.store.arrow_rows import rows_to_arrow


def test_spooled_tables_come_back_equal_and_the_file_is_removed(tmp_path):
    results = rows_to_arrow(
        "tool_results",
        [("e1", "c1", "t1", "bash", 5, -7, 0, 0, 3), ("e1", "c2", None, "bash", None, 9, None, 0, 4)],
    )
    blobs = rows_to_arrow("blobs", [(1, "é ü"), (-2, ""), (3, "x" * 100_000)])
    sp = spool(str(tmp_path), "0-1", [("tool_results", results), ("blobs", blobs)])
    assert os.path.exists(sp.path)
    got = sp.load()
    assert not os.path.exists(sp.path)  # removed as soon as it is mapped
    assert [t for t, _ in got] == ["tool_results", "blobs"]
    assert got[0][1].equals(results) and got[1][1].equals(blobs)
    assert got[1][1].schema == blobs.schema
    other = spool(str(tmp_path), "0-2", [("blobs", blobs)])
    other.discard()
    assert os.listdir(tmp_path) == []


def test_a_parallel_import_leaves_no_spool_files(tmp_path, monkeypatch):
    root = tmp_path / "spool"
    root.mkdir()
    monkeypatch.setattr(spool_mod, "spool_root", lambda: str(root))
    files = _corpus(tmp_path / "in")  # good files, a bad one, a repeat, a duplicate episode id
    out = dict(_ingest(tmp_path / "s.duckdb", files, workers=2))
    assert "4-bad.jsonl:13: invalid JSON" in out["4-bad.jsonl"]
    assert sum(o.startswith("imported") for o in out.values()) >= 4
    assert list(root.iterdir()) == []
    # an import abandoned after its first file (the caller stops iterating) cleans up as well
    con = connect(tmp_path / "t.duckdb")
    try:
        it = ingest_files(con, files, workers=2, min_bytes=0)
        next(it)
        it.close()
    finally:
        con.close()
    assert list(root.iterdir()) == []


def test_a_spool_folder_of_a_dead_import_is_removed_by_the_next(tmp_path, monkeypatch):
    monkeypatch.setattr(spool_mod, "spool_root", lambda: str(tmp_path))
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    stale = tmp_path / f"memuse-ingest-{int(dead.stdout)}-abc"
    stale.mkdir()
    (stale / "3-1").write_bytes(b"rows")
    live = tmp_path / f"memuse-ingest-{os.getpid()}-def"  # this process is alive: kept
    live.mkdir()
    unrelated = tmp_path / "other"
    unrelated.mkdir()
    folder = make_spool()
    assert Path(folder).parent == tmp_path and Path(folder).is_dir()
    assert not stale.exists() and live.exists() and unrelated.exists()
    remove_spool(folder)
    assert not Path(folder).exists()
