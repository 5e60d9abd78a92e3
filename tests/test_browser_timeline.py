"""Journey (a), in headless Chromium against `streamlit run app.py` on a small demo database:
filter the Episodes table to a failed episode that received memory, open its timeline by
selecting the row, and read the timeline.

Invariants: the row opens the timeline in the same tab; the chart's legend names the credit
windows, the failed-command cross and the action kinds, and the caption explains them; hovering a
window says why it ends (A.1.5); clicking a step marker selects that step (Step box, URL and the
cursor move together); the J key moves to the next step; no request leaves the machine.
"""

from __future__ import annotations

import re
from pathlib import Path

from browser_support import (
    click_grid_row,
    demo_db,
    module_browser,
    module_server,
    open_app,
    settled,
    wait_text,
)

from memuse_core.timeline import LEGEND

server = module_server(demo_db)
browser = module_browser()


def _failed_memory_episode(db: Path) -> tuple[str, int]:
    from memuse_core.views import episodes as ev
    from memuse_core.views.common import open_read

    con = open_read(db, 5)
    try:
        rows = ev.episode_list(con, None, ev.EpisodeFilters(outcomes=["failed"])).rows
    finally:
        con.close()
    first = rows.iloc[0]
    assert first["deliveries"] > 0, "the demo's first failed episode received no memory"
    return str(first["episode_id"]), int(first["steps"])


def _pick_first_row(page) -> None:
    """Tick the selection box of the first row of the first data grid (the box sits in the
    grid's first column)."""
    click_grid_row(page, page.locator("[data-testid='stDataFrame']").first, 18)


def test_failed_memory_episode_timeline_explains_itself_and_clicks_select_steps(server, browser) -> None:
    from playwright.sync_api import expect

    base, db = server
    episode, n_steps = _failed_memory_episode(db)
    page = browser.page()
    open_app(page, f"{base}/episodes")
    page.get_by_role("heading", name="Episodes").wait_for()

    # Filter to failed episodes with the Outcome picker.
    page.get_by_role("combobox", name="Outcome").click()
    from memuse_core.views.episodes import OUTCOME_CHOICE_LABELS

    page.get_by_role("option", name=OUTCOME_CHOICE_LABELS["failed"], exact=True).click()
    page.keyboard.press("Escape")
    page.wait_for_url(re.compile(r"outcome=failed"))
    settled(page)
    wait_text(page, "1 episode")
    _pick_first_row(page)

    # The row opens its timeline in this tab (an SVG chart: pages/timeline_chart.js).
    page.get_by_role("heading", name="Episode timeline").wait_for()
    settled(page)
    assert page.url.startswith(base) and f"episode={episode}".replace(":", "%3A") in page.url.replace(
        ":", "%3A"
    )
    chart = page.locator(".st-key-tl_chart .memuse-tl").first
    chart.wait_for()
    legend = chart.locator(".memuse-tl-legend").text_content() or ""
    for name in (LEGEND["window"], LEGEND["delivery"], LEGEND["anchor"], LEGEND["harmed"]):
        assert name in legend, legend
    wait_text(page, "credit window (MemUse 3.3, A.1.5)")

    # Hovering a credit window says why it ends.
    bars = [b for b in (p.bounding_box() for p in chart.locator(".trace.bar .point").all()) if b]
    bb = max(bars, key=lambda b: b["width"])  # the longest window: its middle is clear of markers
    page.mouse.move(bb["x"] + bb["width"] * 0.6, bb["y"] + bb["height"] / 2)
    hover = chart.locator(".memuse-tl-hover")
    expect(hover).to_contain_text("credit window S", timeout=10_000)
    assert re.search(r"(takes over the credit|episode end)", hover.text_content() or "")

    # Clicking a step marker selects the step: the Step box, the URL and the cursor follow.
    step_box = page.get_by_role("spinbutton", name="Step")
    target = 3
    marker = chart.locator(".trace[data-name='steps'] .point").nth(target - 1)
    marker.hover(force=True)
    expect(hover).to_contain_text(f"S{target} ", timeout=10_000)
    marker.click(force=True)
    expect(step_box).to_have_value(str(target), timeout=30_000)
    page.wait_for_url(re.compile(rf"step={target}(&|$)"))
    settled(page)
    expect(chart.locator(".cursor")).to_have_text(f"S{target}")

    # J moves to the next step (a documented st.button shortcut); the focus must not be in a field.
    page.get_by_role("heading", name="Episode timeline").click()
    page.keyboard.press("j")
    expect(step_box).to_have_value(str(target + 1), timeout=30_000)
    page.wait_for_url(re.compile(rf"step={target + 1}(&|$)"))
    settled(page)
    expect(chart.locator(".cursor")).to_have_text(f"S{target + 1}")
    assert n_steps > target + 1
