"""Browser journey (e): a rationale citation and a table link navigate in the same session.

Invariants, in headless Chromium against `streamlit run app.py`: with a configuration picked in
the sidebar, clicking a rationale's [S<n>] citation opens no tab, puts step=<n> in the URL,
shows the cited step and scrolls it into view; clicking a table link ("open" in the Episodes
table) opens no tab either and lands on that episode's timeline; the sidebar scope survives
both (same session) and rides along in the URL; no request leaves the machine.
"""

from __future__ import annotations

import re
from urllib.parse import quote

import pytest
from browser_support import (
    click_grid_row,
    demo_db,
    judged_citation,
    module_browser,
    module_server,
    open_app,
    settled,
)

pytestmark = pytest.mark.browser
server = module_server(demo_db)
browser = module_browser()


def _in_view(page, selector: str) -> bool:
    return bool(
        page.evaluate(
            """(sel) => { const r = document.querySelector(sel).getBoundingClientRect();
                          return r.top >= -5 && r.top < window.innerHeight * 0.6; }""",
            selector,
        )
    )


def test_citation_and_table_link_stay_in_the_session_and_scroll(server, browser) -> None:
    from playwright.sync_api import expect

    base, db = server
    pick = judged_citation(db)
    ctx = browser.context()
    page = ctx.new_page()

    # A scope picked in the sidebar is session state the links must keep.
    open_app(page, f"{base}/span?span={quote(pick['span'], safe='')}")
    config = pick["span"].split("-", 1)[0]
    page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']").first.click()
    page.get_by_role("option", name=config, exact=True).click()
    page.keyboard.press("Escape")
    page.wait_for_url(re.compile(rf"configs={config}"))
    settled(page)

    # 1. The citation in the rationale text: same tab, step in the URL, cited step in view.
    page.get_by_role("heading", name="Rationales").wait_for()
    page.evaluate("() => window.scrollTo(0, 0)")
    link = page.locator("[data-testid='stMarkdownContainer'] a", has_text=f"[S{pick['step']}]").first
    link.click()
    page.wait_for_url(re.compile(rf"step={pick['step']}(&|$)"))
    settled(page)
    cited = page.locator(".st-key-sp_cited_step")
    cited.get_by_text(pick["response"], exact=False).first.wait_for()
    page.wait_for_function("(t) => document.querySelector('[data-memuse-scrolled]') !== null", arg=None)
    page.wait_for_timeout(1200)  # the scroller settles twice more after late re-renders
    assert _in_view(page, ".st-key-sp_cited_step")
    assert len(ctx.pages) == 1
    expect(page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']").first).to_contain_text(
        config
    )

    # 2. A table link (LinkColumn) in the Episodes table: same tab, lands on that timeline.
    page.locator("[data-testid='stSidebarNav'] a", has_text="Episodes").click()
    page.get_by_role("heading", name="Episodes").wait_for()
    settled(page)
    # First data row, first column ("timeline": link text "open").
    click_grid_row(page, page.locator("[data-testid='stDataFrame']").first, 22)
    page.wait_for_url(re.compile(r"/timeline\?.*episode="))
    page.get_by_role("heading", name="Episode timeline").wait_for()
    settled(page)
    assert len(ctx.pages) == 1
    assert f"configs={config}" in page.url
    expect(page.locator("[data-testid='stSidebar'] [data-testid='stMultiSelect']").first).to_contain_text(
        config
    )
    ctx.close()
