"""Benchmark: how long each page of the app takes to settle in headless Chromium (issue 17: every
page settled in under 1 s with a warm server; a fresh tab's timeline chart drawn in under 2 s).

    .venv/bin/python benchmarks/app.py                       # 8,000-episode demo + a 250-step one
    .venv/bin/python benchmarks/app.py --episodes 200 --repeat 1               # a quick run
    .venv/bin/python benchmarks/app.py --db /tmp/demo8k.duckdb --long-db /tmp/long.duckdb
    .venv/bin/python benchmarks/app.py --db /tmp/demo8k.duckdb --pages timeline,lineage
    .venv/bin/python benchmarks/app.py --db /tmp/demo8k.duckdb --views        # server-side only

Without --db the stores are generated into a temporary folder (never the app's default
database) with `memuse demo` and judged with the rules judge: --episodes episodes (the 8,000-episode
demo takes about 45 minutes on 2 cores; keep it with --keep DIR and pass --db next time), and a
small demo with --long-steps mean steps for the long episode.

Each time is shown as `wall (cpu)`: wall seconds, and the CPU seconds the server and the browser
spent meanwhile (their process tree, from /proc). On a shared machine the wall time mostly
measures the other sessions; the CPU time is the part the app is responsible for.

"Settled" means: the page's title is shown, no script run is in progress (no status widget, no
stale element) and the page's main element is drawn (a chart's markers, a table's canvas, the
first transcript step). Three numbers per page, on one server whose caches the first visit
filled:

* cold: the first visit of the page on a fresh server (the view queries run), in a new context;
* new tab: the page's link opened in a new tab of a browser that has the app open already (a
  new page in the same browser context: a new Streamlit session, Streamlit's and Plotly's
  bundles in the HTTP cache), the way a reader opens a table link or a citation in a new tab;
  this context has no request routing, which would disable Chromium's HTTP cache (requests that
  leave localhost are recorded instead of aborted, and fail on the resolver rule);
* first visit: a new browser context (new session, empty browser cache) on the warm server, the
  way a browser that never opened the app does;
* warm: in-app navigation in an open session (sidebar link back to the page, its selections
  set by the deep link that opened the session), the way a reader moves around.

A detail line under each page repeats the warm measurement after a 1.5 s pause on the page left
first (the Overview for most pages: it counts as settled once its title shows, while its four
Plotly charts are still drawing, and a click straight back measures part of that drawing too).

Also timed: the J key on the timeline (next step: Step box, cursor and step text updated), and
with `--views` the view functions alone on a read-only connection (no Streamlit), which is where
a page's first visit spends its server time. The machine's load average is printed with the
table; timings on a shared machine are noisy. Not a test.
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import host

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # browser_support: the server and Chromium of the browser tests


@dataclass
class PageSpec:
    path: str
    title: str
    ready: str
    """CSS selector of the page's main element."""
    params: dict[str, str]


def _subjects(db: str, long_episode: str | None, long_steps: int | None = None) -> dict[str, str]:
    """An episode with memory (the longest one; with `long_steps`, the one of at least that many
    steps with the most deliveries), a judged span, the lineage page's default item, and a search
    term."""
    from memuse_core.views import lineage
    from memuse_core.views.common import open_read

    con = open_read(db, 10)
    try:
        if long_episode is None:
            row = con.execute(
                """SELECT e.episode_id FROM episodes e JOIN deliveries d USING (episode_id)
                   WHERE e.n_steps >= ? GROUP BY e.episode_id, e.n_steps
                   ORDER BY count(*) DESC, e.n_steps DESC, e.episode_id LIMIT 1"""
                if long_steps
                else """SELECT e.episode_id FROM episodes e JOIN deliveries d USING (episode_id)
                   WHERE e.n_steps >= ? GROUP BY e.episode_id, e.n_steps
                   ORDER BY e.n_steps DESC, e.episode_id LIMIT 1""",
                [long_steps or 0],
            ).fetchone()
            if row is None:
                raise SystemExit(f"{db}: no episode with memory deliveries of {long_steps or 0}+ steps")
            long_episode = str(row[0])
        span = con.execute(
            "SELECT span_id FROM spans WHERE episode_id = ? AND status = 'eligible' ORDER BY first_step LIMIT 1",
            [long_episode],
        ).fetchone()
        n_steps = con.execute("SELECT n_steps FROM episodes WHERE episode_id = ?", [long_episode]).fetchone()
        item = lineage.item_choices(con, "")[0].key
    finally:
        con.close()
    return {
        "episode": long_episode,
        "steps": str(n_steps[0] if n_steps else "?"),
        "span": span[0] if span else "",
        "item": item,
        "q": "prepare_body",
    }


def _generate(folder: Path, name: str, episodes: int, steps: int | None) -> str:
    """`memuse demo` into `folder/name.duckdb` (context built), then `memuse judge --judge rules`."""
    db = folder / f"{name}.duckdb"
    if db.exists():
        print(f"reusing {db}")
        return str(db)
    cli = [sys.executable, "-m", "memuse_core"]
    t0 = time.perf_counter()
    demo = [*cli, "demo", "--episodes", str(episodes), "--db", str(db)]
    subprocess.run(demo + (["--steps", str(steps)] if steps else []), check=True, cwd=ROOT)
    subprocess.run([*cli, "judge", "--judge", "rules", "--db", str(db)], check=True, cwd=ROOT)
    print(f"generated {db} in {time.perf_counter() - t0:.0f} s")
    return str(db)


def _pages(s: dict[str, str]) -> list[PageSpec]:
    grid = "[data-testid='stDataFrame'] canvas"
    return [
        PageSpec("", "Overview", "h1", {}),
        PageSpec("episodes", "Episodes", grid, {}),
        PageSpec(
            "timeline",
            "Episode timeline",
            # the timeline's step markers drawn (an SVG drawn by pages/timeline_chart.js)
            ".st-key-tl_chart .memuse-tl .trace[data-name='steps'] .point",
            {"episode": s["episode"], "step": "5"},
        ),
        PageSpec(
            "transcript",
            "Transcript",
            "h3[id='s5'], [data-testid='stHeading'] #s5",
            {"episode": s["episode"], "step": "5"},
        ),
        PageSpec("search", "Search", grid, {"q": s["q"]}),
        PageSpec("span", "Span inspector", "h1", {"span": s["span"]}),
        PageSpec(
            "lineage",
            "Memory item lineage",
            # the history graph's nodes drawn (an SVG drawn by pages/lineage_chart.js)
            ".st-key-lin_graph .memuse-lin .node",
            {"item": s["item"]},
        ),
        PageSpec("case_studies", "Case studies", "h1", {}),
        PageSpec("compare", "Compare", "h1", {}),
        PageSpec("judge_runs", "Judge runs", "h1", {}),
        PageSpec("memtrim", "MemTrim", "h1", {}),
    ]


SETTLE_TIMEOUT_S = 60.0
"""Longest wait for a page to settle; a page that never does is shown as `-`."""

SETTLED_JS = """([title, ready]) => {
  const h = [...document.querySelectorAll('h1')].find(e => e.textContent.trim() === title);
  if (!h || h.closest('[data-stale="true"]')) return false;
  if (document.querySelector('[data-testid="stStatusWidget"]')) return false;
  if (document.querySelector('[data-stale="true"]')) return false;
  if (document.querySelector('[data-testid="stSkeleton"]')) return false;  // a lazily loaded element
  return !!document.querySelector(ready);
}"""


def _settle(page, spec: PageSpec, timeout_ms: float = SETTLE_TIMEOUT_S * 1000) -> None:  # noqa: ANN001
    # Streamlit shows the status widget a moment after a run starts: require the settled state
    # twice, 60 ms apart, so a run that has not shown its widget yet is not taken for settled.
    deadline = time.monotonic() + timeout_ms / 1000
    while True:
        try:
            page.wait_for_function(SETTLED_JS, arg=[spec.title, spec.ready], timeout=timeout_ms, polling=20)
        except Exception:
            print(
                f"  {spec.path or 'overview'} never settled; the page shows:",
                page.inner_text("body")[-600:],
                file=sys.stderr,
            )
            raise
        page.wait_for_timeout(60)
        if page.evaluate(SETTLED_JS, [spec.title, spec.ready]):
            return
        if time.monotonic() > deadline:
            raise TimeoutError(spec.path)


def _url(base: str, spec: PageSpec) -> str:
    qs = "&".join(f"{k}={quote(v, safe='')}" for k, v in spec.params.items())
    return f"{base}/{spec.path}" + (f"?{qs}" if qs else "")


Sample = tuple[float, float]
"""(wall seconds, CPU seconds of the server and the browser) of one measurement."""


def _tree_cpu() -> dict[int, int]:
    """CPU ticks (user + system) used so far by each of this process's descendants: the
    Streamlit server, the Playwright driver and Chromium with its renderers (Linux /proc)."""
    parent: dict[int, int] = {}
    ticks: dict[int, int] = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parent[int(d)] = int(fields[1])
        ticks[int(d)] = int(fields[11]) + int(fields[12])
    me, out = os.getpid(), {}
    for pid, t in ticks.items():
        p, hops = parent.get(pid), 0
        while p and p != me and hops < 64:
            p, hops = parent.get(p), hops + 1
        if p == me:
            out[pid] = t
    return out


def _cpu_since(before: dict[int, int]) -> float:
    """CPU seconds the descendants used since `before`; a process that ended meanwhile (a
    closed tab's renderer) is left out rather than subtracted."""
    now = _tree_cpu()
    return sum(max(0, t - before.get(pid, 0)) for pid, t in now.items()) / os.sysconf("SC_CLK_TCK")


class _Clock:
    """Wall time and descendants' CPU time from start() to stop(). The CPU time is what the
    server and the browser needed: on a loaded machine the wall time grows with the other
    sessions' load, the CPU time much less (an idle 2-core machine overlaps the two)."""

    def start(self) -> None:
        self.w0, self.c0 = time.perf_counter(), _tree_cpu()

    def stop(self, settle_pause: float = 0.06) -> Sample:
        return time.perf_counter() - self.w0 - settle_pause, _cpu_since(self.c0)


def _open(browser, base: str, spec: PageSpec) -> Sample:  # noqa: ANN001
    """A first visit: opening `spec` in a new browser context (empty cache) to settled; the settle check's final 60 ms
    pause is not counted."""
    ctx = browser.context()
    try:
        return _timed_goto(ctx.new_page(), base, spec)
    finally:
        ctx.close()


def _timed_goto(page, base: str, spec: PageSpec) -> Sample:  # noqa: ANN001
    """Opening `spec` in `page` to settled (the settle check's final pause not counted)."""
    clock = _Clock()
    clock.start()
    page.goto(_url(base, spec))
    _settle(page, spec)
    return clock.stop()


def _new_tabs(browser, base: str, spec: PageSpec, repeat: int) -> list[Sample | None]:  # noqa: ANN001
    """Opening `spec` in a new tab of a browser context whose first tab opened it already (and
    stays open): each time a new page, so a new Streamlit session, with the HTTP cache warm. The
    context is made without Playwright routing (routing turns Chromium's HTTP cache off); a
    request that leaves localhost is recorded in `browser.leaked`."""
    from browser_support import LOCAL

    ctx = browser.browser.new_context(viewport={"width": 1400, "height": 1000})
    ctx.on("request", lambda r: None if r.url.startswith(LOCAL) else browser.leaked.append(r.url))
    try:
        first = ctx.new_page()
        first.goto(_url(base, spec))
        _settle(first, spec)
        out: list[Sample | None] = []
        for _ in range(repeat):
            page = ctx.new_page()
            try:
                out.append(_timed_goto(page, base, spec))
            except Exception as e:  # noqa: BLE001 - a timeout is a result here
                print(f"    (new tab {spec.path}: {type(e).__name__})", file=sys.stderr)
                out.append(None)
            finally:
                page.close()
        return out
    finally:
        ctx.close()


def _navigate(page, spec: PageSpec) -> Sample:  # noqa: ANN001
    """Clicking the sidebar link of `spec` to settled (same session)."""
    link = page.locator("[data-testid='stSidebarNav'] a").filter(has_text=spec.title).first
    clock = _Clock()
    clock.start()
    link.click()
    _settle(page, spec)
    return clock.stop()


def _next_step(page) -> Sample:  # noqa: ANN001
    """Pressing J on the timeline to the Step box, the cursor and the text moving."""
    box = page.get_by_role("spinbutton", name="Step")
    before = int(box.input_value())
    page.get_by_role("heading", name="Episode timeline").click()
    clock = _Clock()
    clock.start()
    page.keyboard.press("j")
    page.wait_for_function(
        """(want) => { const b = document.querySelector('input[aria-label="Step"]');
                       return b && b.value === String(want) && !document.querySelector('[data-testid="stStatusWidget"]')
                              && !document.querySelector('[data-stale="true"]'); }""",
        arg=before + 1,
        timeout=120_000,
        polling=20,
    )
    return clock.stop(0.0)


QUIET_AWAY_S = 1.5
"""The detail line's pause on the page left before a warm navigation back (see `_warm`)."""
WARM_TARGET = 1.0
FRESH_TARGET = 2.0
"""Issue 17's targets on 2 idle cores: a page settled within 1 s with a warm server (in-app
navigation); a fresh tab's timeline chart drawn within 2 s (reported for both the new tab and
the first visit)."""


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _timed(fn: Callable[..., Sample], *args: Any) -> Sample | None:
    """fn(*args)'s seconds, None when the page never settled (the run goes on with the next page)."""
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 - a timeout is a result here
        print(f"    ({type(e).__name__}: {str(e).splitlines()[0][:120]})", file=sys.stderr)
        return None


def _median(xs: list[Sample | None]) -> Sample | None:
    """Median wall and median CPU time; None when one measurement never settled."""
    ok = [x for x in xs if x is not None]
    if not ok or len(ok) != len(xs):
        return None
    return statistics.median(w for w, _ in ok), statistics.median(c for _, c in ok)


def _f(x: Sample | None, target: float | None = None) -> str:
    """`wall (cpu)`, with * when the wall time is over `target`."""
    if x is None:
        return f"{'-':>13s} "
    mark = "*" if target is not None and x[0] > target else " "
    return f"{x[0]:6.2f} ({x[1]:4.2f}){mark}"


def _warm(
    browser,  # noqa: ANN001
    base: str,
    spec: PageSpec,
    every: list[PageSpec],
    repeat: int,
    pause_s: float = 0.0,
) -> list[Sample | None]:
    """In one session opened by the page's deep link (its selections set): leave for another
    page by the sidebar, then time the sidebar link back, `repeat` times. With `pause_s`, wait
    that long on the other page before going back (a detail line: the other page, usually the
    Overview, settles when its title shows while its charts are still being drawn, and that
    drawing otherwise lands in the measured navigation)."""
    ctx = browser.context()
    page = ctx.new_page()
    try:
        page.goto(_url(base, spec))
        _settle(page, spec)
        away = every[0] if spec.path != every[0].path else every[1]
        out: list[Sample | None] = []
        for _ in range(repeat):
            _navigate(page, away)
            if pause_s:
                page.wait_for_timeout(pause_s * 1000)
            out.append(_timed(_navigate, page, spec))
        return out
    except Exception as e:  # noqa: BLE001
        print(f"    (warm {spec.path}: {type(e).__name__})", file=sys.stderr)
        return [None]
    finally:
        ctx.close()


def _step_times(browser, base: str, spec: PageSpec, repeat: int) -> list[Sample | None]:  # noqa: ANN001
    ctx = browser.context()
    page = ctx.new_page()
    try:
        page.goto(_url(base, spec))
        _settle(page, spec)
        return [_timed(_next_step, page) for _ in range(repeat)]
    finally:
        ctx.close()


def browser_table(
    db: str,
    long_db: str | None,
    long_episode: str | None,
    long_steps: int,
    repeat: int,
    only: set[str] | None,
) -> None:
    from browser_support import Browser, Server
    from playwright.sync_api import sync_playwright

    runs = [(db, None, None)] + ([(long_db, long_episode, long_steps)] if long_db else [])
    print(f"before: {host.describe()}")
    for path, episode, steps in runs:
        subject = _subjects(path, episode, steps)
        every = _pages(subject)
        specs = [s for s in every if only is None or (s.path or "overview") in only]
        if path != db:  # the long episode: the pages that show one episode
            specs = [s for s in specs if s.path in ("timeline", "transcript")]
        if not specs:
            continue
        print(
            f"\n{path}\n  episode {subject['episode']} ({subject['steps']} steps), span {subject['span']},"
            f" item {subject['item']}, search {subject['q']!r}"
        )
        srv = Server(Path(path))
        srv.start()
        try:
            with sync_playwright() as p:
                browser = Browser(p)
                try:
                    _open(browser, srv.base, every[0])  # the server's first run (imports, app.py)
                    print(
                        f"  {'page':14s} {'warm':>14s} {'new tab':>14s} {'first visit':>14s} {'cold':>14s}"
                        f"  load\n  {'':14s} {'wall (cpu) s':>14s}   (warm, new tab, first visit: median of"
                        f" {repeat}; cpu: server + browser; * over target: warm {WARM_TARGET:g} s, new tab and"
                        f" first visit of the timeline {FRESH_TARGET:g} s; - never settled within"
                        f" {SETTLE_TIMEOUT_S:g} s)"
                    )
                    for s in specs:
                        cold = _timed(_open, browser, srv.base, s)
                        fresh = _median([_timed(_open, browser, srv.base, s) for _ in range(repeat)])
                        tab = _median(_new_tabs(browser, srv.base, s, repeat))
                        warm = _median(_warm(browser, srv.base, s, every, repeat))
                        ft = FRESH_TARGET if s.path == "timeline" else None
                        print(
                            f"  {s.path or 'overview':14s} {_f(warm, WARM_TARGET)} {_f(tab, ft)} {_f(fresh, ft)}"
                            f" {_f(cold)}"
                            f" {os.getloadavg()[0]:5.2f}",
                            flush=True,
                        )
                        quiet = _median(_warm(browser, srv.base, s, every, repeat, QUIET_AWAY_S))
                        print(
                            f"  {'':14s} {_f(quiet, WARM_TARGET)}  (warm, {QUIET_AWAY_S:g} s on the page left first)"
                        )
                        if s.path == "timeline":
                            step = _median(_step_times(browser, srv.base, s, repeat))
                            print(
                                f"  {'timeline J':14s} {_f(step, WARM_TARGET)}  (next step: Step box, cursor, text)"
                            )
                    assert browser.leaked == [], browser.leaked
                finally:
                    browser.close()
        finally:
            srv.stop()
    print(f"\nafter: {host.describe()}")


def views_table(db: str, long_episode: str | None, long_steps: int | None) -> None:
    """The view functions of each page on a fresh read-only connection (no Streamlit cache)."""
    from memuse_core.views import (
        common,
        episodes,
        lineage,
        overview,
        report,
        search,
        span,
        timeline,
        transcript,
    )
    from memuse_core.views.common import open_read, split_item

    s = _subjects(db, long_episode, long_steps)
    ns, iid = split_item(s["item"])
    calls = [
        ("overview", lambda c: overview.overview(c, None)),
        ("overview report", lambda c: report.report(c, None, None)),
        ("episodes", lambda c: episodes.episode_list(c, None, episodes.EpisodeFilters())),
        ("timeline", lambda c: timeline.timeline(c, s["episode"], 5)),
        ("transcript", lambda c: transcript.transcript(c, s["episode"], 0)),
        ("search (all)", lambda c: search.search(c, s["q"], None, None)),
        ("search (one)", lambda c: search.search(c, "pytest", None, s["episode"])),
        ("span", lambda c: span.span(c, s["span"])),
        ("lineage items", lambda c: lineage.item_choices(c, "")),
        ("lineage item", lambda c: lineage.item(c, ns, iid)),
        ("lineage graph", lambda c: lineage.item_graph(c, ns, iid, None, False)),
        ("episode ids", lambda c: common.episode_choices(c, None)),
    ]
    print(f"\n{db}: episode {s['episode']} ({s['steps']} steps); load average {_load()}")
    print(f"{'view':16s} {'ms':>7s} {'pickled KiB':>12s}")
    for name, fn in calls:
        con = open_read(db, 10)
        try:
            t0 = time.perf_counter()
            out = fn(con)
            dt = time.perf_counter() - t0
        finally:
            con.close()
        print(f"{name:16s} {dt * 1000:7.0f} {len(pickle.dumps(out)) / 1024:12.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", help="a built and judged store (default: generate the demo, see --episodes)")
    ap.add_argument("--episodes", type=int, default=8000, help="episodes of the generated demo (no --db)")
    ap.add_argument("--long-db", help="a store holding a long episode (default with no --db: generated)")
    ap.add_argument("--long-episode", help="the long episode (default: see --long-steps)")
    ap.add_argument(
        "--long-steps",
        type=int,
        default=250,
        help="the long episode has at least this many steps (most deliveries)",
    )
    ap.add_argument("--keep", type=Path, help="generate into (or reuse from) this folder and keep it")
    ap.add_argument("--pages", help="comma-separated url paths to measure (overview for the home page)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--views", action="store_true", help="time the view functions only")
    a = ap.parse_args()
    tmp = None
    if a.db is None:
        folder = a.keep or Path(tmp := tempfile.mkdtemp(prefix="memuse-bench-app-"))
        folder.mkdir(parents=True, exist_ok=True)
        a.db = _generate(folder, f"demo{a.episodes}", a.episodes, None)
        if a.long_db is None:
            a.long_db = _generate(folder, f"long{a.long_steps}", 8, a.long_steps)
    try:
        if a.views:
            views_table(a.db, None, None)
            if a.long_db:
                views_table(a.long_db, a.long_episode, a.long_steps)
            return
        only = set(a.pages.split(",")) if a.pages else None
        browser_table(a.db, a.long_db, a.long_episode, a.long_steps, a.repeat, only)
    finally:
        if tmp is not None:
            import shutil

            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
