"""Store invariants: events -> store -> events is lossless; re-importing a file is a no-op;
resent history is stored once (content addressing + delta-encoded inputs); a bad file leaves the
store unchanged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.episode import episodes_from_events
from memuse_core.events import (
    MemoryChange,
    Message,
    ModelCall,
    Request,
    Response,
    RunEvent,
    dump_event,
)
from memuse_core.ingest import IngestError, ingest_path
from memuse_core.store import connect, export_events, load_episode, store_info
from memuse_core.store.schema import SCHEMA_VERSION


def _write(path: Path, events) -> Path:
    path.write_text("".join(dump_event(e) + "\n" for e in events))
    return path


def _episode(eid: str, n_steps: int = 5):
    b = EpisodeBuilder(eid, run_id="r1", task="Fix `parse_date` for ISO weeks", repo="acme/dates")
    b.host_block(
        "recall",
        "User Memories:\n- parse_date lives in src/dates.py",
        [entry("m1", "parse_date lives in src/dates.py")],
    )
    for i in range(n_steps):
        b.step(f"step {i}", f"grep -n parse_date src/dates.py # {i}", f"src/dates.py:{i}:def parse_date(s):")
    b.step(
        "search",
        "mem0 search iso week",
        "1. [m2] ISO weeks start on Monday",
        tool_memory=([entry("m2", "ISO weeks start on Monday")], "search_result"),
    )
    b.retract([3, 4])
    b.final("Submitted.")
    return b.finish(resolved=False, exit_status="Submitted", submission="diff --git a b")


def _corpus():
    return [
        RunEvent(run_id="r1", config="mem0", model="m"),
        MemoryChange(namespace="default", item_id="m1", op="create", value="v", run_id="r1"),
        *_episode("e1"),
        *_episode("e2", 3),
    ]


def test_round_trip_is_lossless(tmp_path, db_file):
    events = _corpus()
    src = _write(tmp_path / "run.jsonl", events)
    con = connect(db_file)
    assert ingest_path(con, src).status == "imported"
    back = list(export_events(con))
    # same event types in the same order
    assert [e.type for e in back] == [e.type for e in events]
    a, b = episodes_from_events(events), episodes_from_events(back)
    for eid in a:
        ra, rb = a[eid], b[eid]
        assert [c.messages for c in ra.calls] == [c.messages for c in rb.calls]
        assert [c.call.response for c in ra.calls] == [c.call.response for c in rb.calls]
        assert [s.observations for s in ra.steps] == [s.observations for s in rb.steps]
        assert ra.deliveries == rb.deliveries
        assert ra.context_events == rb.context_events
        assert ra.start == rb.start and ra.end == rb.end
    # exporting again from a second store gives the same stream
    src2 = _write(tmp_path / "again.jsonl", back)
    con2 = connect(tmp_path / "two.duckdb")
    ingest_path(con2, src2)
    assert [dump_event(e) for e in export_events(con2)] == [dump_event(e) for e in back]


def test_load_episode_matches_events(tmp_path, db_file):
    events = _corpus()
    con = connect(db_file)
    ingest_path(con, _write(tmp_path / "run.jsonl", events))
    rec = load_episode(con, "e1")
    want = episodes_from_events(events)["e1"]
    assert rec.T == want.T == 7
    assert rec.run is not None and rec.run.config == "mem0"
    assert [c.messages for c in rec.calls] == [c.messages for c in want.calls]
    with pytest.raises(KeyError):
        load_episode(con, "nope")


def test_reimport_same_file_is_idempotent(tmp_path, db_file):
    src = _write(tmp_path / "run.jsonl", _corpus())
    con = connect(db_file)
    ingest_path(con, src)
    before = store_info(con)
    res = ingest_path(con, src)
    assert res.status == "skipped"
    assert store_info(con) == before


def test_duplicate_episode_from_other_file_is_rejected(tmp_path, db_file):
    con = connect(db_file)
    ingest_path(con, _write(tmp_path / "a.jsonl", _corpus()))
    before = store_info(con)
    other = [RunEvent(run_id="r2"), *_episode("e1")]
    with pytest.raises(IngestError, match="episode_id 'e1' is already stored"):
        ingest_path(con, _write(tmp_path / "b.jsonl", other))
    assert store_info(con) == before


def test_resent_history_is_stored_once(tmp_path, db_file):
    """Full (non-delta) requests that resend the whole history cost no new text per step."""
    msgs = [Message(role="system", content="S" * 1000), Message(role="user", content="U" * 1000)]
    events = [RunEvent(run_id="r"), *EpisodeBuilder("e", run_id="r").events]
    for i in range(50):
        events.append(
            ModelCall(
                episode_id="e",
                call_id=f"c{i}",
                request=Request(messages=list(msgs)),
                response=Response(content=f"reply {i}"),
            )
        )
        msgs.append(Message(role="assistant", content=f"reply {i}"))
        msgs.append(Message(role="user", content=f"observation {i} " + "x" * 200))
    con = connect(db_file)
    ingest_path(con, _write(tmp_path / "full.jsonl", events))
    info = store_info(con)
    unique = 2000 + sum(len(f"reply {i}") + len(f"observation {i} ") + 200 for i in range(50))
    # every distinct text once (plus small message shells), not 50 copies of the history
    assert info["unique_text_chars"] < 2 * unique
    stored_refs = con.execute("SELECT sum(len(msg_hashes)) FROM calls").fetchone()[0]
    assert stored_refs <= 2 + 2 * 50  # only appended messages are referenced per call
    rec = load_episode(con, "e")
    assert len(rec.calls[-1].messages) == 2 + 2 * 49


def test_restated_delivery_entries_are_stored_once(tmp_path, db_file):
    """A host block restated on every call stores its entry rows once per file; the
    `delivery_entries` view still gives every delivery its own rows."""
    events = _corpus()
    con = connect(db_file)
    ingest_path(con, _write(tmp_path / "run.jsonl", events))
    n_deliveries, n_view = con.execute(
        "SELECT (SELECT count(*) FROM deliveries), (SELECT count(*) FROM delivery_entries)"
    ).fetchone()
    stored = con.execute("SELECT count(*) FROM delivery_entry_rows").fetchone()[0]
    restated = con.execute("SELECT count(*) FROM deliveries WHERE entries_of IS NOT NULL").fetchone()[0]
    want = sum(len(e.entries) for e in events if e.type == "memory_delivery")
    assert n_view == want and n_deliveries == sum(e.type == "memory_delivery" for e in events)
    assert restated >= 10 and stored == 2  # m1 (restated each call, both episodes) and m2 (once)
    # the view's rows are the events' entries, delivery by delivery
    rows = con.execute("SELECT delivery_id, pos, episode_id, item_id FROM delivery_entries").fetchall()
    assert sorted(rows) == sorted(
        (e.delivery_id, i, e.episode_id, x.item_id)
        for e in events
        if e.type == "memory_delivery"
        for i, x in enumerate(e.entries)
    )


def test_a_version_1_store_migrates_its_delivery_entries(tmp_path, db_file):
    con = connect(db_file)
    ingest_path(con, _write(tmp_path / "run.jsonl", _corpus()))
    before = sorted(con.execute("SELECT * FROM delivery_entries").fetchall())
    rec = load_episode(con, "e1")
    # rebuild the version-1 layout: a plain table and no `entries_of`
    con.execute("CREATE TABLE old_entries AS SELECT * FROM delivery_entries")
    con.execute("DROP VIEW delivery_entries")
    con.execute("DROP TABLE delivery_entry_rows")
    con.execute("ALTER TABLE old_entries RENAME TO delivery_entries")
    con.execute("ALTER TABLE deliveries DROP COLUMN entries_of")
    con.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    con.close()
    ro = connect(db_file, read_only=True)  # readers of an old file see the same rows
    assert sorted(ro.execute("SELECT * FROM delivery_entries").fetchall()) == before
    assert load_episode(ro, "e1").deliveries == rec.deliveries  # the loader reads the old layout too
    ro.close()
    con = connect(db_file)  # a writer migrates it
    assert con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(
        SCHEMA_VERSION
    )
    assert sorted(con.execute("SELECT * FROM delivery_entries").fetchall()) == before
    assert con.execute("SELECT count(*) FROM deliveries WHERE entries_of IS NOT NULL").fetchone()[0] == 0
    ingest_path(con, _write(tmp_path / "more.jsonl", [RunEvent(run_id="r9"), *_episode("e9")]))
    assert con.execute("SELECT count(*) FROM delivery_entries WHERE episode_id = 'e9'").fetchone()[0] > 0


@pytest.mark.parametrize(
    "line,needle",
    [
        ('{"type": "episode_start", "episode_id": "x"', "invalid JSON"),
        ('{"type": "bogus", "v": 1}', "unknown event type 'bogus'"),
        ('{"type": "episode_start", "v": 1, "episode_id": 5, "run_id": "r", "task_id": "t"}', "episode_id"),
        ('{"type": "model_call", "v": 1, "episode_id": "e", "call_id": "c", "status": "maybe"}', "status"),
    ],
)
def test_bad_line_names_file_line_field_and_changes_nothing(tmp_path, db_file, line, needle):
    con = connect(db_file)
    ingest_path(con, _write(tmp_path / "good.jsonl", _corpus()))
    before = store_info(con)
    good_lines = [dump_event(e) for e in [RunEvent(run_id="r9"), *_episode("e9")]]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(good_lines[:4] + [line] + good_lines[4:]) + "\n")
    with pytest.raises(IngestError) as ei:
        ingest_path(con, bad)
    msg = str(ei.value)
    assert msg.startswith(f"{bad}:5:") and needle in msg
    assert store_info(con) == before
    assert con.execute("SELECT count(*) FROM files").fetchone()[0] == 1


def test_event_schema_is_published():
    from memuse_core.events import EVENT_TYPES, event_json_schema

    schema = event_json_schema()
    text = json.dumps(schema)
    for t in EVENT_TYPES:
        assert f'"{t}"' in text


def test_schema_ddl_reruns_only_when_its_fingerprint_changes(db_file):
    """An open of a current store skips the DDL; a store written by code with other DDL (another
    fingerprint) gets its missing tables on the next read-write open."""
    con = connect(db_file)
    con.execute("DROP TABLE judge_batches")
    con.close()
    con = connect(db_file)  # same fingerprint: the DDL is not re-run
    assert not con.execute(
        "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'judge_batches'"
    ).fetchone()[0]
    con.execute("UPDATE meta SET value = 'older' WHERE key = 'ddl_hash'")
    con.close()
    con = connect(db_file)
    try:
        assert con.execute(
            "SELECT count(*) FROM duckdb_tables() WHERE table_name = 'judge_batches'"
        ).fetchone()[0]
        assert con.execute("SELECT value FROM meta WHERE key = 'ddl_hash'").fetchone()[0] != "older"
    finally:
        con.close()


def test_connect_waits_for_the_other_mode_in_this_process(db_file):
    """An app session writing while another session's read-only query is open: DuckDB refuses
    the second mode in one process, so `connect` waits for the first to close (or says so)."""
    import threading

    from memuse_core.store.connection import StoreLocked

    connect(db_file).close()
    ro = connect(db_file, read_only=True)
    closing = threading.Event()

    def close_reader() -> None:
        closing.set()  # set before the close: a writer that got in early would find it unset
        ro.close()

    threading.Timer(0.3, close_reader).start()
    con = connect(db_file, timeout=30)
    assert closing.is_set()  # the writer connected only once the reader was closing
    con.close()
    ro = connect(db_file, read_only=True)
    try:
        with pytest.raises(StoreLocked, match="another thread of this process"):
            connect(db_file, timeout=0.3)
    finally:
        ro.close()
