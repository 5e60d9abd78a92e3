"""The app's MemTrim page (AppTest): widgets -> one view call (`views.memtrim.memtrim_view`) -> one
figure. On a small hand-made episode in a real DuckDB file it explains every decision (the
hand-written expectations follow MemTrim 3.3); a deep link selects a delivery; the corpus tab
shows what `memuse trim` stored. On a database of real runs (Letta, OpenHands, Reflexion; some
deliveries never consumed, so no step) every episode's page renders."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from app_text import step_blocks, step_lines
from streamlit.testing.v1 import AppTest
from test_trim_whatif import episode

from memuse_core.build import build_store
from memuse_core.events import RunEvent, dump_event
from memuse_core.ingest import ingest_path
from memuse_core.store import connect
from memuse_core.trim.whatif_batch import run_store
from memuse_core.views.memtrim import memtrim_view

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def small_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("mtpage")
    log = d / "run.jsonl"
    log.write_text(
        "".join(dump_event(e) + "\n" for e in [RunEvent(run_id="r1", config="mem0-recall"), *episode()])
    )
    db = d / "m.duckdb"
    con = connect(db)
    try:
        ingest_path(con, log)
    finally:
        con.close()
    build_store(db)
    con = connect(db)
    try:
        run_store(con, workers=1)
    finally:
        con.close()
    return db


def page(db: Path, monkeypatch: pytest.MonkeyPatch, **params: str) -> AppTest:
    monkeypatch.setenv("MEMUSE_DB", str(db))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/9_memtrim.py")
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_view_explains_each_decision(small_db: Path) -> None:
    """The second delivery comes after the tool output `python version: 3.12`: the stored 3.11
    conflicts (removed), the first entry is all shared (removed), the third is memory-only."""
    v = memtrim_view(small_db, episode="e1", delivery="e1-d2")
    assert v.problem is None and v.episodes == ["e1"] and v.delivery == "e1-d2"
    assert [d.label for d in v.deliveries] == [
        "e1-d1 · S1 · task_recall · 3 entries",
        "e1-d2 · S2 · task_recall · 3 entries",
        "e1-d3 · S3 · task_recall · 3 entries",
    ]
    w = v.whatif
    assert w is not None and w.prior_from == "episode_record"
    shared, conflict, novel = w.entries
    assert (shared.trim_class, conflict.trim_class, novel.trim_class) == ("redundant", "partial", "novel")
    assert conflict.explanation[:3] == [
        "0 unit(s) already stated in the request: removed.",
        "1 unit(s) the request gives another value: removed (the request wins).",
        "0 memory-only unit(s): kept.",
    ]
    assert [(u.klass, u.key, u.text) for u in conflict.units] == [
        ("conflicting", "python.version", "python version: 3.11")
    ]
    assert shared.kept_lines == [] and conflict.kept_lines == []
    assert novel.kept_lines == ["Always run `pytest -x tests/test_dates.py` after editing."]
    assert w.context.endswith("- Always run `pytest -x tests/test_dates.py` after editing.")
    assert {(r["entry"], r["class"], r["units"]) for r in v.figure if r["units"]} >= {
        ("#1 m2", "conflicting", 1)
    }
    assert v.corpus.computed and v.corpus.summary[0]["config"] == "mem0-recall"
    # a stale selection falls back to the first option instead of failing
    stale = memtrim_view(small_db, episode="gone", delivery="gone")
    assert (stale.episode, stale.delivery) == ("e1", "e1-d1")
    assert memtrim_view(small_db.parent / "missing.duckdb").problem


def test_page_follows_a_deep_link_and_shows_the_explanations(
    small_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    at = page(small_db, monkeypatch, episode="e1", delivery="e1-d2")
    assert at.title[0].value == "MemTrim"
    assert at.selectbox(key="mt_delivery").value == "e1-d2"
    # The entries are one HTML block made only of the page's own tags (`step_blocks` checks
    # them), recorded text escaped; the conflicting unit has the red background.
    shown = step_lines(at, "memuse-entries")
    assert any("1 unit(s) the request gives another value" in t for t in shown)
    (block,) = step_blocks(at, "memuse-entries")
    assert '<span style="background:rgba(255,75,75,0.25);' in block
    assert re.search(r"rgba\(255,75,75,0\.25\)[^>]*>python version: 3\.11</span>", block)
    # The one figure: units per entry and class as HTML bars (no Plotly on this page).
    (chart,) = step_blocks(at, "memuse-units")
    assert not [c for c in at.main if getattr(c, "type", "") == "plotly_chart"]
    rows = re.findall(r'<span style="[^"]*" title="([^"]*)">', chart)
    assert rows == ["#0 m1", "#1 m2", "#2 m3"]
    # bar lengths are units over the longest bar (#2's 3 units)
    assert re.search(r'title="#1 m2 · conflicting: 1 unit" style="flex:0 0 33\.333%;background:red;', chart)
    assert re.search(
        r'title="#2 m3 · memory_only: 3 units" style="flex:0 0 100\.000%;background:green;', chart
    )
    assert at.query_params["delivery"] == "e1-d2"
    assert not any(m.proto.allow_html for m in at.markdown)


@pytest.fixture(scope="module")
def real_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from conftest import REAL_DATA

    if not REAL_DATA.is_dir():
        pytest.skip("../shared/data/real is not available")
    db = tmp_path_factory.mktemp("mtreal") / "real.duckdb"
    con = connect(db)
    try:
        for sub in ("letta", "openhands", "reflexion"):
            for f in sorted((REAL_DATA / sub).rglob("*")):
                if f.is_file() and f.suffix in (".af", ".json", ".jsonl"):
                    ingest_path(con, f)
    finally:
        con.close()
    build_store(db)
    return db


def test_page_on_real_runs(real_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Real runs include deliveries without a consuming step (the page crashed on them with
    "boolean value of NA is ambiguous"); the first episode of each source renders, and every
    delivery of the real runs gets a view with its decisions explained."""
    v = memtrim_view(real_db)
    assert v.problem is None and len(v.episodes) > 3
    firsts = list({e.split(":", 1)[0]: e for e in reversed(v.episodes)}.values())  # one per source
    assert {e.split(":", 1)[0] for e in firsts} == {"letta", "oh", "reflexion"}
    never = [
        d for e in firsts for d in memtrim_view(real_db, episode=e).deliveries if "never consumed" in d.label
    ]
    assert never, "the real runs have deliveries that no recorded step consumed"
    at = page(real_db, monkeypatch)
    for ep in firsts:
        at.selectbox(key="mt_episode").select(ep).run()
        assert not at.exception, (ep, [e.value for e in at.exception])
        assert at.selectbox(key="mt_episode").value == ep
        w = memtrim_view(real_db, episode=ep).whatif
        assert w is not None and all(e.explanation for e in w.entries), ep


def test_the_corpus_tab_is_drawn_only_when_picked(small_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Lazy tabs (issue 17, pages under a second): the page opens on "One delivery" and does not
    draw the corpus tab's tables; picking "Corpus" draws them."""
    at = page(small_db, monkeypatch)
    corpus = "Tokens saved per configuration"
    assert [t.label for t in at.tabs] == ["One delivery", "Corpus"]
    assert corpus not in [s.value for s in at.subheader]
    assert not any("config" in d.value.columns for d in at.dataframe)
    at.session_state["mt_tab"] = "Corpus"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    assert corpus in [s.value for s in at.subheader]
    assert [d.value["config"].tolist() for d in at.dataframe if "config" in d.value.columns] == [
        ["mem0-recall"]
    ]
