"""Small files committed a group at a time (`ingest.grouped`, used for batch folders).

Invariant: importing files grouped leaves the store exactly as the one-transaction-per-file loop
does (every table, row for row, file ids included) and yields the same result or refusal for every
file: a bad file in the middle of a group is refused with its usual message and the others land;
a group the database refuses (an id another file of the group already stored) is imported again
file by file, so the refusal names the file, line and field as before.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from realruns_helpers import mini_batch
from store_dump import dump_store

from memuse_core.ingest import IngestError, IngestResult
from memuse_core.ingest.batch import ingest_batch
from memuse_core.ingest.grouped import ingest_grouped
from memuse_core.ingest.layouts import plan_folder
from memuse_core.ingest.parallel import ingest_files
from memuse_core.store import connect

TASKS = {f"django__django-{k}": "Submitted" for k in range(1, 8)}


def outcome(r: IngestResult | IngestError) -> tuple:
    if isinstance(r, IngestError):
        return ("error", str(r))
    return (r.status, r.format, r.episodes, r.events, r.error)


def both_ways(tmp_path: Path, files: list[Path]) -> tuple[list[tuple], list[tuple]]:
    """Import `files` grouped and one by one into two new stores; the stores must be equal."""
    results = []
    for name, grouped in (("grouped", True), ("single", False)):
        con = connect(tmp_path / f"{name}.duckdb")
        results.append([outcome(r) for _, r in ingest_files(con, files, workers=0, grouped=grouped)])
        con.close()
    assert dump_store(tmp_path / "grouped.duckdb") == dump_store(tmp_path / "single.duckdb")
    return results[0], results[1]


def test_batch_folder_grouped_equals_file_by_file(tmp_path: Path) -> None:
    folder = mini_batch(tmp_path / "nano-output", TASKS)
    stores = {}
    for grouped in (True, False):
        db = tmp_path / f"{grouped}.duckdb"
        con = connect(db)
        b = plan_folder(folder)
        if grouped:
            res = ingest_batch(con, b, workers=0)
        else:
            from memuse_core.ingest import grouped as g

            old = g.GROUP_FILES
            g.GROUP_FILES = 1  # one file per group: the transaction of each file is its own
            try:
                res = ingest_batch(con, b, workers=0)
            finally:
                g.GROUP_FILES = old
        con.close()
        assert res.count("imported") == len(TASKS)
        stores[grouped] = dump_store(db)
    assert stores[True] == stores[False]
    assert len(stores[True]["episodes"]) == len(TASKS)
    assert [r[0] for r in stores[True]["files"]] == list(range(1, len(TASKS) + 2))


def test_bad_file_in_a_group_is_refused_alone(tmp_path: Path) -> None:
    folder = mini_batch(tmp_path / "b", TASKS)
    files = sorted(folder.rglob("*.traj.json"))
    bad = files[3]
    doc = json.loads(bad.read_text())
    doc["messages"] = []  # an empty trajectory: refused, naming the field
    bad.write_text(json.dumps(doc))
    grouped, single = both_ways(tmp_path, files)
    assert grouped == single
    assert grouped[3][0] == "error" and "messages" in grouped[3][1]
    assert [g[0] for k, g in enumerate(grouped) if k != 3] == ["imported"] * (len(files) - 1)


def test_same_content_twice_is_skipped_in_a_group(tmp_path: Path) -> None:
    folder = mini_batch(tmp_path / "b", dict(list(TASKS.items())[:3]))
    files = sorted(folder.rglob("*.traj.json"))
    copy = tmp_path / "copy" / files[0].name
    copy.parent.mkdir()
    copy.write_bytes(files[0].read_bytes())
    grouped, single = both_ways(tmp_path, [*files, copy])
    assert grouped == single
    assert grouped[-1][0] == "skipped"


def _native(path: Path, run: str, episode: str, call: str) -> Path:
    lines = [
        {"type": "run", "run_id": run},
        {"type": "episode_start", "episode_id": episode, "run_id": run, "task_id": "t"},
        {
            "type": "model_call",
            "episode_id": episode,
            "call_id": call,
            "request": {"messages": [{"role": "user", "content": f"hello {episode}"}]},
            "response": {"content": "hi"},
        },
        {"type": "episode_end", "episode_id": episode},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def test_group_the_database_refuses_is_imported_file_by_file(tmp_path: Path) -> None:
    """The third file reuses a call id of the first (only the store's key finds it)."""
    files = [
        _native(tmp_path / "a.jsonl", "r1", "e1", "c1"),
        _native(tmp_path / "b.jsonl", "r2", "e2", "c2"),
        _native(tmp_path / "c.jsonl", "r3", "e3", "c1"),
        _native(tmp_path / "d.jsonl", "r4", "e4", "c4"),
    ]
    grouped, single = both_ways(tmp_path, files)
    assert grouped == single
    assert [g[0] for g in grouped] == ["imported", "imported", "error", "imported"]
    assert "c.jsonl:3" in grouped[2][1] and "call_id 'c1'" in grouped[2][1]


@pytest.mark.parametrize("group_files", [1, 2, 64])
def test_group_size_does_not_change_the_store(tmp_path: Path, group_files: int) -> None:
    from memuse_core.ingest import grouped as g

    folder = mini_batch(tmp_path / "b", TASKS)
    files = sorted(folder.rglob("*.traj.json"))
    old = g.GROUP_FILES
    g.GROUP_FILES = group_files
    try:
        con = connect(tmp_path / "g.duckdb")
        out = [outcome(r) for _, r in ingest_grouped(con, files)]
        con.close()
    finally:
        g.GROUP_FILES = old
    con = connect(tmp_path / "s.duckdb")
    ref = [outcome(r) for _, r in ingest_files(con, files, workers=0)]
    con.close()
    assert out == ref
    assert dump_store(tmp_path / "g.duckdb") == dump_store(tmp_path / "s.duckdb")
