"""Journey (g), in headless Chromium: every page of the app on a database of the real recorded
runs in ../shared/data/real (imported with the real importers, context built, judged with the
offline rules judge).

Invariants: every page, opened on a real episode, span, item and search, renders its title and
settles without an exception or a traceback; the timeline of a real mini-swe-agent episode names
its action kinds with words (no fragments of quoted code in the legend); the transcript shows its
steps; no request leaves the machine. Skips when the real data is absent.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import quote

import pytest
from browser_support import module_browser, module_server, open_app, settled

from memuse_core.timeline import LEGEND

REAL = (Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "real").resolve()


def real_db(directory: Path) -> Path:
    if not REAL.is_dir():
        pytest.skip("../shared/data/real is not available")
    from memuse_core.build import build_store
    from memuse_core.ingest import IngestError, expand_paths, ingest_path
    from memuse_core.judge.result import JudgeSettings
    from memuse_core.judge.runner import run_batch
    from memuse_core.store import connect

    db = directory / "real.duckdb"
    con = connect(db)
    try:
        for f in expand_paths([REAL]):
            if f.suffix.lower() in (".md", ".txt", ".yaml"):
                continue
            try:
                ingest_path(con, f)
            except IngestError:
                continue  # not a trajectory (harness reports, CLADDER data): the CLI skips it too
    finally:
        con.close()
    build_store(db)
    run_batch(db, JudgeSettings(judge="rules"))
    return db


server = module_server(real_db)
browser = module_browser()


def _subjects(db: Path) -> dict[str, str]:
    """A long real mini-swe-agent episode, a span, a delivered item of the real runs."""
    from memuse_core.store import connect

    con = connect(db, read_only=True)
    try:
        ep = con.execute(
            "SELECT episode_id FROM episodes WHERE run_id LIKE 'nano-output%' ORDER BY n_steps DESC LIMIT 1"
        ).fetchone()
        span = con.execute("SELECT span_id, episode_id FROM spans ORDER BY span_id LIMIT 1").fetchone()
        item = con.execute(
            "SELECT namespace, item_id FROM delivery_entries WHERE item_id IS NOT NULL LIMIT 1"
        ).fetchone()
    finally:
        con.close()
    assert ep and span and item, "the real runs hold no episode, span or delivered item"
    return {"episode": ep[0], "span": span[0], "span_episode": span[1], "item": f"{item[0]}::{item[1]}"}


PAGES = [
    ("", "Overview", {"report": "1"}),  # with its report section (forms, cost) open
    ("episodes", "Episodes", {}),
    ("timeline", "Episode timeline", {"episode": "episode", "step": "2"}),
    ("transcript", "Transcript", {"episode": "episode", "step": "3"}),
    ("search", "Search", {"q": "pytest"}),
    ("span", "Span inspector", {"span": "span"}),
    ("lineage", "Memory item lineage", {"item": "item"}),
    ("case_studies", "Case studies", {}),
    ("compare", "Compare", {}),
    ("judge_runs", "Judge runs", {}),
    ("memtrim", "MemTrim", {}),
]


def test_every_page_renders_on_the_real_runs(server, browser) -> None:
    base, db = server
    subject = _subjects(db)
    page = browser.page()
    for path, title, params in PAGES:
        qs = "&".join(f"{k}={quote(subject.get(v, v), safe='')}" for k, v in params.items())
        open_app(page, f"{base}/{path}" + (f"?{qs}" if qs else ""))
        page.get_by_role("heading", name=title, exact=True).first.wait_for()
        settled(page)
        body = page.inner_text("body")
        assert page.locator("[data-testid='stException']").count() == 0, (path, body[-2000:])
        assert "Traceback" not in body, (path, body[-2000:])
        if path == "timeline":
            legend = page.locator(".memuse-tl-legend").first.text_content() or ""
            names = [t.text_content() or "" for t in page.locator(".memuse-tl-legend .legendtext").all()]
            assert names, legend
            kinds = [n for n in names if n not in LEGEND.values()]
            assert kinds and all(re.match(r"^[A-Za-z][A-Za-z0-9_.+ -]*$", k) for k in kinds), kinds
        if path == "lineage":  # the history graph is drawn (SVG), its item node clickable
            page.locator(".st-key-lin_graph .memuse-lin .node.clickable[data-kind='item']").first.wait_for()
        if path == "transcript":
            page.get_by_role("heading", name=re.compile(r"^S1 · ")).first.wait_for()
