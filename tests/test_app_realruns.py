"""Real-run facts on the app's pages: exit status, harness outcome, memory state and reasoning text.

Invariants: the Episodes list shows each episode's exit status, harness status and memory state,
and an episode without a harness result reads "—" (never "not resolved", and the "not resolved"
filter leaves it out); an episode without any memory delivery says "No memory was delivered"
(in the list and in the span inspector), which is not the same as a context not built yet; a
step's reasoning text is shown beside its response, inert; a resolve rate without any outcome
is "—" on the Overview and in Compare's paired tasks. The corpus goes through the real importers
(a mini-swe-agent batch with a harness report, one without, and a native log with a memory
delivery and a reasoning response) and the real context build.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from app_text import timeline_drawings, verbatim
from realruns_helpers import harness_report, mini_batch
from streamlit.testing.v1 import AppTest

from memuse_core.build import build_store
from memuse_core.builder import EpisodeBuilder, entry
from memuse_core.events import RunEvent, dump_event
from memuse_core.ingest import ingest_path
from memuse_core.ingest.batch import ingest_batch
from memuse_core.ingest.layouts import plan_folder
from memuse_core.store import connect

ROOT = Path(__file__).resolve().parents[1]
REASONING = "Read the parser first \u202e<b>then</b> edit"
NO_OUTCOME = "nano/django__django-3"
SPAN = "mem-e1/mem-e1-d1"


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("realruns_app")
    nano = mini_batch(
        d / "nano",
        {"django__django-2": "Submitted", "django__django-3": "LimitsExceeded"},
        report=harness_report(["django__django-2"], []),
    )
    bare = mini_batch(d / "bare", {"django__django-2": "Submitted"}, steps=3)  # no harness report
    b = EpisodeBuilder("mem-e1", run_id="r", task_id="django__django-2")
    b.host_block(
        "recall",
        "User Memories:\n- parse dates with fromisoformat",
        [entry("d1", "parse dates with fromisoformat")],
    )
    b.step("look", "grep -rn parse_date .", "src/dates.py:3:def parse_date(s):")
    b.step("fix", "sed -i s/strptime/fromisoformat/ src/dates.py", "")
    events = b.finish(resolved=True)
    first_call = next(
        e for e in events if getattr(e, "type", None) == "model_call" and e.response is not None
    )
    first_call.response.reasoning = REASONING
    log = d / "mem.jsonl"
    log.write_text("".join(dump_event(e) + "\n" for e in [RunEvent(run_id="r", config="mem"), *events]))
    path = d / "app.duckdb"
    con = connect(path)
    try:
        ingest_batch(con, plan_folder(nano))
        ingest_batch(con, plan_folder(bare))
        ingest_path(con, log)
    finally:
        con.close()
    build_store(path)
    return path


@pytest.fixture
def app(db: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMUSE_DB", str(db))
    monkeypatch.chdir(ROOT)

    def make(page: str, **params: str) -> AppTest:
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        for k, v in params.items():  # app.py reads the shared selections from the URL
            at.query_params[k] = v
        at.run()
        at.switch_page(page)
        for k, v in params.items():
            at.query_params[k] = v
        at.run()
        assert not at.exception, [e.value for e in at.exception]
        return at

    return make


def _table(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def test_episodes_list_shows_exit_status_harness_outcome_and_memory(app) -> None:
    at = app("pages/2_episodes.py")
    rows = _table(at, "exit status").set_index("episode_id")
    assert rows.loc[NO_OUTCOME, ["outcome", "harness", "exit status", "memory"]].tolist() == [
        "—",
        "—",
        "LimitsExceeded",
        "No memory was delivered",
    ]
    assert rows.loc["nano/django__django-2", ["outcome", "harness", "exit status"]].tolist() == [
        "resolved",
        "resolved",
        "Submitted",
    ]
    assert rows.loc["mem-e1", ["outcome", "harness", "memory"]].tolist() == ["resolved", "—", "built"]
    assert "None" not in rows.astype(str).to_numpy()
    # An unknown outcome is never "not resolved": that filter leaves it out, "no result" finds it.
    at.multiselect(key="ep_outcome").set_value(["failed"]).run()
    assert NO_OUTCOME not in set(_table(at, "exit status")["episode_id"])
    at.multiselect(key="ep_outcome").set_value(["no_result"]).run()
    assert NO_OUTCOME in set(_table(at, "exit status")["episode_id"])


def test_span_inspector_says_no_memory_was_delivered(app) -> None:
    at = app("pages/4_span.py", episode=NO_OUTCOME)
    infos = " ".join(i.value for i in at.info)
    assert f"No memory was delivered in episode {NO_OUTCOME}" in infos.replace("\\", "")
    assert "memuse build" not in infos  # nothing to build: not the "not built" message


def test_timeline_header_and_no_memory_note(app) -> None:
    """Issue 15 items 5 and 6 on the Timeline: the header names the outcome ("—" when unknown, never
    "failed") and the exit status; an episode without memory says so instead of "not built"."""
    at = app("pages/3_timeline.py", episode=NO_OUTCOME)
    header = next(m.value for m in at.markdown if " steps" in m.value and "task" in m.value)
    assert "outcome —" in header and "LimitsExceeded" in header, header
    notes = " ".join([i.value for i in at.info] + [c.value for c in at.caption]).replace("\\", "")
    assert f"No memory was delivered in episode {NO_OUTCOME}" in notes
    assert "memuse build" not in notes
    built = app("pages/3_timeline.py", episode="nano/django__django-2")
    header = next(m.value for m in built.markdown if " steps" in m.value and "task" in m.value)
    assert "outcome resolved" in header and "Submitted" in header, header


def test_reasoning_is_shown_beside_the_response_and_inert(app) -> None:
    at = app("pages/4_span.py", span=SPAN, step="1")
    assert any(m.value == "Reasoning" for m in at.markdown)
    codes = verbatim(at)
    shown = next(c for c in codes if "Read the parser first" in c)
    assert "\u202e" not in shown and "<b>then</b> edit" in shown  # bidi override made visible
    assert "look" in codes  # the response, beside it


def test_resolve_rate_without_outcome_is_a_dash(app) -> None:
    at = app("pages/1_overview.py", report="1")  # the report section, opened by its link
    outcomes = _table(at, "diff vs baseline (pp)").set_index("group")
    assert outcomes.loc["bare", "rate"] == "—"
    assert outcomes.loc["nano", "rate"] == "100.0%"
    cmp = app("pages/7_compare.py", a="bare", b="nano", show="all")
    # neither side received memory: built and judged, so the page says why, never "not computed"
    assert [i.value for i in cmp.info][:1] == ["Profiles: neither side has a profile to draw."]
    assert any("no memory was delivered in its episodes" in c.value for c in cmp.caption)
    pairs = _table(cmp, "resolved_a").set_index("task_id")
    assert pairs.loc["django__django-2", ["resolved_a", "resolved_b", "change"]].tolist() == [
        "—",
        "100.0%",
        "unknown",
    ]


def test_compare_opens_a_swebench_task_with_two_timelines(app) -> None:
    """SWE-bench task ids hold "__" (django__django-2), which a Streamlit component key must not:
    the Compare page keys each timeline by side and a digest of its episode, and a pick marks
    its step on that chart (the browser journey tests/test_browser_compare.py clicks them)."""
    cmp = app("pages/7_compare.py", a="bare", b="nano", show="all", task="django__django-2")
    assert not cmp.exception, [e.value for e in cmp.exception]
    charts = timeline_drawings(cmp)
    assert len(charts) == 2 and [c["step"] for c in charts] == [None, None]


def test_span_inspector_blames_a_wrong_id_once_the_store_is_built(app) -> None:
    """Every episode here is built: a span id that is not stored is a wrong id, and the page says
    so instead of sending the user to `memuse build`."""
    at = app("pages/4_span.py", span="no-such-span")
    (w,) = at.warning
    assert "is not in the database: check the id" in w.value and "memuse build" not in w.value


def test_timeline_says_when_a_linked_step_is_not_in_the_episode(app) -> None:
    """A URL naming step 99 of a 3-step episode shows step 1 and says why, instead of silently
    showing another step than the one linked."""
    at = app("pages/3_timeline.py", episode="nano/django__django-2", step="99")
    notes = [c.value for c in at.caption]
    assert any("Step 99 is not in this episode (3 steps): showing step 1." in n for n in notes), notes
    assert at.number_input(key="tl_step").value == 1
