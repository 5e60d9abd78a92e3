"""The Overview tells a store that was never built apart from one where no memory was delivered.

Invariants: a configuration whose episodes received memory but whose evaluation context was never
built (imported, `memuse build` not run) reads "not built yet" with the commands that build it,
never "no memory was delivered"; a configuration whose episodes received no memory at all (built)
says that no memory was delivered; once the store is built, the not-built notes are gone. The
corpus goes through the real importer and the real context build.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from memuse_core.build import build_store
from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import RunEvent, dump_event
from memuse_core.ingest import ingest_path
from memuse_core.store import connect

ROOT = Path(__file__).resolve().parents[1]


def _log(path: Path, config: str, run: str, memory: bool) -> Path:
    events: list = [RunEvent(run_id=run, config=config)]
    for i in range(2):
        b = EpisodeBuilder(f"{run}-e{i}", run_id=run, task_id=f"t{i}", position=i)
        if memory:
            b.host_block(
                "recall",
                "User Memories:\n- dates use fromisoformat",
                [entry("d1", "dates use fromisoformat")],
            )
        b.step("look", "grep -rn parse_date .", "src/dates.py:3:def parse_date(s):")
        b.step("fix", "sed -i s/strptime/fromisoformat/ src/dates.py", "")
        events += b.finish(resolved=i == 0)
    path.write_text("".join(dump_event(e) + "\n" for e in events))
    return path


@pytest.fixture(scope="module")
def stores(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """`partial`: configuration `plain` (no memory) built, then `notes` (memory) imported without a
    build; `built`: the same store after `memuse build`."""
    d = tmp_path_factory.mktemp("overview_not_built")
    partial = d / "partial.duckdb"
    con = connect(partial)
    try:
        ingest_path(con, _log(d / "plain.jsonl", "plain", "rp", memory=False))
    finally:
        con.close()
    build_store(partial)
    con = connect(partial)
    try:
        ingest_path(con, _log(d / "notes.jsonl", "notes", "rn", memory=True))
    finally:
        con.close()
    built = d / "built.duckdb"
    shutil.copy(partial, built)
    build_store(built)
    return {"partial": partial, "built": built}


def _overview(db: Path, monkeypatch: pytest.MonkeyPatch) -> AppTest:
    monkeypatch.setenv("MEMUSE_DB", str(db))
    monkeypatch.chdir(ROOT)
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def _texts(at: AppTest) -> str:
    """The page's notes as a reader sees them (captions are markdown-escaped recorded text)."""
    raw = "\n".join([*(i.value for i in at.info), *(c.value for c in at.caption)])
    return re.sub(r"\\(.)", r"\1", raw).replace("&#58;", ":")


def test_a_store_never_built_says_so_and_how_to_build_it(stores, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _texts(_overview(stores["partial"], monkeypatch))
    assert "notes: not built yet — 2 of its episodes received memory" in text, text
    assert "run memuse build, then memuse judge" in text, text
    assert "Run `memuse build` (evaluation context), then `memuse judge` (verdicts)" in text, text
    assert "notes: no profile — no memory was delivered" not in text, text
    # The configuration without any memory delivery is told apart: nothing to build there.
    assert "plain: no profile — no memory was delivered in its episodes" in text, text
    # The page's headline names the missing build, not an absence of memory.
    assert "2 episodes in this scope received memory but their evaluation context is not built" in text, text


def test_a_built_store_has_no_not_built_note(stores, monkeypatch: pytest.MonkeyPatch) -> None:
    text = _texts(_overview(stores["built"], monkeypatch))
    assert "not built" not in text, text
    assert "plain: no profile — no memory was delivered in its episodes" in text, text
