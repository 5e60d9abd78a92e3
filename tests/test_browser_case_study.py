"""Browser journey (d): annotate a span, a step and an item, export the case study, open it offline.

Invariants, in headless Chromium against `streamlit run app.py`: the span annotation made in the
span inspector is confirmed there; the step and item annotations made on the Case studies page
too; all three collect into the case study, which exports as one HTML file; opened from disk in
a fresh context with every non-local request aborted, the file renders the description's and the
notes' markdown (bold, emphasis, list) with recorded text escaped, draws the timelines, and no
timeline row label is clipped by the chart's left edge; no request leaves the machine.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from browser_support import (
    demo_db,
    judged_citation,
    module_browser,
    module_server,
    open_app,
    settled,
    wait_text,
)

pytestmark = pytest.mark.browser
server = module_server(demo_db)
browser = module_browser()


def _item(db: Path, span: str) -> str:
    from memuse_core.store import connect

    con = connect(db, read_only=True)
    try:
        row = con.execute(
            "SELECT namespace, item_id FROM span_entries WHERE span_id = ? ORDER BY pos LIMIT 1", [span]
        ).fetchone()
    finally:
        con.close()
    assert row
    return f"{row[0]}::{row[1]}"


def _save(page, scope, note: str) -> None:
    scope.get_by_role("textbox", name="Note (markdown)").fill(note)
    scope.get_by_role("button", name="Save annotation").click()
    wait_text(page, "Saved annotation")
    settled(page)


def test_annotate_span_step_item_then_export_and_read_offline(server, browser, tmp_path: Path) -> None:
    base, db = server
    pick = judged_citation(db)
    page = browser.page()

    # A case study with a markdown description.
    open_app(page, f"{base}/case_studies")
    page.get_by_role("textbox", name="Name", exact=True).fill("Journey D")
    page.get_by_role("textbox", name="Description (markdown)").fill("Why **this** matters")
    page.get_by_role("button", name="Create case study").click()
    wait_text(page, "0 annotations")
    settled(page)

    # 1. The span, annotated in the span inspector: confirmed there.
    page.locator("[data-testid='stSidebarNav'] a", has_text="Span inspector").click()
    page.get_by_role("heading", name="Span inspector").wait_for()
    settled(page)
    span_box = page.get_by_role("textbox", name="Span id")
    span_box.fill(pick["span"])
    span_box.press("Enter")
    page.get_by_role("heading", name="Entries, signals and usage labels").wait_for()
    settled(page)
    page.get_by_text("Annotate this span").click()
    settled(page)
    form = page.locator("[data-testid='stForm']").filter(has_text="Annotate span")
    _save(page, form, "Span *note* <script>alert(1)</script>")

    # 2. and 3. A step and an item, annotated on the Case studies page.
    page.locator("[data-testid='stSidebarNav'] a", has_text="Case studies").click()
    page.get_by_role("heading", name="Case studies").wait_for()
    settled(page)
    page.get_by_text("Annotate a step, span or item").click()
    settled(page)
    for kind, target, note in (
        ("step", f"{pick['episode']}#S{pick['step']}", "- first look\n- second look"),
        ("item", _item(db, pick["span"]), "The **card** itself"),
    ):
        box = page.get_by_role("textbox", name="Target id")
        before = box.input_value()
        page.locator("[data-testid='stRadio']").get_by_text(kind, exact=True).click()
        # The target box is a new widget per kind: wait until it replaced the previous one.
        page.wait_for_function(
            "(v) => document.querySelector('input[aria-label=\"Target id\"]').value !== v", arg=before
        )
        settled(page)
        box.fill(target)
        box.press("Enter")
        settled(page)
        _save(page, page.locator("[data-testid='stForm']").filter(has_text=f"Annotate {kind}"), note)
    page.reload()  # a fresh read of the case study (same URL, ?case=…)
    wait_text(page, "3 annotations")
    settled(page)

    # Export and read the file offline.
    page.get_by_role("button", name="Prepare export (HTML and Markdown)").click()
    settled(page)
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download HTML").click()
    out = tmp_path / "case.html"
    dl.value.save_as(out)
    page.context.close()

    reader = browser.page()
    reader.goto(out.as_uri())
    reader.get_by_role("heading", name="Journey D").wait_for()
    assert reader.locator(".description strong").inner_text() == "this"
    assert reader.locator(".note em", has_text="note").count() == 1
    assert reader.locator(".note li", has_text="second look").count() == 1
    assert reader.locator(".note strong", has_text="card").count() == 1
    assert "<script>alert(1)</script>" in reader.locator(".note", has_text="Span").first.inner_text()
    reader.locator(".figure .main-svg").first.wait_for()
    figures = reader.locator(".figure")
    assert figures.count() >= 2  # the span's and the step's timelines
    for i in range(figures.count()):
        fig = figures.nth(i)
        left = fig.locator(".main-svg").first.bounding_box()
        assert left is not None
        labels = fig.locator(".ytick text")
        assert labels.count() > 0
        for j in range(labels.count()):
            bb = labels.nth(j).bounding_box()
            assert bb is not None and bb["x"] >= left["x"] - 0.5, (i, labels.nth(j).inner_text(), bb, left)
    reader.context.close()
