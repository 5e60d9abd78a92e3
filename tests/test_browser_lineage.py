"""Journey (b), in headless Chromium: from a harmful entry to its memory item's lineage to the
episode that wrote the item, by clicks only, in one tab and one session.

The corpus is two hand-made episodes through the real importer, context build and rules judge:
`writer` records a note (a memory change with its origin episode); `reader` receives the note,
edits the file it names and then backs out of it ("wrong file"), which the rules judge reads as
an acted-on entry whose observed effect harmed the episode (A.2.2).

Invariants: the harmful entry is listed; selecting it draws its item's graph (clickable SVG
with the paper's legend words, every node inside its frame, a hover on each node) and lists the recorded change with its origin episode as a
link; clicking the link opens that episode's timeline in the same tab; clicking a graph node
(an episode, a span) opens what it stands for in the same tab and session; no request leaves the machine.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

from browser_support import click_grid_row, module_browser, module_server, open_app, settled

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import MemoryChange, RunEvent

NOTE = "Dates: the bug is in `src/legacy_dates.py`, function `parse_legacy_stamp`; patch it there."


def _corpus() -> list:
    w = EpisodeBuilder("writer", run_id="r1", task_id="t0", position=0, task="Fix the CSV export")
    w.step("look", "grep -rn export src", "src/export.py:1:def export(rows):")
    w.step("edit", "sed -i s/a/b/ src/export.py", "")
    w.step("test", "pytest -q tests/test_export.py", "3 passed")
    w.final("Done; noted the date parser location.")
    writer = w.finish(resolved=True)
    note = MemoryChange(
        namespace="notes",
        item_id="dates-tip",
        version="1",
        op="create",
        value=NOTE,
        episode_id="writer",
        run_id="r1",
    )
    r = EpisodeBuilder(
        "reader", run_id="r1", task_id="t1", position=1, task="Timestamps with a Z fail to parse"
    )
    r.step("look", "grep -rn isoformat src", "src/dates.py:3:def parse(s): return fromisoformat(s)")
    r.step(
        "search memory",
        "memory_search 'dates'",
        f"dates-tip: {NOTE}",
        tool_memory=([entry("dates-tip", NOTE, namespace="notes")], "search_result"),
    )
    r.step("follow the note", "sed -i s/x/y/ src/legacy_dates.py", "")
    r.step("test", "pytest -q tests/test_dates.py", "1 failed")
    r.step(
        "src/legacy_dates.py was the wrong file; revert it",
        "git checkout src/legacy_dates.py",
        "Updated 1 path",
    )
    r.step("fix the real parser", "sed -i s/fromisoformat/isoparse/ src/dates.py", "")
    r.step("test", "pytest -q tests/test_dates.py", "2 passed")
    r.final("Fixed in src/dates.py.")
    reader = r.finish(resolved=True)
    return [RunEvent(run_id="r1", config="notes"), *writer, note, *reader]


def lineage_db(directory: Path) -> Path:
    from memuse_core.build import build_store
    from memuse_core.ingest import ingest_path
    from memuse_core.judge.result import JudgeSettings
    from memuse_core.judge.runner import run_batch
    from memuse_core.store import connect

    log = directory / "notes.jsonl"
    log.write_text("".join(e.model_dump_json() + "\n" for e in _corpus()))
    db = directory / "notes.duckdb"
    con = connect(db)
    try:
        ingest_path(con, log)
    finally:
        con.close()
    build_store(db)
    run_batch(db, JudgeSettings(judge="rules"))
    return db


server = module_server(lineage_db)
browser = module_browser()


def test_corpus_has_a_harmful_entry_with_a_recorded_origin(server) -> None:
    from memuse_core.views import lineage as view
    from memuse_core.views.common import open_read

    _, db = server
    con = open_read(db, 5)
    try:
        harm = view.harmful_entries(con)
        changes = view.item(con, "notes", "dates-tip").changes
    finally:
        con.close()
    assert list(harm["item_id"]) == ["dates-tip"] and list(harm["episode_id"]) == ["reader"]
    assert [(c.op, c.episode_id) for c in changes] == [("create", "writer")]


def test_harmful_entry_to_lineage_to_origin_episode_by_clicks(server, browser) -> None:
    from playwright.sync_api import expect

    base, _ = server
    page = browser.page()
    open_app(page, f"{base}/")
    page.get_by_role("link", name="Memory item lineage").click()
    page.get_by_role("heading", name="Memory item lineage").wait_for()
    settled(page)

    # The harmful entry is listed; selecting its row draws its item.
    click_grid_row(page, page.locator("[data-testid='stDataFrame']").first, 18)
    chart = page.locator(".st-key-lin_graph .memuse-lin").first
    chart.locator(".node").first.wait_for()
    legend = chart.locator(".memuse-lin-legend").text_content() or ""
    assert "span negative" in legend and "entry misused" in legend and "memory item" in legend
    assert page.locator(".js-plotly-plot").count() == 0  # drawn as SVG, Plotly never loaded
    # The graph is drawn inside its frame: every node's mark within the SVG's box.
    box = chart.locator("svg.memuse-lin-plot").bounding_box()
    assert box is not None
    for node in chart.locator(".node").all():
        b = node.bounding_box()
        assert b is not None and box["x"] <= b["x"] and b["x"] + b["width"] <= box["x"] + box["width"] + 0.5
        assert box["y"] <= b["y"] and b["y"] + b["height"] <= box["y"] + box["height"] + 0.5
    # A node's hover names what it stands for (text from the recording, shown as text).
    chart.locator(".node[data-kind='span']").first.hover()
    expect(chart.locator(".memuse-lin-hover")).to_contain_text("span ")
    expect(page.get_by_text("Origin episode writer")).to_be_visible()

    # The origin episode is a link that opens its timeline in this tab.
    page.get_by_role("link", name=re.compile(r"Origin episode writer")).click()
    page.get_by_role("heading", name="Episode timeline").wait_for()
    settled(page)
    assert "episode=writer" in page.url and len(page.context.pages) == 1
    expect(page.get_by_role("combobox", name="Episode")).to_have_value("writer")

    # Back on the lineage page, a click on the reader's episode node opens its timeline.
    page.get_by_role("link", name="Memory item lineage").click()
    page.get_by_role("heading", name="Memory item lineage").wait_for()
    settled(page)
    chart = page.locator(".st-key-lin_graph .memuse-lin").first
    chart.locator(".node").first.wait_for()
    # Episode nodes are labelled "<task> (<run>)": the reader's task is t1.
    labels = chart.locator(".node[data-kind='episode'] .nodelabel")
    texts = [t.text_content() or "" for t in labels.all()]
    assert "t1 (r1)" in texts, texts
    labels.nth(texts.index("t1 (r1)")).click()
    page.get_by_role("heading", name="Episode timeline").wait_for()
    page.wait_for_url(re.compile(r"episode=reader"))
    settled(page)
    assert len(page.context.pages) == 1
    expect(page.get_by_role("combobox", name="Episode")).to_have_value("reader")

    # A span node opens the span inspector on that span, in place.
    page.get_by_role("link", name="Memory item lineage").click()
    page.get_by_role("heading", name="Memory item lineage").wait_for()
    settled(page)
    chart = page.locator(".st-key-lin_graph .memuse-lin").first
    span = chart.locator(".node[data-kind='span']").first
    span.wait_for()
    named = re.match(r"span (\S+):", span.get_attribute("aria-label") or "")  # its hover's first line
    assert named, span.get_attribute("aria-label")
    span.click()
    page.get_by_role("heading", name="Span inspector").wait_for()
    page.wait_for_url(re.compile(rf"span={re.escape(quote(named.group(1), safe=''))}(&|$)"))
    settled(page)
    assert len(page.context.pages) == 1
