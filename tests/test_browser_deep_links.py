"""Browser journey (f): every page's URL, pasted into a fresh browser context, shows the same view.

Invariants, in headless Chromium against `streamlit run app.py`: after choices made on a page
(sidebar scope, Overview's grouping and baseline, Episodes filters, a timeline step, a span's
cited step, an item, a case study, Compare's run mode and sides, a judge batch), the page's URL
opened in a new context (no cookies, no session) reproduces the page's title, every widget
value and the sidebar scope; opening Compare without parameters leaves its URL alone; a browser
that prefers a dark colour scheme gets the dark theme; no request leaves the machine.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from browser_support import demo_db, judged_citation, module_browser, module_server, open_app, settled

pytestmark = pytest.mark.browser


def _db(directory: Path) -> Path:
    """The demo database with two case studies (so the URL has to pick one)."""
    from memuse_core.casestudy import CaseStudy
    from memuse_core.views import writes

    db = demo_db(directory)
    for name in ("First study", "Second study"):
        writes.save(db, writes.case_study_write(CaseStudy(name=name)), 10)
    return db


server = module_server(_db)
browser = module_browser()

VIEW_JS = """() => {
  const out = [];
  const h1 = document.querySelector('[data-testid="stMain"] h1');
  out.push('title=' + (h1 ? h1.innerText : ''));
  for (const root of ['stMain', 'stSidebar']) {
    const el = document.querySelector(`[data-testid="${root}"]`);
    if (!el) continue;
    el.querySelectorAll('input, textarea').forEach((i) => {
      if (['checkbox', 'file', 'radio'].includes(i.type)) return;
      // An annotation draft (the form and its target) is not part of a page's view or URL.
      if (i.closest('[data-testid="stForm"]') || i.getAttribute('aria-label') === 'Target id') return;
      out.push(root + ':' + (i.getAttribute('aria-label') || '?') + '=' + i.value);
    });
    el.querySelectorAll('[data-testid="stButtonGroup"] button[aria-checked="true"]').forEach((b) =>
      out.push(root + ':on=' + b.innerText));
    el.querySelectorAll('[data-baseweb="tag"]').forEach((t) => out.push(root + ':tag=' + t.innerText));
  }
  return out;
}"""


def _view(page: Any) -> list[str]:
    settled(page)
    page.wait_for_timeout(500)
    settled(page)
    return sorted(page.evaluate(VIEW_JS))


def _pick_option(
    page: Any, label: str, option: str | None = None, *, index: int = 1, url: str | None = None
) -> str:
    """Choose an option of the selectbox or multiselect labelled `label` (by its text, else by
    position in the open list), then wait until the URL matches `url` (the page wrote its state
    back, so the run is over); returns the option's text."""
    opts = page.locator("[role='option']:visible")
    for attempt in range(4):  # a rerun still drawing the page can close a dropdown just opened
        settled(page)
        page.get_by_role("combobox", name=label).click()
        try:
            opts.first.wait_for(timeout=8_000)
            break
        except Exception:
            if attempt == 3:
                raise
            page.keyboard.press("Escape")
    target = (
        opts.filter(has_text=re.compile(rf"^\s*{re.escape(option)}\s*$")).first if option else opts.nth(index)
    )
    text = target.inner_text().strip()
    target.click()
    if opts.count():  # a multiselect stays open
        page.keyboard.press("Escape")
    page.locator("[data-testid='stMain'] h1").first.click()  # blur: the widget shows its value
    if url:
        page.wait_for_url(re.compile(url))
    settled(page)
    return text


def _url_changes(page: Any) -> str:
    """A pattern that matches any URL but the current one (for a choice whose value is an id)."""
    return rf"^(?!{re.escape(page.url)}$)"


def _click(page: Any, locator: Any, url: str) -> None:
    locator.click()
    page.wait_for_url(re.compile(url))
    settled(page)


def _nav(page: Any, title: str) -> None:
    page.locator("[data-testid='stSidebarNav'] a", has_text=title).click()
    page.get_by_role("heading", name=title).first.wait_for()
    settled(page)


def _same_in_fresh_context(browser: Any, page: Any, url_must: str) -> None:
    url = page.url
    assert re.search(url_must, url), url
    before = _view(page)
    fresh = browser.page()
    open_app(fresh, url)
    # A fresh session renders progressively: wait (bounded) until it shows what the first did.
    deadline = time.monotonic() + 90
    after = _view(fresh)
    while after != before and time.monotonic() < deadline:
        fresh.wait_for_timeout(500)
        after = _view(fresh)
    fresh.context.close()
    assert after == before, (url, sorted(set(before) ^ set(after)))


def test_every_pages_url_restores_its_view(server, browser) -> None:
    base, db = server
    cite = judged_citation(db)
    page = browser.page()

    # Compare opened plainly keeps a plain URL.
    open_app(page, f"{base}/compare")
    page.get_by_role("heading", name="Compare").wait_for()
    settled(page)
    assert page.url.rstrip("/").endswith("/compare"), page.url

    # Sidebar scope and Overview grouping and baseline.
    _nav(page, "Overview")
    _pick_option(page, "Configurations", "cards", url=r"configs=cards")
    segment = page.locator("[data-testid='stMain'] [data-testid='stButtonGroup'] button", has_text="run")
    _click(page, segment, r"level=run")
    # The report section is drawn once opened; its URL keeps it open.
    report = page.locator(
        "[data-testid='stExpander'] summary", has_text="Task outcomes, delivery forms and cost"
    )
    _click(page, report, r"report=1")
    _pick_option(
        page,
        "Baseline configuration for resolve-rate differences (paired bootstrap)",
        "cards",
        url=r"baseline=cards",
    )
    _same_in_fresh_context(browser, page, r"configs=cards")
    # Closed again, its URL keeps it closed (a baseline alone in a link opens it).
    report.click()
    page.wait_for_url(lambda u: "report=" not in u and "baseline=" not in u)
    settled(page)
    _same_in_fresh_context(browser, page, r"configs=cards")

    # Episodes filters.
    _nav(page, "Episodes")
    search = page.get_by_role("textbox", name="Search task and trajectory text")
    search.fill("test")
    search.press("Enter")
    page.wait_for_url(re.compile(r"q=test"))
    _pick_option(page, "Outcome", "not resolved", url=r"outcome=failed")
    _same_in_fresh_context(browser, page, r"q=test")

    # A timeline at a step.
    _nav(page, "Episode timeline")
    _pick_option(page, "Episode", index=2, url=_url_changes(page))
    step = page.get_by_role("spinbutton", name="Step")
    step.fill("3")
    step.press("Enter")
    page.wait_for_url(re.compile(r"step=3"))
    settled(page)
    _same_in_fresh_context(browser, page, r"episode=")

    # A span with its cited step.
    _nav(page, "Span inspector")
    box = page.get_by_role("textbox", name="Span id")
    box.fill(cite["span"])
    box.press("Enter")
    page.get_by_role("heading", name="Rationales").wait_for()
    settled(page)
    pill = page.locator("[data-testid='stButtonGroup'] button").filter(
        has_text=re.compile(rf"^\s*S{cite['step']}\s*$")
    )
    _click(page, pill.first, rf"step={cite['step']}")
    _same_in_fresh_context(browser, page, r"span=")

    # An item's lineage.
    _nav(page, "Memory item lineage")
    _pick_option(page, "Item", index=1, url=r"item=")
    _same_in_fresh_context(browser, page, r"item=")

    # One of two case studies.
    _nav(page, "Case studies")
    _pick_option(page, "Case study", "First study", url=_url_changes(page))
    _same_in_fresh_context(browser, page, r"case=")

    # Compare in run mode, with a chosen side.
    _nav(page, "Compare")
    segment = page.locator(
        "[data-testid='stMain'] [data-testid='stButtonGroup'] button", has_text="run"
    ).first
    _click(page, segment, r"level=run")
    _pick_option(page, "B", index=2, url=r"b=")
    _same_in_fresh_context(browser, page, r"level=run")

    # A judge batch.
    _nav(page, "Judge runs")
    _pick_option(page, "Batch", index=1, url=r"batch=")
    _same_in_fresh_context(browser, page, r"batch=")
    page.context.close()

    # The user's colour scheme is honoured.
    dark = browser.page(color_scheme="dark")
    open_app(dark, f"{base}/")
    bg = dark.evaluate("getComputedStyle(document.querySelector('[data-testid=\"stApp\"]')).backgroundColor")
    rgb = [int(x) for x in re.findall(r"\d+", bg)[:3]]
    assert sum(rgb) < 3 * 80, bg
    dark.context.close()
