"""Browser journey (h): save an annotation while another process holds the database.

Invariants, in headless Chromium against `streamlit run app.py`, with a second process holding
the DuckDB file read-write (as `memuse ingest` does): saving an annotation says it is pending
(naming the holder) and the draft stays in the form; the page stays usable; once the holder
exits, the app saves the annotation by itself within seconds and says so, and the database then
holds it; no request leaves the machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_support import demo_db, module_browser, module_server, open_app, settled, wait_text
from lock_holder import held

pytestmark = pytest.mark.browser
server = module_server(demo_db)
browser = module_browser()
NOTE = "Written while the database was busy"


def _notes(db: Path) -> list[str]:
    from memuse_core.store import connect
    from memuse_core.store.app import case_studies as store_cs

    con = connect(db, read_only=True)
    try:
        return list(store_cs.list_annotations(con)["note"])
    finally:
        con.close()


def test_annotation_saved_after_the_lock_is_released(server, browser, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    base, db = server
    page = browser.page()
    open_app(page, f"{base}/case_studies")
    page.get_by_text("Annotate a step, span or item").click()
    settled(page)
    page.locator("[data-testid='stRadio']").get_by_text("step", exact=True).click()
    settled(page)
    # The target box is a new widget per kind: wait until the span kind's box is gone.
    page.wait_for_function("() => document.querySelectorAll('input[aria-label=\"Target id\"]').length === 1")
    target = page.get_by_role("textbox", name="Target id")
    note = page.get_by_role("textbox", name="Note (markdown)")
    for attempt in range(3):  # on a loaded machine a rerun still drawing can reset the box just filled
        target.fill("any-episode#S1")
        target.press("Enter")
        settled(page)
        try:
            note.wait_for(timeout=20_000)
            break
        except Exception:
            if attempt == 2:
                raise
    with held(db, tmp_path) as holder:
        note.fill(NOTE)
        page.get_by_role("button", name="Save annotation").click()
        pending = page.locator("[data-testid='stAlertContentWarning']", has_text="Pending")
        pending.first.wait_for()
        assert f"process {holder.pid}" in pending.first.inner_text()
        expect(note).to_have_value(NOTE)  # the draft is kept
        assert page.get_by_role("heading", name="Case studies").is_visible()
        # The retry above the page (every 2 s) meets the lock too and lists what waits.
        wait_text(page, "Pending: 1 change waiting")
    wait_text(page, "Saved 1 pending change")
    assert _notes(db) == [NOTE]
    page.context.close()
