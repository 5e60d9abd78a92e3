"""End to end in headless Chromium: `streamlit run app.py` against a temporary demo database.

Invariants: a pasted deep link to a span reproduces it; picking and clicking a citation opens the
cited step; the timeline draws its credit-window shapes; the lineage graph renders a canvas
offline; re-judging with the rules judge shows the new judgment; a case study exports as an HTML
file that opens and draws its figure without any network; no request ever leaves localhost.
Skips cleanly when Debian chromium or the playwright package is absent.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

import pytest

pytestmark = pytest.mark.browser
CHROMIUM = Path("/usr/bin/chromium")
ROOT = Path(__file__).resolve().parents[1]
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1",
]
LOCAL = ("http://127.0.0.1", "http://localhost", "ws://127.0.0.1", "data:", "blob:", "file:", "about:")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory):
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (/usr/bin/chromium)")
    pytest.importorskip("playwright.sync_api")
    from memuse_core.build import build_store
    from memuse_core.demo import DemoPlan, build_demo
    from memuse_core.judge.result import JudgeSettings
    from memuse_core.judge.runner import run_batch

    db = tmp_path_factory.mktemp("e2e") / "demo.duckdb"
    build_demo(db, DemoPlan(episodes=16, mean_steps=20))
    build_store(db)
    run_batch(db, JudgeSettings(judge="rules"))
    port = _free_port()
    env = dict(os.environ, MEMUSE_DB=str(db))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "streamlit",
            "run",
            "app.py",
            "--server.headless",
            "true",
            "--server.port",
            str(port),
            "--server.address",
            "127.0.0.1",
            "--browser.gatherUsageStats",
            "false",
            "--server.fileWatcherType",
            "none",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else "streamlit exited"
            try:
                with urllib.request.urlopen(f"{base}/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                time.sleep(0.1)
        assert proc.poll() is None
        yield base, db
    finally:
        proc.terminate()
        proc.wait(timeout=20)


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


def _wait_text(page, text: str, timeout: float = 60_000) -> None:
    """Wait for `text`; on a timeout, fail with what the page shows instead."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.get_by_text(text).first.wait_for(timeout=timeout)
    except PlaywrightTimeout:
        body = page.inner_text("body")
        raise AssertionError(f"{text!r} never appeared; the page shows:\n{body[-3000:]}") from None


def test_deep_link_citation_windows_lineage_rejudge_export(server, tmp_path: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    base, db = server
    pick = _pick(db)
    leaked: list[str] = []

    def route(r) -> None:
        if r.request.url.startswith(LOCAL):
            r.continue_()
        else:
            leaked.append(r.request.url)
            r.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        ctx = browser.new_context(viewport={"width": 1400, "height": 1000}, accept_downloads=True)
        ctx.route("**/*", route)
        page = ctx.new_page()
        page.set_default_timeout(60_000)

        # 1. Deep link to a span; pick a citation; click a citation link.
        t0 = time.monotonic()
        page.goto(f"{base}/span?span={quote(pick['span'], safe='')}")
        page.get_by_role("heading", name="Rationales").wait_for()
        first_load = time.monotonic() - t0
        expect(page.get_by_role("textbox", name="Span id")).to_have_value(pick["span"], timeout=30_000)
        page.locator("[data-testid='stButtonGroup'] button").filter(
            has_text=re.compile(rf"^\s*S{pick['step']}\s*$")
        ).first.click()
        cited = page.locator(".st-key-sp_cited_step")
        cited.wait_for()
        cited.get_by_text(pick["response"], exact=False).first.wait_for()
        with ctx.expect_page() as new_tab:
            page.locator("[data-testid='stMarkdownContainer'] a", has_text=f"[S{pick['step']}]").first.click()
        tab = new_tab.value
        tab.locator(".st-key-sp_cited_step").get_by_text(pick["response"], exact=False).first.wait_for(
            timeout=60_000
        )
        assert f"step={pick['step']}" in tab.url
        tab.close()

        # 2. Re-judge with the rules judge, in place.
        page.get_by_role("button", name="Re-judge with the rules judge").click()
        page.get_by_text("New judgment").wait_for()
        page.get_by_text("Before", exact=True).wait_for()

        # 3. The timeline draws one credit-window band per entry with a window.
        t0 = time.monotonic()
        page.goto(f"{base}/timeline?episode={quote(pick['episode'], safe='')}&step={pick['step']}")
        page.locator(".js-plotly-plot").first.wait_for()
        chart_time = time.monotonic() - t0
        shapes = page.locator(".js-plotly-plot .shapelayer path")
        shapes.nth(pick["windows"] - 1).wait_for(state="attached")
        assert shapes.count() >= pick["windows"] > 0
        # Box-selecting a step marker opens that step in the reader and the URL.
        target = 2 if pick["step"] != 2 else 3
        bb = (
            page.locator(".js-plotly-plot .scatterlayer .trace")
            .first.locator(".point")
            .nth(target - 1)
            .bounding_box()
        )
        assert bb is not None
        x, y = bb["x"] + bb["width"] / 2, bb["y"] + bb["height"] / 2
        page.mouse.move(x - 12, y - 12)
        page.mouse.down()
        page.mouse.move(x, y, steps=4)
        page.mouse.move(x + 12, y + 12, steps=4)
        page.mouse.up()
        expect(page.get_by_role("spinbutton", name="Step")).to_have_value(str(target), timeout=30_000)
        page.wait_for_url(re.compile(rf"step={target}(&|$)"))

        # 4. The lineage graph of a delivered item renders a vis-network canvas offline.
        page.goto(f"{base}/lineage?item={quote(pick['ns'] + '::' + pick['item'], safe='')}")
        page.get_by_role("heading", name="Every delivery of this item").wait_for()
        graph = page.frame_locator("iframe").first.locator("canvas")
        graph.first.wait_for(timeout=30_000)

        # 5. A case study with one span annotation exports as a self-contained HTML file.
        page.goto(f"{base}/case_studies")
        page.get_by_role("textbox", name="Name", exact=True).fill("E2E study")
        page.get_by_role("button", name="Create case study").click()
        page.get_by_text("0 annotations").wait_for()
        page.get_by_text("Annotate a step, span or item").click()
        target = page.get_by_role("textbox", name="Target id")
        target.fill(pick["span"])
        target.press("Enter")
        page.get_by_role("textbox", name="Note (markdown)").fill(
            "Cited step checked <script>alert(1)</script>"
        )
        page.get_by_role("button", name="Save annotation").click()
        _wait_text(page, "Saved annotation")
        page.get_by_text("1 annotations").wait_for()
        page.get_by_role("button", name="Prepare export (HTML and Markdown)").click()
        with page.expect_download() as dl:
            page.get_by_role("button", name="Download HTML").click()
        out = tmp_path / "case.html"
        dl.value.save_as(out)
        html = out.read_text()
        assert "Cited step checked &lt;script&gt;" in html
        page.goto(out.as_uri())
        page.get_by_role("heading", name="E2E study").wait_for()
        page.locator("#fig-0 .main-svg").first.wait_for()
        assert page.locator("#fig-0 .shapelayer path").count() >= 1
        browser.close()
    assert leaked == [], sorted(set(leaked))
    print(
        f"\nbrowser: span deep link to rationale {first_load:.2f} s, timeline to first chart {chart_time:.2f} s"
    )
