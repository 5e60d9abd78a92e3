"""Small hand-made episodes for the judge's tests, benchmarks and offline tries of the scripted
server. Each one shows one attribution case of MemUse A.2.2 with a known answer.
"""

from __future__ import annotations

from pathlib import Path

from ..build import build_store
from ..builder import EpisodeBuilder, entry
from ..episode import EpisodeRecord
from ..events import Event, RunEvent, dump_event
from ..ingest import ingest_path
from ..rules.context import build_episode_context
from ..rules.models import SpanContext
from ..store import connect

TASK = (
    "Dates like 2024-02-30 crash parse_date in src/dates.py with a ValueError "
    "(tests/test_dates.py). Fix the date parser."
)


def acted_on_episode(eid: str = "acted", *, padding: int = 0) -> list[Event]:
    """A host recall names a helper the task never mentions; the agent greps and edits it; tests pass."""
    b = EpisodeBuilder(eid, task=TASK)
    b.step("Let me look around.", "ls src", "dates.py util.py")
    b.host_block(
        "recall",
        "Relevant memories:\n- The real check lives in `_clamp_day` in src/util.py; "
        "fix it there, not in parse_date.",
        entries=[
            entry(
                "m-clamp",
                "The real check lives in `_clamp_day` in src/util.py; fix it there, not in parse_date.",
            )
        ],
    )
    b.step(
        "Memory points at the helper; let me inspect it.",
        "grep -n _clamp_day src/util.py",
        "12:def _clamp_day(y, m, d):",
    )
    b.step("Edit the helper.", "sed -i 's/return d/return min(d, last_day(y, m))/' src/util.py", "")
    for i in range(padding):
        b.step(f"Check file {i}.", f"cat docs/page{i}.txt", "nothing relevant " * 20)
    b.step("Run the tests.", "pytest tests/test_dates.py", "5 passed in 0.12s")
    b.final("Fixed.")
    return b.finish(resolved=True)


def ignored_episode(eid: str = "ignored") -> list[Event]:
    """A recalled style tip that the agent never uses: influence none after reading the window."""
    b = EpisodeBuilder(eid, task=TASK)
    b.host_block(
        "recall",
        "Relevant memories:\n- Use the black formatter with --line-length 100 in ci_lint.yaml.",
        entries=[entry("m-black", "Use the black formatter with --line-length 100 in ci_lint.yaml.")],
    )
    b.step("Find the parser.", "grep -n parse_date src/dates.py", "3:def parse_date(s):")
    b.step("Fix it.", "sed -i 's/strptime/fromisoformat/' src/dates.py", "")
    b.step("Test.", "pytest tests/test_dates.py", "5 passed")
    b.final("Done.")
    return b.finish(resolved=True)


def referenced_episode(eid: str = "referenced") -> list[Event]:
    """The agent mentions the recalled helper but never acts on it."""
    b = EpisodeBuilder(eid, task=TASK)
    b.host_block(
        "recall",
        "Relevant memories:\n- Older releases patched `legacy_date_shim` for this.",
        entries=[entry("m-shim", "Older releases patched `legacy_date_shim` for this.")],
    )
    b.step(
        "Memory mentions legacy_date_shim, but this codebase has no shim; I will fix parse_date directly.",
        "grep -n parse_date src/dates.py",
        "3:def parse_date(s):",
    )
    b.step("Fix it.", "sed -i 's/strptime/fromisoformat/' src/dates.py", "")
    b.final("Done.")
    return b.finish(resolved=True)


def selected_episode(eid: str = "selected") -> list[Event]:
    """A search preview lists a card id; the agent fetches the full card (a separate delivery)."""
    b = EpisodeBuilder(eid, task=TASK)
    preview = "[card-dates-0042] parse_date crash on invalid days"
    full = (
        "[card-dates-0042] parse_date crash on invalid days\nFix: validate with `calendar.monthrange` "
        "before building the date."
    )
    sid = b.search("parse_date invalid day", [("card-dates-0042", preview)])
    b.step(
        "Search memory.",
        "memory_search 'parse_date invalid day'",
        preview,
        tool_memory=([entry("card-dates-0042", preview, namespace="cards")], "search_preview"),
        search_id=sid,
    )
    b.step(
        "Open that card.",
        "memory_get card-dates-0042",
        full,
        tool_memory=([entry("card-dates-0042", full, namespace="cards", version="2")], "full_card"),
    )
    b.step(
        "Apply the card's check.",
        "sed -i 's/date(y, m, d)/calendar.monthrange(y, m) and date(y, m, d)/' src/dates.py",
        "",
    )
    b.step("Test.", "pytest tests/test_dates.py", "5 passed")
    b.final("Done.")
    return b.finish(resolved=True)


def all_examples() -> list[list[Event]]:
    return [acted_on_episode(), ignored_episode(), referenced_episode(), selected_episode()]


def span_context(events: list[Event], which: int = 0) -> tuple[EpisodeRecord, SpanContext]:
    """The record and the `which`-th eligible span of one episode (real context build)."""
    rec = EpisodeRecord.from_events(events)
    spans = [s for s in build_episode_context(rec).spans if s.status == "eligible"]
    return rec, spans[which]


def write_store(folder: Path, episodes: list[list[Event]], name: str = "memuse.duckdb") -> Path:
    """Write episodes as an event log, ingest it into a new store and build the context."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "events.jsonl"
    lines = [dump_event(RunEvent(run_id="run-1"))] + [dump_event(e) for ev in episodes for e in ev]
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    db = folder / name
    con = connect(db)
    try:
        ingest_path(con, log)
    finally:
        con.close()
    build_store(db)
    return db


def resident_copy_episode(eid: str = "resident") -> list[Event]:
    """A search returns an entry that is still visible in the system message: the copy gets an
    empty credit window, so its span is automatic neutral (A.1.5, A.4.1)."""
    b = EpisodeBuilder(eid, task=TASK)
    t = "check `_clamp_day` in src/util.py"
    b.host_block("recall", "Memories:\n- " + t, entries=[entry("m-res", t)])
    b.step("Search memory.", "memory_search clamp", t, tool_memory=([entry("m-res", t)], "search_result"))
    b.step("Look.", "ls", "src")
    b.final()
    return b.finish()
