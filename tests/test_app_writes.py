"""Annotations and case-study writes are never lost to a busy database.

Invariants, with a real second process holding the DuckDB file read-write: a write is journaled
and reported as queued (naming the holder) instead of failing; once the lock is released it is
saved, in the order it was made (a queued annotation then its deletion leaves nothing); the
journal is empty afterwards. In the app, a save while the database is busy says "Pending",
keeps the draft in the form and the page on screen (the last data it read), and after the lock
is released the app saves it and says so.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from lock_holder import held
from streamlit.testing.v1 import AppTest
from test_app_corpus import make_db

from memuse_core.casestudy import new_annotation
from memuse_core.store import connect
from memuse_core.store.app import case_studies as store_cs
from memuse_core.store.app.pending import pending_path
from memuse_core.views import writes

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def base_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("writes"), judge=False)


@pytest.fixture
def db(base_db: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "app.duckdb"
    shutil.copy(base_db, copy)
    return copy


def _annotations(db: Path) -> list[str]:
    con = connect(db, read_only=True)
    try:
        return list(store_cs.list_annotations(con)["annotation_id"])
    finally:
        con.close()


def test_a_write_to_a_busy_database_is_queued_then_saved_in_order(db: Path, tmp_path: Path) -> None:
    keep = new_annotation("step", "rA1-t1#S2", episode_id="rA1-t1", note="kept")
    gone = new_annotation("step", "rA1-t1#S3", episode_id="rA1-t1", note="deleted later")
    with held(db, tmp_path) as holder:
        res = writes.save(db, writes.annotation_write(keep), timeout=0.2)
        assert res.saved == 0 and [w.label for w in res.pending] == [
            f"annotation {keep.annotation_id} on step rA1-t1#S2"
        ]
        assert res.busy and f"process {holder.pid}" in res.busy
        writes.save(db, writes.annotation_write(gone), timeout=0.2)
        res = writes.save(db, writes.delete_write([gone.annotation_id]), timeout=0.2)
        assert len(res.pending) == 3
        assert writes.flush(db, 0.2).pending  # still busy: nothing saved, nothing lost
    res = writes.flush(db, 5)
    assert res.saved == 3 and res.pending == [] and res.busy is None
    assert _annotations(db) == [keep.annotation_id]
    assert pending_path(db).stat().st_size == 0
    # Replaying the same records again changes nothing (a crash between commit and truncation).
    assert writes.flush(db, 5).saved == 0 and _annotations(db) == [keep.annotation_id]


def test_app_keeps_the_draft_says_pending_and_saves_after_the_lock(
    db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMUSE_DB", str(db))
    monkeypatch.setenv("MEMUSE_APP_LOCK_TIMEOUT", "0.3")
    monkeypatch.setenv("MEMUSE_APP_WRITE_TIMEOUT", "0.3")
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/6_case_studies.py")
    at.run()
    at.radio(key="cs_target_kind").set_value("step").run()
    at.text_input(key="cs_target_step").input("rA1-t1#S2").run()
    assert not at.exception, [e.value for e in at.exception]
    with held(db, tmp_path) as holder:
        os.utime(db)  # the holder writes: every cached read of the old state is now stale
        note = "Draft written while `memuse ingest` ran"
        at.text_area(key="ann_note_cs_step").input(note)
        at.button(key="FormSubmitter:ann_form_cs_step-Save annotation").click().run()
        assert not at.exception, [e.value for e in at.exception]
        warnings = " ".join(w.value for w in at.warning)
        assert "Pending" in warnings and f"process {holder.pid}" in warnings
        assert at.text_area(key="ann_note_cs_step").value == note  # the draft is kept
        assert at.title[0].value == "Case studies" and at.subheader  # the page stayed, on its last data
        assert _annotations_after_lock_is_pending(db)
    # The next run of the app (AppTest re-runs only the page after a session's first run, so a
    # new session stands for it) finds the database free, saves the queued annotation, says so.
    after = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    after.run()
    assert not after.exception, [e.value for e in after.exception]
    assert any("Saved 1 pending change" in s.value for s in after.success), [s.value for s in after.success]
    con = connect(db, read_only=True)
    try:
        notes = list(store_cs.list_annotations(con)["note"])
    finally:
        con.close()
    assert notes == [note]


def _annotations_after_lock_is_pending(db: Path) -> bool:
    return [w.kind for w in writes.pending(db)] == ["annotation"]
