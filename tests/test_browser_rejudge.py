"""Browser journey (c): re-judge a span with the rules judge, then with an unreachable endpoint.

Invariants, in headless Chromium against `streamlit run app.py`: the rules re-judge ends in a
success naming the new judgment, which the history then shows as current; with the LLM judge
pointed (in the sidebar's Judge settings) at an endpoint where nothing listens, the re-judge ends
in an error box that names the Endpoint base URL and Model fields and their values, no success
box appears, and nothing is written (the endpoint's preflight call fails first: the rules
judgment stays current); the settings are still in the sidebar afterwards (same session); no request leaves the machine.
"""

from __future__ import annotations

from urllib.parse import quote

import pytest
from browser_support import demo_db, judged_citation, module_browser, module_server, open_app, settled

pytestmark = pytest.mark.browser
server = module_server(demo_db)
browser = module_browser()
UNREACHABLE = "http://127.0.0.1:9/v1"


def test_rejudge_rules_then_unreachable_endpoint(server, browser) -> None:
    from playwright.sync_api import expect

    base, db = server
    span = judged_citation(db)["span"]
    page = browser.page()
    open_app(page, f"{base}/span?span={quote(span, safe='')}")
    judgment = page.get_by_role("combobox", name="Judgment")

    # 1. Rules: success, and the new judgment is the current one in the history.
    page.get_by_role("button", name="Re-judge with the rules judge").click()
    success = page.locator("[data-testid='stAlertContentSuccess']")
    expect(success).to_contain_text("accepted; it is now the current judgment")
    new_id = success.inner_text().split("New judgment ", 1)[1].split(" ", 1)[0]
    settled(page)
    expect(judgment).to_have_value(f"{new_id} (rules, accepted) · current")

    # 2. LLM against an endpoint where nothing listens: an error naming the sidebar's fields.
    sidebar = page.locator("[data-testid='stSidebar']")
    sidebar.get_by_text("Judge settings (re-judging)").click()
    settled(page)
    sidebar.get_by_text("llm", exact=True).click()
    settled(page)
    sidebar.get_by_role("textbox", name="Model").fill("some-model")
    sidebar.get_by_role("textbox", name="Model").press("Enter")
    settled(page)
    sidebar.get_by_role("textbox", name="Endpoint base URL").fill(UNREACHABLE)
    sidebar.get_by_role("textbox", name="Endpoint base URL").press("Enter")
    settled(page)
    page.get_by_role("button", name="Re-judge with the llm judge").click()
    error = page.locator("[data-testid='stAlertContentError']")
    expect(error).to_contain_text("Re-judge with the llm judge failed", timeout=180_000)
    text = error.inner_text()
    assert "Endpoint base URL" in text and UNREACHABLE in text and "Model" in text and "some-model" in text
    assert page.locator("[data-testid='stAlertContentSuccess']").count() == 0
    settled(page)
    # The endpoint's preflight call failed, so nothing was written: the rules judgment is current.
    expect(judgment).to_have_value(f"{new_id} (rules, accepted) · current")
    # Same session: the settings are still there.
    expect(sidebar.get_by_role("textbox", name="Endpoint base URL")).to_have_value(UNREACHABLE)
    page.context.close()
