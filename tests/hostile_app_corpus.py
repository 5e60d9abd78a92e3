"""A tiny corpus whose ids and names are hostile to a display: ANSI escape sequences, an
unterminated right-to-left override, Streamlit icon/emoji/colour markup, and no repository.

It goes through the real importer and context build and the rules judge, like the app corpus.
"""

from __future__ import annotations

from pathlib import Path

from test_app_corpus import store_of

from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import RunEvent, Usage

ESC = "\x1b"
RLO = "\u202e"
CONFIG = f":material/home: cfg :red[RED] :smile: {ESC}[31mred{ESC}[0m"
RUN = f"run{ESC}[2J-1"
EPISODE = f"ep-{RLO}gnp.exe-{ESC}]0;pwned{ESC}\\"
ITEM = f"tip{ESC}[5m-{RLO}1"


def make_hostile_db(dir: Path) -> Path:
    """Ingest one run of one episode (no repository recorded), build and judge it."""
    b = EpisodeBuilder(EPISODE, run_id=RUN, task_id=f"task{ESC}[1m", position=0, repo=None, task="Fix it.")
    b.host_block("recall", "Memories:\n- run the tests first", entries=[entry(ITEM, "run the tests first")])
    u = Usage(input_tokens=100, output_tokens=10)
    b.step("Run the tests.", "pytest -q", f"{ESC}[31m1 failed{ESC}[0m", exit_code=1, usage=u)
    b.step("Fix and rerun.", "pytest -q", "3 passed", usage=u)
    b.final("Submitted.")
    events = [RunEvent(run_id=RUN, config=CONFIG, label="hostile"), *b.finish(resolved=True)]
    return store_of(dir, "hostile", events, judge=True)
