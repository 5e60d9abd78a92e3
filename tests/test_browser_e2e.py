"""End to end in headless Chromium: `streamlit run app.py` against a temporary demo database.

Invariants: a pasted deep link to a span reproduces it; picking and clicking a citation opens the
cited step in the same tab; the timeline draws its credit-window shapes; the lineage graph renders its SVG
offline; re-judging with the rules judge shows the new judgment; a case study exports as an HTML
file that opens and draws its figure without any network; no request ever leaves localhost.
Skips cleanly when Debian chromium or the playwright package is absent.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from urllib.parse import quote

import pytest
from browser_support import demo_db, module_browser, module_server, open_app, settled, wait_text

pytestmark = pytest.mark.browser
server = module_server(demo_db)
browser = module_browser()


def _pick(db: Path) -> dict:
    """A judged span whose rationale cites a step, that step's text, and a delivered item."""
    from memuse_core.store import connect
    from memuse_core.store.app import episodes as store_episodes

    con = connect(db, read_only=True)
    try:
        row = con.execute("""
            SELECT a.span_id, s.episode_id, regexp_extract(a.notes, '\\[S(\\d+)\\]', 1) AS step, a.namespace, a.item_id
            FROM (SELECT a.*, se.namespace FROM assessments a JOIN verdicts v USING (judgment_id)
                  JOIN span_entries se ON se.span_id = a.span_id AND se.pos = a.pos) a
            JOIN spans s USING (span_id)
            WHERE regexp_matches(a.notes, '\\[S\\d+\\]') ORDER BY a.span_id LIMIT 1""").fetchone()
        assert row, "the demo corpus has no judged span with a cited step"
        span_id, ep, step, ns, item = row
        txt = store_episodes.step_text(con, ep, int(step))
        windows = int(store_episodes.episode_entries(con, ep)["window_start"].notna().sum())
    finally:
        con.close()
    first_line = next(line for line in (txt["response"] or "").splitlines() if line.strip())
    return {
        "span": span_id,
        "episode": ep,
        "step": int(step),
        "ns": ns,
        "item": item,
        "response": first_line.strip()[:40],
        "windows": windows,
    }


def test_deep_link_citation_windows_lineage_rejudge_export(server, browser, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    base, db = server
    pick = _pick(db)
    ctx = browser.context()
    page = ctx.new_page()
    # 1. Deep link to a span; pick a citation; click a citation link.
    t0 = time.monotonic()
    open_app(page, f"{base}/span?span={quote(pick['span'], safe='')}")
    page.get_by_role("heading", name="Rationales").wait_for()
    first_load = time.monotonic() - t0
    expect(page.get_by_role("textbox", name="Span id")).to_have_value(pick["span"])
    page.locator("[data-testid='stButtonGroup'] button").filter(
        has_text=re.compile(rf"^\s*S{pick['step']}\s*$")
    ).first.click()
    settled(page)
    cited = page.locator(".st-key-sp_cited_step")
    cited.wait_for()
    cited.get_by_text(pick["response"], exact=False).first.wait_for()
    # The citation link opens the cited step in this tab and session (journey e has the details).
    page.locator("[data-testid='stMarkdownContainer'] a", has_text=f"[S{pick['step']}]").first.click()
    page.wait_for_url(re.compile(rf"step={pick['step']}(&|$)"))
    settled(page)
    page.locator(".st-key-sp_cited_step").get_by_text(pick["response"], exact=False).first.wait_for()
    assert len(ctx.pages) == 1

    # 2. Re-judge with the rules judge, in place.
    page.get_by_role("button", name="Re-judge with the rules judge").click()
    page.get_by_text("New judgment").wait_for()
    page.get_by_text("Before", exact=True).wait_for()
    settled(page)

    # 3. The timeline draws one credit-window bar per entry with a window.
    t0 = time.monotonic()
    open_app(page, f"{base}/timeline?episode={quote(pick['episode'], safe='')}&step={pick['step']}")
    page.locator(".st-key-tl_chart .memuse-tl").first.wait_for()
    chart_time = time.monotonic() - t0
    bars = page.locator(".st-key-tl_chart .trace.bar .point")
    bars.nth(pick["windows"] - 1).wait_for(state="attached")
    assert bars.count() >= pick["windows"] > 0
    # Clicking a step marker opens that step in the reader and the URL.
    target = 2 if pick["step"] != 2 else 3
    page.locator(".st-key-tl_chart .trace[data-name='steps'] .point").nth(target - 1).click(force=True)
    expect(page.get_by_role("spinbutton", name="Step")).to_have_value(str(target))
    page.wait_for_url(re.compile(rf"step={target}(&|$)"))
    settled(page)

    # 4. The lineage graph of a delivered item renders offline (clickable SVG, no Plotly).
    open_app(page, f"{base}/lineage?item={quote(pick['ns'] + '::' + pick['item'], safe='')}")
    page.get_by_role("heading", name="Every delivery of this item").wait_for()
    page.locator(".st-key-lin_graph .memuse-lin .node.clickable").first.wait_for()

    # 5. A case study with one span annotation exports as a self-contained HTML file.
    open_app(page, f"{base}/case_studies")
    page.get_by_role("textbox", name="Name", exact=True).fill("E2E study")
    page.get_by_role("button", name="Create case study").click()
    page.get_by_text("0 annotations").wait_for()
    settled(page)
    page.get_by_text("Annotate a step, span or item").click()
    settled(page)
    target = page.get_by_role("textbox", name="Target id")
    target.fill(pick["span"])
    target.press("Enter")
    settled(page)  # the target's rerun must finish first, or it can swallow the note and the click
    page.get_by_role("textbox", name="Note (markdown)").fill("Cited step checked <script>alert(1)</script>")
    page.get_by_role("button", name="Save annotation").click()
    wait_text(page, "Saved annotation")
    page.get_by_text(re.compile(r"· 1 annotation$")).wait_for()
    settled(page)
    page.get_by_role("button", name="Prepare export (HTML and Markdown)").click()
    settled(page)
    with page.expect_download() as dl:
        page.get_by_role("button", name="Download HTML").click()
    out = tmp_path / "case.html"
    dl.value.save_as(out)
    html = out.read_text()
    assert "Cited step checked &lt;script&gt;" in html
    page.goto(out.as_uri())
    page.get_by_role("heading", name="E2E study").wait_for()
    page.locator("#fig-0 .main-svg").first.wait_for()
    assert page.locator("#fig-0 .barlayer .point path, #fig-0 .shapelayer path").count() >= 1
    ctx.close()
    print(
        f"\nbrowser: span deep link to rationale {first_load:.2f} s, timeline to first chart {chart_time:.2f} s"
    )
