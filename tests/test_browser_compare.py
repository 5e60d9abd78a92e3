"""Journey (Compare's timelines), in headless Chromium against `streamlit run app.py` on a small
demo database: open a paired task's two episodes on the Compare page (deep link `?task=`) and
click a step marker on each timeline (the SVG component of pages/timeline_chart.js, the same as
the timeline page's).

Invariants: both episodes' timelines are drawn; a click on a step marker of one chart marks that
step on that chart (its cursor) and offers a link to read that step on the timeline page, which
opens the episode at that step; the other chart is left as it was; a click on the other chart
moves only that chart's pick; the previous/next step buttons of the timeline page read in full
at the 1400 px window; no request leaves the machine.
"""

from __future__ import annotations

import re
from pathlib import Path

from browser_support import demo_db, module_browser, module_server, open_app, settled

server = module_server(demo_db)
browser = module_browser()


def _paired_task(db: Path) -> tuple[str, str, str]:
    """A task of the demo's first two configurations that both ran, with its two episodes."""
    from memuse_core.views import common
    from memuse_core.views import compare as cmp_view
    from memuse_core.views.common import open_read

    con = open_read(db, 5)
    try:
        a, b = cmp_view.options(common.runs(con), "config")[:2]
        cmp = cmp_view.compare(con, "config", a, b)
    finally:
        con.close()
    task = str(cmp.pairs.iloc[0]["task_id"])
    pair = cmp.episodes_of(task)
    assert pair is not None
    return task, pair[0], pair[1]


def test_compare_timelines_pick_a_step_each(server, browser) -> None:
    from playwright.sync_api import expect

    base, db = server
    task, ep_a, ep_b = _paired_task(db)
    page = browser.page()
    open_app(page, f"{base}/compare?task={task}")
    page.get_by_role("heading", name="Compare").wait_for()
    settled(page)
    charts = page.locator("[data-testid='stMain'] .memuse-tl")
    expect(charts).to_have_count(2, timeout=60_000)
    first, second = charts.nth(0), charts.nth(1)
    assert first.locator(".trace[data-name='steps'] .point").count() > 3
    # No step is marked before a click (Compare has no Step box).
    assert first.locator(".cursor").count() == 0 and second.locator(".cursor").count() == 0

    # A click on the 3rd step marker of A's chart: the cursor marks S3 on A only, and a link
    # reads that step on the timeline page.
    first.locator(".trace[data-name='steps'] .point").nth(2).click(force=True)
    read = page.get_by_role("link", name="Read S3 of this episode")
    expect(read).to_have_count(1, timeout=30_000)
    settled(page)
    expect(first.locator(".cursor")).to_have_text("S3")
    assert second.locator(".cursor").count() == 0

    # A click on B's 2nd marker: B's pick and link; A keeps its own.
    second.locator(".trace[data-name='steps'] .point").nth(1).click(force=True)
    expect(page.get_by_role("link", name="Read S2 of this episode")).to_have_count(1, timeout=30_000)
    settled(page)
    expect(second.locator(".cursor")).to_have_text("S2")
    expect(first.locator(".cursor")).to_have_text("S3")
    expect(read).to_have_count(1)

    # A's link opens A's episode at S3 on the timeline page.
    read.click()
    page.get_by_role("heading", name="Episode timeline").wait_for()
    settled(page)
    page.wait_for_url(re.compile(r"step=3(&|$)"))
    assert f"episode={ep_a}".replace(":", "%3A") in page.url.replace(":", "%3A"), (ep_a, page.url)
    expect(page.get_by_role("spinbutton", name="Step")).to_have_value("3")
    expect(page.locator(".st-key-tl_chart .memuse-tl .cursor")).to_have_text("S3")

    # The step buttons read in full (they were cut to "◀ Pr…" / "Next…" at 1400 px).
    for key in ("tl_step_prev", "tl_step_next"):
        label = page.locator(f".st-key-{key} button [data-testid='stMarkdownContainer']").first
        label.wait_for()
        full = label.evaluate("e => e.scrollWidth <= e.clientWidth + 1")
        assert full, (key, label.inner_text())
    assert ep_b != ep_a


def test_compare_shared_selection_follows_the_last_click(server, browser) -> None:
    """With a pick on each chart, the shared selection (what the timeline page opens from the
    sidebar) is the episode and step of the LAST click, whichever chart comes first on the page."""
    from playwright.sync_api import expect

    base, db = server
    task, ep_a, ep_b = _paired_task(db)
    page = browser.page()
    charts = page.locator("[data-testid='stMain'] .memuse-tl")
    first, second = charts.nth(0), charts.nth(1)

    def pick(chart, n: int) -> None:  # noqa: ANN001
        marker = chart.locator(".trace[data-name='steps'] .point").nth(n - 1)
        marker.evaluate("e => e.scrollIntoView({block: 'center'})")  # not under the sticky header
        marker.click(force=True)
        expect(page.get_by_role("link", name=f"Read S{n} of this episode")).to_have_count(1, timeout=30_000)
        settled(page)
        expect(chart.locator(".cursor")).to_have_text(f"S{n}")

    def timeline_opens(episode: str, step: int) -> None:
        page.locator("[data-testid='stSidebarNav'] a", has_text="Episode timeline").click()
        page.get_by_role("heading", name="Episode timeline").wait_for()
        settled(page)
        expect(page.get_by_role("spinbutton", name="Step")).to_have_value(str(step), timeout=30_000)
        page.wait_for_url(re.compile(rf"step={step}(&|$)"))
        assert f"episode={episode}".replace(":", "%3A") in page.url.replace(":", "%3A"), (episode, page.url)

    def compare() -> None:
        open_app(page, f"{base}/compare?task={task}")
        page.get_by_role("heading", name="Compare").wait_for()
        settled(page)
        expect(charts).to_have_count(2, timeout=60_000)

    compare()
    pick(second, 2)  # B first, then A: A (drawn first) was clicked last
    pick(first, 3)
    timeline_opens(ep_a, 3)
    compare()  # a new session: A first, then B
    pick(first, 5)
    pick(second, 4)
    timeline_opens(ep_b, 4)
    page.context.close()
