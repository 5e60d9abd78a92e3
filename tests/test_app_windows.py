"""The timeline and the transcript explain credit windows as MemUse A.1.5 defines them, on the
Figure 2 episode (3.3) taken through the real importer and context build.

Invariants: A in S1 keeps the credit through step 9 although the harness removes A's text from
the input after step 7 (removal never ends a window); its window ends because the re-entry S4
(first consumed at step 10) takes over; B's window runs to the episode end; the shorter copy A'
in S3 has an empty window because the visible A keeps the credit; the transcript marks each delivery at its
consuming step with the span's windows, and marks where a window closes.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from test_context_figure2 import A_SHORT, A, B

from memuse_core.build import build_store
from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import RunEvent
from memuse_core.ingest import ingest_path
from memuse_core.store import connect
from memuse_core.views import transcript as tr_view
from memuse_core.views.common import open_read
from memuse_core.views.timeline import timeline


def _figure2_events() -> list:
    b = EpisodeBuilder("fig2", run_id="r", task="Fix the timestamp parser")
    b.step("search", "memory search dates", f"[A] {A}", tool_memory=([entry("A", A)], "search_result"))
    b.step("search", "memory search tests", f"[B] {B}", tool_memory=([entry("B", B)], "search_result"))
    b.step("search again", "memory search dates", f"[A] {A}", tool_memory=([entry("A", A)], "search_result"))
    b.step("look", "cat src/dates.py", "def parse(s): ...")
    b.step(
        "preview",
        "memory preview dates",
        f"preview: {A_SHORT}",
        tool_memory=([entry("A", A_SHORT, version="preview")], "search_preview"),
    )
    b.step("edit", "sed -i s/fromisoformat/isoparse/ src/dates.py", "")
    b.step("test", "pytest tests/test_dates.py", "1 failed", exit_code=1)
    b.retract([2, 3, 6, 7])
    b.step("inspect", "git diff", "diff --git ...")
    b.step(
        "search once more", "memory search dates", f"[A] {A}", tool_memory=([entry("A", A)], "search_result")
    )
    b.step("edit", "sed -i s/x/y/ src/dates.py", "")
    b.step("test", "pytest tests/test_dates.py", "2 passed")
    b.final("Done.")
    return [RunEvent(run_id="r", config="mem"), *b.finish(resolved=True)]


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("fig2")
    log = d / "fig2.jsonl"
    log.write_text("".join(e.model_dump_json() + "\n" for e in _figure2_events()))
    db = d / "fig2.duckdb"
    con = connect(db)
    try:
        ingest_path(con, log)
    finally:
        con.close()
    build_store(db)
    return db


def test_window_reasons_follow_figure2(db: Path) -> None:
    con = open_read(db, 5)
    try:
        tl = timeline(con, "fig2")
    finally:
        con.close()
    rows = tl.window_rows.set_index("span_id")
    s1, s2, s3, s4 = rows.index
    assert list(rows["window"]) == ["S2–S9", "S3–S12", "empty", "S10–S12"]
    assert f"span {s4}, first consumed at S10" in rows.loc[s1, "why_it_ends"]
    assert "episode end" in rows.loc[s2, "why_it_ends"]
    assert "does not end a window" in rows.loc[s2, "why_it_ends"]
    assert "empty window" in rows.loc[s3, "why_it_ends"] and "still visible" in rows.loc[s3, "why_it_ends"]
    assert "episode end" in rows.loc[s4, "why_it_ends"]
    # The figure's hover says the same as the table.
    assert tl.figure is not None
    bars = next(t for t in tl.figure.data if t.type == "bar")
    assert len(bars.hovertext) == 3 and f"span {s4}" in bars.hovertext[0]


def test_transcript_marks_deliveries_and_window_ends(db: Path) -> None:
    con = open_read(db, 5)
    try:
        tr = tr_view.transcript(con, "fig2", tr_view.page_of(1))
        assert tr_view.transcript(con, "missing") is None
    finally:
        con.close()
    assert tr is not None and tr.first == 1 and tr.last == 12 and tr.pages == 1
    by_step = {s.step: s for s in tr.steps}
    assert [s.step for s in tr.steps] == list(range(1, 13))
    d2 = by_step[2].deliveries
    assert len(d2) == 1 and not d2[0].restatement and [e.window for e in d2[0].entries] == ["S2–S9"]
    assert by_step[4].deliveries and by_step[4].deliveries[0].restatement
    assert [e.window for e in by_step[9].windows_close] == ["S2–S9"]
    assert "takes over" in by_step[9].windows_close[0].why_it_ends
    assert by_step[7].exit_code == 1 and by_step[7].kind == "pytest"
    assert "1 failed" in by_step[7].results[0].output
