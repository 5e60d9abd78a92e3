"""Shared pieces of the real-browser tests: a `streamlit run app.py` server on a free local port,
headless Debian Chromium launched with the arguments of notes/STACK.md, and a guard that aborts
every request leaving the machine and fails the test if one was attempted.

Usage in a journey file (one server per module):

    server = module_server(make_db)      # make_db(tmp_dir) -> Path of a database
    browser = module_browser()           # one Chromium; leaks asserted at teardown
    def test_x(server, browser):
        base, db = server
        page = browser.page()            # a fresh context (no session) and page

Skips cleanly (one reason) when /usr/bin/chromium or the playwright package is absent.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

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
"""Chromium arguments: headless, no GPU, and no name resolution except for the local server."""
LOCAL = ("http://127.0.0.1", "http://localhost", "ws://127.0.0.1", "data:", "blob:", "file:", "about:")
"""Request URL prefixes that stay on this machine; everything else is aborted and recorded."""
TIMEOUT_MS = 120_000
"""Default wait of a page action and of a page settling (a loaded 2-core machine renders slowly;
a fresh tab's first Plotly chart also waits for the browser to load and compile plotly.js)."""
FIRST_RENDER_MS = 180_000
"""Longest wait for a freshly opened tab's first settled page (see `open_app`)."""
QUIET_S = 0.3
"""How long the app must stay idle before it counts as settled: a widget change reaches the
server a moment after the action that caused it."""


def require_browser() -> None:
    """Skip the calling test when Debian chromium or playwright is missing."""
    if not CHROMIUM.exists():
        pytest.skip("Debian chromium is not installed (/usr/bin/chromium)")
    pytest.importorskip("playwright.sync_api")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


_DEMO_TEMPLATES: dict[tuple[int, int], Path] = {}


def demo_db(directory: Path, episodes: int = 16, mean_steps: int = 20) -> Path:
    """A small demo database in `directory`: generated, context built and judged with the rules
    judge. Built once per test process and copied, so every journey module gets its own file."""
    from memuse_core.build import build_store
    from memuse_core.demo import DemoPlan, build_demo
    from memuse_core.judge.result import JudgeSettings
    from memuse_core.judge.runner import run_batch

    key = (episodes, mean_steps)
    template = _DEMO_TEMPLATES.get(key)
    if template is None or not template.exists():
        template = Path(tempfile.mkdtemp(prefix="memuse-demo-")) / "demo.duckdb"
        build_demo(template, DemoPlan(episodes=episodes, mean_steps=mean_steps))
        build_store(template)
        run_batch(template, JudgeSettings(judge="rules"))
        _DEMO_TEMPLATES[key] = template
    db = directory / "demo.duckdb"
    shutil.copy(template, db)
    return db


class Server:
    """`streamlit run app.py` on a free port, against one database."""

    def __init__(self, db: Path, env: dict[str, str] | None = None) -> None:
        self.db = db
        self.port = free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        self.env = dict(os.environ, MEMUSE_DB=str(db), **(env or {}))
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60.0) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "streamlit",
                "run",
                "app.py",
                "--server.headless",
                "true",
                "--server.port",
                str(self.port),
                "--server.address",
                "127.0.0.1",
                "--browser.gatherUsageStats",
                "false",
                "--server.fileWatcherType",
                "none",
            ],
            cwd=ROOT,
            env=self.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + timeout
        while True:
            # A leftover server on the port would answer the health check for us: the process
            # we started must still be alive when the check succeeds.
            if self.proc.poll() is not None:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise AssertionError(f"streamlit exited with {self.proc.returncode}: {err[-2000:]}")
            try:
                with urllib.request.urlopen(f"{self.base}/_stcore/health", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise AssertionError(f"streamlit did not answer on {self.base} within {timeout:.0f} s")
            time.sleep(0.1)
        assert self.proc.poll() is None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def module_server(
    make_db: Callable[[Path], Path], env: dict[str, str] | None = None
) -> Callable[..., Iterator[tuple[str, Path]]]:
    """A module-scoped pytest fixture yielding (base URL, database path) of a running app."""

    @pytest.fixture(scope="module")
    def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
        require_browser()
        db = make_db(tmp_path_factory.mktemp("browser"))
        srv = Server(db, env)
        srv.start()
        try:
            yield srv.base, db
        finally:
            srv.stop()

    return server


class RunTracker:
    """Follows one page's Streamlit websocket: the script runs the browser asks for (BackMsg
    `rerun_script`, sent for every widget change, click and page load) and the runs the server
    starts (`new_session`) and ends (`script_finished`, `session_status_changed`).

    The status widget alone cannot tell that a run is coming: it appears only once the server's
    "run started" message arrived, so right after a click the page looks idle while the rerun
    request is still on its way (an action then lands on elements that the rerun replaces). The
    tracker sees the request itself. Events are ordered by a counter, not by time."""

    def __init__(self) -> None:
        self.n = 0
        self.requested = 0
        """Counter value of the last rerun request the browser sent."""
        self.started = 0
        self.finished = 0
        """Counter value of the last run that ended without being replaced by a rerun."""
        self.running = False
        self.sockets = 0
        self.log: list[str] = []

    def attach(self, page: Any) -> None:
        page.on("websocket", self._socket)

    def _socket(self, ws: Any) -> None:
        if not ws.url.endswith("/_stcore/stream"):
            return
        self.sockets += 1
        self._note(f"websocket {self.sockets} open")
        ws.on("framesent", self._sent)
        ws.on("framereceived", self._received)
        ws.on("close", lambda _ws: self._note("websocket closed"))

    def _note(self, what: str) -> None:
        self.n += 1
        self.log.append(f"{time.monotonic():.2f} #{self.n} {what}")
        del self.log[:-40]

    def _sent(self, payload: Any) -> None:
        from streamlit.proto.BackMsg_pb2 import BackMsg

        if not isinstance(payload, bytes):
            return
        try:
            kind = BackMsg.FromString(payload).WhichOneof("type")
        except Exception:  # noqa: BLE001 - not a message we follow
            return
        if kind == "rerun_script":
            self._note("rerun requested")
            self.requested = self.n

    def _received(self, payload: Any) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        if not isinstance(payload, bytes):
            return
        try:
            msg = ForwardMsg.FromString(payload)
        except Exception:  # noqa: BLE001
            return
        kind = msg.WhichOneof("type")
        if kind == "new_session":
            self._note("run started")
            self.started, self.running = self.n, True
        elif kind == "script_finished":
            status = ForwardMsg.ScriptFinishedStatus.Name(msg.script_finished)
            self._note(f"run ended {status}")
            if status != "FINISHED_EARLY_FOR_RERUN":
                self.finished, self.running = self.n, False
        elif kind == "session_status_changed":
            self.running = msg.session_status_changed.script_is_running

    def idle(self) -> bool:
        """No run in progress and none asked for: the last request was answered by a run that
        started after it and has ended."""
        return self.sockets > 0 and not self.running and self.requested < self.started < self.finished


_TRACKERS: dict[Any, RunTracker] = {}


def tracker(page: Any) -> RunTracker | None:
    return _TRACKERS.get(page)


class Browser:
    """One headless Chromium with a local-only network guard shared by its contexts."""

    def __init__(self, playwright: Any) -> None:
        self.browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        self.leaked: list[str] = []

    def _route(self, route: Any) -> None:
        if route.request.url.startswith(LOCAL):
            route.continue_()
        else:
            self.leaked.append(route.request.url)
            route.abort()

    def context(self, **kwargs: Any) -> Any:
        """A fresh browser context (no cookies, no session) with every request guarded."""
        opts: dict[str, Any] = {"viewport": {"width": 1400, "height": 1000}, "accept_downloads": True}
        ctx = self.browser.new_context(**(opts | kwargs))
        ctx.route("**/*", self._route)
        ctx.set_default_timeout(TIMEOUT_MS)
        ctx.on("page", _track)
        return ctx

    def page(self, **kwargs: Any) -> Any:
        """A page in a fresh context."""
        return self.context(**kwargs).new_page()

    def close(self) -> None:
        self.browser.close()


def _track(page: Any) -> None:
    t = RunTracker()
    t.attach(page)
    _TRACKERS[page] = t
    page.on("close", lambda p: _TRACKERS.pop(p, None))


def module_browser() -> Callable[..., Iterator[Browser]]:
    """A module-scoped pytest fixture yielding one Chromium; at the end it asserts that no
    request left localhost."""

    @pytest.fixture(scope="module")
    def browser() -> Iterator[Browser]:
        require_browser()
        from playwright.sync_api import expect, sync_playwright

        # expect()'s own default wait is 5 s, too short for a rerun on a loaded 2-core machine.
        expect.set_options(timeout=TIMEOUT_MS)
        with sync_playwright() as p:
            b = Browser(p)
            try:
                yield b
            finally:
                b.close()
            assert b.leaked == [], sorted(set(b.leaked))

    return browser


def wait_text(page: Any, text: str, timeout: float = TIMEOUT_MS) -> None:
    """Wait for `text`; on a timeout, fail with what the page shows instead."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout

    try:
        page.get_by_text(text).first.wait_for(timeout=timeout)
    except PlaywrightTimeout:
        body = page.inner_text("body")
        raise AssertionError(f"{text!r} never appeared; the page shows:\n{body[-3000:]}") from None


IDLE_DOM_JS = """() => !document.querySelector(
  '[data-testid="stStatusWidget"], [data-stale="true"], [data-testid="stSkeleton"]')"""
"""The page shows no run in progress: no status widget, no element left over from the previous
run (stale), no element still loading its code (skeleton)."""


def settled(page: Any, timeout: float = TIMEOUT_MS) -> None:
    """Wait until the app is settled: no script run in progress or asked for (`RunTracker`),
    nothing stale or loading on the page, for `QUIET_S` in a row. Call it after every action that
    can rerun the app (navigation, click, widget change) and before the next one. (While a
    fragment reruns itself every few seconds, e.g. the pending-writes retry, the app is settled
    only between its runs: wait for content there instead.)"""
    t = tracker(page)
    deadline = time.monotonic() + timeout / 1000
    quiet_since: float | None = None
    while True:
        now = time.monotonic()
        try:
            idle = (t is None or t.idle()) and bool(page.evaluate(IDLE_DOM_JS))
        except Exception:  # noqa: BLE001 - a navigation replaced the document meanwhile
            idle = False
        if not idle:
            quiet_since = None
        elif quiet_since is None:
            quiet_since = now
        elif now - quiet_since >= QUIET_S:
            return
        if now > deadline:
            body = page.inner_text("body")[-2000:]
            log = "\n".join(t.log) if t else "(no websocket tracker)"
            raise AssertionError(
                f"the app did not settle within {timeout / 1000:.0f} s; runs:\n{log}\nthe page shows:\n{body}"
            )
        page.wait_for_timeout(50)


def click_grid_row(page: Any, grid: Any, x: float, row: int = 0, attempts: int = 3) -> None:
    """Click at `x` px into data row `row` of a data grid (glide-data-grid draws on a canvas:
    rows are 35 px high below a 35 px header) and wait until the app settled after the rerun the
    click asked for. A click on a canvas that is still being drawn can be dropped without a
    trace; the click is repeated (up to `attempts` times) until the browser asks for a rerun."""
    t = tracker(page)
    for attempt in range(attempts):
        settled(page)
        grid.locator("canvas").first.wait_for()
        box = grid.bounding_box()
        assert box is not None
        before = t.requested if t else 0
        page.mouse.click(box["x"] + x, box["y"] + 35 * (row + 1) + 17)
        if t is None:
            break
        deadline = time.monotonic() + 10
        while t.requested == before and time.monotonic() < deadline:
            page.wait_for_timeout(50)
        if t.requested != before:
            break
        if attempt == attempts - 1:
            raise AssertionError("clicking the grid row never reran the app; runs:\n" + "\n".join(t.log))
    settled(page)


def open_app(page: Any, url: str, timeout: float = FIRST_RENDER_MS) -> None:
    """Load an app URL and wait until the page settled and the in-app link catcher is live (a
    fresh tab on a loaded machine can take long: the session starts, the page's queries run,
    the browser loads the code of each new element type)."""
    page.goto(url, timeout=timeout)
    page.locator("[data-testid='stSidebarNav']").first.wait_for(timeout=timeout)
    page.wait_for_function("() => window.__memuseNav && window.__memuseNav.installed", timeout=timeout)
    settled(page, timeout)


def judged_citation(db: Path) -> dict[str, Any]:
    """A judged span whose rationale cites a step, with that step's first response line."""
    from memuse_core.store import connect
    from memuse_core.store.app import episodes as store_episodes

    con = connect(db, read_only=True)
    try:
        row = con.execute(
            """
            SELECT a.span_id, s.episode_id, regexp_extract(a.notes, '\\[S(\\d+)\\]', 1) AS step
            FROM assessments a JOIN verdicts v ON v.judgment_id = a.judgment_id
                 JOIN spans s ON s.span_id = a.span_id
            WHERE regexp_matches(a.notes, '\\[S\\d+\\]') ORDER BY a.span_id LIMIT 1"""
        ).fetchone()
        assert row, "the demo corpus has no judged span with a cited step"
        span_id, ep, step = row
        txt = store_episodes.step_text(con, ep, int(step))
    finally:
        con.close()
    assert txt is not None
    first = next(line for line in (txt["response"] or "").splitlines() if line.strip())
    return {"span": span_id, "episode": ep, "step": int(step), "response": first.strip()[:40]}
